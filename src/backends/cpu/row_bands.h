// How the GGUF gemvs walk a task's rows: as M bands (equal runs of consecutive
// rows) side by side, one row of each per pass. Their kernels are compute-bound
// and share per-block work (x's loads, scale unpacking) across the M rows; each
// band is one long sequential read stream, where adjacent rows (0.5-7 KB each)
// would be short streams that the hardware prefetcher barely ramps up on. The
// dense gemvs and the float MLX ones walk short rows in four bands and long
// ones in two, the integer MLX ones short rows in two (8-bit codes) or the
// host's count (4-bit: heavy_int8_gemv_bands below) and long ones one after
// another (one band); each choice is what measured fastest on these hosts
// (docs/performance.md).
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "qwen35/error.h"

namespace qwen35::cpu {

// Passes [first, last) of the rows [begin, end) of one matrix walked as
// `bands` bands of band = (end - begin) / bands rows: pass j < band reads row
// begin + k * band + j of every band k, and the (end - begin) % bands rows
// after the bands are passes band, band + 1, ... of one row each. Threads
// split a task's passes, not its rows, so each keeps the bands' long read
// streams (gemv_scheduler.h).
struct RowPasses {
  size_t begin, end;
  size_t bands;
  size_t first, last;
};

// How many passes rows [begin, begin + rows) take in `bands` bands.
constexpr size_t pass_count(size_t rows, size_t bands) { return rows / bands + rows % bands; }

// Rows of up to this many bytes are short: the memory-bound gemvs walk them in
// more bands than longer ones (at the 0.8B shape in bf16, every dense matrix
// but the MLP's down projection, whose rows are 7 KB, is short).
constexpr size_t kShortRowMaxBytes = 4096;

// The CPUs whose measurements chose the band counts below and those of the
// regrouped GGUF and MLX gemvs (gguf_x16.h, mlx_x16.h), told apart by CPUID:
// AMD's family 25 (Zen 4; Zen 3 and AMD's older families, unmeasured, with
// it), AMD's family 26 and later (Zen 5), and every other CPU (Intel's Xeons).
// Zen 4 reads DRAM fastest in the fewest streams per thread: in decode, one
// band for every regrouped gemv and two for the short dense rows beat the
// other hosts' counts by 1.04-1.17 times (forty-sixth session).
enum class BandHost { kAmdZen4, kAmdZen5, kOther };
constexpr BandHost band_host_of(bool amd, unsigned family) {
  if (!amd) return BandHost::kOther;
  return family >= 26 ? BandHost::kAmdZen5 : BandHost::kAmdZen4;
}
// This process's host, read once.
BandHost band_host();

// The dense gemvs' bands, each prefetched ahead in software except on Zen 4
// (simd.cpp's gemv_bands_t; dense_gemv_prefetch_bytes): four for short rows,
// two for long ones. On the Xeon host of the twenty-second session, against
// two and one without the prefetch, bf16 decode went from 0.69-0.73 of the
// probe's bandwidth to 0.81-0.95 (alternating runs; docs/performance.md). On
// the Zen 5 host, unprefetched, four bands had read slower than two
// (nineteenth session); prefetched, the two read the same there
// (twenty-sixth: bf16 3584 x 1024 from DRAM 107-111 against 106-110 us,
// alternating). On Zen 4 two for short rows too: bf16 decode 1.12 times as
// fast as in four at contexts 0 and 4096 (forty-sixth session, `qwen35 bench
// --ab dense-bands=2`, medians of 7 repeats).
constexpr size_t default_dense_gemv_bands(size_t row_bytes, BandHost host) {
  return row_bytes <= kShortRowMaxBytes && host != BandHost::kAmdZen4 ? 4 : 2;
}
// The above, or what set_dense_gemv_bands forced for every row length.
size_t dense_gemv_bands(size_t row_bytes);
// Prefetch distances the tuning knobs may force: under a line ahead, none;
// at most 64 KiB.
constexpr size_t kMinPrefetchBytes = 64;
constexpr size_t kMaxPrefetchBytes = 65536;
// How far ahead of its loads each band's read stream is prefetched
// (simd.cpp). On the Xeon host of the twenty-second session (bf16 decode,
// alternating runs), 1024 bytes beat 512 and 2048, and any prefetch beat none
// by 15-30%: the hardware prefetcher alone ramps up too slowly on streams that
// jump to a new page every few KB (docs/performance.md). On Zen 4, in two
// bands, none (0): the hardware prefetchers keep up with two streams per
// thread there, and the prefetches only cost. `qwen35 bench --dtype bf16 --ab
// dense-prefetch=1` (forty-seventh session, medians of 5 repeats, a prefetch
// of each line's own bytes against 1024 ahead): 1.036, 1.035 and, at context
// 4096, 1.172; with none the default, `--ab dense-prefetch=1024` 1.001, 0.998
// and at 4096 0.977. BM_Gemv from DRAM, none against 1024: 3584 x 1024
// 1.069, 1024 x 3584 1.024, the 248320-row output projection 1.025.
constexpr size_t default_dense_gemv_prefetch_bytes(BandHost host) {
  return host == BandHost::kAmdZen4 ? 0 : 1024;
}
// The above for this host, or what set_dense_gemv_prefetch_bytes forced; 0
// (none) under kMinPrefetchBytes.
size_t dense_gemv_prefetch_bytes();
// Both for `qwen35 bench --ab` (tuning knobs dense-bands, 1, 2 or 4, and
// dense-prefetch, at most kMaxPrefetchBytes; 0 restores the default) and the
// tests, process-wide (cpu/forced_setting.h). The results do not depend on
// them, to the bit.
void set_dense_gemv_bands(size_t bands);
void set_dense_gemv_prefetch_bytes(size_t bytes);

// The bands of the short rows of the integer gemvs that do the most arithmetic
// per byte read (Q6_K, MLX 4-bit codes), which differ by host. On the Xeon
// host four read DRAM faster than two, whose reads and arithmetic took turns
// (twenty-fifth session: Q6_K 3584 x 1024 151-163 -> 127-135 us, mlx4 int8
// decode +15%); on the Zen 5 host four read it slower (twenty-sixth: Q6_K
// 49-50 against 61-75 us, decode +12-30% with two, mlx4 +15-25%), as four
// unprefetched dense bands had there. The hosts' CPU vendor is what told
// them apart: two on AMD's x86 CPUs, four elsewhere. The results do not
// depend on it, to the bit.
size_t heavy_int8_gemv_bands();
// Makes heavy_int8_gemv_bands() return `bands` (2 or 4), or the host's choice
// again for 0: for the tests, which check both.
void set_heavy_int8_gemv_bands(size_t bands);

// y[r] = base[r] (0 if base is null) + dot of row r, for the rows of passes p:
// dot(std::integral_constant<size_t, K>, size_t first, size_t stride, float* out)
// computes the K rows first + k * stride at once, K = M (= p.bands) for the
// bands (stride: a band's rows) and 1 for the rows left over. The rows come as
// numbers, not an array: built from an array stored a word at a time and read
// back as one vector (GCC's vectorised pointer arithmetic), the row pointers
// waited for a store the CPU cannot forward, once per pass (the integer Q4_K
// gemv, 3584 x 1024 from the caches on Zen 5: 61-64 us with the array, 43-47
// without). A "row" may stand for kOutputs consecutive outputs (the groups of
// 16 rows of the regrouped GGUF layouts): dot then writes kOutputs floats per
// row, and row r's go to y[kOutputs r + o].
template <size_t M, size_t kOutputs = 1, typename Dot>
void for_row_bands(const RowPasses& p, const float* base, float* y, const Dot& dot) {
  QWEN35_ASSERT(p.bands == M);
  const auto store = [&](size_t row, const float* out) {
    for (size_t o = 0; o < kOutputs; ++o) {
      const size_t i = kOutputs * row + o;
      y[i] = (base ? base[i] : 0.0f) + out[o];
    }
  };
  const size_t band = (p.end - p.begin) / M;
  for (size_t j = p.first; j < std::min(p.last, band); ++j) {
    const size_t first = p.begin + j;
    float out[M * kOutputs];
    dot(std::integral_constant<size_t, M>(), first, band, out);
    for (size_t k = 0; k < M; ++k) store(first + k * band, out + kOutputs * k);
  }
  for (size_t j = std::max(p.first, band); j < p.last; ++j) {
    const size_t r = p.begin + M * band + (j - band);
    float out[kOutputs];
    dot(std::integral_constant<size_t, 1>(), r, size_t{0}, out);
    store(r, out);
  }
}

// for_row_bands in p.bands bands, 1, 2 or 4 (those the tuning knobs may
// force), each count a kernel of its own: dot's K rows are a compile-time
// count, which keeps a band's accumulators in registers.
template <size_t kOutputs = 1, typename Dot>
void for_any_row_bands(const RowPasses& p, const float* base, float* y, const Dot& dot) {
  switch (p.bands) {
    case 1: return for_row_bands<1, kOutputs>(p, base, y, dot);
    case 2: return for_row_bands<2, kOutputs>(p, base, y, dot);
    default: return for_row_bands<4, kOutputs>(p, base, y, dot);
  }
}

// Calls f(row) for every row of passes p, in no particular order (the scalar kernels).
template <typename F>
void for_each_row(const RowPasses& p, const F& f) {
  const size_t band = (p.end - p.begin) / p.bands;
  for (size_t j = p.first; j < std::min(p.last, band); ++j) {
    for (size_t k = 0; k < p.bands; ++k) f(p.begin + k * band + j);
  }
  for (size_t j = std::max(p.first, band); j < p.last; ++j) f(p.begin + p.bands * band + (j - band));
}

}  // namespace qwen35::cpu
