#version 460
// gemv_{f32,bf16,f16,q8_0,q4_0,q4_k,q5_k,q6_k} (GemvArgs): y[rows] = W[rows, cols] x[cols].
#include "common.glsl"
#include "elements.glsl"
#include "gemv_rows.glsl"

layout(push_constant, std430) uniform GemvArgs {
  uint64_t w;
  uint64_t x;
  Floats y;
  uint rows, cols;
} args;

float activation(uint c) { return Floats(args.x).v[c]; }
void activation8(uint c, out float a[8]) {
  const vec4 lo = Floats4(args.x).v[c / 4], hi = Floats4(args.x).v[c / 4 + 1];
  a = float[8](lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w);
}

void main() {
  const bool vector_path = args.cols % 8 == 0 && aligned16(args.w, args.x);
  for (uint first = first_row(); first < args.rows; first += row_stride()) {
    uint64_t rows[kRowsPerSubgroup];
    [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) {
      rows[r] = first + r < args.rows ? row_address(args.w, first + r, args.cols) : 0ul;
    }
    float sums[kRowsPerSubgroup];
    dot_rows(rows, args.cols, vector_path, sums);
    if (subgroupElect()) {
      [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) {
        if (first + r < args.rows) args.y.v[first + r] = sums[r];
      }
    }
  }
}
