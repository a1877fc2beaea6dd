// Compute pipelines built from the embedded SPIR-V (spirv_modules.h). Every
// pipeline shares one layout: no descriptor sets, only a push-constant range
// that holds a kernel's argument struct (device addresses and sizes).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "vulkan/vulkan_context.h"

namespace qwen35::vulkan {

// Vulkan guarantees at least 128 bytes of push constants; every argument struct fits.
inline constexpr uint32_t kPushConstantBytes = 128;

class Pipelines {
 public:
  explicit Pipelines(const Context& context);
  ~Pipelines();
  Pipelines(const Pipelines&) = delete;
  Pipelines& operator=(const Pipelines&) = delete;

  VkPipelineLayout layout() const { return layout_; }
  // The pipeline of SPIR-V module `module`, created on first use (drivers
  // compile at creation, so only the kernels a run resolves are compiled).
  VkPipeline get(std::string_view module);

 private:
  const Context& context_;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::unordered_map<std::string, VkPipeline> pipelines_;
};

}  // namespace qwen35::vulkan
