#version 460
// head_norm_rope (HeadNormRopeArgs), spec 3.1 steps 3-4: per head, RMSNorm with
// `weight`, then rotate-half RoPE on the first rotary_dim dims, pairs
// (i, i + rotary_dim/2). One workgroup per head; the angle comes from rope.glsl.
#include "common.glsl"
#include "rope.glsl"

const uint kWorkgroupSize = 128;
layout(local_size_x = kWorkgroupSize) in;
#include "reduce.glsl"

layout(push_constant, std430) uniform HeadNormRopeArgs {
  Floats x;
  Floats weight;
  Floats inv_freq;
  StepParams step;
  Floats y;
  uint n_heads, head_dim, x_head_stride, rotary_dim;
  float eps;
} args;

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint position = args.step.position;
  const uint half_rotary = args.rotary_dim / 2;
  for (uint h = gl_WorkGroupID.x; h < args.n_heads; h += gl_NumWorkGroups.x) {
    const uint x0 = h * args.x_head_stride, y0 = h * args.head_dim;
    float sum_sq = 0.0;
    for (uint i = t; i < args.head_dim; i += kWorkgroupSize) sum_sq += args.x.v[x0 + i] * args.x.v[x0 + i];
    const float inv = 1.0 / sqrt(workgroup_sum(sum_sq) / float(args.head_dim) + args.eps);
    // Each invocation writes only elements it read itself, so y may equal x.
    for (uint i = t; i < args.head_dim; i += kWorkgroupSize) {
      if (i < half_rotary) {
        const float n0 = args.x.v[x0 + i] * inv * args.weight.v[i];
        const float n1 = args.x.v[x0 + i + half_rotary] * inv * args.weight.v[i + half_rotary];
        float s, c;
        sincos_turns(rope_turns(position, args.inv_freq.v[i]), s, c);
        args.y.v[y0 + i] = n0 * c - n1 * s;
        args.y.v[y0 + i + half_rotary] = n1 * c + n0 * s;
      } else if (i >= 2 * half_rotary) {
        args.y.v[y0 + i] = args.x.v[x0 + i] * inv * args.weight.v[i];
      }
    }
  }
}
