#version 460
// attention_decode_{f32,bf16,f16,fp8} (AttentionDecodeArgs), spec 3.1 step 6: one
// workgroup per query head walks the cache in tiles of kWorkgroupSize positions
// with an online softmax (running max and sum), so the only memory besides the
// cache is one tile of probabilities in shared memory, whatever seq_len is.
// Scores: one position per invocation. Values: one output dim per invocation.
#include "common.glsl"
#include "kv_rows.glsl"

const uint kWorkgroupSize = 128;
const uint kMaxDimsPerInvocation = 4;  // head_dim <= 512 (checked at launch)
layout(local_size_x = kWorkgroupSize) in;
#include "reduce.glsl"

layout(push_constant, std430) uniform AttentionDecodeArgs {
  Floats q;
  uint64_t k_cache;
  uint64_t v_cache;
  StepParams step;
  Floats out_;
  uint n_heads_q, n_heads_kv, head_dim;
  float scale;
} args;

shared float q_head[kWorkgroupSize * kMaxDimsPerInvocation];
shared float tile_p[kWorkgroupSize];

// q . K[position] for the head's KV slice starting at element kv_offset.
float score(uint position, uint kv_dim, uint kv_offset, bool vector_path) {
  float dot_qk = 0.0;
#if !defined(KV_FP8)
  if (vector_path) {
    const uint row = position * kv_dim + kv_offset;
    for (uint i = 0; i < args.head_dim; i += 8) {
      float k[8];
      load_elem8(args.k_cache, row + i, k);
      for (uint j = 0; j < 8; ++j) dot_qk += q_head[i + j] * k[j];
    }
    return dot_qk * args.scale;
  }
#endif
  for (uint i = 0; i < args.head_dim; ++i) dot_qk += q_head[i] * load_kv(args.k_cache, position, kv_dim, kv_offset + i);
  return dot_qk * args.scale;
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint seq_len = args.step.seq_len;
  const uint kv_dim = args.n_heads_kv * args.head_dim;
  const uint group = args.n_heads_q / args.n_heads_kv;
  // Rows of K start at multiples of 8 elements when head_dim is (kv_dim then is too).
  const bool vector_path = args.head_dim % 8 == 0 && aligned16(args.k_cache, 0ul);
  for (uint h = gl_WorkGroupID.x; h < args.n_heads_q; h += gl_NumWorkGroups.x) {
    const uint kv_offset = (h / group) * args.head_dim;
    for (uint i = t; i < args.head_dim; i += kWorkgroupSize) q_head[i] = args.q.v[h * args.head_dim + i];
    barrier();

    float running_max = 0.0, running_sum = 0.0;
    float acc[kMaxDimsPerInvocation] = float[](0.0, 0.0, 0.0, 0.0);
    for (uint start = 0; start < seq_len; start += kWorkgroupSize) {
      const uint position = start + t;
      const float s = position < seq_len ? score(position, kv_dim, kv_offset, vector_path) : -3.0e38;
      const float tile_max = workgroup_max(s);
      const float new_max = start == 0 ? tile_max : max(running_max, tile_max);
      const float rescale = start == 0 ? 0.0 : exp(running_max - new_max);
      const float p = position < seq_len ? exp(s - new_max) : 0.0;
      tile_p[t] = p;
      running_sum = running_sum * rescale + workgroup_sum(p);  // its barriers publish tile_p
      running_max = new_max;
      const uint count = min(kWorkgroupSize, seq_len - start);
      for (uint j = 0; j < kMaxDimsPerInvocation; ++j) {
        const uint d = t + j * kWorkgroupSize;
        if (d >= args.head_dim) break;
        float a = acc[j] * rescale;
        for (uint i = 0; i < count; ++i) a += tile_p[i] * load_kv(args.v_cache, start + i, kv_dim, kv_offset + d);
        acc[j] = a;
      }
      barrier();  // tile_p is rewritten by the next tile
    }
    for (uint j = 0; j < kMaxDimsPerInvocation; ++j) {
      const uint d = t + j * kWorkgroupSize;
      if (d < args.head_dim) args.out_.v[h * args.head_dim + d] = acc[j] / running_sum;
    }
    barrier();  // q_head is rewritten by the next head
  }
}
