#version 460
// gemv_mlx{4,8}_{f32,bf16,f16} (MlxGemvArgs): y[rows] = W[rows, cols] x[cols], W MLX affine.
#include "common.glsl"
#include "mlx_rows.glsl"

layout(push_constant, std430) uniform MlxGemvArgs {
  uint64_t codes, scales, biases;
  uint64_t x;
  Floats y;
  uint rows, cols, group_size;
} args;

float activation(uint c) { return Floats(args.x).v[c]; }

void main() {
  for (uint first = first_row(); first < args.rows; first += row_stride()) {
    MlxRow rows[kRowsPerSubgroup];
    [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) {
      rows[r] = first + r < args.rows
                    ? mlx_row(args.codes, args.scales, args.biases, first + r, args.cols, args.group_size)
                    : kNoRow;
    }
    float sums[kRowsPerSubgroup];
    mlx_dot_rows(rows, args.cols, args.group_size, sums);
    if (subgroupElect()) {
      [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) {
        if (first + r < args.rows) args.y.v[first + r] = sums[r];
      }
    }
  }
}
