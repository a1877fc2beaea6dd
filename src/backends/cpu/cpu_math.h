// Small float helpers shared by the CPU kernels: a dot product written with
// eight independent accumulators (so the compiler keeps several vector FMAs in
// flight at the baseline ISA) and the activation functions.
#pragma once

#include <cmath>
#include <cstdint>

namespace qwen35::cpu {

inline float silu(float x) { return x / (1.0f + std::exp(-x)); }
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

template <typename E>
float dot(const typename E::Storage* w, const float* x, uint32_t n) {
  constexpr uint32_t kLanes = 8;
  float acc[kLanes] = {};
  uint32_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (uint32_t l = 0; l < kLanes; ++l) acc[l] += E::load(w[i + l]) * x[i + l];
  }
  float tail = 0;
  for (; i < n; ++i) tail += E::load(w[i]) * x[i];
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail;
}

inline float sum_squares(const float* x, uint32_t n) {
  constexpr uint32_t kLanes = 8;
  float acc[kLanes] = {};
  uint32_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (uint32_t l = 0; l < kLanes; ++l) acc[l] += x[i + l] * x[i + l];
  }
  float tail = 0;
  for (; i < n; ++i) tail += x[i] * x[i];
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail;
}

}  // namespace qwen35::cpu
