// MLX affine quantization (mlx-lm, spec 2.2): a weight [rows, cols] stored as
//   codes  [rows, cols * bits / 32]  uint32, `bits`-bit unsigned codes packed
//          little end first: element i sits in word i / (32 / bits) at bits
//          [(i % (32 / bits)) * bits, +bits); so with 8 bits byte i is element i,
//          with 4 bits byte j holds element 2j (low nibble) and 2j + 1 (high).
//   scales [rows, cols / group_size]  F32, F16 or BF16
//   biases [rows, cols / group_size]  same dtype as scales
//   w[r, c] = scales[r, c / gs] * q[r, c] + biases[r, c / gs]
// The scalar functions below are the specification every kernel follows; the
// kernel argument structs are shared by every backend ("gemv_mlx4_bf16": 4-bit
// codes, BF16 scales and biases).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "qwen35/backend.h"
#include "qwen35/dtype.h"

namespace qwen35 {

struct MlxAffineParams {
  uint32_t bits = 8;
  uint32_t group_size = 64;
};

// The three device arrays of one quantized matrix.
struct MlxMatrixRef {
  DevicePtr codes, scales, biases;
};

// y[rows] = W x[cols].
struct MlxGemvArgs {
  static constexpr std::string_view kTypeName = "MlxGemvArgs";
  MlxMatrixRef w;
  DevicePtr x, y;
  uint32_t rows, cols, group_size;
};

// y0 = W0 x, y1 = W1 x in one pass over x (same bits, scale dtype, cols, group size).
struct MlxGemvPairArgs {
  static constexpr std::string_view kTypeName = "MlxGemvPairArgs";
  MlxMatrixRef w0, w1;
  DevicePtr x, y0, y1;
  uint32_t rows0, rows1, cols, group_size;
};

// y = residual + W (silu(gate) * up); residual may be null.
struct MlxGemvSiluGateArgs {
  static constexpr std::string_view kTypeName = "MlxGemvSiluGateArgs";
  MlxMatrixRef w;
  DevicePtr gate, up, residual, y;
  uint32_t rows, cols, group_size;
};

// y[cols] = W[row, :] dequantized.
struct MlxRowToF32Args {
  static constexpr std::string_view kTypeName = "MlxRowToF32Args";
  MlxMatrixRef w;
  DevicePtr y;
  uint32_t row, cols, group_size;
};

// The code of element `i` of a packed row.
inline uint32_t mlx_code(const uint32_t* row_codes, uint32_t i, uint32_t bits) {
  const uint32_t per_word = 32 / bits;
  return (row_codes[i / per_word] >> ((i % per_word) * bits)) & ((1u << bits) - 1u);
}

// One dequantized weight, rounded once (fused multiply-add), so that every
// backend's row dequantization is bit-identical.
inline float mlx_dequantize(float scale, uint32_t code, float bias) {
  return std::fma(scale, static_cast<float>(code), bias);
}

// The rows regrouped 16 at a time, the layout the CPU keeps matrices in for
// x in 8 or 24 bits (GpuBackend::regroups_mlx_rows; kernels "gemv_mlx4x16_bf16",
// "gemv_mlx8x16_bf16", ...): the same bytes in another order, so that each
// int32 lane of a 64-byte vector holds four code bytes of one of 16 rows and
// the rows' dot products accumulate side by side. For each 16 rows and each
// 32 code bytes of a row (a "unit": 64 columns of 4 bits, 32 of 8), 512
// bytes of codes in runs of 64: bytes [4 r, 4 r + 4) of run v are row r's
// code bytes [4 v, 4 v + 4) of the unit. Scales and biases: for each 16 rows
// and each group, the 16 rows' side by side.
inline constexpr uint32_t kMlxGroupedRows = 16;
inline constexpr uint32_t kMlxUnitBytes = 32;  // a row's code bytes per unit

// Whether a [rows, cols] matrix of `bits`-bit codes can be regrouped: whole
// groups of 16 rows and whole units.
inline bool mlx_regroupable(uint32_t bits, uint32_t rows, uint32_t cols) {
  return rows % kMlxGroupedRows == 0 && size_t{cols} * bits / 8 % kMlxUnitBytes == 0;
}
// Where the regrouped codes keep row `row`'s code byte `byte` (rows of
// `row_bytes` code bytes), and where the regrouped scales and biases keep its
// group `group` (rows of `groups` groups).
inline size_t mlx_regrouped_code_byte(size_t row_bytes, uint32_t row, size_t byte) {
  const size_t unit = byte / kMlxUnitBytes, run = byte % kMlxUnitBytes / 4;
  return row / kMlxGroupedRows * kMlxGroupedRows * row_bytes + unit * kMlxUnitBytes * kMlxGroupedRows + run * 64 +
         row % kMlxGroupedRows * 4 + byte % 4;
}
inline size_t mlx_regrouped_group_index(size_t groups, uint32_t row, size_t group) {
  return (row / kMlxGroupedRows * groups + group) * kMlxGroupedRows + row % kMlxGroupedRows;
}
// The code of element `col` of row `row` of regrouped codes (mlx_code for the
// layout as it came).
inline uint32_t mlx_regrouped_code(const void* codes, uint32_t cols, uint32_t bits, uint32_t row, uint32_t col) {
  const size_t at = mlx_regrouped_code_byte(size_t{cols} * bits / 8, row, size_t{col} * bits / 8);
  return (static_cast<const uint8_t*>(codes)[at] >> (col * bits % 8)) & ((1u << bits) - 1u);
}
// Regroups codes [rows, cols * bits / 32] and scales and biases [rows, cols /
// group_size] of `scale_bytes` each into the arrays *_out of the same sizes
// (mlx_regroupable holds).
void mlx_regroup_rows(MlxAffineParams params, size_t scale_bytes, uint32_t rows, uint32_t cols, const void* codes,
                      const void* scales, const void* biases, void* codes_out, void* scales_out, void* biases_out);

// Quantizes one row of `cols` floats: per group, min/max affine with
// scale = (max - min) / (2^bits - 1) and bias = min, both rounded to
// `scale_dtype` first, then q = clamp(round((w - bias) / scale)). Writes
// cols * bits / 32 words of codes and cols / group_size scales and biases
// (elements of `scale_dtype`). The quantizer and the tests use it.
void mlx_quantize_row(const float* w, uint32_t cols, MlxAffineParams params, DType scale_dtype, uint32_t* codes,
                      void* scales, void* biases);

}  // namespace qwen35
