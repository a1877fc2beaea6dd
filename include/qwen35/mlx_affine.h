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

#include <algorithm>
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

// The three device arrays of one quantized matrix; regrouped (below), one
// array at codes, scales and biases null.
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
// "gemv_mlx8x16_bf16", ...): the same bytes in another order and in one
// array, so that each int32 lane of a 64-byte vector holds four code bytes
// of one of 16 rows, the rows' dot products accumulate side by side, and a
// kernel reads each 16 rows from their first byte to their last. For each
// 16 rows, segment after segment of max(64 columns of 4 bits or 32 of 8,
// group_size) columns: the 16 rows' scales of the segment's groups side by
// side (group by group), then their biases so, then the segment's units
// (32 code bytes of each row: 64 columns of 4 bits, 32 of 8), each 512 bytes
// of codes in runs of 64: bytes [4 r, 4 r + 4) of run v are row r's code
// bytes [4 v, 4 v + 4) of the unit. With the scales and the biases in arrays
// of their own, as until the thirty-third session, each 16 rows were three
// read streams, and the hardware prefetcher of the Zen 5 host kept up with
// them worse (docs/performance.md).
inline constexpr uint32_t kMlxGroupedRows = 16;
inline constexpr uint32_t kMlxUnitBytes = 32;  // a row's code bytes per unit

// Whether a [rows, cols] matrix of `bits`-bit codes can be regrouped: whole
// groups of 16 rows and whole units.
inline bool mlx_regroupable(uint32_t bits, uint32_t rows, uint32_t cols) {
  return rows % kMlxGroupedRows == 0 && size_t{cols} * bits / 8 % kMlxUnitBytes == 0;
}

// Where the regrouped array of a matrix with rows of `cols` columns keeps
// each code byte, scale and bias (`scale_bytes` each).
struct MlxRegroupedLayout {
  MlxRegroupedLayout(MlxAffineParams params, size_t scale_bytes, uint32_t cols)
      : bits(params.bits),
        scale_bytes(scale_bytes),
        unit_cols(kMlxUnitBytes * 8 / params.bits),
        segment_groups(std::max<size_t>(1, unit_cols / params.group_size)),
        segment_units(std::max<size_t>(1, params.group_size / unit_cols)),
        segment_bytes(kMlxGroupedRows * (2 * segment_groups * scale_bytes + segment_units * kMlxUnitBytes)),
        group_bytes(segment_bytes * (cols / (segment_units * unit_cols))) {}

  // Row `row`'s code byte `byte`.
  size_t code_byte(uint32_t row, size_t byte) const {
    const size_t unit = byte / kMlxUnitBytes, run = byte % kMlxUnitBytes / 4;
    return segment(row, unit / segment_units) + codes_offset() + unit % segment_units * kMlxUnitBytes * kMlxGroupedRows +
           run * 64 + row % kMlxGroupedRows * 4 + byte % 4;
  }
  // Row `row`'s scale and bias of group `group`.
  size_t scale_byte(uint32_t row, size_t group) const {
    return segment(row, group / segment_groups) +
           (group % segment_groups * kMlxGroupedRows + row % kMlxGroupedRows) * scale_bytes;
  }
  size_t bias_byte(uint32_t row, size_t group) const {
    return scale_byte(row, group) + segment_groups * kMlxGroupedRows * scale_bytes;
  }
  // Where a segment's codes start, past its scales and biases.
  size_t codes_offset() const { return 2 * segment_groups * kMlxGroupedRows * scale_bytes; }

  size_t bits, scale_bytes;
  size_t unit_cols;       // columns per unit
  size_t segment_groups;  // groups per segment
  size_t segment_units;   // units per segment
  size_t segment_bytes;   // of 16 rows
  size_t group_bytes;     // 16 rows, all their segments

 private:
  size_t segment(uint32_t row, size_t s) const { return row / kMlxGroupedRows * group_bytes + s * segment_bytes; }
};

// The code of element `col` of row `row` of a regrouped array (mlx_code for
// the layout as it came).
inline uint32_t mlx_regrouped_code(const void* grouped, const MlxRegroupedLayout& layout, uint32_t row, uint32_t col) {
  const size_t at = layout.code_byte(row, size_t{col} * layout.bits / 8);
  return (static_cast<const uint8_t*>(grouped)[at] >> (col * layout.bits % 8)) & ((1u << layout.bits) - 1u);
}
// Regroups codes [rows, cols * bits / 32] and scales and biases [rows, cols /
// group_size] of `scale_bytes` each into `out`, an array of all their bytes
// (mlx_regroupable holds).
void mlx_regroup_rows(MlxAffineParams params, size_t scale_bytes, uint32_t rows, uint32_t cols, const void* codes,
                      const void* scales, const void* biases, void* out);

// Quantizes one row of `cols` floats: per group, min/max affine with
// scale = (max - min) / (2^bits - 1) and bias = min, both rounded to
// `scale_dtype` first, then q = clamp(round((w - bias) / scale)). Writes
// cols * bits / 32 words of codes and cols / group_size scales and biases
// (elements of `scale_dtype`). The quantizer and the tests use it.
void mlx_quantize_row(const float* w, uint32_t cols, MlxAffineParams params, DType scale_dtype, uint32_t* codes,
                      void* scales, void* biases);

}  // namespace qwen35
