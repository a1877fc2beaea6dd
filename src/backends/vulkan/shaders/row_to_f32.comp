#version 460
// row_to_f32_{f32,bf16,f16,q8_0,...} (RowToF32Args): y[cols] = W[row, :] as float32 (exact).
#include "common.glsl"
#include "elements.glsl"

layout(local_size_x = 256) in;

layout(push_constant, std430) uniform RowToF32Args {
  uint64_t w;
  Floats y;
  uint row, cols;
} args;

void main() {
  const uint64_t base = args.w + uint64_t(args.row) * matrix_row_bytes(args.cols);
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
#ifdef GGUF_BLOCKS
  for (uint u = gl_GlobalInvocationID.x; u < args.cols / 32u; u += stride) {
    float w[32];
    decode_unit(base, u, w);
    for (uint k = 0; k < 32u; ++k) args.y.v[32u * u + k] = w[k];
  }
#else
  for (uint c = gl_GlobalInvocationID.x; c < args.cols; c += stride) {
    args.y.v[c] = load_elem(base, c);
  }
#endif
}
