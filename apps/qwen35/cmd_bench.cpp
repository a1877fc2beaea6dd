// `qwen35 bench`: decode speed against this machine's memory roofline, both
// measured in the same run. Decode at batch 1 reads every weight once per token,
// so tok/s <= read bandwidth / bytes read per token; roofline_fraction says how
// close a run comes. --profile splits the token time by kernel. On a shared
// virtual machine the CPU time stolen by other guests during the timed repeats
// is reported too: runs that lost much of it measured their neighbours.
#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "cpu_steal.h"
#include "model_options.h"
#include "qwen35/device_bandwidth.h"
#include "qwen35/host_bandwidth.h"
#include "qwen35/sampling.h"
#include "qwen35/tuning.h"

namespace {

struct BenchOptions {
  qwen35::app::ModelOptions model;
  std::string dtype = "bf16";
  uint32_t tokens = 16;
  int repeats = 3;
  uint32_t context = 0;
  double probe_gib = 0;  // 0: 1 GiB of host memory, 4 GiB of device memory
  bool json = false;
  bool profile = false;
  std::string ab;  // KNOB=VALUE[,...]: each repeat runs the backend's defaults and the knobs set, in turn
};

// --ab's setting: knobs and their values.
struct TuningAb {
  std::string text;  // as given
  std::vector<qwen35::TuningSetting> knobs;

  void apply(qwen35::GpuBackend& gpu) const { qwen35::apply_tuning(gpu, knobs, true); }
  void reset(qwen35::GpuBackend& gpu) const { qwen35::apply_tuning(gpu, knobs, false); }
};

std::optional<TuningAb> parse_ab(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return TuningAb{.text = text, .knobs = qwen35::parse_tuning_settings(text, "--ab")};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Op families for --profile: matrix work versus everything else.
std::string family(const std::string& kernel) {
  if (kernel.rfind("gemv", 0) == 0 || kernel.rfind("row_to_f32", 0) == 0) return "matrix (gemv)";
  if (kernel.rfind("attention", 0) == 0 || kernel.rfind("kv_append", 0) == 0) return "attention";
  if (kernel.rfind("gdn", 0) == 0 || kernel.rfind("conv", 0) == 0) return "gated deltanet";
  if (kernel.find("norm") != std::string::npos) return "norms + rope";
  return "elementwise";
}

// --dtype: the preset's weights as made (bf16, f16, f32), quantized from bf16 in
// memory (mlx8, mlx4) or converted from bf16 to a temporary GGUF file (q8_0 ... q6_k).
void set_preset_weights(const std::string& name, qwen35::app::ModelOptions& model) {
  using qwen35::DType;
  constexpr DType kGgufTypes[] = {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K};
  const auto gguf = std::find_if(std::begin(kGgufTypes), std::end(kGgufTypes),
                                 [&](DType type) { return qwen35::dtype_lower_name(type) == name; });
  if (name == "bf16" || name == "f16" || name == "f32") {
    model.weight_dtype = name == "bf16" ? DType::kBF16 : name == "f16" ? DType::kF16 : DType::kF32;
  } else if (name == "mlx8" || name == "mlx4") {
    model.weight_dtype = DType::kBF16;
    model.random_mlx = qwen35::MlxAffineParams{.bits = name == "mlx8" ? 8u : 4u, .group_size = 64};
  } else if (gguf != std::end(kGgufTypes)) {
    model.weight_dtype = DType::kBF16;
    model.random_gguf = *gguf;
  } else {
    std::vector<std::string> gguf_names;
    for (DType type : kGgufTypes) gguf_names.push_back(qwen35::dtype_lower_name(type));
    qwen35::fail("unknown --dtype '{}' (expected one of bf16, f16, f32, mlx8, mlx4, {})", name,
                 fmt::join(gguf_names, ", "));
  }
}

void run_bench(BenchOptions options) {
  using namespace qwen35;
  using Clock = std::chrono::steady_clock;
  if (options.model.model_dir.empty() && !Qwen35ForwardConfig::preset(options.model.preset)) {
    fail("unknown --preset '{}' (available: {})", options.model.preset, Qwen35ForwardConfig::kPresetNames);
  }
  set_preset_weights(options.dtype, options.model);
  const std::optional<TuningAb> ab = parse_ab(options.ab);
  if (ab && options.profile) fail("--ab and --profile together would add up both settings' kernel times");
  const uint32_t runs = static_cast<uint32_t>(options.repeats) * (ab ? 2 : 1);
  options.model.context = options.context + options.tokens * (runs + 1) + 1;
  app::LoadedModel loaded = app::load_model(options.model);
  GpuBackend& gpu = *loaded.backend;
  if (ab) {  // refused here, before the probe and the warm-up, if the backend lacks the knob or the value
    ab->apply(gpu);
    ab->reset(gpu);
  }
  const bool host_memory = gpu.name() == "cpu" || gpu.name() == "reference";

  // The probe runs between the timed repeats, so that each repeat's achieved
  // bandwidth is divided by what the machine delivered at about that moment:
  // host memory for the host backends, device memory where the backend has a probe kernel.
  const double probe_gib = options.probe_gib > 0 ? options.probe_gib : host_memory ? 1.0 : 4.0;
  const size_t probe_bytes = static_cast<size_t>(probe_gib * (1 << 30));
  std::unique_ptr<HostReadProbe> host_probe;
  std::optional<DeviceReadProbe> device_probe;
  std::vector<ReadBandwidth> patterns;
  std::function<double()> measure_read;
  if (host_memory) {
    host_probe = std::make_unique<HostReadProbe>(options.model.threads, probe_bytes);
    patterns = host_probe->measure_all(3);
    measure_read = [&] { return host_probe->measure(patterns.back().pattern, 3).gbps; };
  } else if ((device_probe = DeviceReadProbe::create(gpu, probe_bytes))) {
    measure_read = [&] { return device_probe->measure(5); };
  }
  const std::string best_pattern = host_probe ? patterns.back().pattern.name()
                                   : device_probe ? "device memory, one grid-stride read"
                                                  : "n/a";

  Session session(*loaded.model, options.model.context, options.model.parsed_kv_dtype());
  if (options.context > 0) session.fast_forward(options.context);
  int32_t token = 1;
  for (int i = 0; i < 2; ++i) session.decode(token);  // warm-up: page in weights, spin up threads
  const size_t weight_bytes = loaded.model->weight_bytes_per_token();
  std::vector<double> tok_per_s, read_gbps, fractions;
  std::vector<double> tuned_tok_per_s, tuned_fractions, tuned_ratios;  // --ab's second setting
  app::StealMeter steal_meter;
  size_t state_bytes = 0;
  // One timed run of options.tokens tokens: tok/s.
  const auto decode_tokens = [&] {
    const auto start = Clock::now();
    for (uint32_t t = 0; t < options.tokens; ++t) {
      if (t == options.tokens / 2) state_bytes = session.state_bytes_per_token();
      const auto logits = session.decode(token);
      token = static_cast<int32_t>(argmax(logits));
    }
    return options.tokens / std::chrono::duration<double>(Clock::now() - start).count();
  };
  const auto fraction_of = [&](double tps) {
    return tps * static_cast<double>(weight_bytes + state_bytes) / 1e9 / read_gbps.back();
  };
  for (int r = 0; r < options.repeats; ++r) {
    if (measure_read) read_gbps.push_back(measure_read());
    if (options.profile && r == options.repeats - 1) gpu.set_profiling(true);
    const std::optional<app::CpuTicks> ticks_before = app::read_cpu_ticks();
    if (ab) {
      // The two settings take turns going first, so that a drift of the
      // machine's speed during a pair favours neither.
      const auto tuned = [&] {
        ab->apply(gpu);
        const double tps = decode_tokens();
        ab->reset(gpu);
        return tps;
      };
      double defaults = 0, knob_set = 0;
      if (r % 2 == 0) {
        defaults = decode_tokens();
        knob_set = tuned();
      } else {
        knob_set = tuned();
        defaults = decode_tokens();
      }
      tok_per_s.push_back(defaults);
      tuned_tok_per_s.push_back(knob_set);
      tuned_ratios.push_back(knob_set / defaults);
      if (measure_read) tuned_fractions.push_back(fraction_of(knob_set));
    } else {
      tok_per_s.push_back(decode_tokens());
    }
    steal_meter.add(ticks_before, app::read_cpu_ticks());
    if (measure_read) fractions.push_back(fraction_of(tok_per_s.back()));
  }
  const double tps = median(tok_per_s);
  const size_t bytes_per_token = weight_bytes + state_bytes;
  const double achieved_gbps = tps * static_cast<double>(bytes_per_token) / 1e9;
  const double best_read_gbps = measure_read ? median(read_gbps) : 0.0;
  const double fraction = measure_read ? median(fractions) : 0.0;
  const std::optional<double> steal = steal_meter.fraction();

  std::map<std::string, double> family_seconds;
  double profiled_seconds = 0, wait_seconds = 0;
  uint64_t launches = 0;
  std::vector<KernelProfile> kernels = gpu.profile();
  for (const KernelProfile& p : kernels) {
    family_seconds[family(p.name)] += p.seconds;
    profiled_seconds += p.seconds;
    wait_seconds += p.wait_seconds;
    launches += p.launches;
  }
  std::sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
  const double token_seconds = 1.0 / tok_per_s.back();

  if (options.json) {
    nlohmann::json j = {{"model", loaded.description}, {"backend", gpu.name()}, {"device", gpu.device_description()},
                        {"weights", loaded.model->weight_format()}, {"kv_dtype", options.model.kv_dtype},
                        {"context", options.context}, {"tokens", options.tokens}, {"repeats", options.repeats},
                        {"tok_per_s", tps}, {"bytes_per_token", bytes_per_token},
                        {"achieved_gbps", achieved_gbps}, {"read_gbps", best_read_gbps},
                        {"read_pattern", best_pattern}, {"roofline_fraction", fraction},
                        {"int8_activations", options.model.activations() == "int8"},
                        {"int24_activations", options.model.activations() == "int24"},
                        {"cpu_steal_fraction", steal ? nlohmann::json(*steal) : nlohmann::json(nullptr)}};
    if (ab) {
      j["ab"] = {{"setting", ab->text}, {"tok_per_s", median(tuned_tok_per_s)},
                 {"roofline_fraction", measure_read ? median(tuned_fractions) : 0.0},
                 {"ratio_to_defaults", median(tuned_ratios)}, {"ratios", tuned_ratios}};
    }
    if (options.profile) {
      nlohmann::json families;
      for (const auto& [name, seconds] : family_seconds) families[name] = seconds / options.tokens;
      j["profile_seconds_per_token"] = families;
      j["launches_per_token"] = static_cast<double>(launches) / options.tokens;
      j["thread_wait_seconds_per_token"] = wait_seconds / options.tokens;
    }
    fmt::print("{}\n", j.dump());
    return;
  }
  for (const auto& p : patterns) fmt::print("read bandwidth probe  {:>36}: {:7.2f} GB/s\n", p.pattern.name(), p.gbps);
  fmt::print("decode                {} on {}, weights {}{}, kv {}, context {}\n", loaded.description, gpu.name(),
             loaded.model->weight_format(), options.model.activations_label(),
             options.model.kv_dtype, options.context);
  fmt::print("tok/s                 {:.2f} (median of {} x {} tokens: {:.2f})\n", tps, options.repeats, options.tokens,
             fmt::join(tok_per_s, ", "));
  fmt::print("bytes per token       {:.1f} MB (weights {:.1f} MB + KV and recurrent state {:.1f} MB)\n",
             bytes_per_token / 1e6, loaded.model->weight_bytes_per_token() / 1e6, state_bytes / 1e6);
  fmt::print("achieved              {:.2f} GB/s\n", achieved_gbps);
  fmt::print("read bandwidth        {:.2f} GB/s ({}, median of the probes between repeats: {:.1f})\n",
             best_read_gbps, best_pattern, fmt::join(read_gbps, ", "));
  fmt::print("roofline fraction     {:.3f} (median over repeats of achieved / probe: {:.3f})\n", fraction,
             fmt::join(fractions, ", "));
  if (ab) {
    fmt::print("with {}   {:.2f} tok/s, roofline fraction {:.3f}; per repeat against the defaults beside it: "
               "median {:.3f} ({:.3f})\n",
               ab->text, median(tuned_tok_per_s), measure_read ? median(tuned_fractions) : 0.0,
               median(tuned_ratios), fmt::join(tuned_ratios, ", "));
  }
  if (steal) {
    std::vector<double> percents;
    for (double f : steal_meter.per_interval()) percents.push_back(100 * f);
    fmt::print("cpu steal             {:.1f}% of the CPU time during the timed repeats went to other guests "
               "(per repeat: {:.1f})\n",
               100 * *steal, fmt::join(percents, ", "));
  }
  if (options.profile) {
    fmt::print("profile (last repeat, {:.1f} launches/token, kernels cover {:.1f}% of the token time):\n",
               static_cast<double>(launches) / options.tokens,
               100.0 * profiled_seconds / options.tokens / token_seconds);
    fmt::print("  waiting for the backend's other threads at the end of launches: {:.3f} ms/token, {:.1f}%\n",
               1e3 * wait_seconds / options.tokens, 100.0 * wait_seconds / options.tokens / token_seconds);
    for (const auto& [name, seconds] : family_seconds) {
      fmt::print("  {:<16} {:8.3f} ms/token  {:5.1f}%\n", name, 1e3 * seconds / options.tokens,
                 100.0 * seconds / options.tokens / token_seconds);
    }
    fmt::print("by kernel (launches/token, us/launch, share of the kernel's time spent waiting for other threads):\n");
    for (const KernelProfile& p : kernels) {
      fmt::print("  {:<28} {:8.3f} ms/token  {:5.1f}%  {:6.1f} x {:8.2f} us  wait {:4.1f}%\n", p.name,
                 1e3 * p.seconds / options.tokens, 100.0 * p.seconds / options.tokens / token_seconds,
                 static_cast<double>(p.launches) / options.tokens, 1e6 * p.seconds / std::max<uint64_t>(p.launches, 1),
                 100.0 * p.wait_seconds / std::max(p.seconds, 1e-12));
    }
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* command = app.add_subcommand("bench", "decode speed and the memory-bandwidth roofline, measured together");
  options->model.add_to(*command);
  command->add_option("--preset", options->model.preset,
                      fmt::format("random-weight model shape when no --model is given: {}",
                                  qwen35::Qwen35ForwardConfig::kPresetNames))
      ->capture_default_str();
  command->add_option("--dtype", options->dtype,
                      "weights of the preset: bf16, f16, f32, mlx8/mlx4 (quantized from bf16 in memory) or "
                      "q8_0/q4_0/q4_k/q5_k/q6_k (converted from bf16 to a temporary GGUF file)")
      ->capture_default_str();
  command->add_option("-n,--tokens", options->tokens, "tokens decoded per repeat")->capture_default_str();
  command->add_option("--repeats", options->repeats, "timed repeats (the median is reported)")->capture_default_str();
  command->add_option("--context", options->context, "tokens already in the KV cache")->capture_default_str();
  command->add_option("--probe-gib", options->probe_gib, "bandwidth probe buffer in GiB (default: 1 on the host, 4 on a device)");
  command->add_flag("--json", options->json, "print one JSON object");
  command->add_flag("--profile", options->profile, "time per op family");
  command->add_option("--ab", options->ab,
                      "KNOB=VALUE: each repeat also decodes with the backend's tuning knob set so (the two "
                      "settings in turn), and the ratio of their tok/s is reported per repeat: a comparison "
                      "that a shared machine's swings between separate runs would drown");
  command->callback([options] { run_bench(*options); });
}
