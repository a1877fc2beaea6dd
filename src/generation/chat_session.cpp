// ChatSession: a conversation whose only record is the Session's state. Each turn renders
// just what it adds with format_chat (the first turn with the system prompt), prefixed by
// the close of the previous reply, so the sequence the model sees is the Qwen chat format
// with the assistant's own sampled tokens in place of a re-tokenisation of its text.
#include <algorithm>

#include "qwen35/error.h"
#include "qwen35/generation.h"

namespace qwen35 {

namespace {

ChatParams with_defaults(ChatParams params, const Tokenizer& tokenizer) {
  if (params.generation.stop_ids.empty()) params.generation.stop_ids = default_stop_ids(tokenizer, true);
  params.format.add_generation_prompt = true;
  try {
    (void)tokenizer.encode(params.system_prompt);
  } catch (const Error& e) {
    fail("system prompt: {}", e.what());
  }
  return params;
}

}  // namespace

ChatSession::ChatSession(Session& session, const Tokenizer& tokenizer, ChatParams params)
    : params_(with_defaults(std::move(params), tokenizer)), generator_(session, tokenizer, params_.generation) {
  if (session.position() != 0) {
    fail("a chat needs an empty session; this one already holds {} tokens", session.position());
  }
}

std::vector<int32_t> ChatSession::next_turn_tokens(std::string_view user_message) const {
  const Tokenizer& tokenizer = generator_.tokenizer();
  std::vector<ChatMessage> turn;
  std::string text;
  if (messages_.empty()) {
    if (!params_.system_prompt.empty()) turn.push_back({.role = "system", .content = params_.system_prompt});
  } else {
    // The previous reply ends as the template ends every turn. Its end-of-sequence token
    // (when it had one) was sampled but never decoded: <|im_end|> takes its place.
    text = "<|im_end|>\n";
  }
  turn.push_back({.role = "user", .content = std::string(user_message)});
  text += format_chat(turn, params_.format);
  std::vector<int32_t> ids = carry_;
  std::vector<int32_t> encoded;
  try {
    encoded = tokenizer.encode(text);
  } catch (const Error&) {
    // Name the offset in the user's message, not in the rendered turn.
    (void)tokenizer.encode(user_message);
    throw;
  }
  ids.insert(ids.end(), encoded.begin(), encoded.end());
  return ids;
}

GenerationResult ChatSession::send(std::string_view user_message, const TextCallback& on_text) {
  const std::vector<int32_t> prompt = next_turn_tokens(user_message);
  GenerationResult result;
  try {
    result = generator_.generate(prompt, on_text);
  } catch (const Error&) {
    // generate() checks what it can before decoding; past that point (a broken forward
    // pass) the state no longer matches tokens_, so the conversation starts over.
    if (generator_.session().position() != tokens_.size()) reset();
    throw;
  }
  tokens_.insert(tokens_.end(), prompt.begin(), prompt.end());
  if (!result.tokens.empty()) tokens_.insert(tokens_.end(), result.tokens.begin(), result.tokens.end() - 1);
  carry_.clear();
  // A reply cut short (stop string, token limit) keeps its last token, whose text was shown.
  if (!result.tokens.empty() && result.stop_reason != StopReason::kEndOfSequence) {
    carry_.push_back(result.tokens.back());
  }
  if (messages_.empty() && !params_.system_prompt.empty()) {
    messages_.push_back({.role = "system", .content = params_.system_prompt});
  }
  messages_.push_back({.role = "user", .content = std::string(user_message)});
  messages_.push_back({.role = "assistant", .content = result.text});
  return result;
}

void ChatSession::reset() {
  generator_.session().reset();
  tokens_.clear();
  messages_.clear();
  carry_.clear();
}

}  // namespace qwen35
