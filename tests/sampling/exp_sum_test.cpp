// sum_exp (src/sampling/exp_sum.h) against the scalar double loop the sampler
// ran before it, on random logits with -inf among them, at sizes around every
// vector width, with and without a lower bound, each SIMD target this machine
// has forced in turn (Highway's choice is process-wide: the CPU backend's
// simd::force_target moves the sampler's too).
#include "exp_sum.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "cpu/simd.h"

namespace qwen35::sampling {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

ExpSum scalar_sum_exp(const std::vector<float>& logits, float shift, float lower) {
  ExpSum out;
  for (const float l : logits) {
    if (l > kNegInf && l >= lower) {
      out.sum += std::exp(static_cast<double>(l - shift));
      ++out.count;
    }
  }
  return out;
}

// Runs check() once per available SIMD target, forced, then restores dispatch.
template <typename Check>
void on_every_target(Check check) {
  for (const int64_t target : simd::available_targets()) {
    SCOPED_TRACE(simd::target_name(target));
    simd::force_target(target);
    check();
  }
  simd::force_target(0);
}

void check_random_logits() {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  for (size_t n : {0u, 1u, 2u, 3u, 7u, 8u, 9u, 15u, 16u, 17u, 31u, 32u, 33u, 63u, 64u, 65u, 1000u, 248320u}) {
    std::vector<float> logits(n);
    for (float& l : logits) l = normal(rng);
    for (size_t i = 0; i < n; i += 5) logits[i] = kNegInf;  // masked tokens, as top-k or NaN leave them
    float max = kNegInf;
    for (const float l : logits) max = std::max(max, l);
    const float shift = n == 0 || max == kNegInf ? 0.0f : max;
    for (const float lower : {kNegInf, shift - 3.0f, shift + 1.0f}) {
      const ExpSum expected = scalar_sum_exp(logits, shift, lower), got = sum_exp(logits, shift, lower);
      EXPECT_EQ(got.count, expected.count) << n << " logits, lower " << lower;
      // Either order of summation is within n rounding steps of the exact sum.
      const double bound = static_cast<double>(n + 16) * std::numeric_limits<double>::epsilon() * expected.sum;
      EXPECT_NEAR(got.sum, expected.sum, bound) << n << " logits, lower " << lower;
    }
  }
}

TEST(SumExp, EqualsTheScalarDoubleSumToItsRounding) { on_every_target(check_random_logits); }

// Terms far under the shift (to -inf and the float range's end) are 0 or
// tiny, never NaN; terms above it grow as exp does.
void check_extremes() {
  const float max = std::numeric_limits<float>::max();
  std::vector<float> logits = {0.0f, -700.0f, -745.0f, -746.0f, -800.0f, -1e30f, -max, 5.0f, 80.0f};
  logits.resize(40, -3.0f);  // past the vectors' widths, the rest in the tail loop or not
  const ExpSum expected = scalar_sum_exp(logits, 0.0f, kNegInf), got = sum_exp(logits, 0.0f, kNegInf);
  EXPECT_EQ(got.count, expected.count);
  EXPECT_NEAR(got.sum, expected.sum, 1e-14 * expected.sum);
  for (size_t i = 0; i < logits.size(); ++i) {
    const std::vector<float> one = {logits[i]};
    const std::vector<float> sixteen(16, logits[i]);
    EXPECT_NEAR(sum_exp(one, 0.0f, kNegInf).sum, std::exp(static_cast<double>(logits[i])),
                1e-15 * std::exp(static_cast<double>(logits[i])) + 1e-300)
        << logits[i];
    EXPECT_NEAR(sum_exp(sixteen, 0.0f, kNegInf).sum, 16 * std::exp(static_cast<double>(logits[i])),
                1e-14 * std::exp(static_cast<double>(logits[i])) + 1e-300)
        << logits[i];
  }
}

TEST(SumExp, ExtremeDifferences) { on_every_target(check_extremes); }

}  // namespace
}  // namespace qwen35::sampling
