// Shared model options and loading for the subcommands (see model_options.h).
#include "model_options.h"

#include <charconv>

#include <fmt/format.h>

#include "qwen35/checkpoint.h"

namespace qwen35::app {

void ModelOptions::add_to(CLI::App& command) {
  command.add_option("-m,--model", model_dir,
                     "Hugging Face Qwen3.5 checkpoint directory (default: built-in random-weight 0.8B model)");
  command.add_option("--backend", backend, "compute backend: " + available_backends())->capture_default_str();
  command.add_option("-t,--threads", threads, "CPU threads (0 = all cores)")->capture_default_str();
  command.add_option("--device", device, "GPU index for GPU backends")->capture_default_str();
  command.add_option("--kv-dtype", kv_dtype, "KV cache dtype: f32 or bf16")->capture_default_str();
  command.add_option("-c,--ctx", context, "context length (KV cache capacity in tokens)")->capture_default_str();
  command.add_option("--seed", seed, "seed of the built-in random weights")->capture_default_str();
}

KvDtype ModelOptions::parsed_kv_dtype() const {
  std::optional<KvDtype> dtype = parse_kv_dtype(kv_dtype);
  if (!dtype) fail("unknown --kv-dtype '{}' (expected f32 or bf16)", kv_dtype);
  return *dtype;
}

LoadedModel load_model(const ModelOptions& options) {
  LoadedModel loaded;
  loaded.backend = create_backend(options.backend, BackendOptions{.threads = options.threads, .device = options.device});
  if (options.model_dir.empty()) {
    const Qwen35ForwardConfig config = Qwen35ForwardConfig::qwen35_0_8b();
    fmt::print(stderr, "qwen35: no --model given: using RANDOM WEIGHTS in the Qwen3.5-0.8B shape (seed {}); "
                       "output tokens are meaningless\n", options.seed);
    std::shared_ptr<TensorSource> weights = make_random_weights(config, DType::kBF16, options.seed);
    loaded.model = Model::load(*loaded.backend, config, weights, "model.language_model.");
    loaded.description = "random-weight Qwen3.5-0.8B (bf16)";
  } else {
    Checkpoint checkpoint = open_hf_checkpoint(options.model_dir);
    std::shared_ptr<const TensorSource> tensors = std::move(checkpoint.tensors);
    loaded.model = Model::load(*loaded.backend, checkpoint.config, tensors, checkpoint.tensor_prefix);
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
