// MLX affine rows (include/qwen35/mlx_affine.h): MLX_BITS-bit codes (4 or 8)
// packed little-end first in 32-bit words, one scale and one bias per
// group_size columns, of the type MLX_SCALE_F32, MLX_SCALE_BF16 or
// MLX_SCALE_F16 (vulkan.cmake compiles one module per combination). In
// row_to_f32 a weight is fma(scale, code, bias) rounded once, as the reference
// rounds it (fma_code), so the row is bit-exact; the gemvs use fma(), which
// a driver may split into a product and a sum. The gemvs give two rows to a subgroup as
// gemv_rows.glsl does; each invocation takes whole code words (4 or 8 columns,
// always inside one group: groups are multiples of 32 columns).
//
// The includer provides, before including this file:
//   float activation(uint c);   element c of the activation
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "conversions.glsl"

#include "subgroup_rows.glsl"

const uint kBits = MLX_BITS, kPerWord = 32u / kBits, kCodeMask = (1u << kBits) - 1u;

#if defined(MLX_SCALE_F32)
const uint kScaleBytes = 4;
float load_scale(uint64_t base, uint g) { return Floats(base).v[g]; }
#elif defined(MLX_SCALE_BF16)
const uint kScaleBytes = 2;
float load_scale(uint64_t base, uint g) { return bf16_to_f32(uint(Halves(base).v[g])); }
#elif defined(MLX_SCALE_F16)
const uint kScaleBytes = 2;
float load_scale(uint64_t base, uint g) { return f16_to_f32(uint(Halves(base).v[g])); }
#else
#error "define MLX_SCALE_F32, MLX_SCALE_BF16 or MLX_SCALE_F16"
#endif

float activation(uint c);

// Row `row` of a matrix: the addresses of its codes, scales and biases.
struct MlxRow {
  uint64_t codes, scales, biases;
};
const MlxRow kNoRow = MlxRow(0ul, 0ul, 0ul);

MlxRow mlx_row(uint64_t codes, uint64_t scales, uint64_t biases, uint row, uint cols, uint group_size) {
  const uint64_t groups = uint64_t(row) * (cols / group_size);
  return MlxRow(codes + uint64_t(row) * (cols / kPerWord) * 4ul, scales + groups * kScaleBytes,
                biases + groups * kScaleBytes);
}

// A finite float as sign, integer mantissa and exponent: |f| = mantissa 2^exponent.
void split_float(float f, out uint sign, out uint64_t mantissa, out int exponent) {
  const uint bits = floatBitsToUint(f);
  const uint biased = (bits >> 23) & 0xffu;
  sign = bits >> 31;
  mantissa = uint64_t(biased == 0u ? bits & 0x7fffffu : (bits & 0x7fffffu) | 0x800000u);
  exponent = biased == 0u ? -149 : int(biased) - 150;
}

uint msb64(uint64_t v) {
  const uint high = uint(v >> 32);
  return high != 0u ? 32u + uint(findMSB(high)) : uint(findMSB(uint(v)));
}

// scale * code + bias rounded once (mlx_dequantize's std::fma), in integers:
// Vulkan does not promise that fma() is fused, and lavapipe's is not. Exact for
// finite inputs and a normal result (a subnormal one is rounded twice).
float fma_code(float scale, uint code, float bias) {
  if (code == 0u || scale == 0.0 || bias == 0.0) {
    precise float product_only = scale * float(code) + bias;  // one rounding at most: an operand is zero
    return product_only;
  }
  uint product_sign, bias_sign;
  uint64_t product, addend;
  int product_exp, bias_exp;
  split_float(scale, product_sign, product, product_exp);
  product *= code;  // at most 32 bits: exact
  split_float(bias, bias_sign, addend, bias_exp);
  // X: the operand with the larger exponent, shifted left up to bit 61; Y
  // shifted right to X's exponent, the bits it loses kept as a sticky bit.
  const bool product_first = product_exp >= bias_exp;
  uint64_t x = product_first ? product : addend, y = product_first ? addend : product;
  int ex = product_first ? product_exp : bias_exp;
  const int ey = product_first ? bias_exp : product_exp;
  const uint x_sign = product_first ? product_sign : bias_sign, y_sign = product_first ? bias_sign : product_sign;
  const int left = min(ex - ey, 61 - int(msb64(x)));
  x <<= left;
  ex -= left;
  const int right = ex - ey;
  if (right >= 64) {
    y = 1ul;  // sticky only (y is non-zero)
  } else if (right > 0) {
    const uint64_t lost = y & ((1ul << right) - 1ul);
    y = (y >> right) | (lost != 0ul ? 1ul : 0ul);
  }
  uint sign = x_sign;
  uint64_t sum;
  if (x_sign == y_sign) {
    sum = x + y;
  } else if (x >= y) {
    sum = x - y;
  } else {
    sum = y - x;
    sign = y_sign;
  }
  if (sum == 0ul) return 0.0;
  // Round to 24 significant bits, to nearest, ties to even.
  const int top = int(msb64(sum));
  int exponent = ex;
  uint64_t kept = sum;
  if (top > 23) {
    const int shift = top - 23;
    const uint64_t rest = sum & ((1ul << shift) - 1ul), half_way = 1ul << (shift - 1);
    kept = sum >> shift;
    exponent += shift;
    if (rest > half_way || (rest == half_way && (kept & 1ul) != 0ul)) ++kept;
    if (kept == (1ul << 24)) {
      kept >>= 1;
      ++exponent;
    }
  } else {
    kept <<= 23 - top;
    exponent -= 23 - top;
  }
  const int biased = exponent + 150;
  if (biased <= 0 || biased >= 255) {
    precise float outside = scale * float(code) + bias;  // subnormal or overflowing: not exact
    return outside;
  }
  return uintBitsToFloat((sign << 31) | (uint(biased) << 23) | (uint(kept) & 0x7fffffu));
}

// Weight c of a row, rounded once (mlx_dequantize).
float mlx_weight(MlxRow row, uint c, uint group_size) {
  const uint code = (Words(row.codes).v[c / kPerWord] >> ((c % kPerWord) * kBits)) & kCodeMask;
  const uint g = c / group_size;
  return fma_code(load_scale(row.scales, g), code, load_scale(row.biases, g));
}

// sums[r] = W[row r] . activation, in every invocation of the subgroup (rows
// whose codes address is 0 are absent). Call with the whole subgroup active.
void mlx_dot_rows(MlxRow rows[kRowsPerSubgroup], uint cols, uint group_size, out float sums[kRowsPerSubgroup]) {
  const uint lane = gl_SubgroupInvocationID, lanes = gl_SubgroupSize;
  float acc[kRowsPerSubgroup];
  [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) acc[r] = 0.0;
  for (uint word = lane; word < cols / kPerWord; word += lanes) {
    const uint first = word * kPerWord, g = first / group_size;
    float a[kPerWord];
    [[unroll]] for (uint k = 0; k < kPerWord; ++k) a[k] = activation(first + k);
    [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) {
      if (rows[r].codes == 0ul) continue;
      const uint codes = Words(rows[r].codes).v[word];
      const float scale = load_scale(rows[r].scales, g), bias = load_scale(rows[r].biases, g);
      float partial = 0.0;
      [[unroll]] for (uint k = 0; k < kPerWord; ++k) {
        precise float w = fma(scale, float((codes >> (k * kBits)) & kCodeMask), bias);
        partial += w * a[k];
      }
      acc[r] += partial;
    }
  }
  [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) sums[r] = subgroupAdd(acc[r]);
}
