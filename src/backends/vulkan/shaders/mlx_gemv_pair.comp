#version 460
// gemv_pair_mlx{4,8}_{f32,bf16,f16} (MlxGemvPairArgs): y0 = W0 x and y1 = W1 x in
// one launch, the rows of W1 numbered after those of W0.
#include "common.glsl"
#include "mlx_rows.glsl"

layout(push_constant, std430) uniform MlxGemvPairArgs {
  uint64_t codes0, scales0, biases0;
  uint64_t codes1, scales1, biases1;
  uint64_t x;
  Floats y0;
  Floats y1;
  uint rows0, rows1, cols, group_size;
} args;

float activation(uint c) { return Floats(args.x).v[c]; }

MlxRow pair_row(uint row) {
  if (row < args.rows0) return mlx_row(args.codes0, args.scales0, args.biases0, row, args.cols, args.group_size);
  if (row < args.rows0 + args.rows1) {
    return mlx_row(args.codes1, args.scales1, args.biases1, row - args.rows0, args.cols, args.group_size);
  }
  return kNoRow;
}

void main() {
  const uint rows = args.rows0 + args.rows1;
  for (uint first = first_row(); first < rows; first += row_stride()) {
    MlxRow pair[kRowsPerSubgroup];
    [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) pair[r] = pair_row(first + r);
    float sums[kRowsPerSubgroup];
    mlx_dot_rows(pair, args.cols, args.group_size, sums);
    if (subgroupElect()) {
      [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) {
        const uint row = first + r;
        if (row < args.rows0) {
          args.y0.v[row] = sums[r];
        } else if (row < rows) {
          args.y1.v[row - args.rows0] = sums[r];
        }
      }
    }
  }
}
