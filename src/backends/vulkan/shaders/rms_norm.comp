#version 460
// rms_norm (RmsNormArgs): y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * weight, one
// workgroup per row.
#include "common.glsl"

const uint kWorkgroupSize = 256;
layout(local_size_x = kWorkgroupSize) in;
#include "reduce.glsl"

layout(push_constant, std430) uniform RmsNormArgs {
  Floats x;
  Floats weight;
  Floats y;
  uint n_rows, row_len, x_row_stride, y_row_stride;
  float eps;
} args;

void main() {
  const uint t = gl_LocalInvocationID.x;
  for (uint r = gl_WorkGroupID.x; r < args.n_rows; r += gl_NumWorkGroups.x) {
    const uint x0 = r * args.x_row_stride, y0 = r * args.y_row_stride;
    float sum_sq = 0.0;
    for (uint i = t; i < args.row_len; i += kWorkgroupSize) sum_sq += args.x.v[x0 + i] * args.x.v[x0 + i];
    const float inv = 1.0 / sqrt(workgroup_sum(sum_sq) / float(args.row_len) + args.eps);
    for (uint i = t; i < args.row_len; i += kWorkgroupSize) args.y.v[y0 + i] = args.x.v[x0 + i] * inv * args.weight.v[i];
  }
}
