// How the GGUF gemvs walk a task's rows: as M bands (equal runs of consecutive
// rows) side by side, one row of each per pass. Their kernels are compute-bound
// and share per-block work (x's loads, scale unpacking) across the M rows; each
// band is one long sequential read stream, where adjacent rows (0.5-7 KB each)
// would be short streams that the hardware prefetcher barely ramps up on. The
// dense and MLX gemvs, memory-bound, read one row after another instead: a
// single stream per task, which read 15-25% faster (docs/performance.md).
#pragma once

#include <cstddef>
#include <type_traits>

namespace qwen35::cpu {

// y[r] = base[r] (0 if base is null) + dot of row r, for r in [row_begin,
// row_end): dot(std::integral_constant<size_t, K>, const size_t* rows, float*
// out) computes K rows at once, K = M for the bands and 1 for the rows left over.
template <size_t M, typename Dot>
void for_row_bands(size_t row_begin, size_t row_end, const float* base, float* y, const Dot& dot) {
  const size_t band = (row_end - row_begin) / M;
  for (size_t j = 0; j < band; ++j) {
    size_t rows[M];
    float out[M];
    for (size_t k = 0; k < M; ++k) rows[k] = row_begin + k * band + j;
    dot(std::integral_constant<size_t, M>(), rows, out);
    for (size_t k = 0; k < M; ++k) y[rows[k]] = (base ? base[rows[k]] : 0.0f) + out[k];
  }
  for (size_t r = row_begin + M * band; r < row_end; ++r) {
    float out;
    dot(std::integral_constant<size_t, 1>(), &r, &out);
    y[r] = (base ? base[r] : 0.0f) + out;
  }
}

}  // namespace qwen35::cpu
