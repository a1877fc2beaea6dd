// Sampler: greedy is argmax, a seed reproduces, filters never let excluded tokens
// through, temperature-1 draws follow softmax (chi-square with a fixed seed), and each
// penalty moves exactly the logits it should.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "qwen35/error.h"
#include "qwen35/sampling.h"
#include "support/test_support.h"

namespace qwen35 {
namespace {

std::vector<double> softmax(const std::vector<float>& logits, float temperature = 1.0f) {
  const float max = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p(logits.size());
  double sum = 0;
  for (size_t i = 0; i < logits.size(); ++i) sum += p[i] = std::exp((logits[i] - max) / temperature);
  for (double& v : p) v /= sum;
  return p;
}

// Indices sorted by descending logit (ties: lower index first).
std::vector<int32_t> ranking(const std::vector<float>& logits) {
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  return order;
}

TEST(sampling_sampler, GreedyIsArgmax) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto logits = testing::random_floats(1000 + seed * 37, seed, -10.0f, 10.0f);
    Sampler greedy({.temperature = 0.0f, .seed = seed});
    const auto expected = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    EXPECT_EQ(greedy.sample(logits), expected);
    // top_k = 1 is greedy at any temperature.
    Sampler top1({.temperature = 5.0f, .top_k = 1, .seed = seed});
    EXPECT_EQ(top1.sample(logits), expected);
  }
  // Ties go to the lower id.
  Sampler greedy({.temperature = 0.0f});
  EXPECT_EQ(greedy.sample(std::vector<float>{1.0f, 3.0f, 3.0f, -1.0f}), 1);
}

TEST(sampling_sampler, SameSeedSameTokensOtherSeedOtherTokens) {
  const auto logits = testing::random_floats(5000, 7, -3.0f, 3.0f);
  auto run = [&](uint64_t seed) {
    Sampler s({.temperature = 0.8f, .top_k = 200, .top_p = 0.95f, .min_p = 0.01f, .seed = seed});
    std::vector<int32_t> out;
    for (int i = 0; i < 200; ++i) out.push_back(s.sample(logits));
    return out;
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43));
  // reset() restarts the generator.
  Sampler s({.temperature = 1.0f, .seed = 9});
  const int32_t first = s.sample(logits);
  const int32_t second = s.sample(logits);
  s.reset();
  EXPECT_EQ(s.sample(logits), first);
  EXPECT_EQ(s.sample(logits), second);
}

// Seed 1234, eight equal logits: floor(8 * u) for the first twelve u, computed by an
// independent Python model of splitmix64 + xoshiro256** (u = (next >> 11) * 2^-53).
const std::vector<int32_t> kPinnedDraws{0, 6, 5, 6, 0, 7, 3, 1, 4, 5, 4, 1};

TEST(sampling_sampler, SeededSequenceIsPinned) {
  // The generator is ours (splitmix64 + xoshiro256**), so these draws are the same on every
  // platform and standard library; a change here changes every seeded run.
  const std::vector<float> logits{0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};  // uniform over 8
  Sampler s({.temperature = 1.0f, .seed = 1234});
  std::vector<int32_t> drawn;
  for (int i = 0; i < 12; ++i) drawn.push_back(s.sample(logits));
  Sampler again({.temperature = 1.0f, .seed = 1234});
  for (int i = 0; i < 12; ++i) EXPECT_EQ(again.sample(logits), drawn[static_cast<size_t>(i)]);
  EXPECT_EQ(drawn, kPinnedDraws);
}

TEST(sampling_sampler, TopKNeverPicksOutsideTheK) {
  const auto logits = testing::random_floats(3000, 11, -2.0f, 2.0f);
  const auto order = ranking(logits);
  const std::set<int32_t> allowed(order.begin(), order.begin() + 5);
  Sampler s({.temperature = 2.0f, .top_k = 5, .seed = 3});
  std::set<int32_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const int32_t t = s.sample(logits);
    ASSERT_TRUE(allowed.count(t)) << "token " << t;
    seen.insert(t);
  }
  EXPECT_EQ(seen, allowed);  // and at temperature 2 all five turn up
}

TEST(sampling_sampler, TopPKeepsTheSmallestSetReachingP) {
  // Probabilities 0.5, 0.25, 0.125, 0.0625, ...: top_p = 0.8 needs exactly the first three.
  std::vector<float> logits;
  for (int i = 0; i < 12; ++i) logits.push_back(-static_cast<float>(i) * std::log(2.0f));
  std::reverse(logits.begin(), logits.end());  // most likely is the last id
  Sampler s({.temperature = 1.0f, .top_p = 0.8f, .seed = 5});
  const auto cands = s.candidates(logits);
  ASSERT_EQ(cands.size(), 3u);
  EXPECT_EQ(cands[0].id, 11);
  EXPECT_EQ(cands[1].id, 10);
  EXPECT_EQ(cands[2].id, 9);
  EXPECT_NEAR(cands[0].p, 0.5 / 0.875, 1e-5);
  for (int i = 0; i < 2000; ++i) ASSERT_GE(s.sample(logits), 9);
}

TEST(sampling_sampler, TopPOnALargeVocabularyMatchesAFullSort) {
  // 250k logits: the sampler sorts a growing prefix; check it against a plain full sort.
  const auto logits = testing::random_floats(250000, 17, -4.0f, 4.0f);
  const float top_p = 0.3f;
  const auto p = softmax(logits);
  const auto order = ranking(logits);
  size_t expected = 0;
  double cumulative = 0;
  while (cumulative < top_p) cumulative += p[static_cast<size_t>(order[expected++])];
  Sampler s({.temperature = 1.0f, .top_p = top_p});
  const auto cands = s.candidates(logits);
  ASSERT_EQ(cands.size(), expected);
  for (size_t i = 0; i < expected; ++i) ASSERT_EQ(cands[i].id, order[i]) << i;
}

TEST(sampling_sampler, TopKOnALargeVocabularyWithTiesMatchesAFullSort) {
  // The k most likely are found in one pass that keeps at most 2k and then only
  // tokens beating the k-th so far; with logits of a few distinct values, ties
  // must still go to the lower ids, as in a full stable sort.
  auto logits = testing::random_floats(200000, 31, 0.0f, 12.0f);
  for (float& l : logits) l = std::floor(l);
  const auto order = ranking(logits);
  for (const int32_t k : {1, 7, 40, 1000}) {
    Sampler s({.temperature = 0.7f, .top_k = k});
    const auto cands = s.candidates(logits);
    ASSERT_EQ(cands.size(), static_cast<size_t>(k));
    for (size_t i = 0; i < cands.size(); ++i) ASSERT_EQ(cands[i].id, order[i]) << "k " << k << " rank " << i;
  }
}

TEST(sampling_sampler, MinPDropsTokensBelowTheFloor) {
  const std::vector<float> logits{std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
  Sampler s({.temperature = 1.0f, .min_p = 0.2f, .seed = 8});  // floor 0.1: drops the last
  const auto cands = s.candidates(logits);
  ASSERT_EQ(cands.size(), 3u);
  EXPECT_NEAR(cands[2].p, 0.15 / 0.95, 1e-5);
  for (int i = 0; i < 3000; ++i) ASSERT_NE(s.sample(logits), 3);
  // Combined with top-p the order is top-p first: 0.5 + 0.3 reaches 0.7, then min-p keeps both.
  Sampler both({.temperature = 1.0f, .top_p = 0.7f, .min_p = 0.2f});
  EXPECT_EQ(both.candidates(logits).size(), 2u);
}

TEST(sampling_sampler, TemperatureOneFollowsSoftmax) {
  // Pearson's chi-square over 16 tokens (15 degrees of freedom): with a fixed seed the
  // statistic is a fixed number; 37.7 is the 0.001 upper quantile, so a correct sampler
  // fails only for one seed in a thousand, and a wrong one (e.g. temperature applied
  // twice, or an off-by-one in the draw) lands far above it.
  const auto logits = testing::random_floats(16, 23, -2.0f, 2.0f);
  const auto p = softmax(logits);
  constexpr int kDraws = 200000;
  std::vector<int> counts(logits.size());
  Sampler s({.temperature = 1.0f, .seed = 2024});
  for (int i = 0; i < kDraws; ++i) ++counts[static_cast<size_t>(s.sample(logits))];
  double chi2 = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double expected = p[i] * kDraws;
    chi2 += (counts[i] - expected) * (counts[i] - expected) / expected;
  }
  EXPECT_LT(chi2, 37.7);
  // The same test must reject a different temperature: at 1.3 the statistic explodes.
  const auto p_hot = softmax(logits, 1.3f);
  double chi2_hot = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double expected = p_hot[i] * kDraws;
    chi2_hot += (counts[i] - expected) * (counts[i] - expected) / expected;
  }
  EXPECT_GT(chi2_hot, 1000.0);
}

// The generator's first u for a seed (splitmix64 seeding, one xoshiro256**
// step), written out again here as the test's independent model of it.
double first_uniform(uint64_t seed) {
  const auto splitmix64 = [](uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  uint64_t x = seed;
  splitmix64(x);
  const uint64_t s1 = splitmix64(x);
  const uint64_t times5 = s1 * 5;
  const uint64_t result = ((times5 << 7) | (times5 >> 57)) * 9;
  return static_cast<double>(result >> 11) * 0x1.0p-53;
}

TEST(sampling_sampler, TemperatureAloneOnALargeVocabularyDrawsByRank) {
  // Without top-k and top-p the sampler ranks only as many tokens as its draw walks
  // past; a draw must still be the token where u meets the cumulative probability
  // in likelihood order over every token (above min-p), as with a full sort.
  const auto logits = testing::random_floats(250000, 29, -4.0f, 4.0f);
  const auto order = ranking(logits);
  for (const float min_p : {0.0f, 0.002f}) {
    const float max = *std::max_element(logits.begin(), logits.end());
    const float floor = min_p > 0.0f ? max + std::log(min_p) : -INFINITY;
    double total = 0;
    for (float l : logits) total += l >= floor ? std::exp(static_cast<double>(l - max)) : 0.0;
    int checked = 0;
    for (uint64_t seed = 1; seed <= 60; ++seed) {
      const double u = first_uniform(seed);
      double before = 0, cumulative = 0;
      size_t rank = 0;
      for (; rank + 1 < order.size(); ++rank) {
        const float l = logits[static_cast<size_t>(order[rank])];
        before = cumulative;
        cumulative += l >= floor ? std::exp(static_cast<double>(l - max)) / total : 0.0;
        if (u < cumulative) break;
      }
      // Too close to a boundary for two summation orders to agree on.
      if (std::abs(cumulative - u) < 1e-9 || std::abs(before - u) < 1e-9) continue;
      Sampler s({.temperature = 1.0f, .min_p = min_p, .seed = seed});
      ASSERT_EQ(s.sample(logits), order[rank]) << "seed " << seed << " min_p " << min_p << " rank " << rank;
      ++checked;
    }
    EXPECT_GE(checked, 55);
  }
}

TEST(sampling_sampler, CandidatesFollowTemperature) {
  const auto logits = testing::random_floats(50, 4, -3.0f, 3.0f);
  for (float t : {0.5f, 1.0f, 1.7f}) {
    Sampler s({.temperature = t});
    const auto expected = softmax(logits, t);
    const auto cands = s.candidates(logits);
    ASSERT_EQ(cands.size(), logits.size());
    for (const auto& c : cands) EXPECT_NEAR(c.p, expected[static_cast<size_t>(c.id)], 1e-6) << "t " << t;
  }
}

TEST(sampling_sampler, RepetitionPenaltyDividesPositiveMultipliesNegative) {
  Sampler s({.repetition_penalty = 2.0f, .penalty_window = 3});
  std::vector<float> logits{4.0f, -4.0f, 4.0f, -4.0f, 1.0f, 0.0f};
  for (int32_t t : {0, 1, 1, 2, 3, 5, 99}) s.accept(t);  // window: 3, 5, 99 (99 is beyond the vocab)
  s.apply_penalties(logits);
  EXPECT_EQ(logits, (std::vector<float>{4.0f, -4.0f, 4.0f, -8.0f, 1.0f, 0.0f}));
  Sampler all({.repetition_penalty = 2.0f, .penalty_window = 0});
  for (int32_t t : {0, 1, 1}) all.accept(t);
  std::vector<float> logits2{4.0f, -4.0f, 4.0f};
  all.apply_penalties(logits2);
  EXPECT_EQ(logits2, (std::vector<float>{2.0f, -8.0f, 4.0f}));  // once per token, however often seen
}

TEST(sampling_sampler, PresenceAndFrequencyPenaltiesSubtract) {
  Sampler s({.presence_penalty = 0.5f, .frequency_penalty = 0.25f});
  for (int32_t t : {2, 2, 2, 0}) s.accept(t);
  std::vector<float> logits{1.0f, 1.0f, 1.0f, 1.0f};
  s.apply_penalties(logits);
  EXPECT_EQ(logits, (std::vector<float>{1.0f - 0.5f - 0.25f, 1.0f, 1.0f - 0.5f - 0.75f, 1.0f}));
}

TEST(sampling_sampler, PenaltiesSteerGreedyAwayFromRepeats) {
  Sampler s({.temperature = 0.0f, .repetition_penalty = 1.5f});
  const std::vector<float> logits{2.0f, 1.9f, 0.0f};
  EXPECT_EQ(s.sample(logits), 0);
  s.accept(0);
  EXPECT_EQ(s.sample(logits), 1);  // 2 / 1.5 < 1.9
}

TEST(sampling_sampler, BadParametersAndLogitsAreErrors) {
  EXPECT_THROW(Sampler({.temperature = -1.0f}), Error);
  EXPECT_THROW(Sampler({.top_k = -1}), Error);
  EXPECT_THROW(Sampler({.top_p = 0.0f}), Error);
  EXPECT_THROW(Sampler({.top_p = 1.5f}), Error);
  EXPECT_THROW(Sampler({.min_p = -0.1f}), Error);
  EXPECT_THROW(Sampler({.repetition_penalty = 0.0f}), Error);
  EXPECT_THROW(Sampler({.penalty_window = -2}), Error);
  Sampler s;
  EXPECT_THROW(s.sample(std::vector<float>{}), Error);
  EXPECT_THROW(s.sample(std::vector<float>{NAN, NAN}), Error);
  EXPECT_THROW(s.accept(-1), Error);
  // NaN logits are never chosen while a finite one exists.
  for (int i = 0; i < 100; ++i) EXPECT_EQ(s.sample(std::vector<float>{NAN, 0.0f, NAN}), 1);
}

}  // namespace
}  // namespace qwen35
