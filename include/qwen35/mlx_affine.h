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

// Quantizes one row of `cols` floats: per group, min/max affine with
// scale = (max - min) / (2^bits - 1) and bias = min, both rounded to
// `scale_dtype` first, then q = clamp(round((w - bias) / scale)). Writes
// cols * bits / 32 words of codes and cols / group_size scales and biases
// (elements of `scale_dtype`). The quantizer and the tests use it.
void mlx_quantize_row(const float* w, uint32_t cols, MlxAffineParams params, DType scale_dtype, uint32_t* codes,
                      void* scales, void* biases);

}  // namespace qwen35
