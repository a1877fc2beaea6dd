// Device memory for the Vulkan backend. DeviceHeap: one VkBuffer per
// allocation, device-local where the device has such memory, identified by
// its buffer device address (so a DevicePtr is what shaders dereference), and
// mapped back to (buffer, offset) for transfer commands. StagingRing:
// host-visible chunks that uploads and downloads pass through.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <vector>

#include "qwen35/backend.h"
#include "vulkan/vulkan_context.h"

namespace qwen35::vulkan {

// One buffer bound to its own memory.
struct BufferBlock {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  size_t bytes = 0;
  std::byte* mapped = nullptr;  // host-visible blocks only
};

// A byte range inside one buffer, as transfer commands name it.
struct BufferRange {
  VkBuffer buffer;
  VkDeviceSize offset;
};

class DeviceHeap {
 public:
  explicit DeviceHeap(const Context& context) : context_(context) {}
  ~DeviceHeap();
  DeviceHeap(const DeviceHeap&) = delete;
  DeviceHeap& operator=(const DeviceHeap&) = delete;

  // Throws Error when the device is out of memory.
  DevicePtr allocate(size_t bytes);
  void release(DevicePtr ptr);
  // The buffer holding [ptr, ptr + bytes); asserts it lies inside one allocation.
  BufferRange locate(DevicePtr ptr, size_t bytes) const;

 private:
  const Context& context_;
  std::map<uint64_t, BufferBlock> blocks_;  // by device address
};

class StagingRing {
 public:
  struct Slice {
    BufferRange range;
    std::byte* host;
    size_t bytes;
  };

  explicit StagingRing(const Context& context) : context_(context) {}
  ~StagingRing();
  StagingRing(const StagingRing&) = delete;
  StagingRing& operator=(const StagingRing&) = delete;

  // Up to `bytes` of staging memory (possibly fewer: callers loop), or nullopt
  // when every chunk is in use: the caller then waits for the GPU and resets.
  std::optional<Slice> take(size_t bytes);
  // Every slice is free again (the GPU has finished with them).
  void reset();

 private:
  static constexpr size_t kChunkBytes = size_t{16} << 20;
  static constexpr size_t kMaxChunks = 4;  // 64 MiB in flight before a transfer waits for the GPU

  const Context& context_;
  std::vector<BufferBlock> chunks_;
  size_t chunk_ = 0;       // chunk being filled
  size_t chunk_used_ = 0;  // bytes taken from it
};

}  // namespace qwen35::vulkan
