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
#pragma once

#include <cstddef>
#include <cstdint>

#include "qwen35/dtype.h"

namespace qwen35::cpu {

struct Int8Activations {
  const int8_t* q;            // cols codes in [-127, 127]
  const int8_t* q_k4;         // q reordered per 256 for the AVX-512 Q4_K/Q5_K kernels: at 64 t + 4 L + j, code
                              // 32 (L % 8) + 8 t + 4 (L / 8) + j (t < 4, L < 16, j < 4)
  const float* scale;         // cols / 32: max |x| / 127 per block (NaN where the block is not finite)
  const float* sums;          // cols / 32: x's sum per block as quantized, scale * code sum (the Q4_K/Q5_K min terms)
  const float* code_sums;     // cols / 16: sum of q per 16 elements, as floats (the offsets of Q4_0 and Q6_K)
  const float* group_scale;   // cols / 16: the scale of each 16 elements' block (Q6_K's factors)
};

// Floats of scratch that quantize_activations needs for `cols` (a multiple of 32).
size_t int8_activation_floats(size_t cols);
// x in 8 bits, the arrays laid out in `scratch`.
Int8Activations quantize_activations(const float* x, size_t cols, float* scratch);

// Blocks whose largest element is below 2^-100 (subnormals among them) are
// first multiplied by 2^100, which is exact: 127 / max would overflow to
// infinity, and zeros times infinity are NaN. The factor for a block's max.
inline float lift_of(float amax) { return amax < 0x1p-100f ? 0x1p100f : 1.0f; }

// The part of it done on vectors (cpu/int8_quantize.cpp, the CPU's SIMD
// target): per block of 32, the codes q, the scale, and the code sums per 16.
void quantize_blocks(const float* x, size_t cols, int8_t* q, float* scale, float* code_sums);
// Its scalar twin, to the bit.
void quantize_blocks_scalar(const float* x, size_t cols, int8_t* q, float* scale, float* code_sums);

// The scalar twin of the integer kernels: row . x by the same formula (exact
// integer sums per sub-block, each times its weight factor and x's scale), in
// double. `type` is one of the GGUF block types.
double int8_row_dot(DType type, const std::byte* row, const Int8Activations& x, size_t cols);

}  // namespace qwen35::cpu
