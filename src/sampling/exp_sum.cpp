// sum_exp (exp_sum.h) for each Highway target, chosen at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "exp_sum.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"

#include <cmath>
#include <limits>

#include "exp_sum.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::sampling::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

ExpSum SumExp(const float* logits, size_t n, float shift, float lower) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;  // as many floats as doubles
  const size_t lanes = hn::Lanes(dd);
  const auto vshift = hn::Set(df, shift), floor = hn::Set(df, -2000.0f);
  // Compared as doubles, exactly as floats: the masks must have the doubles' lanes.
  const auto vlower = hn::Set(dd, lower), neg_inf = hn::Set(dd, -std::numeric_limits<double>::infinity());
  // Four sums side by side: one would wait on its own additions.
  hn::Vec<decltype(dd)> sums[4] = {hn::Zero(dd), hn::Zero(dd), hn::Zero(dd), hn::Zero(dd)};
  size_t count = 0, i = 0;
  const auto add = [&](size_t k, size_t at) {
    const auto l = hn::LoadU(df, logits + at);
    const auto wide = hn::PromoteTo(dd, l);
    const auto counted = hn::And(hn::Gt(wide, neg_inf), hn::Ge(wide, vlower));
    // Highway's Exp gives 0 under -1000, as exp does in double under -746;
    // the floor keeps -inf (and huge differences) out of its range reduction.
    const auto term = hn::Exp(dd, hn::PromoteTo(dd, hn::Max(hn::Sub(l, vshift), floor)));
    sums[k] = hn::Add(sums[k], hn::IfThenElseZero(counted, term));
    count += hn::CountTrue(dd, counted);
  };
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    for (size_t k = 0; k < 4; ++k) add(k, i + k * lanes);
  }
  for (; i + lanes <= n; i += lanes) add(0, i);
  double sum = hn::GetLane(hn::SumOfLanes(dd, hn::Add(hn::Add(sums[0], sums[1]), hn::Add(sums[2], sums[3]))));
  for (; i < n; ++i) {
    const float l = logits[i];
    if (l > -std::numeric_limits<float>::infinity() && l >= lower) {
      sum += std::exp(static_cast<double>(l - shift));
      ++count;
    }
  }
  return {sum, count};
}

}  // namespace qwen35::sampling::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qwen35::sampling {

HWY_EXPORT(SumExp);

ExpSum sum_exp(std::span<const float> logits, float shift, float lower) {
  return HWY_DYNAMIC_DISPATCH(SumExp)(logits.data(), logits.size(), shift, lower);
}

}  // namespace qwen35::sampling
#endif  // HWY_ONCE
