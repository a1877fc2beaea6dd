// The Vulkan backend's kernels: for each name that Qwen35Kernels and
// DenseWeights resolve, its argument struct and how many workgroups one launch
// dispatches. The SPIR-V module of a kernel has the kernel's name.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace qwen35::vulkan {

struct KernelSpec {
  std::string name;
  std::string_view args_type;
  size_t args_bytes;
  // Workgroups to dispatch for these arguments on a device with this subgroup
  // size (the shaders loop over any remainder, so the count is a matter of
  // speed, never of coverage).
  std::function<uint32_t(const void* args, uint32_t subgroup_size)> workgroups;
};

std::span<const KernelSpec> kernel_specs();

}  // namespace qwen35::vulkan
