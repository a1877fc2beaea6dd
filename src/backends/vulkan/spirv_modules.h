// The SPIR-V of the backend's compute shaders, compiled by glslc at build time
// (src/backends/vulkan/vulkan.cmake) and embedded here by name.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace qwen35::vulkan {

struct SpirvModule {
  std::string_view name;
  std::span<const uint32_t> words;
};

// The module compiled under `name` ("gemv_bf16"); empty when there is none.
std::span<const uint32_t> find_spirv_module(std::string_view name);

}  // namespace qwen35::vulkan
