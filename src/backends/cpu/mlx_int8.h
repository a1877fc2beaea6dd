// MLX affine weights against x in 8 bits (BackendOptions::int8_activations),
// the integer twin of the float MLX gemv. x is quantized per block of 32 as
// for the GGUF kernels (int8_activations.h); the unsigned weight codes meet
// x's codes in integer dot products, four byte products per int32 lane, and
// each lane (four codes of one group, meeting one block of x) is converted
// once and scaled by its group's scale times x's block scale. The bias term,
// bias times the sum of the group's x, takes the sums of x as quantized, so
// that a row's result is its dot with x rounded to 8 bits, nothing more.
// With x in 24 bits (three 8-bit digits, int8_activations.h; the regrouped
// kernels only) each digit meets the codes as the 8-bit codes do.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cpu/simd.h"

namespace qwen35::cpu {

struct MlxInt8Activations {
  const int8_t* codes;       // 8 bits: x's codes in order; 4 bits: the codes of x's even elements (the low nibbles),
                             // then those of its odd ones, cols / 2 each
  const float* lane_scales;  // for each 4 bytes of a row's codes, the scale of the block of x they meet
  const float* group_sums;   // cols / group_size sums of x as quantized: block scale times code sum, per block
  const float* quad_scales;  // 4 bits: the block scales in the order the AVX-512 kernel's quads sum their lanes
                             // (cpu_mlx_int8.cpp): per 256 code bytes, lane 4 c + v has block 4 v + c
  size_t digits = 1;         // x's 8-bit digits: 1, or kInt24Digits, digit d's codes at codes + d * cols
  size_t cols = 0;
};

// Floats of scratch that quantize_mlx_activations needs.
size_t mlx_int8_activation_floats(size_t cols, size_t group_size, size_t digits = 1);
// x in 8 bits (digits 1) or 24 (kInt24Digits) for MLX rows of `bits` (4 or 8)
// and `group_size`, in `scratch`.
MlxInt8Activations quantize_mlx_activations(const float* x, size_t cols, unsigned bits, size_t group_size,
                                            float* scratch, size_t digits = 1);

// The scalar twin of the kernels: row . x by the same formula (exact integer
// sums per group and block of x, each times the group's scale and the block's
// scale, plus the bias terms), in double.
double mlx_int8_row_dot(const simd::MlxRows& w, size_t row, const MlxInt8Activations& x);

// y[r] = base[r] (0 if null) + row r . x for r in [r0, r1), by the integer
// kernels of the target chosen at run time (cpu_mlx_int8.cpp).
void mlx_int8_rows(const simd::MlxRows& w, const MlxInt8Activations& x, const float* base, float* y, size_t r0,
                   size_t r1);
// The same for the rows of passes p of two or four bands (row_bands.h): a
// row of each band at a time sharing x's loads. Every row's result is
// mlx_int8_rows' to the bit.
void mlx_int8_bands(const simd::MlxRows& w, const MlxInt8Activations& x, const float* base, float* y,
                    const RowPasses& passes);

}  // namespace qwen35::cpu
