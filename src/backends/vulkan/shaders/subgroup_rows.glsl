// How the gemv shaders (gemv_rows.glsl, mlx_rows.glsl) hand out rows: a
// subgroup takes kRowsPerSubgroup rows at a time in a grid-stride loop, so any
// dispatch size covers the matrix (the host sizes it from the subgroup size):
// for (uint first = first_row(); first < rows; first += row_stride()) ...
const uint kWorkgroupSize = 128;
const uint kRowsPerSubgroup = 2;
layout(local_size_x = kWorkgroupSize) in;

uint first_row() { return (gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID) * kRowsPerSubgroup; }
uint row_stride() { return gl_NumWorkGroups.x * gl_NumSubgroups * kRowsPerSubgroup; }
