// Small helpers shared by the CPU kernels: activations for the few scalar
// loops, the SIMD weight type of each storage element, and how gemvs split
// their rows into tasks.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "cpu/simd.h"
#include "host/element_types.h"

namespace qwen35::cpu {

inline float silu(float x) { return x / (1.0f + std::exp(-x)); }
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

template <typename E>
constexpr simd::WeightType weight_type() {
  if constexpr (std::is_same_v<E, F32Element>) return simd::WeightType::kF32;
  if constexpr (std::is_same_v<E, BF16Element>) return simd::WeightType::kBF16;
  return simd::WeightType::kF16;
}

// Rows per gemv task, for `rows` rows of row_bytes on `threads` threads: about
// 512 KB of weights, but at least two tasks per thread, a multiple of 8 rows.
// A task is one read stream (the dense and MLX gemvs) or 4 (the GGUF ones, in
// bands; row_bands.h) of tens of KB or more. Without the second bound a 1024 x
// 1024 Q4_K matrix (576 KB) was two tasks of 904 and 120 rows, one thread doing
// nearly all of it.
inline size_t gemv_row_grain(size_t row_bytes, size_t rows, size_t threads) {
  const size_t by_bytes = (size_t{512} << 10) / std::max<size_t>(row_bytes, 1);
  const size_t by_threads = rows / (2 * std::max<size_t>(threads, 1));
  return std::max<size_t>(8, std::min(by_bytes, by_threads) / 8 * 8);
}

}  // namespace qwen35::cpu
