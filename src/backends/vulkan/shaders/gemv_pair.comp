#version 460
// gemv_pair_{f32,bf16,f16,q8_0,...} (GemvPairArgs): y0 = W0 x and y1 = W1 x in one
// launch, the rows of W1 numbered after those of W0.
#include "common.glsl"
#include "elements.glsl"
#include "gemv_rows.glsl"

layout(push_constant, std430) uniform GemvPairArgs {
  uint64_t w0;
  uint64_t w1;
  uint64_t x;
  Floats y0;
  Floats y1;
  uint rows0, rows1, cols;
} args;

float activation(uint c) { return Floats(args.x).v[c]; }
void activation8(uint c, out float a[8]) {
  const vec4 lo = Floats4(args.x).v[c / 4], hi = Floats4(args.x).v[c / 4 + 1];
  a = float[8](lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w);
}

uint64_t pair_row(uint row) {
  if (row < args.rows0) return row_address(args.w0, row, args.cols);
  if (row < args.rows0 + args.rows1) return row_address(args.w1, row - args.rows0, args.cols);
  return 0ul;
}

void main() {
  const uint rows = args.rows0 + args.rows1;
  const bool vector_path = args.cols % 8 == 0 && aligned16(args.w0, args.w1) && aligned16(args.x, 0ul);
  for (uint first = first_row(); first < rows; first += row_stride()) {
    uint64_t addresses[kRowsPerSubgroup];
    [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) addresses[r] = pair_row(first + r);
    float sums[kRowsPerSubgroup];
    dot_rows(addresses, args.cols, vector_path, sums);
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
