// `qwen35 generate`: text in, text out. With --prompt (or --file) the prompt is tokenized
// with the checkpoint's tokenizer, wrapped in the chat template with --chat, and the
// continuation streams to stdout as it is sampled. With --tokens, or with no prompt at all
// (the README's first command, on the built-in random weights), the prompt is token ids
// and the output is ids: greedy unless --temp is given.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "commands.h"
#include "model_options.h"
#include "text_options.h"

namespace {

struct GenerateOptions {
  qwen35::app::ModelOptions model;
  qwen35::app::TextOptions text;
  std::string tokens = "1";
  std::string prompt;
  std::string prompt_file;
  bool chat = false;
  bool echo = false;
  bool ignore_eos = false;
  CLI::Option* prompt_option = nullptr;
  CLI::Option* file_option = nullptr;
  std::vector<CLI::Option*> text_only;  // meaningless with --tokens
};

void run_generate_ids(const GenerateOptions& options) {
  using namespace qwen35;
  using Clock = std::chrono::steady_clock;
  for (const CLI::Option* option : options.text_only) {
    if (option->count() > 0) fail("{} needs a text prompt (--prompt or --file), not --tokens", option->get_name());
  }
  const std::vector<int32_t> prompt = app::parse_token_list(options.tokens);
  const uint32_t n_generate = options.text.n_predict < 0 ? 32 : static_cast<uint32_t>(options.text.n_predict);
  SamplerParams sampler_params = options.text.sampling.params(options.model.seed);
  if (options.text.sampling.temperature_option->count() == 0) sampler_params.temperature = 0.0f;
  Sampler sampler(sampler_params);
  app::LoadedModel loaded = app::load_model(options.model);
  Session session(*loaded.model, options.model.context, options.model.parsed_kv_dtype());
  if (prompt.size() + n_generate > session.capacity()) {
    fail("prompt ({} tokens) plus -n {} exceeds the context length of {} tokens (raise -c/--ctx)", prompt.size(),
         n_generate, session.capacity());
  }

  const auto prompt_start = Clock::now();
  std::span<const float> logits = session.prefill(prompt);
  for (int32_t token : prompt) sampler.accept(token);
  const double prompt_seconds = std::chrono::duration<double>(Clock::now() - prompt_start).count();

  const auto generate_start = Clock::now();
  for (uint32_t i = 0; i < n_generate; ++i) {
    const int32_t next = sampler.sample(logits);
    sampler.accept(next);
    fmt::print("{}{}", i ? "," : "", next);
    std::fflush(stdout);
    if (i + 1 < n_generate) logits = session.decode(next);
  }
  fmt::print("\n");
  const double generate_seconds = std::chrono::duration<double>(Clock::now() - generate_start).count();
  const uint32_t decoded = n_generate > 0 ? n_generate - 1 : 0;
  fmt::print(stderr, "qwen35: prompt {} tokens in {:.2f} s ({:.2f} tok/s); generated {} tokens, {:.2f} tok/s\n",
             prompt.size(), prompt_seconds, prompt.size() / std::max(prompt_seconds, 1e-9), n_generate,
             decoded / std::max(generate_seconds, 1e-9));
}

std::string read_prompt_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) qwen35::fail("cannot open --file {}", path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void run_generate_text(const GenerateOptions& options) {
  using namespace qwen35;
  const bool from_file = options.file_option->count() > 0;
  const std::string source = from_file ? "--file " + options.prompt_file : "--prompt";
  const Tokenizer tokenizer = app::load_tokenizer(options.text.tokenizer, options.model.model_dir, source);
  const std::string text = from_file ? read_prompt_file(options.prompt_file) : options.prompt;
  const bool chat = options.chat || !options.text.system.empty() || options.text.no_think;
  const ChatOptions chat_options = options.text.chat_options(tokenizer);

  // The prompt's tokens, and every check that needs no model, before the model loads.
  std::vector<int32_t> prompt;
  try {
    prompt = tokenizer.encode(text);  // also finds invalid UTF-8 at its offset in the user's text
  } catch (const Error& e) {
    fail("{}: {}", source, e.what());
  }
  if (chat) {
    try {
      (void)tokenizer.encode(options.text.system);
    } catch (const Error& e) {
      fail("--system: {}", e.what());
    }
    std::vector<ChatMessage> messages;
    if (!options.text.system.empty()) messages.push_back({.role = "system", .content = options.text.system});
    messages.push_back({.role = "user", .content = text});
    prompt = encode_chat(tokenizer, messages, chat_options);
  }
  if (prompt.empty()) fail("{} is empty: there is nothing to generate from", source);
  if (prompt.size() > options.model.context) {
    fail("the prompt is {} tokens, longer than the context length of {} tokens (raise -c/--ctx)", prompt.size(),
         options.model.context);
  }
  GenerationParams params = options.text.generation_params(options.model.seed);
  if (!options.ignore_eos) params.stop_ids = default_stop_ids(tokenizer, chat);
  Sampler check_sampler(params.sampler);
  StopChecker check_stops(params.stop_strings);

  app::LoadedModel loaded = app::load_model(options.model);
  check_tokenizer_fits(*loaded.model, tokenizer);
  Session session(*loaded.model, options.model.context, options.model.parsed_kv_dtype());
  Generator generator(session, tokenizer, params);
  if (options.echo) app::write_text(chat ? text + "\n" : text);
  if (chat) app::write_text(app::reply_opening(chat_options));
  const GenerationResult result = generator.generate(prompt, app::write_text);
  app::write_text("\n");
  const GenerationStats& s = result.stats;
  fmt::print(stderr,
             "qwen35: prompt {} tokens in {:.2f} s ({:.2f} tok/s); generated {} tokens in {:.2f} s ({:.2f} tok/s); "
             "stopped: {}\n",
             s.prompt_tokens, s.prompt_seconds, s.prompt_tokens_per_second(), s.generated_tokens, s.generated_seconds,
             s.generated_tokens_per_second(), stop_reason_name(result.stop_reason));
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App* command = app.add_subcommand(
      "generate", "continue a text prompt, streaming the text (or, with --tokens, token ids in and out)");
  options->model.add_to(*command, "seed of the sampler and of the built-in random weights");
  options->prompt_option = command->add_option("-p,--prompt", options->prompt, "the prompt text");
  options->file_option = command->add_option("-f,--file", options->prompt_file, "read the prompt text from a file");
  CLI::Option* tokens_option =
      command->add_option("--tokens", options->tokens, "comma-separated prompt token ids; prints ids")
          ->capture_default_str();
  options->prompt_option->excludes(options->file_option);
  tokens_option->excludes(options->prompt_option)->excludes(options->file_option);
  options->text.add_to(*command,
                       "tokens to generate; -1: until an end-of-sequence token or a full context (32 with --tokens)");
  auto& only = options->text_only;
  only.push_back(command->add_flag("--chat", options->chat,
                                   "wrap the prompt in the chat template as a user turn (implied by --system and "
                                   "--no-think)"));
  only.push_back(command->add_flag("--echo", options->echo, "print the prompt before the generated text"));
  only.push_back(command->add_flag("--ignore-eos", options->ignore_eos, "do not stop on end-of-sequence tokens"));
  for (const char* name : {"--tokenizer", "--stop", "--system", "--no-think"}) only.push_back(command->get_option(name));
  command->callback([options] {
    if (options->prompt_option->count() > 0 || options->file_option->count() > 0) {
      run_generate_text(*options);
    } else {
      run_generate_ids(*options);
    }
  });
}
