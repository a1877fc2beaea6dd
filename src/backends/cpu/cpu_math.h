// Small helpers shared by the CPU kernels: activations for the few scalar
// loops and the SIMD weight type of each storage element.
#pragma once

#include <cmath>
#include <type_traits>

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

}  // namespace qwen35::cpu
