// Small helpers shared by the CPU kernels: activations for the few scalar
// loops, the SIMD weight type of each storage element, and how gemvs split
// their rows into tasks.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "cpu/simd.h"
#include "host/element_types.h"
#include "host/thread_pool.h"

namespace qwen35::cpu {

inline float silu(float x) { return x / (1.0f + std::exp(-x)); }
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

template <typename E>
constexpr simd::WeightType weight_type() {
  if constexpr (std::is_same_v<E, F32Element>) return simd::WeightType::kF32;
  if constexpr (std::is_same_v<E, BF16Element>) return simd::WeightType::kBF16;
  return simd::WeightType::kF16;
}

// Runs body(begin, end) over a gemv's rows [0, rows), row_bytes of weights
// each, on the pool: tasks of about 512 KB of weights, but at least two per
// thread, a multiple of 8 rows. A task is one read stream (the dense and MLX
// gemvs) or 4 (the GGUF ones, in bands; row_bands.h) of tens of KB or more.
// Without the second bound a 1024 x 1024 Q4_K matrix (576 KB) was two tasks of
// 904 and 120 rows, one thread doing nearly all of it. Tasks that taper
// towards the end of the rows (so the threads finish closer together) halved
// the launching thread's wait for the other, but cost as much in read streams
// cut short: decode was no faster at 256 KB, and 10-15% slower at 64 KB
// (docs/performance.md, tenth session).
template <typename Body>
void parallel_gemv_rows(ThreadPool& pool, size_t rows, size_t row_bytes, const Body& body) {
  const size_t by_bytes = (size_t{512} << 10) / std::max<size_t>(row_bytes, 1);
  const size_t by_threads = rows / (2 * size_t{pool.size()});
  pool.parallel_for(rows, std::max<size_t>(8, std::min(by_bytes, by_threads) / 8 * 8), body);
}

}  // namespace qwen35::cpu
