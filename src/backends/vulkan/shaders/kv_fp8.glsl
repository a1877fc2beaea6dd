// FP8 E4M3 KV rows, bit for bit as src/backends/host/kv_rows.cpp writes them:
// every block scale is a power of two, so each step below is exact and a cache
// written here equals one written on the CPU byte for byte.
#include "conversions.glsl"

// Byte `offset` of a buffer whose address is a multiple of 4.
uint load_byte(uint64_t base, uint offset) { return (Words(base).v[offset / 4u] >> (8u * (offset % 4u))) & 0xffu; }

float fp8_e4m3_to_f32(uint bits) {
  const uint exponent = (bits >> 3) & 0xfu;
  const uint mantissa = bits & 7u;
  float magnitude;
  if (exponent == 15u && mantissa == 7u) {
    magnitude = uintBitsToFloat(0x7fc00000u);  // NaN
  } else if (exponent == 0u) {
    magnitude = float(mantissa) * (1.0 / 512.0);
  } else {
    magnitude = ldexp(float(8u + mantissa), int(exponent) - 10);
  }
  return (bits & 0x80u) != 0u ? -magnitude : magnitude;
}

// Round to nearest even, saturate to +-448 (dtype.cpp f32_to_fp8_e4m3).
uint f32_to_fp8_e4m3(float value) {
  const uint sign = (floatBitsToUint(value) >> 24) & 0x80u;
  const float magnitude = abs(value);
  if (isnan(value)) return sign | 0x7fu;
  if (magnitude >= 448.0) return sign | 0x7eu;
  if (magnitude < 0.015625) return sign | uint(roundEven(magnitude * 512.0));
  int exponent;
  const float fraction = frexp(magnitude, exponent);
  uint steps = uint(roundEven(fraction * 16.0));
  int biased = exponent + 6;
  if (steps == 16u) {
    steps = 8u;
    ++biased;
  }
  if (biased > 15 || (biased == 15 && steps == 15u)) return sign | 0x7eu;
  return sign | (uint(biased) << 3) | (steps - 8u);
}

// The block scale exponent e (scale 2^e, the smallest with 448 * 2^e >= max_abs);
// false for a block too small to matter, which is stored as scale 0, codes 0.
bool fp8_block_exponent(float max_abs, out int e) {
  e = 0;
  if (!(max_abs >= 7.8886091e-31)) return false;  // 2^-100
  int exponent;
  const float fraction = frexp(max_abs, exponent);
  e = fraction <= 0.875 ? exponent - 9 : exponent - 8;
  return true;
}
