// Workgroup-wide sum and max: a subgroup reduction, then one partial per
// subgroup through shared memory, added in subgroup order (deterministic).
// Two barriers whatever the workgroup size. The includer declares
// `const uint kWorkgroupSize`, its local_size_x. Call from uniform control flow.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

shared float subgroup_partials[kWorkgroupSize];  // one per subgroup (subgroups have >= 1 invocation)

float workgroup_sum(float value) {
  const float partial = subgroupAdd(value);
  if (subgroupElect()) subgroup_partials[gl_SubgroupID] = partial;
  barrier();
  float total = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; ++i) total += subgroup_partials[i];
  barrier();
  return total;
}

float workgroup_max(float value) {
  const float partial = subgroupMax(value);
  if (subgroupElect()) subgroup_partials[gl_SubgroupID] = partial;
  barrier();
  float result = subgroup_partials[0];
  for (uint i = 1; i < gl_NumSubgroups; ++i) result = max(result, subgroup_partials[i]);
  barrier();
  return result;
}
