#version 460
// row_to_f32_{f32,bf16,f16} (RowToF32Args): y[cols] = W[row, :] widened to float32 (exact).
#include "common.glsl"
#include "elements.glsl"

layout(local_size_x = 256) in;

layout(push_constant, std430) uniform RowToF32Args {
  uint64_t w;
  Floats y;
  uint row, cols;
} args;

void main() {
  const uint64_t base = args.w + uint64_t(args.row) * args.cols * kElemBytes;
  for (uint c = gl_GlobalInvocationID.x; c < args.cols; c += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    args.y.v[c] = load_elem(base, c);
  }
}
