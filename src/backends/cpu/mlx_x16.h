// The CPU's gemv of MLX rows regrouped 16 at a time (mlx_regroup_rows in
// qwen35/mlx_affine.h; cpu/cpu_mlx_x16.cpp) against x in 8 or 24 bits.
#pragma once

#include <cstddef>

#include "cpu/mlx_int8.h"
#include "cpu/row_bands.h"

namespace qwen35::cpu {

// Bands (read streams side by side, row_bands.h) in which a thread walks its
// groups of 16 rows. On the Zen 5 host, 3584 x 1024 from DRAM read fastest in
// four (41.5 GiB/s against 38-39 in two, 30-33 in one; from the caches 87-103
// in any), but mlx4 int8 decode ran faster in two (alternating, three rounds:
// 108.6, 106.5, 123.8 tok/s against 102.5, 107.9, 103.4).
// With x in 24 bits too: mlx4 decode ran faster in two bands than in one
// (alternating, three rounds: 70.4, 70.0, 66.2 tok/s against 69.7, 63.0,
// 59.5), though two hold 24 accumulators and spill some.
inline constexpr size_t kMlxX16Bands = 2;
// On Zen 4 (BandHost::kAmdZen4) one: `qwen35 bench [--int8-activations] --ab
// mlx-x16-bands=1` (forty-sixth session, medians of 5-7 repeats) measured
// mlx4 1.15 and 1.04-1.05 (x in 24 and 8 bits), mlx8 1.06-1.07 and 1.16.
inline constexpr size_t kZen4MlxX16Bands = 1;
// The above for this host, or what set_mlx_x16_bands forced (1, 2 or 4; 0:
// the default again), process-wide: for the tests and `qwen35 bench --ab`.
// The results do not depend on it, to the bit.
size_t default_mlx_x16_bands();
size_t mlx_x16_bands();
void set_mlx_x16_bands(size_t bands);
// How far ahead the kernels ask for the lines of codes, scales and biases
// they will read: 4 KB, as the row-major MLX gemvs (mlx_scales-inl.h):
// on the Zen 5 host, 3584 x 1024 from DRAM with x in 24 bits on two threads
// (BM_MlxGemv with QWEN35_BENCH_AB, the default's time over the other's),
// mlx4 and mlx8: 1 KB 0.86 and 0.85, 2 KB 0.95 and 0.94, 8 KB 0.97 and
// 0.99, 16 KB 0.95 and 0.93, none 0.76 and 0.82; mlx8 decode at 8 KB 0.95
// (`qwen35 bench --ab mlx-x16-prefetch=8192`, median of 5 repeats).
inline constexpr size_t kMlxX16PrefetchBytes = 4096;
// On Zen 4 none (0) but for 4-bit codes with x in 24 bits, the kernel with
// the most arithmetic per byte: the hardware prefetchers keep up with one
// stream per thread there. `qwen35 bench --ab mlx-x16-prefetch=1` (forty-
// seventh session, medians of 5-7 repeats, a prefetch of each line's own
// bytes against 4 KB ahead): mlx8 1.054, 1.056, 1.028, 1.044, at context
// 4096 1.041, with x in 8 bits 1.091; mlx4 with x in 8 bits 1.085 and
// 1.077, but with x in 24 bits 0.992, 1.043, 1.000, 0.997 and at 4096 0.978.
// With none the default (no prefetch instructions), `--ab
// mlx-x16-prefetch=4096`: mlx8 0.947, with x in 8 bits 0.920; mlx4 with x
// in 8 bits 0.997 and 0.965.
constexpr size_t default_mlx_x16_prefetch_bytes(unsigned bits, size_t digits, BandHost host) {
  const bool heaviest = bits == 4 && digits > 1;
  return host == BandHost::kAmdZen4 && !heaviest ? 0 : kMlxX16PrefetchBytes;
}
// The above for this host, codes of `bits` and x in `digits` 8-bit digits, or
// what set_mlx_x16_prefetch_bytes forced for all of them (0: the defaults
// again; under kMinPrefetchBytes, less than a line ahead: none; at most
// kMaxPrefetchBytes), process-wide like set_mlx_x16_bands.
size_t mlx_x16_prefetch_bytes(unsigned bits, size_t digits);
void set_mlx_x16_prefetch_bytes(size_t bytes);

// y[r] = base[r] (0 if null) + row r . x for the rows of the groups of passes
// p (each group of 16 rows a row there, in mlx_x16_bands() bands) of w, whose codes,
// scales and biases are regrouped, by the target chosen at run time.
void mlx_x16_groups(const simd::MlxRows& w, const MlxInt8Activations& x, const float* base, float* y,
                    const RowPasses& p);

}  // namespace qwen35::cpu
