// The generation loop between a Session and text: decode a prompt, sample, stream whole
// UTF-8 text through the stop strings, stop on end-of-sequence ids; and a chat that keeps
// one Session's state across turns, so each turn decodes only its own new tokens.
// The command-line program is a thin layer over these two classes.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qwen35/model.h"
#include "qwen35/sampling.h"
#include "qwen35/tokenizer.h"

namespace qwen35 {

struct GenerationParams {
  SamplerParams sampler;
  int32_t max_tokens = -1;  // tokens to sample per generate(); -1: until a stop or a full context
  std::vector<std::string> stop_strings;
  // End-of-sequence ids: sampling one ends the generation and its text is not shown.
  // See default_stop_ids().
  std::vector<int32_t> stop_ids;
  bool penalize_prompt = true;  // prompt tokens count as seen for the penalties (HF, llama.cpp)
};

// The tokenizer's end-of-sequence ids: eos_token and pad_token from tokenizer_config.json
// and <|endoftext|>, each where it exists; with `chat`, <|im_end|> too.
std::vector<int32_t> default_stop_ids(const Tokenizer& tokenizer, bool chat);

// Throws Error when the tokenizer has ids the model's vocabulary lacks (a tokenizer from
// another model). The reverse is normal: the model may have more rows than the tokenizer ids.
void check_tokenizer_fits(const Model& model, const Tokenizer& tokenizer);

enum class StopReason {
  kEndOfSequence,  // sampled one of stop_ids
  kStopString,     // the text reached a stop string
  kMaxTokens,      // sampled max_tokens tokens
  kContextFull,    // the session has no room for the next token
};
std::string_view stop_reason_name(StopReason reason);  // "end of sequence", ...

struct GenerationStats {
  uint32_t prompt_tokens = 0;
  double prompt_seconds = 0;
  uint32_t generated_tokens = 0;   // tokens sampled, an end-of-sequence token included
  uint32_t generated_decodes = 0;  // session.decode calls while generating (generated_tokens - 1)
  double generated_seconds = 0;    // sampling and decoding, from the first sample to the stop

  double prompt_tokens_per_second() const;
  double generated_tokens_per_second() const;  // decodes per second, as llama.cpp counts "eval"
};

struct GenerationResult {
  // Every sampled token in order, the end-of-sequence one included. The session holds
  // all but the last: the last sampled token is never decoded (see Generator::generate).
  std::vector<int32_t> tokens;
  std::string text;  // everything passed to on_text
  StopReason stop_reason = StopReason::kMaxTokens;
  std::string stop_string;  // the one matched, for kStopString
  GenerationStats stats;
};

// Receives text as soon as it is final: whole UTF-8 characters, never a stop string or
// the part of one that is still undecided.
using TextCallback = std::function<void(std::string_view text)>;

// Samples from a Session's logits and streams text. Samples only ids the tokenizer has
// (Qwen3.5's embedding has more rows than the tokenizer has ids), so every sampled id
// decodes. One per stream: the sampler's generator and penalty history carry over
// from one generate() to the next, as they should across the turns of one chat.
class Generator {
 public:
  // Throws Error on out-of-range sampler parameters or an empty stop string.
  Generator(Session& session, const Tokenizer& tokenizer, GenerationParams params);

  // Decodes `prompt` after what the session already holds, then samples until a stop.
  // The last sampled token is not decoded (nothing needs its logits yet): a caller that
  // continues the sequence decodes it first, or replaces it (an end-of-sequence token).
  // Throws Error, before decoding anything, if the prompt is empty, does not fit in the
  // context or holds an id outside the model's vocabulary.
  GenerationResult generate(std::span<const int32_t> prompt, const TextCallback& on_text = {});

  Session& session() const { return *session_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const GenerationParams& params() const { return params_; }
  Sampler& sampler() { return sampler_; }

 private:
  std::span<const float> sampling_logits(std::span<const float> logits);

  Session* session_;
  const Tokenizer* tokenizer_;
  GenerationParams params_;
  Sampler sampler_;
  int32_t sample_vocab_;              // min(tokenizer ids, model vocab): what may be sampled
  std::vector<int32_t> missing_ids_;  // ids below sample_vocab_ that no token has
  std::vector<float> masked_;         // [sample_vocab_] logits with missing_ids_ at -inf
};

struct ChatParams {
  std::string system_prompt;  // empty: no system turn
  ChatOptions format;         // thinking on or off, Qwen3 or Qwen3.5 generation prompt
  GenerationParams generation;  // stop_ids empty: default_stop_ids(tokenizer, true)
};

// A conversation on one Session. The session's state is the conversation: every turn
// decodes only the tokens it adds (the end of the previous reply, the user turn and the
// assistant's generation prompt); the assistant's own tokens are in the state already.
// Unlike re-rendering the Jinja template each turn, earlier replies keep their thinking
// (the template would drop it); that is the price of never processing a turn twice.
class ChatSession {
 public:
  ChatSession(Session& session, const Tokenizer& tokenizer, ChatParams params);

  // Adds a user turn and generates the assistant's reply. Throws Error, before changing
  // anything, on invalid UTF-8 or when the turn does not fit in the context.
  GenerationResult send(std::string_view user_message, const TextCallback& on_text = {});
  // The tokens send(user_message) would decode before sampling.
  std::vector<int32_t> next_turn_tokens(std::string_view user_message) const;
  // Forgets the conversation and empties the session (the sampler keeps its generator).
  void reset();

  // The tokens the session's state holds, in order: tokens().size() == session.position().
  const std::vector<int32_t>& tokens() const { return tokens_; }
  // The conversation as text (assistant content as streamed, thinking included).
  const std::vector<ChatMessage>& messages() const { return messages_; }
  const ChatParams& params() const { return params_; }
  Generator& generator() { return generator_; }

 private:
  ChatParams params_;
  Generator generator_;
  std::vector<int32_t> tokens_;
  std::vector<ChatMessage> messages_;
  std::vector<int32_t> carry_;  // decoded at the start of the next turn: the end of the last reply
};

}  // namespace qwen35
