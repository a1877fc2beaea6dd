// One cached KV position ("row" of kv_dim values) as the KV shaders read it,
// for the cache dtype chosen at build time: ELEM_F32/BF16/F16 rows are element
// arrays (elements.glsl); KV_FP8 rows are kv_dim FP8 E4M3 codes followed by one
// BF16 scale per 16 values (KvDtype in include/qwen35/kernels.h).
#if defined(KV_FP8)
#include "kv_fp8.glsl"

float load_kv(uint64_t cache, uint row, uint kv_dim, uint i) {
  const uint row_bytes = kv_dim + kv_dim / 8u;
  const uint base = row * row_bytes;
  const float scale = bf16_to_f32(uint(Halves(cache).v[(base + kv_dim) / 2u + i / 16u]));
  return fp8_e4m3_to_f32(load_byte(cache, base + i)) * scale;
}
#else
#include "elements.glsl"

float load_kv(uint64_t cache, uint row, uint kv_dim, uint i) { return load_elem(cache, row * kv_dim + i); }
#endif
