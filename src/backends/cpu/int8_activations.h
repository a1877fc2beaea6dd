// Activations quantized to 8 bits for integer dot products against GGUF block
// weights (BackendOptions::int8_activations): the trade llama.cpp makes. The
// float kernels widen and convert every weight before its multiply-add, which
// on two cores caps the 4- to 6-bit gemvs at 0.4 of the read bandwidth; with x
// in 8 bits, 32 or 64 weight codes meet x in one integer dot-product
// instruction and only each sub-block's sum is converted to float.
//
// x is cut into blocks of 32 (the unit of every GGUF type): q = round(x * 127 /
// max|x|), scale = max|x| / 127, so each element is off by at most scale / 2.
// The K-quants' min terms take the sums of x as quantized (as llama.cpp's do),
// so that a row's result is its dot with x rounded, nothing more: with float
// sums, a min term (about the size of the codes' part, for weights centred on
// zero) added its rounding errors of x again, and Q4_K's logits on the tiny
// golden moved 2.8 times as far from those of float x.
//
// x in 24 bits (BackendOptions::int24_activations) extends the same blocks
// with two more 8-bit digits: with t = x * 127 / max|x|, q0 = round(t), q1 =
// round((t - q0) * 254), q2 = round(((t - q0) * 254 - q1) * 254), so x = scale
// * (q0 + q1 / 254 + q2 / 254^2) to within scale / 2 / 254^2, about 2^-24 of
// the block's largest element: the error float32 arithmetic makes anyway,
// through the regrouped integer kernels at three dot-product instructions
// where 8 bits take one (cpu_gguf_x16.cpp; Q4_K from the caches 1.7 times
// the float kernel's rate). Base 254, not 256: each remainder times 254 stays
// within [-127, 127], so every digit is a code the 8-bit kernels already take.
#pragma once

#include <cstddef>
#include <cstdint>

#include "qwen35/dtype.h"

namespace qwen35::cpu {

// The digits of x in 24 bits, and each digit's weight.
inline constexpr size_t kInt24Digits = 3;
inline constexpr float kDigitWeight[kInt24Digits] = {1.0f, 1.0f / 254, 1.0f / (254.0f * 254.0f)};

struct Int8Activations {
  const int8_t* q;            // cols codes in [-127, 127]; with digits 3, digit d of x at q[d * cols + i]
  const int8_t* q_k4;         // q reordered per 256 for the AVX-512 Q4_K/Q5_K kernels: at 64 t + 4 L + j, code
                              // 32 (L % 8) + 8 t + 4 (L / 8) + j (t < 4, L < 16, j < 4)
  const float* scale;         // cols / 32: max |x| / 127 per block (NaN where the block is not finite)
  const float* sums;          // cols / 32: x's sum per block as quantized, scale * code sum (the Q4_K/Q5_K min terms)
  const float* code_sums;     // cols / 16: sum of q per 16 elements, as floats (the offsets of Q4_0 and Q6_K); with
                              // digits 3, sum_d kDigitWeight[d] * digit d's sum
  const float* group_scale;   // cols / 16: the scale of each 16 elements' block (Q6_K's factors)
  size_t digits = 1;          // 1: x in 8 bits; kInt24Digits: in 24 (the regrouped and Q6_K kernels; q_k4 unset)
  size_t cols = 0;            // the stride of q's digit planes
};

// Floats of scratch that quantize_activations needs for `cols` (a multiple of 32).
size_t int8_activation_floats(size_t cols, size_t digits = 1);
// x in 8 bits (digits 1) or 24 (kInt24Digits), the arrays laid out in `scratch`.
Int8Activations quantize_activations(const float* x, size_t cols, float* scratch, size_t digits = 1);

// Blocks whose largest element is below 2^-100 (subnormals among them) are
// first multiplied by 2^100, which is exact: 127 / max would overflow to
// infinity, and zeros times infinity are NaN. The factor for a block's max.
inline float lift_of(float amax) { return amax < 0x1p-100f ? 0x1p100f : 1.0f; }

// The part of it done on vectors (cpu/int8_quantize.cpp, the CPU's SIMD
// target): per block of 32, the codes q, the scale, and the code sums per 16;
// with `digits` 3, digit d's codes at q + d * cols and their sums at
// code_sums + d * cols / 16.
void quantize_blocks(const float* x, size_t cols, int8_t* q, float* scale, float* code_sums, size_t digits = 1);
// Its scalar twin, to the bit.
void quantize_blocks_scalar(const float* x, size_t cols, int8_t* q, float* scale, float* code_sums,
                            size_t digits = 1);

// The scalar twin of the integer kernels: row . x by the same formula (exact
// integer sums per sub-block and digit, each times its weight factor, x's
// scale and the digit's weight), in double. `type` is one of the GGUF block
// types.
double int8_row_dot(DType type, const std::byte* row, const Int8Activations& x, size_t cols);

}  // namespace qwen35::cpu
