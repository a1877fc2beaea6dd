// CommandRecorder (see vulkan_commands.h).
#include "vulkan/vulkan_commands.h"

#include <algorithm>

#include "qwen35/error.h"

namespace qwen35::vulkan {

CommandRecorder::CommandRecorder(const Context& context) : context_(context) {
  const VkCommandPoolCreateInfo pool_info{.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                          .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                          .queueFamilyIndex = context.queue_family()};
  check(vkCreateCommandPool(context.device(), &pool_info, nullptr, &pool_), "vkCreateCommandPool");
  const VkFenceCreateInfo fence_info{.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(vkCreateFence(context.device(), &fence_info, nullptr, &fence_), "vkCreateFence");
}

CommandRecorder::~CommandRecorder() {
  vkDestroyFence(context_.device(), fence_, nullptr);
  vkDestroyCommandPool(context_.device(), pool_, nullptr);  // frees every buffer allocated from it
}

VkCommandBuffer CommandRecorder::begin_buffer(VkCommandBufferUsageFlags flags) {
  VkCommandBuffer buffer = VK_NULL_HANDLE;
  if (!free_buffers_.empty()) {
    buffer = free_buffers_.back();
    free_buffers_.pop_back();
  } else {
    const VkCommandBufferAllocateInfo info{.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                           .commandPool = pool_,
                                           .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                           .commandBufferCount = 1};
    check(vkAllocateCommandBuffers(context_.device(), &info, &buffer), "vkAllocateCommandBuffers");
  }
  const VkCommandBufferBeginInfo begin{.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, .flags = flags};
  check(vkBeginCommandBuffer(buffer, &begin), "vkBeginCommandBuffer");
  return buffer;
}

VkCommandBuffer CommandRecorder::target() {
  if (capture_ != VK_NULL_HANDLE) return capture_;
  if (current_ == VK_NULL_HANDLE) current_ = begin_buffer(VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
  return current_;
}

void CommandRecorder::barrier() {
  const VkMemoryBarrier memory{
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
      .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_HOST_READ_BIT};
  vkCmdPipelineBarrier(target(), VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &memory, 0, nullptr, 0,
                       nullptr);
}

void CommandRecorder::close_current() {
  if (current_ == VK_NULL_HANDLE) return;
  check(vkEndCommandBuffer(current_), "vkEndCommandBuffer");
  submission_.push_back(current_);
  stream_buffers_.push_back(current_);
  current_ = VK_NULL_HANDLE;
}

void CommandRecorder::begin_capture() {
  if (capture_ != VK_NULL_HANDLE) fail("Vulkan backend: begin_capture while a capture is open");
  capture_ = begin_buffer(VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT);
  barrier();  // the replayed launches come after whatever precedes the replay
}

GraphHandle CommandRecorder::end_capture() {
  if (capture_ == VK_NULL_HANDLE) fail("Vulkan backend: end_capture without begin_capture");
  check(vkEndCommandBuffer(capture_), "vkEndCommandBuffer");
  const GraphHandle graph{next_graph_++};
  graphs_.emplace(graph.id, capture_);
  capture_ = VK_NULL_HANDLE;
  return graph;
}

void CommandRecorder::replay(GraphHandle graph) {
  auto it = graphs_.find(graph.id);
  QWEN35_ASSERT(it != graphs_.end());
  QWEN35_ASSERT(capture_ == VK_NULL_HANDLE);
  close_current();
  submission_.push_back(it->second);
}

void CommandRecorder::destroy_graph(GraphHandle graph) {
  auto it = graphs_.find(graph.id);
  if (it == graphs_.end()) return;
  QWEN35_ASSERT(std::find(submission_.begin(), submission_.end(), it->second) == submission_.end());
  vkFreeCommandBuffers(context_.device(), pool_, 1, &it->second);
  graphs_.erase(it);
}

void CommandRecorder::submit_and_wait() {
  QWEN35_ASSERT(capture_ == VK_NULL_HANDLE);
  close_current();
  if (submission_.empty()) return;
  const VkSubmitInfo submit{.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                            .commandBufferCount = static_cast<uint32_t>(submission_.size()),
                            .pCommandBuffers = submission_.data()};
  check(vkQueueSubmit(context_.queue(), 1, &submit, fence_), "vkQueueSubmit");
  check(vkWaitForFences(context_.device(), 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  check(vkResetFences(context_.device(), 1, &fence_), "vkResetFences");
  for (VkCommandBuffer buffer : stream_buffers_) {
    check(vkResetCommandBuffer(buffer, 0), "vkResetCommandBuffer");
    free_buffers_.push_back(buffer);
  }
  stream_buffers_.clear();
  submission_.clear();
}

}  // namespace qwen35::vulkan
