// The core of the gemv family: each subgroup computes kRowsPerSubgroup rows'
// dot products with one activation vector. Its invocations stride over the
// columns (8 at a time with 16-byte loads when rows and activation are aligned
// for it), the activation is computed once per column for all of the
// subgroup's rows, and subgroupAdd sums the lanes: no shared memory, no
// barriers. Rows are handed out to subgroups in a grid-stride loop, so any
// dispatch size covers the matrix (the host sizes it from the subgroup size).
//
// The includer provides, before including this file (after elements.glsl):
//   float activation(uint c);                   element c of the activation
//   void activation8(uint c, out float a[8]);   elements c .. c+7 (vector path)
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

#include "subgroup_rows.glsl"

float activation(uint c);
void activation8(uint c, out float a[8]);

// Byte address of row `row` of a [rows, cols] matrix at `base`.
uint64_t row_address(uint64_t base, uint row, uint cols) { return base + uint64_t(row) * matrix_row_bytes(cols); }

// sums[r] = W[row r] . activation for rows at byte addresses rows[r] (0: no row),
// in every invocation of the subgroup. Call with the whole subgroup active.
void dot_rows(uint64_t rows[kRowsPerSubgroup], uint cols, bool vector_path, out float sums[kRowsPerSubgroup]) {
  const uint lane = gl_SubgroupInvocationID, lanes = gl_SubgroupSize;
  float acc[kRowsPerSubgroup];
  [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) acc[r] = 0.0;
#ifdef GGUF_BLOCKS
  // Block types: each invocation decodes units of 32 weights (gguf_blocks.glsl).
  for (uint u = lane; u < cols / 32u; u += lanes) {
    float a[32];
    [[unroll]] for (uint k = 0; k < 32u; ++k) a[k] = activation(32u * u + k);
    [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) {
      if (rows[r] == 0ul) continue;
      float w[32];
      decode_unit(rows[r], u, w);
      float partial = 0.0;
      [[unroll]] for (uint k = 0; k < 32u; ++k) partial += w[k] * a[k];
      acc[r] += partial;
    }
  }
#else
  if (vector_path) {
    for (uint c = lane * 8; c < cols; c += lanes * 8) {
      float a[8];
      activation8(c, a);
      [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) {
        if (rows[r] == 0ul) continue;
        float w[8];
        load_elem8(rows[r], c, w);
        float partial = 0.0;
        [[unroll]] for (uint k = 0; k < 8; ++k) partial += w[k] * a[k];
        acc[r] += partial;
      }
    }
  } else {
    for (uint c = lane; c < cols; c += lanes) {
      const float a = activation(c);
      [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) {
        if (rows[r] != 0ul) acc[r] += load_elem(rows[r], c) * a;
      }
    }
  }
#endif
  [[unroll]] for (uint r = 0; r < kRowsPerSubgroup; ++r) sums[r] = subgroupAdd(acc[r]);
}
