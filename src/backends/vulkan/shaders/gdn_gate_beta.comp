#version 460
// gdn_gate_beta (GdnGateBetaArgs): decay = exp(-exp(a_log) * softplus(a + dt_bias)),
// beta = sigmoid(b), per value head.
#include "common.glsl"

layout(local_size_x = 64) in;

layout(push_constant, std430) uniform GdnGateBetaArgs {
  Floats a;
  Floats b;
  Floats a_log;
  Floats dt_bias;
  Floats decay;
  Floats beta;
  uint n_heads_v;
} args;

// log(1 + y) without losing small y: log(u) * y / (u - 1) with u = 1 + y (Goldberg).
float log1p(float y) {
  precise float u = 1.0 + y;
  precise float d = u - 1.0;
  return d == 0.0 ? y : log(u) * (y / d);
}

float softplus(float x) { return x > 20.0 ? x : log1p(exp(x)); }

void main() {
  for (uint j = gl_GlobalInvocationID.x; j < args.n_heads_v; j += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    const float g = -exp(args.a_log.v[j]) * softplus(args.a.v[j] + args.dt_bias.v[j]);
    args.decay.v[j] = exp(g);
    args.beta.v[j] = sigmoid(args.b.v[j]);
  }
}
