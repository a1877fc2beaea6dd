#version 460
// add_rms_norm (AddRmsNormArgs): sum = a + b; norm = rms_norm(sum) * weight.
// One workgroup: the vector is a single hidden state. Each invocation reads
// back only the sums it wrote itself, so sum may alias a or b.
#include "common.glsl"

const uint kWorkgroupSize = 256;
layout(local_size_x = kWorkgroupSize) in;
#include "reduce.glsl"

layout(push_constant, std430) uniform AddRmsNormArgs {
  Floats a;
  Floats b;
  Floats weight;
  Floats sum;
  Floats norm;
  uint n;
  float eps;
} args;

void main() {
  const uint t = gl_LocalInvocationID.x;
  float sum_sq = 0.0;
  for (uint i = t; i < args.n; i += kWorkgroupSize) {
    const float s = args.a.v[i] + args.b.v[i];
    args.sum.v[i] = s;
    sum_sq += s * s;
  }
  const float inv = 1.0 / sqrt(workgroup_sum(sum_sq) / float(args.n) + args.eps);
  for (uint i = t; i < args.n; i += kWorkgroupSize) args.norm.v[i] = args.sum.v[i] * inv * args.weight.v[i];
}
