// KL divergence and top-1 agreement against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "qwen35/error.h"
#include "qwen35/logit_comparison.h"

namespace qwen35 {
namespace {

TEST(LogitComparison, IdenticalLogitsHaveZeroKlAndAgree) {
  const std::vector<float> logits = {0.5f, -1.25f, 3.0f, 2.0f};
  const PositionComparison c = compare_logits(logits, logits);
  EXPECT_EQ(c.kl, 0.0);
  EXPECT_TRUE(c.top1_agrees);
  EXPECT_EQ(c.max_abs_logit_diff, 0.0);
}

TEST(LogitComparison, ShiftedLogitsAreTheSameDistribution) {
  const std::vector<float> a = {0.5f, -1.25f, 3.0f}, b = {10.5f, 8.75f, 13.0f};
  EXPECT_NEAR(compare_logits(a, b).kl, 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(compare_logits(a, b).max_abs_logit_diff, 10.0);
}

TEST(LogitComparison, TwoTokenKlMatchesTheFormula) {
  // p = (0.5, 0.5); q = softmax(0, ln 3) = (0.25, 0.75).
  const std::vector<float> a = {0.0f, 0.0f}, b = {0.0f, static_cast<float>(std::log(3.0))};
  const double expected = 0.5 * std::log(0.5 / 0.25) + 0.5 * std::log(0.5 / 0.75);
  EXPECT_NEAR(compare_logits(a, b).kl, expected, 1e-7);
}

TEST(LogitComparison, AccumulatesMeanMaxAndAgreement) {
  LogitComparison c;
  c.add(std::vector<float>{1, 0}, std::vector<float>{1, 0});  // agree, kl 0
  c.add(std::vector<float>{1, 0}, std::vector<float>{0, 1});  // disagree
  ASSERT_EQ(c.positions(), 2u);
  EXPECT_DOUBLE_EQ(c.top1_agreement(), 0.5);
  const double kl = c.per_position()[1].kl;
  EXPECT_GT(kl, 0.4);  // (e-1)/(e+1) = 0.462 nats
  EXPECT_NEAR(kl, (std::exp(1.0) - 1) / (std::exp(1.0) + 1), 1e-6);
  EXPECT_DOUBLE_EQ(c.mean_kl(), kl / 2);
  EXPECT_DOUBLE_EQ(c.max_kl(), kl);
}

TEST(LogitComparison, RejectsMismatchedOrNonFiniteLogits) {
  EXPECT_THROW(compare_logits(std::vector<float>{1, 2}, std::vector<float>{1, 2, 3}), Error);
  EXPECT_THROW(compare_logits(std::vector<float>{}, std::vector<float>{}), Error);
  EXPECT_THROW(compare_logits(std::vector<float>{1, NAN}, std::vector<float>{1, 2}), Error);
}

}  // namespace
}  // namespace qwen35
