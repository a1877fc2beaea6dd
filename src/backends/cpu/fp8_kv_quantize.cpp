// The fp8 KV quantizer on vectors (fp8_kv_quantize.h). Per block of
// kKvFp8Block values: max |x| on vectors, the power-of-two scale and its
// inverse from max's bits, then each code from x times the inverse with the
// integer steps of f32_to_fp8_e4m3 (dtype.cpp): below 2^-6 a multiple of
// 2^-9, rounded to nearest even; above it the float's exponent and top three
// mantissa bits, rounded to nearest even on the bits, rebiased and saturated
// at 448. A block holding a NaN or an infinity is left to the scalar twin
// (its max ignores NaN, which vector max does not).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/fp8_kv_quantize.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <bit>

#include "cpu/fp8_kv_quantize.h"
#include "host/kv_rows.h"
#include "qwen35/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The block scale of kv_rows.cpp (the smallest power of two s with 448 s >=
// max_abs, 0 below 2^-100) as float bits. For max_abs = 1.m * 2^(E - 127)
// that is 2^(E - 135) while 1.m <= 1.75 (m <= 0x600000) and 2^(E - 134)
// above: adding 0x1FFFFF carries into the exponent exactly when m > 0x600000.
HWY_INLINE uint32_t scale_bits(float max_abs) {
  if (!(max_abs >= 0x1p-100f)) return 0;
  return (((std::bit_cast<uint32_t>(max_abs) + 0x1FFFFFu) >> 23) - 8u) << 23;
}

void QuantizeFp8Kv(const float* x, uint32_t count, uint8_t* codes, uint16_t* scales) {
#if HWY_TARGET == HWY_SCALAR
  qwen35::quantize_fp8_kv(x, count, codes, scales);
#else
  const hn::CappedTag<float, kKvFp8Block> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<uint8_t, decltype(df)> d8;
  const size_t n = hn::Lanes(df);
  const auto smallest_normal = hn::Set(df, 0x1p-6f);
  for (uint32_t b = 0; b < count / kKvFp8Block; ++b) {
    const float* xb = x + size_t{b} * kKvFp8Block;
    uint8_t* cb = codes + size_t{b} * kKvFp8Block;
    auto amax = hn::Zero(df);
    auto finite = hn::FirstN(df, n);
    for (size_t k = 0; k < kKvFp8Block; k += n) {
      const auto v = hn::LoadU(df, xb + k);
      amax = hn::Max(amax, hn::Abs(v));
      finite = hn::And(finite, hn::IsFinite(v));
    }
    if (!hn::AllTrue(df, finite)) {
      qwen35::quantize_fp8_kv(xb, kKvFp8Block, cb, scales + b);
      continue;
    }
    const uint32_t scale = scale_bits(hn::GetLane(hn::MaxOfLanes(df, amax)));
    scales[b] = static_cast<uint16_t>(scale >> 16);  // a power of two (or 0): its BF16 is its top half
    // 1 / 2^k = 2^-k, exact; x * 0 keeps x's sign, as the twin's zero codes do.
    const auto inverse = hn::Set(df, scale == 0 ? 0.0f : std::bit_cast<float>((254u << 23) - scale));
    for (size_t k = 0; k < kKvFp8Block; k += n) {
      const auto y = hn::Mul(hn::LoadU(df, xb + k), inverse);
      const auto magnitude = hn::Abs(y);
      const auto bits = hn::BitCast(di, magnitude);
      const auto subnormal = hn::ConvertTo(di, hn::Round(hn::Mul(magnitude, hn::Set(df, 512.0f))));
      const auto odd = hn::And(hn::ShiftRight<20>(bits), hn::Set(di, 1));
      const auto rounded = hn::ShiftRight<20>(hn::Add(bits, hn::Add(hn::Set(di, 0x7FFFF), odd)));
      const auto normal = hn::Min(hn::Sub(rounded, hn::Set(di, 120 << 3)), hn::Set(di, 0x7E));
      const auto code = hn::IfThenElse(hn::RebindMask(di, hn::Lt(magnitude, smallest_normal)), subnormal, normal);
      const auto sign = hn::And(hn::ShiftRight<24>(hn::BitCast(di, y)), hn::Set(di, 0x80));
      hn::StoreU(hn::DemoteTo(d8, hn::Or(code, sign)), d8, cb + k);
    }
  }
#endif
}

}  // namespace qwen35::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qwen35::cpu {

HWY_EXPORT(QuantizeFp8Kv);

void quantize_fp8_kv(const float* x, uint32_t n, uint8_t* codes, uint16_t* scales) {
  HWY_DYNAMIC_DISPATCH(QuantizeFp8Kv)(x, n, codes, scales);
}

}  // namespace qwen35::cpu
#endif
