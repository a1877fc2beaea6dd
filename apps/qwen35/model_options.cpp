// Shared model options and loading for the subcommands (see model_options.h).
#include "model_options.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "formats/gguf_converter.h"
#include "formats/mlx_quantizer.h"
#include "qwen35/checkpoint.h"

namespace qwen35::app {

void ModelOptions::add_to(CLI::App& command, const std::string& seed_help) {
  command.add_option("-m,--model", model_dir,
                     "Hugging Face / MLX Qwen3.5 checkpoint directory or llama.cpp .gguf file (default: built-in "
                     "random-weight 0.8B model)");
  command.add_option("--backend", backend, "compute backend: " + available_backends())->capture_default_str();
  command.add_option("-t,--threads", threads, "CPU threads (0 = all cores)")->capture_default_str();
  command.add_option("--device", device, "GPU index for GPU backends")->capture_default_str();
  command.add_option("--simd", simd_target,
                     "CPU: run the SIMD kernels of this target instead of the best one (here: " + simd_targets() +
                         ")");
  command.add_flag("--int8-activations", int8_activations,
                   "CPU with GGUF or MLX weights: quantize activations to 8 bits per 32 for integer dot products "
                   "(faster on 4- to 8-bit weights; not float32-exact)");
  const std::string default_x = kInt24ActivationsByDefault ? " (the default here)" : "";
  command.add_flag("--int24-activations", int24_activations,
                   "CPU with GGUF Q4_0, Q4_K, Q5_K, Q6_K or MLX weights: x in 24 bits per 32 (three 8-bit digits) "
                   "for integer dot products, as precise as float32 arithmetic" + default_x +
                       "; --int8-activations wins if both");
  command.add_flag("!--float-activations", int24_activations,
                   std::string("CPU with GGUF or MLX weights: x as floats through the float kernels, the reference "
                               "the GPU backends are compared with") + (default_x.empty() ? " (the default here)" : ""));
  command.add_flag("!--no-regroup", regroup_rows,
                   "CPU with int8 or int24 activations: keep Q4_0, Q8_0, Q4_K, Q5_K, Q6_K and "
                   "MLX matrices row by row rather than regrouped 16 rows at a time (slower; for comparisons)");
  command.add_option("--kv-dtype", kv_dtype, "KV cache dtype: " + kv_dtype_names())->capture_default_str();
  command.add_option("-c,--ctx", context, "context length (KV cache capacity in tokens)")->capture_default_str();
  command.add_option("--seed", seed, seed_help)->capture_default_str();
}

std::string_view ModelOptions::activations() const {
  if (backend != "cpu") return "float";
  if (int8_activations) return "int8";
  return int24_activations ? "int24" : "float";
}

std::string ModelOptions::activations_label() const {
  const std::string_view x = activations();
  return x == "float" ? "" : fmt::format(" ({} activations)", x);
}

KvDtype ModelOptions::parsed_kv_dtype() const {
  std::optional<KvDtype> dtype = parse_kv_dtype(kv_dtype);
  if (!dtype) fail("unknown --kv-dtype '{}' (expected one of {})", kv_dtype, kv_dtype_names());
  return *dtype;
}

namespace {

// "[#########...........]  45%  1.21 / 2.70 GB" redrawn in place on a terminal; nothing
// (an empty callback) when stderr is a file or a pipe, so logs stay clean.
Model::LoadProgress load_progress_bar() {
  if (!isatty(fileno(stderr))) return {};
  return [last_percent = -1](size_t done, size_t total) mutable {
    const int percent = total == 0 ? 100 : static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total));
    if (percent == last_percent) return;
    last_percent = percent;
    constexpr int kWidth = 30;
    const int filled = percent * kWidth / 100;
    const bool gigabytes = total >= 1e9;
    const double unit = gigabytes ? 1e9 : 1e6;
    fmt::print(stderr, "\rqwen35: loading weights [{}{}] {:3d}%  {:.2f} / {:.2f} {}", std::string(filled, '#'),
               std::string(kWidth - filled, '.'), percent, done / unit, total / unit, gigabytes ? "GB" : "MB");
    // Done: clear the line for the summary that follows.
    if (done == total) fmt::print(stderr, "\r\x1b[K");
    std::fflush(stderr);
  };
}

// Removes a file when it goes out of scope, also when what came between threw.
class RemovedOnExit {
 public:
  explicit RemovedOnExit(std::filesystem::path path) : path_(std::move(path)) {}
  ~RemovedOnExit() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  RemovedOnExit(const RemovedOnExit&) = delete;
  RemovedOnExit& operator=(const RemovedOnExit&) = delete;

 private:
  std::filesystem::path path_;
};

// The random weights written as a GGUF file of `type` in the temporary directory,
// loaded through the GGUF loader like any .gguf, and the file removed. Removing it
// once loaded is safe with every backend: the CPU backend copies the weights
// (CpuBackend::map_host), and where a backend aliases them (the reference
// backend) it aliases the file's mapping, which the model keeps and which POSIX
// keeps readable after the name is gone.
std::unique_ptr<Model> load_random_as_gguf(GpuBackend& gpu, const Qwen35ForwardConfig& config,
                                           std::shared_ptr<TensorSource> random, DType type,
                                           const std::string& name) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     fmt::format("qwen35-random-{}-{}.gguf", dtype_lower_name(type), getpid());
  const RemovedOnExit removed(file);
  fmt::print(stderr, "qwen35: converting the random weights to GGUF {} in {} (removed once loaded)\n",
             dtype_name(type), file.string());
  write_gguf_checkpoint(config, *random, CheckpointLayout::hugging_face("model.language_model."),
                        name, file, {.matrix_type = type});
  random.reset();  // the bf16 weights are no longer needed: free them before loading
  Checkpoint checkpoint = open_checkpoint(file);
  std::shared_ptr<const TensorSource> tensors = std::move(checkpoint.tensors);
  return Model::load(gpu, checkpoint.config, tensors, checkpoint.layout, load_progress_bar());
}

}  // namespace

LoadedModel load_model(const ModelOptions& options) {
  LoadedModel loaded;
  loaded.backend = create_backend(options.backend, BackendOptions{.threads = options.threads,
                                                                  .device = options.device,
                                                                  .int8_activations = options.int8_activations,
                                                                  .int24_activations = options.int24_activations,
                                                                  .regroup_rows = options.regroup_rows,
                                                                  .simd_target = options.simd_target});
  if (options.model_dir.empty()) {
    const std::optional<Qwen35ForwardConfig> preset = Qwen35ForwardConfig::preset(options.preset);
    if (!preset) fail("unknown preset '{}' (available: {})", options.preset, Qwen35ForwardConfig::kPresetNames);
    const Qwen35ForwardConfig& config = *preset;
    std::string shape = options.preset;
    std::transform(shape.begin(), shape.end(), shape.begin(), [](unsigned char ch) { return std::toupper(ch); });
    shape = "Qwen3.5-" + shape;
    fmt::print(stderr, "qwen35: no --model given: using RANDOM WEIGHTS in the {} shape (seed {}); "
                       "output tokens are meaningless\n", shape, options.seed);
    std::shared_ptr<TensorSource> weights = make_random_weights(config, options.weight_dtype, options.seed);
    loaded.description = fmt::format("random-weight {} ({})", shape, dtype_name(options.weight_dtype));
    if (options.random_mlx) {
      fmt::print(stderr, "qwen35: quantizing the random weights to mlx{} (group {}) in memory\n",
                 options.random_mlx->bits, options.random_mlx->group_size);
      const CheckpointLayout random_layout = CheckpointLayout::hugging_face("model.language_model.");
      MlxQuantized quantized = quantize_to_mlx(*weights, random_layout, *options.random_mlx);
      // The quantized source views the random one's unquantized tensors: one owner keeps both alive.
      struct Both {
        std::shared_ptr<TensorSource> random;
        std::unique_ptr<TensorSource> quantized;
      };
      auto both = std::make_shared<Both>(Both{weights, std::move(quantized.tensors)});
      const std::shared_ptr<const TensorSource> tensors(both, both->quantized.get());
      loaded.model = Model::load(*loaded.backend, config, tensors, quantized.layout, load_progress_bar());
      loaded.description += fmt::format(" quantized to mlx{}", options.random_mlx->bits);
    } else if (options.random_gguf) {
      loaded.model = load_random_as_gguf(*loaded.backend, config, std::move(weights), *options.random_gguf,
                                         "random " + shape);
      loaded.description += fmt::format(" converted to GGUF {}", dtype_name(*options.random_gguf));
    } else {
      loaded.model = Model::load(*loaded.backend, config, weights, "model.language_model.", load_progress_bar());
    }
  } else {
    Checkpoint checkpoint = open_checkpoint(options.model_dir);
    std::shared_ptr<const TensorSource> tensors = std::move(checkpoint.tensors);
    loaded.model = Model::load(*loaded.backend, checkpoint.config, tensors, checkpoint.layout, load_progress_bar());
    loaded.description = options.model_dir;
  }
  fmt::print(stderr, "qwen35: {} on {} ({}): {}\n", loaded.description, loaded.backend->name(),
             loaded.backend->device_description(), loaded.model->config().summary());
  return loaded;
}

std::vector<int32_t> parse_token_list(const std::string& text) {
  std::vector<int32_t> tokens;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    int32_t value = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size()) {
      fail("--tokens '{}': '{}' is not a token id (expected comma-separated integers)", text, item);
    }
    tokens.push_back(value);
    start = end + 1;
  }
  return tokens;
}

}  // namespace qwen35::app
