// Storage element types of weights and KV caches, chosen at build time by one
// of ELEM_F32, ELEM_BF16, ELEM_F16, or of weights by a GGUF_* block type
// (gguf_blocks.glsl); vulkan.cmake compiles one module per type.

#include "conversions.glsl"

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
