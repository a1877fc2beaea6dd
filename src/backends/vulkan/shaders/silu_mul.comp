#version 460
// silu_mul (SiluMulArgs): y = silu(gate) * up.
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant, std430) uniform SiluMulArgs {
  Floats gate;
  Floats up;
  Floats y;
  uint n;
} args;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < args.n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    args.y.v[i] = silu(args.gate.v[i]) * args.up.v[i];
  }
}
