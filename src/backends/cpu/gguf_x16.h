// The CPU's gemvs of Q4_0, Q8_0, Q4_K, Q5_K and Q6_K regrouped 16 rows at a
// time (DType::kQ4_0x16, kQ8_0x16, kQ4_Kx16, kQ5_Kx16, kQ6_Kx16;
// cpu/cpu_gguf_x16.cpp), for x in 8 or 24 bits.
#pragma once

#include <cstddef>

#include "cpu/int8_activations.h"
#include "cpu/row_bands.h"
#include "qwen35/gguf_quants.h"

namespace qwen35::gguf_cpu {

// How far ahead of its blocks the kernel prefetches, and in how many bands
// (read streams side by side) a thread walks its groups. On the 2-core Xeon
// VM (AVX-512 VNNI and FP16, DRAM at 17-27 GB/s), Q4_0x16 3584 x 1024 from
// DRAM: one band 12.5-14.4 GB/s, two 13.4-18.2, four 17.4-21.5 (dense bf16
// 17.0-19.6 in the same runs); from the caches 47 us with one or two, 39 with
// four. Decode, alternating: 4 KB ahead 46.1, 43.8, 44.4 tok/s against 2 KB's
// 36.7, 41.4, 39.8. (Those prefetches had been compiled out, cpu/prefetch.h:
// the distances differed only in their address arithmetic. Since they reach
// the binary, the Q4_0x16 and Q8_0x16 kernels use them at 4 KB, which
// measured faster than none on the Zen 5 host.) The K-quant kernels ask for
// each line of codes 4 KB ahead too since the thirty-seventh session, when
// `qwen35 bench --ab` compared them in one process (Zen 5, two threads,
// medians of 40 alternating pairs of 4 tokens, tok/s against none: q4_k
// 1.07-1.31, q5_k 1.01-1.23, q6_k 1.00-1.15 in thirteen runs where the
// probe read 57-81 GB/s; q4_k 0.99, q5_k 0.94, q6_k 1.05 where it read
// 40-44); separate runs had not told them apart. Since the thirty-ninth,
// Q4_Kx16 asks for its blocks' lines of scales too and Q6_Kx16 for every line
// of its blocks, which the codes' prefetches had left to DRAM (cpu_gguf_x16.cpp).
constexpr size_t kX16PrefetchBytes = 4096;
// Four bands with x in 8 bits: off AMD's CPUs (the Xeon measurements above),
// and for Q8_0x16 (which decode takes only with x in 8 bits) on Zen 5 too. On
// the Zen 5 host `qwen35 bench --int8-activations --ab gguf-x16-bands=N`
// (forty-fifth session, medians of 5 repeats) measured q8_0 at 0.885 with
// one band and 0.922 with two.
constexpr size_t kX16Bands = 4;
// With x in 24 bits, and on Zen 5 with x in 8 bits too, two: a Q4_Kx16
// pass of four bands keeps 24 accumulators (four groups, two sub-blocks,
// three digits) and more than AVX-512's 32 registers in all, and spilled them
// (3584 x 1024 from the caches, Zen 5: 45-54 GiB/s in four bands, 57 in two).
constexpr size_t kX16Int24Bands = 2;
// Except Q5_Kx16 and Q6_Kx16, in one: the most arithmetic per byte of them
// (Q5_K's fifth bits, Q6_K's codes assembled from three runs), and one read
// stream per thread is what such a loop reads DRAM fastest in on two threads
// (thirty-sixth session). `qwen35 bench --ab gguf-x16-bands=1`
// (thirty-seventh): q5_k 1.07-1.11 times the tok/s of two bands in five runs
// (one at context 4096), where q4_k measured 0.94-1.01 and q6_k 0.97-1.13.
// Q6_Kx16 too since the forty-third session: q6_k 1.055, 1.116 and, at
// context 4096, 1.094 (medians of 5 repeats; all 15 repeats 1.03-1.13), and
// two bands against one, one the default, 0.933 and 0.915; q4_k measured
// 0.88 and q4_0 0.94 in one. 3584 x 1024 from DRAM (BM_Gemv with
// QWEN35_BENCH_AB, medians of 5): 1.16, 1.12, 1.12 against Q4_Kx16's 1.05,
// 1.05, 0.92.
// On Zen 5 these two counts serve x in 8 bits as well. Until the
// forty-fifth session x in 8 bits kept the Xeon's four bands there, and
// decoded slower than x in 24 bits, a third of the dot products notwithstanding
// (q6_k 64 against 86 tok/s, q4_k 103 against 113). Against four, in one
// process (`--int8-activations --ab gguf-x16-bands=N`, Zen 5, medians of 5
// repeats): q6_k 1.226 with one band, 1.178 with two; q5_k 1.262 and 1.201;
// q4_k 1.087 and 1.114; q4_0 0.998 and 1.036.
constexpr size_t kHeavyInt24Bands = 1;
// On Zen 4 (cpu::BandHost::kAmdZen4) every layout in one band, for x in 8 and
// in 24 bits: against the counts above, `qwen35 bench [--int8-activations]
// --ab gguf-x16-bands=1` (forty-sixth session, medians of 5-7 repeats)
// measured q4_k 1.08 and 1.14-1.17 (x in 24 and 8 bits), q4_0 1.09-1.16 and
// 1.02-1.13, q8_0 (x in 8 bits) 1.12 twice; q5_k and q6_k, in one band
// already, 0.84-0.98 in two.
constexpr size_t kZen4X16Bands = 1;
// The bands of a regrouped `layout` for x in `digits` 8-bit digits on this
// host: the above, or what set_x16_bands forced.
size_t x16_bands(DType layout, size_t digits);
// Makes x16_bands() return `bands` (1, 2 or 4) for every x, or the above again
// for 0, process-wide: for the tests, which check each count, and for
// `qwen35 bench --ab`, which compares them in one process. The results do not
// depend on it, to the bit.
void set_x16_bands(size_t bands);
// Q6_Kx16 in one read stream per thread (kHeavyInt24Bands: x in 24 bits,
// and on AMD's CPUs x in 8 bits too) asks 8 KB ahead: `qwen35 bench --ab
// gguf-x16-prefetch=8192` (forty-third session, one band already the
// default, x in 24 bits) q6_k 1.098 and 1.095 (all 10 repeats 1.05-1.15;
// 12 KB 1.089, 16 KB 1.093; 4 KB against 8 KB, 8 KB the default, 0.964,
// 0.970 and at 4096 0.910), though BM_Gemv's 3584 x 1024 read 0.98 times as
// fast: likely the gain is in decode's 248320-row output projection (a third
// of a q6_k token's bytes), one long stream per thread, which the benchmark
// lacks. Q5_Kx16, in one band too, measured 1.034 and 1.033 (within the
// noise here; it keeps 4 KB). With x in 8 bits in one band (forty-fifth
// session, `--int8-activations --ab gguf-x16-prefetch=8192`, medians of 5)
// q6_k measured 1.066, 1.035, 1.037 and, at context 4096, 1.009; q5_k
// 1.014, q4_k 0.996, q8_0 1.019.
constexpr size_t kQ6KOneBandPrefetchBytes = 8192;
// How far ahead the kernels of a regrouped `layout` ask for the lines they
// will read with x in `digits` 8-bit digits: the above, or what
// set_x16_prefetch_bytes forced (0: the defaults again; under
// cpu::kMinPrefetchBytes, less than a line ahead: no prefetch at all; at most
// cpu::kMaxPrefetchBytes), process-wide like set_x16_bands.
size_t x16_prefetch_bytes(DType layout, size_t digits);
void set_x16_prefetch_bytes(size_t bytes);
// Of each Q5_Kx16 block's 44 lines, its kernel asks for the 32 of codes
// ahead, or on Zen 4 all 44: the 4 of d, dmin and scales and the 8 of fifth
// bits too, which the codes' prefetches skip. On the Zen 4 host (forty-seventh
// session) q5_k decoded 1.024-1.069 times as fast with all 44 in six
// in-process comparisons (`qwen35 bench --dtype q5_k --ab`, medians of 5-7
// repeats: four at context 0, one with x in 8 bits, one at 4096), the fifth
// bits alone 1.004-1.068; BM_Gemv 3584 x 1024 from DRAM 1.01-1.04. With the
// knob, 32 against the default 44: 0.969, 0.989 and, x in 8 bits, 0.977. On
// the Zen 5 host (thirty-ninth session) all 44 measured 0.97-1.00 and the
// scales alone 0.94-1.02, so it and the other hosts keep 32. Forced (0: the
// default again) by the tuning knob gguf-x16-q5-prefetch-lines, for the tests
// and for `qwen35 bench --ab`; the results do not depend on it, to the bit.
constexpr size_t kQ5KCodeLines = 32, kQ5KBlockLines = 44;
constexpr size_t default_x16_q5_prefetch_lines(cpu::BandHost host) {
  return host == cpu::BandHost::kAmdZen4 ? kQ5KBlockLines : kQ5KCodeLines;
}
// The above for this host, or what set_x16_q5_prefetch_lines forced.
size_t x16_q5_prefetch_lines();
void set_x16_q5_prefetch_lines(size_t lines);

// y[r] = base[r] (0 if null) + row r . x for the rows of the groups of passes
// p (cpu/row_bands.h, each group of 16 rows a row there, in x16_bands bands) of
// w, a matrix in a regrouped `layout` (is_regrouped_dtype) with rows of `cols`
// elements, by the target chosen at run time.
void run_x16_groups(DType layout, const std::byte* w, const cpu::Int8Activations& x, size_t cols, const float* base,
                    float* y, const cpu::RowPasses& p);

}  // namespace qwen35::gguf_cpu
