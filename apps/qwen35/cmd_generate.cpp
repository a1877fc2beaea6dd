// `qwen35 generate`: greedy decoding from a list of prompt token ids; prints the
// generated ids as they come and the prompt and generation speeds.
#include <algorithm>
#include <chrono>

#include "commands.h"
#include "model_options.h"

namespace {

struct GenerateOptions {
  qwen35::app::ModelOptions model;
  std::string tokens = "1";
  uint32_t n_generate = 32;
};

int32_t argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

void run_generate(const GenerateOptions& options) {
  using namespace qwen35;
  using Clock = std::chrono::steady_clock;
  const std::vector<int32_t> prompt = app::parse_token_list(options.tokens);
  app::LoadedModel loaded = app::load_model(options.model);
  Session session(*loaded.model, options.model.context, options.model.parsed_kv_dtype());
  if (prompt.size() + options.n_generate > session.capacity()) {
    fail("prompt ({} tokens) plus -n {} exceeds the context length of {} tokens (raise -c/--ctx)", prompt.size(),
         options.n_generate, session.capacity());
  }

  const auto prompt_start = Clock::now();
  std::span<const float> logits;
  for (int32_t token : prompt) logits = session.decode(token);
  const double prompt_seconds = std::chrono::duration<double>(Clock::now() - prompt_start).count();

  const auto generate_start = Clock::now();
  for (uint32_t i = 0; i < options.n_generate; ++i) {
    const int32_t next = argmax(logits);
    fmt::print("{}{}", i ? "," : "", next);
    std::fflush(stdout);
    if (i + 1 < options.n_generate) logits = session.decode(next);
  }
  fmt::print("\n");
  const double generate_seconds = std::chrono::duration<double>(Clock::now() - generate_start).count();
  const uint32_t decoded = options.n_generate > 0 ? options.n_generate - 1 : 0;
  fmt::print(stderr, "qwen35: prompt {} tokens in {:.2f} s ({:.2f} tok/s); generated {} tokens, {:.2f} tok/s\n",
             prompt.size(), prompt_seconds, prompt.size() / std::max(prompt_seconds, 1e-9), options.n_generate,
             decoded / std::max(generate_seconds, 1e-9));
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App* command = app.add_subcommand("generate", "greedy decoding from prompt token ids");
  options->model.add_to(*command);
  command->add_option("--tokens", options->tokens, "comma-separated prompt token ids")->capture_default_str();
  command->add_option("-n,--n-predict", options->n_generate, "tokens to generate")->capture_default_str();
  command->callback([options] { run_generate(*options); });
}
