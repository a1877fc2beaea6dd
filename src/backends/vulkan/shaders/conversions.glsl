// Half and bfloat16 conversions, the exact bit manipulations of
// include/qwen35/dtype.h, done in integers so no driver's half-float handling
// (denormal flushing) interferes. Included by elements.glsl, kv_fp8.glsl
// and mlx_rows.glsl.
#ifndef QWEN35_CONVERSIONS_GLSL
#define QWEN35_CONVERSIONS_GLSL

float bf16_to_f32(uint bits) { return uintBitsToFloat(bits << 16); }

// IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
float f16_to_f32(uint bits) {
  const uint sign = (bits & 0x8000u) << 16;
  const uint exponent = (bits >> 10) & 0x1fu;
  const uint mantissa = bits & 0x3ffu;
  if (exponent == 0u) {  // zero or subnormal: mantissa * 2^-24, a normal float32
    const float magnitude = float(mantissa) * 5.9604644775390625e-8;
    return sign != 0u ? -magnitude : magnitude;
  }
  if (exponent == 31u) return uintBitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  return uintBitsToFloat(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// Round to nearest even; NaN stays a quiet NaN (dtype.h f32_to_bf16).
uint f32_to_bf16(float value) {
  uint bits = floatBitsToUint(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return (bits >> 16) | 0x40u;
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return bits >> 16;
}

// Round to nearest even, overflow to infinity, NaN quiet (dtype.cpp f32_to_f16).
uint f32_to_f16(float value) {
  const uint bits = floatBitsToUint(value);
  const uint sign = (bits >> 16) & 0x8000u;
  const uint abs_bits = bits & 0x7fffffffu;
  if (abs_bits > 0x7f800000u) return sign | 0x7e00u;
  if (abs_bits >= 0x477ff000u) return sign | 0x7c00u;
  if (abs_bits < 0x38800000u) return sign | uint(roundEven(uintBitsToFloat(abs_bits) * 16777216.0));
  const uint rounded = abs_bits + 0xfffu + ((abs_bits >> 13) & 1u);
  return sign | ((rounded - (112u << 23)) >> 13);
}

#endif  // QWEN35_CONVERSIONS_GLSL
