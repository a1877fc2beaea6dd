#version 460
// gdn_recurrent (GdnRecurrentArgs), spec 3.2 step 7, FP32 state stored as S^T:
// [n_heads_v, head_dim_v, head_dim_k], so value channel c's column of S is dk
// contiguous floats. One subgroup per (value head, channel), its invocations
// striding along dk (coalesced loads). Read pass: S^T k, S^T q and k . q,
// summed by subgroupAdd; then delta = beta (v - decay S^T k),
// out = decay S^T q + delta (k . q) (which is S^T q of the updated state, as on
// the CPU), and the write pass S = decay S + k delta^T. No barriers.
#include "common.glsl"
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x = 128) in;

layout(push_constant, std430) uniform GdnRecurrentArgs {
  Floats qkv;    // [q | k | v] as written by the conv kernel
  Floats decay;  // [n_heads_v]
  Floats beta;   // [n_heads_v]
  Floats state;  // [n_heads_v, head_dim_v, head_dim_k]
  Floats out_;   // [n_heads_v, head_dim_v]
  uint n_heads_k, n_heads_v, head_dim_k, head_dim_v;
  uint tiled_value_heads;
} args;

void main() {
  const uint dk = args.head_dim_k, dv = args.head_dim_v;
  const uint lane = gl_SubgroupInvocationID, lanes = gl_SubgroupSize;
  const uint channels = args.n_heads_v * dv;
  const uint stride = gl_NumWorkGroups.x * gl_NumSubgroups;
  for (uint item = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID; item < channels; item += stride) {
    const uint j = item / dv, c = item % dv;
    const uint kj = args.tiled_value_heads != 0 ? j % args.n_heads_k : j / (args.n_heads_v / args.n_heads_k);
    const uint q0 = kj * dk, k0 = (args.n_heads_k + kj) * dk;
    const uint s0 = item * dk;  // (j * dv + c) * dk
    const float decay = args.decay.v[j], beta = args.beta.v[j];

    vec3 partial = vec3(0.0);  // (S^T k, S^T q, k . q)
    for (uint r = lane; r < dk; r += lanes) {
      const float s = args.state.v[s0 + r];
      const float k = args.qkv.v[k0 + r], q = args.qkv.v[q0 + r];
      partial += vec3(s * k, s * q, k * q);
    }
    const vec3 total = subgroupAdd(partial);
    const float delta = beta * (args.qkv.v[2 * args.n_heads_k * dk + item] - decay * total.x);
    if (subgroupElect()) args.out_.v[item] = decay * total.y + delta * total.z;
    for (uint r = lane; r < dk; r += lanes) {
      args.state.v[s0 + r] = decay * args.state.v[s0 + r] + args.qkv.v[k0 + r] * delta;
    }
  }
}
