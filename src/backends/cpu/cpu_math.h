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

// Rows per gemv task, for rows of row_bytes: about 512 KB of weights, a
// multiple of 8 rows. The gemv kernels read a task's rows as 8 (or 4) bands,
// each a read stream of tens of KB, and every thread still gets several tasks.
inline size_t gemv_row_grain(size_t row_bytes) {
  return std::max<size_t>(8, (size_t{512} << 10) / std::max<size_t>(row_bytes, 1) / 8 * 8);
}

}  // namespace qwen35::cpu
