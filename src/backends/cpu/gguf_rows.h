// One GGUF matrix as a launch's kernels read it, shared by the float kernels
// (cpu_gguf.cpp) and the integer ones (cpu_gguf_int8.cpp).
#pragma once

#include <cstddef>
#include <string>

#include "cpu/int8_activations.h"
#include "cpu/row_bands.h"
#include "qwen35/dtype.h"

namespace qwen35::gguf_cpu {

// The rows of one matrix for one launch: row r starts at w + r * row_bytes.
// x_sums[i] is the sum of x[32 i, 32 i + 32) (Q4_K and Q5_K only). With int8
// set, the kernels read x in 8 bits from it instead of x.
struct Rows {
  const std::byte* w;
  size_t row_bytes, cols;
  const float* x;
  const float* x_sums;
  const cpu::Int8Activations* int8 = nullptr;
};

// Bands per task (row_bands.h): the float kernels take four rows at a time.
// The integer ones take four for the 4-bit types, whose kernels share the most
// per-block work across rows (Q4_K's scale unpacking, Q4_0's x loads), two for
// the others, which gain more from fewer read streams. BM_Gemv int8 from
// DRAM, four bands -> two: Q8_0 25.3 -> 27.5-27.9 GB/s, Q6_K 19.8-21.5 ->
// 22.0-24.9, Q4_K unchanged at 22; in decode (medians of 3 alternating runs
// of the 0.8B) Q6_K 34.6 -> 42.3 tok/s, Q8_0 34.4 -> 36.9, but Q4_K 55.7 ->
// 49.6, so the 4-bit types keep four.
constexpr size_t kFloatRowBands = 4;
constexpr size_t int8_row_bands(DType type) { return type == DType::kQ4_K || type == DType::kQ4_0 ? 4 : 2; }
constexpr size_t row_bands(DType type, bool int8) { return int8 ? int8_row_bands(type) : kFloatRowBands; }

// y[r] = base[r] (0 if null) + row r . x for the rows of passes p, in
// int8_row_bands(type) bands, by the integer kernels of the target chosen at
// run time; m.int8 is set.
void run_int8_rows(DType type, const Rows& m, const float* base, float* y, const cpu::RowPasses& p);
// The SIMD target run_int8_rows runs now ("AVX3_DL", "AVX2", ...).
std::string int8_kernel_target();

}  // namespace qwen35::gguf_cpu
