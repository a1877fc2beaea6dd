#version 460
// kv_append_{f32,bf16} (KvAppendArgs): k_cache[cache_pos] = k and
// v_cache[cache_pos] = v, converted to the cache's element type.
#include "common.glsl"
#include "elements.glsl"

layout(local_size_x = 256) in;

layout(push_constant, std430) uniform KvAppendArgs {
  Floats k;
  Floats v;
  uint64_t k_cache;
  uint64_t v_cache;
  StepParams step;
  uint kv_dim;
} args;

void main() {
  const uint slot = args.step.cache_pos * args.kv_dim;
  for (uint i = gl_GlobalInvocationID.x; i < args.kv_dim; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    store_elem(args.k_cache, slot + i, args.k.v[i]);
    store_elem(args.v_cache, slot + i, args.v.v[i]);
  }
}
