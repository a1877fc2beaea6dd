// `qwen35 chat`: an interactive conversation. Reads one user message per stdin line (a
// line ending in a backslash continues on the next) until end of input or /exit, streams
// each reply to stdout, and keeps the whole conversation in one Session's state, so a turn
// decodes only its own tokens. Works the same with stdin a pipe (then without the "> ").
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include "commands.h"
#include "model_options.h"
#include "text_options.h"

namespace {

struct ChatCommandOptions {
  qwen35::app::ModelOptions model;
  qwen35::app::TextOptions text;
};

constexpr std::string_view kHelp =
    "type a message and press Enter; end a line with \\ to continue it on the next.\n"
    "/reset forgets the conversation, /exit (or end of input) quits.\n";

// The next message, or nothing at end of input. Joins backslash-continued lines.
std::optional<std::string> read_message(bool interactive) {
  std::string message;
  std::string line;
  for (;;) {
    if (interactive) qwen35::app::write_text(message.empty() ? "> " : ". ");
    if (!std::getline(std::cin, line)) {
      if (message.empty()) return std::nullopt;
      return message;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line.back() == '\\') {
      line.pop_back();
      message += line + "\n";
      continue;
    }
    return message + line;
  }
}

// What to do about a message that does not fit in the context; empty for other errors.
std::string_view context_hint(const qwen35::ChatSession& chat, const qwen35::Session& session,
                              const std::string& message) {
  try {
    if (chat.next_turn_tokens(message).size() <= session.capacity() - session.position()) return "";
  } catch (const qwen35::Error&) {
    return "";
  }
  return session.position() > 0 ? " (/reset starts a new conversation)" : " (raise -c/--ctx)";
}

void run_chat(const ChatCommandOptions& options) {
  using namespace qwen35;
  const Tokenizer tokenizer = app::load_tokenizer(options.text.tokenizer, options.model.model_dir, "chat");
  ChatParams params;
  params.system_prompt = options.text.system;
  params.format = options.text.chat_options(tokenizer);
  params.generation = options.text.generation_params(options.model.seed);
  params.generation.stop_ids = default_stop_ids(tokenizer, /*chat=*/true);
  Sampler check_sampler(params.generation.sampler);
  StopChecker check_stops(params.generation.stop_strings);

  app::LoadedModel loaded = app::load_model(options.model);
  check_tokenizer_fits(*loaded.model, tokenizer);
  Session session(*loaded.model, options.model.context, options.model.parsed_kv_dtype());
  ChatSession chat(session, tokenizer, params);

  const bool interactive = isatty(fileno(stdin)) != 0;
  if (interactive) fmt::print(stderr, "{}", kHelp);
  GenerationStats total;
  uint32_t turns = 0;
  uint32_t failed = 0;
  while (std::optional<std::string> message = read_message(interactive)) {
    if (*message == "/exit" || *message == "/quit") break;
    if (*message == "/reset") {
      chat.reset();
      fmt::print(stderr, "qwen35: conversation forgotten\n");
      continue;
    }
    if (*message == "/help") {
      fmt::print(stderr, "{}", kHelp);
      continue;
    }
    if (message->empty()) continue;
    GenerationResult reply;
    try {
      // The opening goes out first: the model continues from it.
      bool opened = false;
      reply = chat.send(*message, [&](std::string_view text) {
        if (!opened) app::write_text(app::reply_opening(params.format));
        opened = true;
        app::write_text(text);
      });
      if (!opened) app::write_text(app::reply_opening(params.format));
      app::write_text("\n");
    } catch (const Error& e) {
      // A bad message (invalid UTF-8, no room left) costs that message only.
      ++failed;
      fmt::print(stderr, "qwen35: error: message {}: {}{}\n", turns + failed, e.what(),
                 context_hint(chat, session, *message));
      continue;
    }
    ++turns;
    const GenerationStats& s = reply.stats;
    fmt::print(stderr,
               "qwen35: turn {}: prompt {} tokens ({:.2f} tok/s); reply {} tokens ({:.2f} tok/s), stopped: {}; "
               "context {} / {}\n",
               turns, s.prompt_tokens, s.prompt_tokens_per_second(), s.generated_tokens,
               s.generated_tokens_per_second(), stop_reason_name(reply.stop_reason), session.position(),
               session.capacity());
    total.prompt_tokens += s.prompt_tokens;
    total.prompt_seconds += s.prompt_seconds;
    total.generated_tokens += s.generated_tokens;
    total.generated_decodes += s.generated_decodes;
    total.generated_seconds += s.generated_seconds;
  }
  fmt::print(stderr, "qwen35: {} replies: prompt {} tokens in {:.2f} s ({:.2f} tok/s); generated {} tokens in {:.2f} s "
                     "({:.2f} tok/s)\n",
             turns, total.prompt_tokens, total.prompt_seconds, total.prompt_tokens_per_second(),
             total.generated_tokens, total.generated_seconds, total.generated_tokens_per_second());
  if (failed > 0) fail("{} of {} messages failed (see above)", failed, failed + turns);
}

}  // namespace

void add_chat_command(CLI::App& app) {
  auto options = std::make_shared<ChatCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "chat", "interactive chat: one message per stdin line, replies streamed; /reset, /exit");
  options->model.add_to(*command, "seed of the sampler and of the built-in random weights");
  options->text.add_to(*command, "tokens per reply at most; -1: until end of turn or a full context");
  command->callback([options] { run_chat(*options); });
}
