// Generator: the loop that turns a prompt into streamed text. Decode the prompt, then
// sample -> stop id? -> streaming decoder (whole UTF-8 characters) -> stop checker (holds
// back a possible start of a stop string) -> the caller, and decode the sampled token only
// when another one is wanted, so the last token of a generation is never decoded for nothing.
#include <algorithm>
#include <chrono>
#include <limits>

#include "qwen35/error.h"
#include "qwen35/generation.h"

namespace qwen35 {

std::vector<int32_t> default_stop_ids(const Tokenizer& tokenizer, bool chat) {
  std::vector<int32_t> ids;
  auto add = [&](std::optional<int32_t> id) {
    if (id && std::find(ids.begin(), ids.end(), *id) == ids.end()) ids.push_back(*id);
  };
  add(tokenizer.eos_id());
  add(tokenizer.pad_id());
  add(tokenizer.token_to_id("<|endoftext|>"));
  if (chat) add(tokenizer.token_to_id("<|im_end|>"));
  return ids;
}

void check_tokenizer_fits(const Model& model, const Tokenizer& tokenizer) {
  const uint32_t model_vocab = model.config().vocab;
  if (static_cast<uint32_t>(tokenizer.vocab_size()) > model_vocab) {
    fail("the tokenizer has token ids up to {} but the model's vocabulary has only {} ids: "
         "the tokenizer belongs to another model",
         tokenizer.vocab_size() - 1, model_vocab);
  }
}

std::string_view stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::kEndOfSequence: return "end of sequence";
    case StopReason::kStopString: return "stop string";
    case StopReason::kMaxTokens: return "token limit";
    case StopReason::kContextFull: return "context full";
  }
  return "unknown";
}

double GenerationStats::prompt_tokens_per_second() const {
  return prompt_tokens / std::max(prompt_seconds, 1e-9);
}

double GenerationStats::generated_tokens_per_second() const {
  return generated_decodes / std::max(generated_seconds, 1e-9);
}

Generator::Generator(Session& session, const Tokenizer& tokenizer, GenerationParams params)
    : session_(&session),
      tokenizer_(&tokenizer),
      params_(std::move(params)),
      sampler_(params_.sampler),
      sample_vocab_(tokenizer.vocab_size()) {
  StopChecker check(params_.stop_strings);  // throws on an empty stop string, now rather than later
  // Ids the tokenizer skips (rare: real Qwen vocabularies have no gaps) must never be sampled.
  for (int32_t id = 0; id < sample_vocab_; ++id) {
    try {
      (void)tokenizer.token_bytes(id);
    } catch (const Error&) {
      missing_ids_.push_back(id);
    }
  }
}

std::span<const float> Generator::sampling_logits(std::span<const float> logits) {
  const size_t n = std::min(logits.size(), static_cast<size_t>(sample_vocab_));
  if (missing_ids_.empty()) return logits.first(n);
  masked_.assign(logits.begin(), logits.begin() + static_cast<ptrdiff_t>(n));
  for (int32_t id : missing_ids_) {
    if (static_cast<size_t>(id) < n) masked_[static_cast<size_t>(id)] = -std::numeric_limits<float>::infinity();
  }
  return masked_;
}

GenerationResult Generator::generate(std::span<const int32_t> prompt, const TextCallback& on_text) {
  using Clock = std::chrono::steady_clock;
  Session& session = *session_;
  // Everything that could fail half-way is checked before the first decode.
  if (prompt.empty()) fail("the prompt is empty: there is nothing to generate from");
  const uint32_t room = session.capacity() - session.position();
  if (prompt.size() > room) {
    if (session.position() == 0) {
      fail("the prompt is {} tokens, longer than the context length of {} tokens", prompt.size(), session.capacity());
    }
    fail("the prompt is {} tokens but only {} of the context length of {} tokens remain ({} in use)", prompt.size(),
         room, session.capacity(), session.position());
  }
  for (size_t i = 0; i < prompt.size(); ++i) {
    if (prompt[i] < 0 || prompt[i] >= tokenizer_->vocab_size()) {
      fail("prompt token {} (id {}) is outside the tokenizer's ids [0, {})", i, prompt[i], tokenizer_->vocab_size());
    }
  }

  GenerationResult result;
  StreamingDecoder decoder(*tokenizer_);
  StopChecker stop(params_.stop_strings);
  auto emit = [&](const std::string& text) {
    if (text.empty()) return;
    result.text += text;
    if (on_text) on_text(text);
  };

  const auto prompt_start = Clock::now();
  std::span<const float> logits = session.prefill(prompt);
  if (params_.penalize_prompt) {
    for (int32_t id : prompt) sampler_.accept(id);
  }
  result.stats.prompt_tokens = static_cast<uint32_t>(prompt.size());
  result.stats.prompt_seconds = std::chrono::duration<double>(Clock::now() - prompt_start).count();

  const auto generate_start = Clock::now();
  const auto limit = static_cast<size_t>(params_.max_tokens);
  for (;;) {
    if (params_.max_tokens >= 0 && result.tokens.size() >= limit) {
      result.stop_reason = StopReason::kMaxTokens;
      break;
    }
    if (!result.tokens.empty()) {
      if (session.position() >= session.capacity()) {
        result.stop_reason = StopReason::kContextFull;
        break;
      }
      logits = session.decode(result.tokens.back());
      ++result.stats.generated_decodes;
    }
    const int32_t id = sampler_.sample(sampling_logits(logits));
    sampler_.accept(id);
    result.tokens.push_back(id);
    if (std::find(params_.stop_ids.begin(), params_.stop_ids.end(), id) != params_.stop_ids.end()) {
      result.stop_reason = StopReason::kEndOfSequence;
      break;
    }
    emit(stop.feed(decoder.feed(id)));
    if (stop.stopped()) {
      result.stop_reason = StopReason::kStopString;
      break;
    }
  }
  if (!stop.stopped()) {
    // A character left incomplete becomes U+FFFD, which a stop string may still match.
    emit(stop.feed(decoder.flush()));
    if (stop.stopped()) {
      result.stop_reason = StopReason::kStopString;
    } else {
      emit(stop.flush());
    }
  }
  if (stop.stopped()) result.stop_string = stop.matched();
  result.stats.generated_tokens = static_cast<uint32_t>(result.tokens.size());
  result.stats.generated_seconds = std::chrono::duration<double>(Clock::now() - generate_start).count();
  return result;
}

}  // namespace qwen35
