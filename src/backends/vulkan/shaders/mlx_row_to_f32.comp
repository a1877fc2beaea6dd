#version 460
// row_to_f32_mlx{4,8}_{f32,bf16,f16} (MlxRowToF32Args): y[cols] = W[row, :]
// dequantized, bit-identical to the reference (one fma per weight).
#include "common.glsl"
#include "mlx_rows.glsl"

layout(push_constant, std430) uniform MlxRowToF32Args {
  uint64_t codes, scales, biases;
  Floats y;
  uint row, cols, group_size;
} args;

float activation(uint c) { return 0.0; }  // mlx_rows.glsl declares it; no gemv here

void main() {
  const MlxRow row = mlx_row(args.codes, args.scales, args.biases, args.row, args.cols, args.group_size);
  for (uint c = gl_GlobalInvocationID.x; c < args.cols; c += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    args.y.v[c] = mlx_weight(row, c, args.group_size);
  }
}
