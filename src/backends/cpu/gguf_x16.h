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
// measured faster than none on the Zen 5 host; the K-quant ones use none.)
constexpr size_t kX16PrefetchBytes = 4096;
constexpr size_t kX16Bands = 4;
// With x in 24 bits, two: a Q4_Kx16 pass of four bands keeps 24 accumulators
// (four groups, two sub-blocks, three digits) and more than AVX-512's 32
// registers in all, and spilled them (3584 x 1024 from the caches, Zen 5:
// 45-54 GiB/s in four bands, 57 in two).
constexpr size_t kX16Int24Bands = 2;
constexpr size_t x16_bands(size_t digits) { return digits == 1 ? kX16Bands : kX16Int24Bands; }

// y[r] = base[r] (0 if null) + row r . x for the rows of the groups of passes
// p (cpu/row_bands.h, each group of 16 rows a row there, x16_bands(x.digits) bands) of
// w, a matrix in a regrouped `layout` (is_regrouped_dtype) with rows of `cols`
// elements, by the target chosen at run time.
void run_x16_groups(DType layout, const std::byte* w, const cpu::Int8Activations& x, size_t cols, const float* base,
                    float* y, const cpu::RowPasses& p);

}  // namespace qwen35::gguf_cpu
