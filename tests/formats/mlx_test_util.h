// Test helpers for the MLX affine format: a random matrix quantized by the
// scalar quantizer, and its dequantized values computed independently of
// qwen35/mlx_affine.h (codes read as a little-endian bit stream), which is
// the scalar reference the kernels are checked against.
#pragma once

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/simd.h"
#include "qwen35/dtype.h"
#include "qwen35/mlx_affine.h"
#include "support/test_support.h"

namespace qwen35::testing {

// What the tests cover: every code width, group size and scale type.
inline constexpr uint32_t kBits[] = {4, 8};
inline constexpr uint32_t kGroupSizes[] = {32, 64, 128};
inline constexpr DType kScaleTypes[] = {DType::kF32, DType::kBF16, DType::kF16};

inline const char* dtype_suffix(DType d) { return d == DType::kF32 ? "f32" : d == DType::kBF16 ? "bf16" : "f16"; }

// The CPU kernels' name for a scale dtype.
inline simd::WeightType weight_type(DType d) {
  if (d == DType::kF32) return simd::WeightType::kF32;
  return d == DType::kBF16 ? simd::WeightType::kBF16 : simd::WeightType::kF16;
}

inline float load_scale(DType d, const std::vector<std::byte>& bytes, size_t i) {
  if (d == DType::kF32) {
    float v;
    std::memcpy(&v, bytes.data() + 4 * i, 4);
    return v;
  }
  uint16_t v;
  std::memcpy(&v, bytes.data() + 2 * i, 2);
  return d == DType::kBF16 ? bf16_to_f32(v) : f16_to_f32(v);
}

struct QuantizedMatrix {
  uint32_t rows = 0, cols = 0;
  MlxAffineParams params;
  DType scale_dtype = DType::kBF16;
  std::vector<uint32_t> codes;          // [rows, cols * bits / 32]
  std::vector<std::byte> scales, biases;  // [rows, cols / group_size] of scale_dtype
  std::vector<float> dequantized;       // [rows, cols], the specification's values
  std::vector<float> original;          // what was quantized
};

inline QuantizedMatrix quantize_random(uint32_t rows, uint32_t cols, MlxAffineParams p, DType scale_dtype,
                                       uint32_t seed) {
  QuantizedMatrix m{.rows = rows, .cols = cols, .params = p, .scale_dtype = scale_dtype};
  m.original = random_floats(size_t{rows} * cols, seed);
  const uint32_t words = cols * p.bits / 32, groups = cols / p.group_size;
  const size_t es = dtype_size(scale_dtype);
  m.codes.resize(size_t{rows} * words);
  m.scales.resize(size_t{rows} * groups * es);
  m.biases.resize(m.scales.size());
  for (uint32_t r = 0; r < rows; ++r) {
    mlx_quantize_row(m.original.data() + size_t{r} * cols, cols, p, scale_dtype, m.codes.data() + size_t{r} * words,
                     m.scales.data() + size_t{r} * groups * es, m.biases.data() + size_t{r} * groups * es);
  }
  // Independent decoding: the row's bytes as one little-endian bit stream.
  m.dequantized.resize(size_t{rows} * cols);
  const auto* bytes = reinterpret_cast<const uint8_t*>(m.codes.data());
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < cols; ++c) {
      const size_t bit = (size_t{r} * cols + c) * p.bits;
      const uint32_t q = (bytes[bit / 8] >> (bit % 8)) & ((1u << p.bits) - 1u);
      const size_t g = size_t{r} * groups + c / p.group_size;
      m.dequantized[size_t{r} * cols + c] =
          std::fma(load_scale(scale_dtype, m.scales, g), static_cast<float>(q), load_scale(scale_dtype, m.biases, g));
    }
  }
  return m;
}

}  // namespace qwen35::testing
