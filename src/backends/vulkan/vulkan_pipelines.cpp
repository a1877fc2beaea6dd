// Shader modules and compute pipelines (see vulkan_pipelines.h).
#include "vulkan/vulkan_pipelines.h"

#include <span>

#include "qwen35/error.h"
#include "vulkan/spirv_modules.h"

namespace qwen35::vulkan {

Pipelines::Pipelines(const Context& context) : context_(context) {
  const VkPushConstantRange range{.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = kPushConstantBytes};
  const VkPipelineLayoutCreateInfo layout_info{.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                               .pushConstantRangeCount = 1,
                                               .pPushConstantRanges = &range};
  check(vkCreatePipelineLayout(context.device(), &layout_info, nullptr, &layout_), "vkCreatePipelineLayout");
  const VkPipelineCacheCreateInfo cache_info{.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  check(vkCreatePipelineCache(context.device(), &cache_info, nullptr, &cache_), "vkCreatePipelineCache");
}

Pipelines::~Pipelines() {
  for (const auto& [name, pipeline] : pipelines_) vkDestroyPipeline(context_.device(), pipeline, nullptr);
  vkDestroyPipelineCache(context_.device(), cache_, nullptr);
  vkDestroyPipelineLayout(context_.device(), layout_, nullptr);
}

VkPipeline Pipelines::get(std::string_view module) {
  if (auto it = pipelines_.find(std::string(module)); it != pipelines_.end()) return it->second;
  const std::span<const uint32_t> words = find_spirv_module(module);
  if (words.empty()) fail("Vulkan backend: no SPIR-V module '{}' was compiled into this build", module);

  const VkShaderModuleCreateInfo module_info{
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = words.size_bytes(), .pCode = words.data()};
  VkShaderModule shader = VK_NULL_HANDLE;
  check(vkCreateShaderModule(context_.device(), &module_info, nullptr, &shader), "vkCreateShaderModule");
  const VkComputePipelineCreateInfo pipeline_info{
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = shader,
                .pName = "main"},
      .layout = layout_};
  VkPipeline pipeline = VK_NULL_HANDLE;
  const VkResult result = vkCreateComputePipelines(context_.device(), cache_, 1, &pipeline_info, nullptr, &pipeline);
  vkDestroyShaderModule(context_.device(), shader, nullptr);
  check(result, fmt::format("vkCreateComputePipelines ({})", module));
  pipelines_.emplace(std::string(module), pipeline);
  return pipeline;
}

}  // namespace qwen35::vulkan
