// What both MLX gemvs (simd.cpp with float x, cpu_mlx_int8.cpp with x in 8
// bits) do for each row before its codes: its group scales as floats, and its
// bias term. Both on vectors: converted one group at a time, with the bias
// product, they made a third of the work of a group of 64 8-bit codes.
// Compiled once per Highway target (included by each target's pass of a
// foreach_target file, hence the toggle guard instead of #pragma once).
#if defined(QWEN35_CPU_MLX_SCALES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QWEN35_CPU_MLX_SCALES_INL_H_
#undef QWEN35_CPU_MLX_SCALES_INL_H_
#else
#define QWEN35_CPU_MLX_SCALES_INL_H_
#endif

#include <vector>

#include "cpu/float_loads-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// scales[g] = s[g] as floats for g < groups; returns sum_g b[g] * x_sums[g].
template <class DF, typename T>
HWY_INLINE float mlx_row_scales(DF df, const T* s, const T* b, const float* x_sums, size_t groups, float* scales) {
  const size_t n = hn::Lanes(df);
  auto bias_acc = hn::Zero(df);
  size_t g = 0;
  for (; g + n <= groups; g += n) {
    hn::StoreU(load_f32(df, s + g), df, scales + g);
    bias_acc = hn::MulAdd(load_f32(df, b + g), hn::LoadU(df, x_sums + g), bias_acc);
  }
  float bias_term = hn::GetLane(hn::SumOfLanes(df, bias_acc));
  for (; g < groups; ++g) {
    scales[g] = to_f32(s[g]);
    bias_term += to_f32(b[g]) * x_sums[g];
  }
  return bias_term;
}

// Calls body(r, scales, bias_term) for r in [r0, r1) in order, with row r's
// scales as floats (followed by a vector's worth of padding, for full-vector
// loads) and its bias term. Row r + 1's are converted before body(r) runs:
// the kernels read a row's scales back at other offsets and widths than the
// vector stores that wrote them, which the CPU does not forward from its
// store buffer, so each read of a row converted just before waited for the
// stores to reach the cache (the 8-bit integer gemv: 37 -> 59 GB/s from cache).
template <class DF, typename T, class Body>
HWY_INLINE void for_each_mlx_row(DF df, const T* s, const T* b, const float* x_sums, size_t groups, size_t r0,
                                 size_t r1, const Body& body) {
  if (r0 >= r1) return;
  const size_t stride = groups + hn::MaxLanes(df);
  thread_local std::vector<float> buffer;
  buffer.resize(2 * stride);
  const auto convert = [&](size_t r) {
    return mlx_row_scales(df, s + r * groups, b + r * groups, x_sums, groups, buffer.data() + r % 2 * stride);
  };
  float bias_term = convert(r0);
  for (size_t r = r0; r < r1; ++r) {
    const float next_bias_term = r + 1 < r1 ? convert(r + 1) : 0.0f;
    body(r, buffer.data() + r % 2 * stride, bias_term);
    bias_term = next_bias_term;
  }
}

}  // namespace qwen35::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // QWEN35_CPU_MLX_SCALES_INL_H_
