// x's 8-bit codes per block of 32 on vectors (the rest of Int8Activations
// follows from them in int8_activations.cpp). Every integer gemv quantizes
// its x on the launching thread before the rows are split, so while this runs
// the other threads wait: done a scalar at a time it was about 2% of an int8
// decode's time on two cores (Q4_K and mlx4 at the 0.8B shape). The same
// float operations as the scalar twin, quantize_blocks_scalar, so the result
// is the same to the bit: max |x|, the scale and its inverse as scalars, x
// (lifted where tiny, see lift_of) times the inverse rounded to nearest even,
// clamped to +-127; for x in 24 bits, each remainder times 254 likewise.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/int8_quantize.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cstring>
#include <limits>

#include "cpu/int8_activations.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void QuantizeBlocks(const float* x, size_t cols, int8_t* q, float* scale, float* code_sums, size_t digits) {
#if HWY_TARGET == HWY_SCALAR
  quantize_blocks_scalar(x, cols, q, scale, code_sums, digits);
#else
  // At most 16 lanes: a group of 16 (code_sums) is then whole vectors.
  const hn::CappedTag<float, 16> df;
  const hn::Rebind<int32_t, decltype(df)> di;
  const hn::Rebind<int8_t, decltype(df)> d8;
  const size_t n = hn::Lanes(df);
  const auto limit = hn::Set(df, 127.0f);
  for (size_t b = 0; b < cols / 32; ++b) {
    const float* xb = x + 32 * b;
    auto amax = hn::Zero(df);
    auto finite = hn::FirstN(df, n);
    for (size_t k = 0; k < 32; k += n) {
      const auto v = hn::LoadU(df, xb + k);
      amax = hn::Max(amax, hn::Abs(v));
      finite = hn::And(finite, hn::IsFinite(v));
    }
    if (!hn::AllTrue(df, finite)) {  // codes 0 and a NaN scale, as in the twin
      scale[b] = std::numeric_limits<float>::quiet_NaN();
      for (size_t d = 0; d < digits; ++d) {
        std::memset(q + d * cols + 32 * b, 0, 32);
        code_sums[d * (cols / 16) + 2 * b] = code_sums[d * (cols / 16) + 2 * b + 1] = 0;
      }
      continue;
    }
    const float block_max = hn::GetLane(hn::MaxOfLanes(df, amax));
    scale[b] = block_max / 127;
    const float lift = lift_of(block_max);
    const auto lifted = hn::Set(df, lift);
    const auto inverse = hn::Set(df, block_max > 0 ? 127 / (block_max * lift) : 0.0f);
    for (size_t g = 0; g < 2; ++g) {
      hn::Vec<decltype(df)> sum[kInt24Digits];  // integers up to 16 * 127: exact in float
      for (size_t d = 0; d < digits; ++d) sum[d] = hn::Zero(df);
      for (size_t k = 16 * g; k < 16 * g + 16; k += n) {
        auto t = hn::Mul(hn::Mul(hn::LoadU(df, xb + k), lifted), inverse);
        for (size_t d = 0; d < digits; ++d) {
          if (d > 0) t = hn::Mul(t, hn::Set(df, 254.0f));  // the remainder's next digit
          const auto codes = hn::Min(hn::Max(hn::Round(t), hn::Neg(limit)), limit);
          sum[d] = hn::Add(sum[d], codes);
          hn::StoreU(hn::DemoteTo(d8, hn::ConvertTo(di, codes)), d8, q + d * cols + 32 * b + k);
          t = hn::Sub(t, codes);
        }
      }
      for (size_t d = 0; d < digits; ++d) {
        code_sums[d * (cols / 16) + 2 * b + g] = hn::GetLane(hn::SumOfLanes(df, sum[d]));
      }
    }
  }
#endif
}

}  // namespace qwen35::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qwen35::cpu {

HWY_EXPORT(QuantizeBlocks);

void quantize_blocks(const float* x, size_t cols, int8_t* q, float* scale, float* code_sums, size_t digits) {
  HWY_DYNAMIC_DISPATCH(QuantizeBlocks)(x, cols, q, scale, code_sums, digits);
}

}  // namespace qwen35::cpu
#endif  // HWY_ONCE
