#version 460
// add (AddArgs): y = a + b (y may alias a or b).
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant, std430) uniform AddArgs {
  Floats a;
  Floats b;
  Floats y;
  uint n;
} args;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < args.n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    args.y.v[i] = args.a.v[i] + args.b.v[i];
  }
}
