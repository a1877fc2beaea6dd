// Choosing the next token from logits (greedy, temperature, top-k, top-p, min-p,
// repetition / presence / frequency penalties) with a seeded generator of our own, so a
// seed gives the same tokens on every platform; and stop strings that may span tokens.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace qwen35 {

struct SamplerParams {
  float temperature = 1.0f;         // 0: greedy (argmax after penalties)
  int32_t top_k = 0;                // keep the k most likely tokens; 0: off
  float top_p = 1.0f;               // keep the smallest set with this much probability; 1: off
  float min_p = 0.0f;               // drop tokens below min_p * p(most likely); 0: off
  float repetition_penalty = 1.0f;  // HF / llama.cpp: seen tokens' logits / p if > 0, * p if < 0; 1: off
  float presence_penalty = 0.0f;    // OpenAI: minus this once for every seen token; 0: off
  float frequency_penalty = 0.0f;   // OpenAI: minus this per occurrence; 0: off
  int32_t penalty_window = 64;      // how many recent accepted tokens count as seen; 0: all of them
  uint64_t seed = 0;
};

// The index of the largest value (the first of equal ones; NaN never chosen),
// or -1 when x is empty or all NaN. Fast enough to pick a greedy token from a
// whole vocabulary each step (about 20 us for 248k logits in the caches).
int64_t argmax(std::span<const float> x);

// A candidate after filtering, with its renormalised probability.
struct TokenProb {
  int32_t id;
  float p;
};

// The order is Hugging Face's: penalties, temperature, top-k, top-p, min-p, then a draw.
// Not thread-safe; one per generation stream.
class Sampler {
 public:
  // Throws qwen35::Error when a parameter is out of range.
  explicit Sampler(SamplerParams params = {});

  // One token id in [0, logits.size()). Throws qwen35::Error on empty logits or when no
  // logit is finite (a broken forward pass), never otherwise.
  int32_t sample(std::span<const float> logits);
  // Records a token for the penalties (the prompt's tokens too, if they should count).
  void accept(int32_t token);
  // Forgets the history and restarts the generator from the seed.
  void reset();

  // The distribution sample() draws from: the surviving tokens, most likely first (ties by
  // lower id). With temperature 0 it is the argmax alone.
  std::vector<TokenProb> candidates(std::span<const float> logits);
  // Applies the penalties for the current history to logits in place.
  void apply_penalties(std::span<float> logits) const;

  const SamplerParams& params() const { return params_; }
  const std::vector<int32_t>& history() const { return history_; }

 private:
  struct Candidate {
    int32_t id;
    float logit;
  };
  // Fills candidates_ with the tokens that survive, most likely first, and returns the sum
  // of exp(logit - max) over them.
  double filter(std::span<const float> logits);
  // candidates_ = the m most likely tokens of work_ whose logit is finite and at least
  // `lower` (all of them if fewer), most likely first: one pass that holds at most 2m.
  void collect_most_likely(size_t m, float lower);
  bool penalised() const;  // whether apply_penalties would change anything
  bool greedy() const;     // temperature 0 or top-k 1: the argmax alone
  bool uses_top_k(size_t n) const;
  // work_ = the penalised, tempered logits (NaN as -inf); returns the argmax.
  // Throws when no logit is finite.
  int64_t prepare(std::span<const float> logits);
  float min_p_floor_of(float max_logit) const;
  // Neither top-k nor top-p: sample draws from every token above min-p, and
  // ranks only as many as the draw walks past (sorting 248k logits took 25 ms).
  bool draws_from_all(size_t n) const;
  int32_t sample_from_all(std::span<const float> logits);
  double next_uniform();  // [0, 1)

  SamplerParams params_;
  std::vector<int32_t> history_;
  uint64_t state_[4] = {};  // xoshiro256**
  std::vector<float> work_;              // [vocab] penalised, tempered logits
  std::vector<Candidate> candidates_;    // [survivors]
};

// Watches generated text for stop strings that may arrive split across tokens. Text that
// could be the start of a stop string is held back until the next feed settles it.
class StopChecker {
 public:
  // Throws qwen35::Error on an empty stop string.
  explicit StopChecker(std::vector<std::string> stop_strings);

  // Adds newly decoded text and returns what can be shown now: everything up to a stop
  // string (which is not included) or up to a possible start of one.
  std::string feed(std::string_view text);
  // End of generation without a stop: the held-back text.
  std::string flush();
  void reset();

  bool stopped() const { return stopped_; }
  const std::string& matched() const { return matched_; }  // the stop string found, if stopped

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace qwen35
