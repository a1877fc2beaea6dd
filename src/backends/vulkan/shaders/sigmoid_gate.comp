#version 460
// sigmoid_gate (SigmoidGateArgs): y[h, i] = x[h, i] * sigmoid(gate[h * gate_head_stride + i]).
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant, std430) uniform SigmoidGateArgs {
  Floats x;
  Floats gate;
  Floats y;
  uint n_heads, head_dim, gate_head_stride;
} args;

void main() {
  const uint n = args.n_heads * args.head_dim;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    const uint h = i / args.head_dim, d = i % args.head_dim;
    args.y.v[i] = args.x.v[i] * sigmoid(args.gate.v[h * args.gate_head_stride + d]);
  }
}
