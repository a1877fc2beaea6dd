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

// Bands per share (row_bands.h). The float kernels take four rows at a time
// (two: q4_k decode 38.7 -> 31.0-32.0 tok/s). The integer ones take two,
// which read fewer streams at once, except Q4_0, whose kernel shares the most
// per-block work across rows (x's loads; one band: q4_0 decode 38.3 -> 37.3,
// 52.5 -> 35.2). With tasks of 512 KB Q4_K kept four as well, but with whole
// shares two read faster: q4_k int8 decode, four rounds without steal, 39.5,
// 45.0, 51.5, 42.5 tok/s with four against 51.2, 51.4, 54.0, 52.1 with two
// (and 49.8-54.0 with one). Q8_0 and Q6_K: one band no faster (q8_0 38.5 ->
// 34.1, q6_k 42.7 -> 42.5). Q6_K, whose kernel spends the most arithmetic per
// byte, takes the host's number (cpu::heavy_int8_gemv_bands): four read DRAM
// faster on the Xeon host, two on the Zen 5 one.
constexpr size_t kFloatRowBands = 4;
inline size_t int8_row_bands(DType type) {
  if (type == DType::kQ6_K) return cpu::heavy_int8_gemv_bands();
  return type == DType::kQ4_0 ? 4 : 2;
}
inline size_t row_bands(DType type, bool int8) { return int8 ? int8_row_bands(type) : kFloatRowBands; }

// y[r] = base[r] (0 if null) + row r . x for the rows of passes p, in
// int8_row_bands(type) bands (p.bands), by the integer kernels of the target
// chosen at run time; m.int8 is set.
void run_int8_rows(DType type, const Rows& m, const float* base, float* y, const cpu::RowPasses& p);
// The SIMD target run_int8_rows runs now ("AVX3_DL", "AVX2", ...).
std::string int8_kernel_target();

}  // namespace qwen35::gguf_cpu
