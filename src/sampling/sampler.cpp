// Sampler: penalties and temperature on a copy of the logits, then the filters on a
// candidate list sorted only as far as needed (top-p without top-k sorts a growing
// prefix, not 248k entries), then one draw from xoshiro256** seeded by splitmix64.
#include "qwen35/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "qwen35/error.h"

namespace qwen35 {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// Most likely first; equal logits by lower id, so the order never depends on the sort.
bool more_likely(float a_logit, int32_t a_id, float b_logit, int32_t b_id) {
  return a_logit != b_logit ? a_logit > b_logit : a_id < b_id;
}

}  // namespace

Sampler::Sampler(SamplerParams params) : params_(params) {
  const SamplerParams& p = params_;
  if (!(p.temperature >= 0.0f) || !std::isfinite(p.temperature)) {
    fail("sampler temperature must be a finite number >= 0, got {}", p.temperature);
  }
  if (p.top_k < 0) fail("sampler top_k must be >= 0 (0 turns it off), got {}", p.top_k);
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) fail("sampler top_p must be in (0, 1], got {}", p.top_p);
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) fail("sampler min_p must be in [0, 1], got {}", p.min_p);
  if (!(p.repetition_penalty > 0.0f) || !std::isfinite(p.repetition_penalty)) {
    fail("sampler repetition_penalty must be a finite number > 0 (1 turns it off), got {}", p.repetition_penalty);
  }
  if (!std::isfinite(p.presence_penalty)) fail("sampler presence_penalty must be finite, got {}", p.presence_penalty);
  if (!std::isfinite(p.frequency_penalty)) fail("sampler frequency_penalty must be finite, got {}", p.frequency_penalty);
  if (p.penalty_window < 0) fail("sampler penalty_window must be >= 0 (0 means all tokens), got {}", p.penalty_window);
  reset();
}

void Sampler::reset() {
  history_.clear();
  uint64_t x = params_.seed;
  for (uint64_t& s : state_) s = splitmix64(x);
}

void Sampler::accept(int32_t token) {
  if (token < 0) fail("Sampler::accept: token id {} is negative", token);
  history_.push_back(token);
}

double Sampler::next_uniform() {
  // xoshiro256** (Blackman & Vigna); the top 53 bits make a double in [0, 1).
  const uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return static_cast<double>(result >> 11) * 0x1.0p-53;
}

void Sampler::apply_penalties(std::span<float> logits) const {
  const SamplerParams& p = params_;
  if (p.repetition_penalty == 1.0f && p.presence_penalty == 0.0f && p.frequency_penalty == 0.0f) return;
  const size_t window = p.penalty_window == 0 ? history_.size()
                                              : std::min(history_.size(), static_cast<size_t>(p.penalty_window));
  std::vector<int32_t> seen(history_.end() - static_cast<ptrdiff_t>(window), history_.end());
  std::sort(seen.begin(), seen.end());
  for (size_t i = 0; i < seen.size();) {
    size_t j = i;
    while (j < seen.size() && seen[j] == seen[i]) ++j;
    const auto token = static_cast<size_t>(seen[i]);
    if (token < logits.size()) {
      float& l = logits[token];
      if (p.repetition_penalty != 1.0f) l = l > 0.0f ? l / p.repetition_penalty : l * p.repetition_penalty;
      l -= p.presence_penalty + static_cast<float>(j - i) * p.frequency_penalty;
    }
    i = j;
  }
}

double Sampler::filter(std::span<const float> logits) {
  const SamplerParams& p = params_;
  const size_t n = logits.size();
  if (n == 0) fail("Sampler: empty logits");
  work_.assign(logits.begin(), logits.end());
  apply_penalties(work_);

  const bool greedy = p.temperature == 0.0f || p.top_k == 1;
  const float inv_temperature = greedy ? 1.0f : 1.0f / p.temperature;
  for (float& l : work_) l = std::isnan(l) ? kNegInf : l * inv_temperature;
  const int64_t top = argmax(work_);
  const float max_logit = top < 0 ? kNegInf : work_[static_cast<size_t>(top)];
  if (std::isinf(max_logit)) fail("Sampler: no finite logit among {} (all NaN or infinite after penalties)", n);
  candidates_.clear();
  if (greedy) {
    candidates_.push_back({static_cast<int32_t>(top), max_logit});
    return 1.0;
  }

  auto by_likelihood = [](const Candidate& a, const Candidate& b) { return more_likely(a.logit, a.id, b.logit, b.id); };
  // min-p relative to the top token is a fixed logit threshold: p_i / p_max = exp(l_i - l_max).
  const float min_p_floor = p.min_p > 0.0f ? max_logit + std::log(p.min_p) : kNegInf;
  const bool use_top_k = p.top_k > 0 && static_cast<size_t>(p.top_k) < n;
  const bool use_top_p = p.top_p < 1.0f;

  for (size_t i = 0; i < n; ++i) {
    // Without top-p, min-p can be applied now: it does not change the others' ranking.
    const float floor = use_top_p ? kNegInf : min_p_floor;
    if (work_[i] > kNegInf && work_[i] >= floor) candidates_.push_back({static_cast<int32_t>(i), work_[i]});
  }
  if (use_top_k && candidates_.size() > static_cast<size_t>(p.top_k)) {
    const auto k = static_cast<ptrdiff_t>(p.top_k);
    std::nth_element(candidates_.begin(), candidates_.begin() + k - 1, candidates_.end(), by_likelihood);
    candidates_.resize(static_cast<size_t>(k));
  }

  if (use_top_p) {
    // Top-p is over the distribution after top-k; only the most likely prefix needs sorting,
    // so sort a prefix and widen it until it holds top_p of the mass.
    double total = 0.0;
    for (const Candidate& c : candidates_) total += std::exp(static_cast<double>(c.logit - max_logit));
    const double target = static_cast<double>(p.top_p) * total;
    size_t sorted = std::min<size_t>(candidates_.size(), 256);
    size_t keep = candidates_.size();
    while (true) {
      std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<ptrdiff_t>(sorted), candidates_.end(),
                        by_likelihood);
      double cumulative = 0.0;
      size_t i = 0;
      for (; i < sorted; ++i) {
        cumulative += std::exp(static_cast<double>(candidates_[i].logit - max_logit));
        if (cumulative >= target) break;
      }
      if (i < sorted) {
        keep = i + 1;
        break;
      }
      if (sorted == candidates_.size()) break;  // rounding: everything is needed
      sorted = std::min(candidates_.size(), sorted * 8);
    }
    candidates_.resize(keep);
    std::erase_if(candidates_, [&](const Candidate& c) { return c.logit < min_p_floor; });
  } else {
    std::sort(candidates_.begin(), candidates_.end(), by_likelihood);
  }

  double sum = 0.0;
  for (const Candidate& c : candidates_) sum += std::exp(static_cast<double>(c.logit - max_logit));
  return sum;
}

int32_t Sampler::sample(std::span<const float> logits) {
  const double sum = filter(logits);
  if (candidates_.size() == 1) return candidates_[0].id;
  const float max_logit = candidates_[0].logit;
  const double target = next_uniform() * sum;
  double cumulative = 0.0;
  for (const Candidate& c : candidates_) {
    cumulative += std::exp(static_cast<double>(c.logit - max_logit));
    if (target < cumulative) return c.id;
  }
  return candidates_.back().id;  // target landed on the rounding error at the very end
}

std::vector<TokenProb> Sampler::candidates(std::span<const float> logits) {
  const double sum = filter(logits);
  std::vector<TokenProb> out;
  out.reserve(candidates_.size());
  const float max_logit = candidates_[0].logit;
  for (const Candidate& c : candidates_) {
    out.push_back({c.id, static_cast<float>(std::exp(static_cast<double>(c.logit - max_logit)) / sum)});
  }
  return out;
}

}  // namespace qwen35
