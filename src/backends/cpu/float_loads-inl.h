// Storage elements (float, bfloat16, float16) read as floats, one at a time or
// a vector at a time: what every kernel reading weights, scales or cached K/V
// rows in those formats starts from. Compiled once per Highway target
// (included by each target's pass of a foreach_target file, hence the toggle
// guard instead of #pragma once).
#if defined(QWEN35_CPU_FLOAT_LOADS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QWEN35_CPU_FLOAT_LOADS_INL_H_
#undef QWEN35_CPU_FLOAT_LOADS_INL_H_
#else
#define QWEN35_CPU_FLOAT_LOADS_INL_H_
#endif

#include <cstring>

#include "hwy/highway.h"
#include "qwen35/dtype.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

HWY_INLINE float to_f32(float v) { return v; }
HWY_INLINE float to_f32(hwy::bfloat16_t v) { return hwy::F32FromBF16(v); }
HWY_INLINE float to_f32(hwy::float16_t v) {
  uint16_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return f16_to_f32(bits);
}

// Lanes(df) elements from p, as floats.
template <class DF>
HWY_INLINE hn::Vec<DF> load_f32(DF df, const float* p) {
  return hn::LoadU(df, p);
}
template <class DF, typename T>
HWY_INLINE hn::Vec<DF> load_f32(DF df, const T* p) {
  return hn::PromoteTo(df, hn::LoadU(hn::Rebind<T, DF>(), p));
}

}  // namespace qwen35::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // QWEN35_CPU_FLOAT_LOADS_INL_H_
