// `qwen35 logits`: decode tokens one at a time from an empty state and write the
// logits after each as raw little-endian float32 [n_tokens, vocab]. External
// checks depend on exactly this interface.
#include <cstdio>
#include <fstream>

#include "commands.h"
#include "model_options.h"

namespace {

struct LogitsOptions {
  qwen35::app::ModelOptions model;
  std::string tokens;
  std::string out;
};

void run_logits(const LogitsOptions& options) {
  using namespace qwen35;
  const std::vector<int32_t> tokens = app::parse_token_list(options.tokens);
  app::LoadedModel loaded = app::load_model(options.model);
  const uint32_t context = std::max<uint32_t>(options.model.context, static_cast<uint32_t>(tokens.size()));
  Session session(*loaded.model, context, options.model.parsed_kv_dtype());
  std::ofstream out(options.out, std::ios::binary | std::ios::trunc);
  if (!out) fail("cannot open --out file '{}' for writing", options.out);
  for (int32_t token : tokens) {
    std::span<const float> logits = session.decode(token);
    out.write(reinterpret_cast<const char*>(logits.data()), static_cast<std::streamsize>(logits.size_bytes()));
  }
  out.close();
  if (!out) fail("writing --out file '{}' failed", options.out);
  fmt::print(stderr, "qwen35: wrote {} x {} logits to {}\n", tokens.size(), loaded.model->config().vocab,
             options.out);
}

}  // namespace

void add_logits_command(CLI::App& app) {
  auto options = std::make_shared<LogitsOptions>();
  CLI::App* command = app.add_subcommand("logits", "write the logits of each token as float32 [n_tokens, vocab]");
  options->model.add_to(*command);
  command->add_option("--tokens", options->tokens, "comma-separated token ids")->required();
  command->add_option("--out", options->out, "output file")->required();
  command->callback([options] { run_logits(*options); });
}
