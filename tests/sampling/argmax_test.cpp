// argmax against a plain scan on random logits of sizes around its chunk of 256,
// with the maximum placed in every position class (first chunk, middle, tail),
// ties (the first wins), NaN (never chosen) and infinities.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "qwen35/sampling.h"
#include "support/test_support.h"

namespace qwen35 {
namespace {

using testing::random_floats;

constexpr float kInf = std::numeric_limits<float>::infinity();

// The specification: the first index of the largest non-NaN value; -1 if none.
int64_t plain_argmax(const std::vector<float>& x) {
  int64_t best = -1;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) continue;
    if (best < 0 || x[i] > x[static_cast<size_t>(best)]) best = static_cast<int64_t>(i);
  }
  return best;
}

const size_t kSizes[] = {1, 2, 7, 8, 9, 31, 32, 33, 63, 64, 65, 200, 255, 256, 257, 511, 512, 513, 1000, 248320};

TEST(Argmax, MatchesAPlainScanOnRandomLogits) {
  uint32_t seed = 1;
  for (size_t n : kSizes) {
    for (int trial = 0; trial < 4; ++trial) {
      const std::vector<float> x = random_floats(n, seed++, -30, 30);
      ASSERT_EQ(argmax(x), plain_argmax(x)) << "n " << n;
    }
  }
}

TEST(Argmax, FindsTheMaximumAnywhereAndTheFirstOfTies) {
  for (size_t n : kSizes) {
    if (n > 1000) continue;
    for (size_t at = 0; at < n; ++at) {
      std::vector<float> x = random_floats(n, static_cast<uint32_t>(n + at), -1, 1);
      x[at] = 5.0f;
      ASSERT_EQ(argmax(x), static_cast<int64_t>(at)) << "n " << n;
      for (size_t later : {at + 1, at + 256, n - 1}) {  // a tie later in the same chunk, the next one, or the tail
        if (later <= at || later >= n) continue;
        std::vector<float> tied = x;
        tied[later] = 5.0f;
        ASSERT_EQ(argmax(tied), static_cast<int64_t>(at)) << "n " << n << " tie at " << later;
      }
    }
  }
}

TEST(Argmax, NeverChoosesNaNAndCountsInfinities) {
  for (size_t n : kSizes) {
    if (n > 1000) continue;
    std::vector<float> x = random_floats(n, static_cast<uint32_t>(n), -1, 1);
    for (size_t i = 0; i < n; i += 3) x[i] = std::nanf("");
    ASSERT_EQ(argmax(x), plain_argmax(x)) << "n " << n;
    x.assign(n, std::nanf(""));
    EXPECT_EQ(argmax(x), -1) << "all NaN, n " << n;
    x[n - 1] = -kInf;
    EXPECT_EQ(argmax(x), static_cast<int64_t>(n - 1)) << "one -inf among NaN, n " << n;
    x.assign(n, -kInf);
    EXPECT_EQ(argmax(x), 0) << "all -inf, n " << n;
    x[n / 2] = kInf;
    EXPECT_EQ(argmax(x), static_cast<int64_t>(n / 2)) << "+inf, n " << n;
  }
  EXPECT_EQ(argmax(std::vector<float>{}), -1);
}

}  // namespace
}  // namespace qwen35
