// Command recording on the backend's one queue. Commands go into command
// buffers kept in submission order and are submitted together when the host
// waits, so the launches between two synchronize calls cost no round trips.
// A capture records into a command buffer of its own; replay puts that buffer
// into the submission order (as often as asked: it is simultaneous-use).
#pragma once

#include <unordered_map>
#include <vector>

#include "qwen35/backend.h"
#include "vulkan/vulkan_context.h"

namespace qwen35::vulkan {

class CommandRecorder {
 public:
  explicit CommandRecorder(const Context& context);
  ~CommandRecorder();
  CommandRecorder(const CommandRecorder&) = delete;
  CommandRecorder& operator=(const CommandRecorder&) = delete;

  // The command buffer the next command goes into: the open capture, else the stream's.
  VkCommandBuffer target();
  // Orders every command recorded so far before every later one, and makes
  // their writes visible to the host once the batch completes. Recorded after
  // each command: a decode step is a chain of dependent launches anyway.
  void barrier();
  bool capturing() const { return capture_ != VK_NULL_HANDLE; }
  // True when nothing was recorded since the last wait.
  bool idle() const { return current_ == VK_NULL_HANDLE && submission_.empty(); }

  void begin_capture();
  GraphHandle end_capture();
  void replay(GraphHandle graph);
  void destroy_graph(GraphHandle graph);

  // Submits everything recorded, in order, and waits until the GPU has run it.
  void submit_and_wait();

 private:
  VkCommandBuffer begin_buffer(VkCommandBufferUsageFlags flags);
  void close_current();

  const Context& context_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkCommandBuffer current_ = VK_NULL_HANDLE;     // open stream buffer
  VkCommandBuffer capture_ = VK_NULL_HANDLE;     // open capture
  std::vector<VkCommandBuffer> submission_;      // closed buffers and replayed graphs, in order
  std::vector<VkCommandBuffer> stream_buffers_;  // stream buffers in submission_, recycled after the wait
  std::vector<VkCommandBuffer> free_buffers_;
  std::unordered_map<uint64_t, VkCommandBuffer> graphs_;
  uint64_t next_graph_ = 1;
};

}  // namespace qwen35::vulkan
