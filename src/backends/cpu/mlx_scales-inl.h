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
#include "cpu/prefetch.h"
#include "cpu/row_bands.h"
#include "cpu/simd.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// How far ahead of its reads each stream of a matrix's codes is prefetched
// by both MLX gemvs: 4 KB, 8 rows of 4-bit codes at 1024 columns. Decode,
// per token with and without in one process: with x in 8 bits mlx4 8-13%
// faster at 2 or 4 KB (6-9% at 1 KB), mlx8 no faster and no slower; with
// float x 2-5% faster (docs/performance.md, twentieth session).
constexpr size_t kMlxCodePrefetchBytes = 4096;

// Calls f(scale) with a value of a matrix's scale type, to instantiate the
// kernels for each.
template <typename F>
HWY_INLINE void with_mlx_scale_type(simd::WeightType type, const F& f) {
  switch (type) {
    case simd::WeightType::kF32: return f(float{});
    case simd::WeightType::kBF16: return f(hwy::bfloat16_t{});
    case simd::WeightType::kF16: return f(hwy::float16_t{});
  }
}

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

// for_each_mlx_row for the passes of p in M bands (row_bands.h): calls
// body(count, rows, scales, bias_terms) for each pass in order, count = M rows
// for a pass of the bands and 1 for a row left over after them, each row's
// scales and bias term as for_each_mlx_row gives them. A pass's rows are
// converted before the previous pass's body runs, for the same reason. The
// scales and biases of the row 8 rows further on are prefetched as each row's
// are converted (mlx4 and mlx8 int8 decode, per token: 3-4% faster).
constexpr size_t kScaleRowsAhead = 8;

template <size_t M, class DF, typename T, class Body>
HWY_INLINE void for_each_mlx_pass(DF df, const T* s, const T* b, const float* x_sums, size_t groups,
                                  const RowPasses& p, const Body& body) {
  QWEN35_ASSERT(p.bands == M);
  if (p.first >= p.last) return;
  const size_t stride = groups + hn::MaxLanes(df);
  thread_local std::vector<float> buffer;
  buffer.resize(2 * M * stride);
  const size_t band = (p.end - p.begin) / M;
  struct Pass {
    size_t count;
    size_t rows[M];
    float bias_terms[M];
  };
  // Pass j's rows and bias terms, its scales into the buffer's half j % 2.
  const auto convert = [&](size_t j) {
    Pass pass{};
    if (j < band) {
      pass.count = M;
      for (size_t k = 0; k < M; ++k) pass.rows[k] = p.begin + k * band + j;
    } else {
      pass.count = 1;
      pass.rows[0] = p.begin + M * band + (j - band);
    }
    for (size_t k = 0; k < pass.count; ++k) {
      const size_t r = pass.rows[k];
      for (size_t byte = 0; byte < groups * sizeof(T); byte += 64) {
        prefetch_past(s + r * groups, kScaleRowsAhead * groups * sizeof(T) + byte);
        prefetch_past(b + r * groups, kScaleRowsAhead * groups * sizeof(T) + byte);
      }
      pass.bias_terms[k] = mlx_row_scales(df, s + r * groups, b + r * groups, x_sums, groups,
                                          buffer.data() + (M * (j % 2) + k) * stride);
    }
    return pass;
  };
  Pass pass = convert(p.first);
  for (size_t j = p.first; j < p.last; ++j) {
    const Pass next = j + 1 < p.last ? convert(j + 1) : Pass{};
    const float* scales[M];
    for (size_t k = 0; k < M; ++k) scales[k] = buffer.data() + (M * (j % 2) + k) * stride;
    body(pass.count, pass.rows, scales, pass.bias_terms);
    pass = next;
  }
}

}  // namespace qwen35::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // QWEN35_CPU_MLX_SCALES_INL_H_
