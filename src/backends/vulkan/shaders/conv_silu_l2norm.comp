#version 460
// conv_silu_l2norm (ConvSiluL2NormArgs), spec 3.2 steps 2-4: the causal
// depthwise conv over [state rows, u], SiLU, the state shifted by u, then each
// q and k head L2-normalised (eps 1e-6) and q scaled by q_scale. Workgroups
// 0 .. 2 n_heads_k - 1 each own one q or k head (they need its norm); the rest
// own kWorkgroupSize value channels each.
#include "common.glsl"

const uint kWorkgroupSize = 128;
layout(local_size_x = kWorkgroupSize) in;
#include "reduce.glsl"

layout(push_constant, std430) uniform ConvSiluL2NormArgs {
  Floats u;       // [conv_dim]
  Floats state;   // [conv_kernel - 1, conv_dim], oldest first
  Floats weight;  // [conv_dim, conv_kernel]
  Floats out_;    // [conv_dim]
  uint conv_dim, conv_kernel, n_heads_k, head_dim_k;
  float q_scale;
} args;

// silu(conv) of channel c, shifting u into the channel's state.
float conv_channel(uint c) {
  const uint history = args.conv_kernel - 1;
  const uint w0 = c * args.conv_kernel;
  const float u = args.u.v[c];
  float acc = args.weight.v[w0 + history] * u;
  for (uint j = 0; j < history; ++j) acc += args.weight.v[w0 + j] * args.state.v[j * args.conv_dim + c];
  for (uint j = 0; j + 1 < history; ++j) args.state.v[j * args.conv_dim + c] = args.state.v[(j + 1) * args.conv_dim + c];
  if (history > 0) args.state.v[(history - 1) * args.conv_dim + c] = u;
  return silu(acc);
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint n_normed = 2 * args.n_heads_k;
  const uint value_begin = n_normed * args.head_dim_k;
  const uint n_groups = n_normed + (args.conv_dim - value_begin + kWorkgroupSize - 1) / kWorkgroupSize;
  for (uint g = gl_WorkGroupID.x; g < n_groups; g += gl_NumWorkGroups.x) {
    if (g < n_normed) {
      const uint base = g * args.head_dim_k;
      float sum_sq = 0.0;
      for (uint i = t; i < args.head_dim_k; i += kWorkgroupSize) {
        const float value = conv_channel(base + i);
        args.out_.v[base + i] = value;
        sum_sq += value * value;
      }
      const float scale = (g < args.n_heads_k ? args.q_scale : 1.0) / sqrt(workgroup_sum(sum_sq) + 1e-6);
      // Each invocation rescales only the channels it wrote.
      for (uint i = t; i < args.head_dim_k; i += kWorkgroupSize) args.out_.v[base + i] *= scale;
    } else {
      const uint c = value_begin + (g - n_normed) * kWorkgroupSize + t;
      if (c < args.conv_dim) args.out_.v[c] = conv_channel(c);
    }
  }
}
