#version 460
// gemv_silu_gate_{f32,bf16,f16,q8_0,...} (GemvSiluGateArgs): y = residual + W (silu(gate) * up),
// residual optional (address 0). The activation is computed once per column
// for all of a subgroup's rows.
#include "common.glsl"
#include "elements.glsl"
#include "gemv_rows.glsl"

layout(push_constant, std430) uniform GemvSiluGateArgs {
  uint64_t w;
  uint64_t gate;
  uint64_t up;
  uint64_t residual;
  Floats y;
  uint rows, cols;
} args;

float activation(uint c) { return silu(Floats(args.gate).v[c]) * Floats(args.up).v[c]; }
void activation8(uint c, out float a[8]) {
  [[unroll]] for (uint half_index = 0; half_index < 2; ++half_index) {
    const vec4 g = Floats4(args.gate).v[c / 4 + half_index], u = Floats4(args.up).v[c / 4 + half_index];
    [[unroll]] for (uint k = 0; k < 4; ++k) a[4 * half_index + k] = silu(g[k]) * u[k];
  }
}

void main() {
  const bool vector_path = args.cols % 8 == 0 && aligned16(args.w, args.gate) && aligned16(args.up, 0ul);
  for (uint first = first_row(); first < args.rows; first += row_stride()) {
    uint64_t rows[kRowsPerSubgroup];
    [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) {
      rows[r] = first + r < args.rows ? row_address(args.w, first + r, args.cols) : 0ul;
    }
    float sums[kRowsPerSubgroup];
    dot_rows(rows, args.cols, vector_path, sums);
    if (subgroupElect()) {
      [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) {
        const uint row = first + r;
        if (row < args.rows) args.y.v[row] = (args.residual != 0ul ? Floats(args.residual).v[row] : 0.0) + sums[r];
      }
    }
  }
}
