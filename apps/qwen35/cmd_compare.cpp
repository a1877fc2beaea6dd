// `qwen35 compare`: how much a weight format, KV format or backend changes the
// model's predictions. Two configurations decode the same tokens side by side
// and, after each token, their next-token distributions are compared: KL
// divergence KL(A || B) and whether the top-1 tokens agree.
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "model_options.h"
#include "qwen35/logit_comparison.h"

namespace {

struct CompareOptions {
  qwen35::app::ModelOptions a;
  std::string model_b, kv_dtype_b, backend_b;
  bool int8_activations_b = false;
  bool int24_activations_b = false;
  bool float_activations_b = false;
  std::string tokens;
  uint32_t random_tokens = 0;
  bool json = false;
  bool per_token = false;
};

std::vector<int32_t> tokens_to_decode(const CompareOptions& options, uint32_t vocab) {
  if (!options.tokens.empty()) return qwen35::app::parse_token_list(options.tokens);
  std::mt19937 rng(static_cast<uint32_t>(options.a.seed) + 1);
  std::vector<int32_t> tokens(options.random_tokens);
  for (int32_t& t : tokens) t = static_cast<int32_t>(rng() % vocab);
  return tokens;
}

void run_compare(const CompareOptions& options) {
  using namespace qwen35;
  if (options.tokens.empty() == (options.random_tokens == 0)) fail("give exactly one of --tokens and --random-tokens");
  const app::ModelOptions& a = options.a;
  app::ModelOptions b = a;
  if (!options.model_b.empty()) b.model_dir = options.model_b;
  if (!options.kv_dtype_b.empty()) b.kv_dtype = options.kv_dtype_b;
  if (!options.backend_b.empty()) b.backend = options.backend_b;
  if (options.int8_activations_b) b.int8_activations = true;
  if (options.int24_activations_b) b.int24_activations = true;
  if (options.float_activations_b) b.int8_activations = b.int24_activations = false;
  const KvDtype kv_a = a.parsed_kv_dtype(), kv_b = b.parsed_kv_dtype();
  if (b.model_dir == a.model_dir && kv_b == kv_a && b.backend == a.backend &&
      b.int8_activations == a.int8_activations && b.int24_activations == a.int24_activations) {
    fail("nothing to compare: B is A; give B a different --model-b, --kv-dtype-b or --backend-b, or "
         "--int8-activations-b, --int24-activations-b or --float-activations-b (A's activations: {})",
         a.activations());
  }

  app::LoadedModel model_a = app::load_model(options.a);
  app::LoadedModel model_b = app::load_model(b);
  const uint32_t vocab = model_a.model->config().vocab;
  if (model_b.model->config().vocab != vocab) {
    fail("A has a vocabulary of {} tokens and B of {}: their distributions cannot be compared", vocab,
         model_b.model->config().vocab);
  }
  const std::vector<int32_t> tokens = tokens_to_decode(options, vocab);
  const auto context = std::max<uint32_t>(options.a.context, static_cast<uint32_t>(tokens.size()));
  Session session_a(*model_a.model, context, kv_a);
  Session session_b(*model_b.model, context, kv_b);

  LogitComparison comparison;
  for (int32_t token : tokens) {
    comparison.add(session_a.decode(token), session_b.decode(token));  // each session owns its logits
  }

  const auto name_of = [](const app::LoadedModel& m, const app::ModelOptions& o, KvDtype kv) {
    return fmt::format("{} / {}{} / kv {}", m.description, o.backend, o.activations_label(), kv_dtype_name(kv));
  };
  const std::string name_a = name_of(model_a, options.a, kv_a);
  const std::string name_b = name_of(model_b, b, kv_b);
  if (options.json) {
    nlohmann::json out = {{"a", name_a},
                          {"b", name_b},
                          {"positions", comparison.positions()},
                          {"mean_kl", comparison.mean_kl()},
                          {"max_kl", comparison.max_kl()},
                          {"top1_agreement", comparison.top1_agreement()},
                          {"max_abs_logit_diff", comparison.max_abs_logit_diff()}};
    if (options.per_token) {
      for (const PositionComparison& p : comparison.per_position()) {
        out["per_token"].push_back({{"kl", p.kl}, {"top1_agrees", p.top1_agrees}});
      }
    }
    fmt::print("{}\n", out.dump());
    return;
  }
  if (options.per_token) {
    for (size_t i = 0; i < tokens.size(); ++i) {
      const PositionComparison& p = comparison.per_position()[i];
      fmt::print("token {:4d} (id {:6d}): KL {:.3g}  top-1 {}\n", i, tokens[i], p.kl, p.top1_agrees ? "same" : "DIFFERS");
    }
  }
  fmt::print("A: {}\nB: {}\n", name_a, name_b);
  fmt::print("{} positions: mean KL(A||B) {:.3g} nats, max {:.3g}; top-1 agreement {:.1f}%; max |logit diff| {:.4f}\n",
             comparison.positions(), comparison.mean_kl(), comparison.max_kl(), 100 * comparison.top1_agreement(),
             comparison.max_abs_logit_diff());
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* command = app.add_subcommand(
      "compare", "KL divergence and top-1 agreement of two configurations' next-token distributions");
  options->a.add_to(*command);
  command->add_option("--model-b", options->model_b, "B's checkpoint (default: A's)");
  command->add_option("--kv-dtype-b", options->kv_dtype_b, "B's KV cache dtype (default: A's)");
  command->add_option("--backend-b", options->backend_b, "B's backend (default: A's)");
  command->add_flag("--int8-activations-b", options->int8_activations_b,
                    "B quantizes activations to 8 bits for GGUF or MLX weights (CPU; see --int8-activations)");
  command->add_flag("--int24-activations-b", options->int24_activations_b,
                    "B takes activations in 24 bits for GGUF and MLX weights (CPU; see --int24-activations)");
  command->add_flag("--float-activations-b", options->float_activations_b,
                    "B takes activations as floats for GGUF and MLX weights (CPU; see --float-activations)");
  command->add_option("--tokens", options->tokens, "comma-separated token ids to decode");
  command->add_option("--random-tokens", options->random_tokens, "decode this many random token ids (seeded by --seed)");
  command->add_flag("--json", options->json, "print one JSON object");
  command->add_flag("--per-token", options->per_token, "also report every position");
  command->callback([options] { run_compare(*options); });
}
