#version 460
// kv_append_{f32,bf16,f16,fp8} (KvAppendArgs): k_cache[cache_pos] = k and
// v_cache[cache_pos] = v, converted to the cache's row format (kv_rows.glsl).
#include "common.glsl"
#include "kv_rows.glsl"

layout(local_size_x = 256) in;

layout(push_constant, std430) uniform KvAppendArgs {
  Floats k;
  Floats v;
  uint64_t k_cache;
  uint64_t v_cache;
  StepParams step;
  uint kv_dim;
} args;

#if defined(KV_FP8)
// One invocation per block of 16 values: its scale, then its codes, two per 16-bit store.
void append_block(Floats x, uint64_t cache, uint block) {
  const uint row_base = args.step.cache_pos * (args.kv_dim + args.kv_dim / 8u);
  float max_abs = 0.0;
  for (uint i = 0; i < 16u; ++i) max_abs = max(max_abs, abs(x.v[block * 16u + i]));
  int e;
  const bool nonzero = fp8_block_exponent(max_abs, e);
  Halves(cache).v[(row_base + args.kv_dim) / 2u + block] = uint16_t(nonzero ? floatBitsToUint(ldexp(1.0, e)) >> 16 : 0u);
  for (uint i = 0; i < 16u; i += 2u) {
    const uint lo = nonzero ? f32_to_fp8_e4m3(ldexp(x.v[block * 16u + i], -e)) : 0u;
    const uint hi = nonzero ? f32_to_fp8_e4m3(ldexp(x.v[block * 16u + i + 1u], -e)) : 0u;
    Halves(cache).v[(row_base + block * 16u + i) / 2u] = uint16_t(lo | (hi << 8));
  }
}

void main() {
  for (uint b = gl_GlobalInvocationID.x; b < args.kv_dim / 16u; b += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    append_block(args.k, args.k_cache, b);
    append_block(args.v, args.v_cache, b);
  }
}
#else
void main() {
  const uint slot = args.step.cache_pos * args.kv_dim;
  for (uint i = gl_GlobalInvocationID.x; i < args.kv_dim; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    store_elem(args.k_cache, slot + i, args.k.v[i]);
    store_elem(args.v_cache, slot + i, args.v.v[i]);
  }
}
#endif
