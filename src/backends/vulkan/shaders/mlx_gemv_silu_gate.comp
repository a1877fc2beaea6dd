#version 460
// gemv_silu_gate_mlx{4,8}_{f32,bf16,f16} (MlxGemvSiluGateArgs): y = residual +
// W (silu(gate) * up), residual optional (address 0), W MLX affine.
#include "common.glsl"
#include "mlx_rows.glsl"

layout(push_constant, std430) uniform MlxGemvSiluGateArgs {
  uint64_t codes, scales, biases;
  uint64_t gate;
  uint64_t up;
  uint64_t residual;
  Floats y;
  uint rows, cols, group_size;
} args;

float activation(uint c) { return silu(Floats(args.gate).v[c]) * Floats(args.up).v[c]; }

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
        const uint row = first + r;
        if (row < args.rows) args.y.v[row] = (args.residual != 0ul ? Floats(args.residual).v[row] : 0.0) + sums[r];
      }
    }
  }
}
