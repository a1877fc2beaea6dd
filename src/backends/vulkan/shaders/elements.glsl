// Storage element types of weights and KV caches, chosen at build time by one
// of ELEM_F32, ELEM_BF16, ELEM_F16, or of weights by a GGUF_* block type
// (gguf_blocks.glsl); vulkan.cmake compiles one module per type.
// Conversions are the exact bit manipulations of include/qwen35/dtype.h, done
// in integers so no driver's half-float handling (denormal flushing) interferes.

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

#if defined(GGUF_Q8_0) || defined(GGUF_Q4_0) || defined(GGUF_Q4_K) || defined(GGUF_Q5_K) || defined(GGUF_Q6_K)
#include "gguf_blocks.glsl"
#elif defined(ELEM_F32)
const uint kElemBytes = 4;
float load_elem(uint64_t base, uint i) { return Floats(base).v[i]; }
// Elements i .. i+7; i % 8 == 0 and base 16-byte aligned.
void load_elem8(uint64_t base, uint i, out float e[8]) {
  const vec4 a = Floats4(base).v[i / 4];
  const vec4 b = Floats4(base).v[i / 4 + 1];
  e = float[8](a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
}
void store_elem(uint64_t base, uint i, float value) { Floats(base).v[i] = value; }
#else
const uint kElemBytes = 2;
#if defined(ELEM_BF16)
float widen(uint bits) { return bf16_to_f32(bits); }
#elif defined(ELEM_F16)
float widen(uint bits) { return f16_to_f32(bits); }
#else
#error "define ELEM_F32, ELEM_BF16, ELEM_F16 or one of the GGUF_* block types"
#endif
float load_elem(uint64_t base, uint i) { return widen(uint(Halves(base).v[i])); }
void load_elem8(uint64_t base, uint i, out float e[8]) {
  const uvec4 w = Words4(base).v[i / 8];
  e = float[8](widen(w.x & 0xffffu), widen(w.x >> 16), widen(w.y & 0xffffu), widen(w.y >> 16),
               widen(w.z & 0xffffu), widen(w.z >> 16), widen(w.w & 0xffffu), widen(w.w >> 16));
}
#if defined(ELEM_BF16)
void store_elem(uint64_t base, uint i, float value) { Halves(base).v[i] = uint16_t(f32_to_bf16(value)); }
#else
void store_elem(uint64_t base, uint i, float value) { Halves(base).v[i] = uint16_t(f32_to_f16(value)); }
#endif
#endif

#ifndef GGUF_BLOCKS
uint64_t matrix_row_bytes(uint cols) { return uint64_t(cols) * kElemBytes; }
#endif
