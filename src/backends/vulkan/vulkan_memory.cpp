// DeviceHeap and StagingRing (see vulkan_memory.h).
#include "vulkan/vulkan_memory.h"

#include <algorithm>

#include "qwen35/error.h"

namespace qwen35::vulkan {
namespace {

// A memory type allowed by `type_bits` with all of `required`, preferring one
// that also has all of `preferred`.
std::optional<uint32_t> find_memory_type(const VkPhysicalDeviceMemoryProperties& memory, uint32_t type_bits,
                                         VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
  std::optional<uint32_t> fallback;
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags = memory.memoryTypes[i].propertyFlags;
    if (!(type_bits & (1u << i)) || (flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (!fallback) fallback = i;
  }
  return fallback;
}

BufferBlock create_block(const Context& context, size_t bytes, VkBufferUsageFlags usage, VkMemoryPropertyFlags required,
                         VkMemoryPropertyFlags preferred) {
  VkDevice device = context.device();
  BufferBlock block{.bytes = bytes};
  const VkBufferCreateInfo buffer_info{.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                                       .size = std::max<size_t>(bytes, 16),
                                       .usage = usage,
                                       .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  check(vkCreateBuffer(device, &buffer_info, nullptr, &block.buffer), "vkCreateBuffer");
  VkMemoryRequirements requirements;
  vkGetBufferMemoryRequirements(device, block.buffer, &requirements);
  const std::optional<uint32_t> type =
      find_memory_type(context.memory_properties(), requirements.memoryTypeBits, required, preferred);
  if (!type) {
    vkDestroyBuffer(device, block.buffer, nullptr);
    fail("Vulkan: no memory type for a buffer of {} bytes (required flags {:#x})", bytes, required);
  }
  const VkMemoryAllocateFlagsInfo flags{.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                        .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
  const bool device_address = usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  const VkMemoryAllocateInfo allocate_info{.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                           .pNext = device_address ? &flags : nullptr,
                                           .allocationSize = requirements.size,
                                           .memoryTypeIndex = *type};
  const VkResult result = vkAllocateMemory(device, &allocate_info, nullptr, &block.memory);
  if (result != VK_SUCCESS) {
    vkDestroyBuffer(device, block.buffer, nullptr);
    fail("Vulkan device '{}': cannot allocate {} bytes: {}", context.properties().deviceName, bytes,
         result_name(result));
  }
  check(vkBindBufferMemory(device, block.buffer, block.memory, 0), "vkBindBufferMemory");
  if (required & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
    void* mapped = nullptr;
    check(vkMapMemory(device, block.memory, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
    block.mapped = static_cast<std::byte*>(mapped);
  }
  return block;
}

void destroy_block(const Context& context, const BufferBlock& block) {
  vkDestroyBuffer(context.device(), block.buffer, nullptr);
  vkFreeMemory(context.device(), block.memory, nullptr);  // unmaps implicitly
}

}  // namespace

DeviceHeap::~DeviceHeap() {
  for (const auto& [address, block] : blocks_) destroy_block(context_, block);
}

DevicePtr DeviceHeap::allocate(size_t bytes) {
  const BufferBlock block =
      create_block(context_, bytes,
                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                       VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
                   0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  const VkBufferDeviceAddressInfo info{.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, .buffer = block.buffer};
  const uint64_t address = vkGetBufferDeviceAddress(context_.device(), &info);
  QWEN35_ASSERT(address != 0);
  blocks_.emplace(address, block);
  return DevicePtr{address};
}

void DeviceHeap::release(DevicePtr ptr) {
  auto it = blocks_.find(ptr.address);
  QWEN35_ASSERT(it != blocks_.end());
  destroy_block(context_, it->second);
  blocks_.erase(it);
}

BufferRange DeviceHeap::locate(DevicePtr ptr, size_t bytes) const {
  auto it = blocks_.upper_bound(ptr.address);
  QWEN35_ASSERT(it != blocks_.begin());
  --it;
  const uint64_t offset = ptr.address - it->first;
  QWEN35_ASSERT(offset + bytes <= it->second.bytes);
  return BufferRange{it->second.buffer, offset};
}

StagingRing::~StagingRing() {
  for (const BufferBlock& chunk : chunks_) destroy_block(context_, chunk);
}

std::optional<StagingRing::Slice> StagingRing::take(size_t bytes) {
  constexpr size_t kAlignment = 16;
  chunk_used_ = (chunk_used_ + kAlignment - 1) / kAlignment * kAlignment;
  if (chunk_ < chunks_.size() && chunk_used_ >= kChunkBytes) {
    ++chunk_;
    chunk_used_ = 0;
  }
  if (chunk_ == chunks_.size()) {
    if (chunks_.size() == kMaxChunks) return std::nullopt;
    chunks_.push_back(create_block(context_, kChunkBytes,
                                   VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                   VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                   VK_MEMORY_PROPERTY_HOST_CACHED_BIT));
  }
  const BufferBlock& chunk = chunks_[chunk_];
  const size_t taken = std::min(bytes, kChunkBytes - chunk_used_);
  const Slice slice{BufferRange{chunk.buffer, chunk_used_}, chunk.mapped + chunk_used_, taken};
  chunk_used_ += taken;
  return slice;
}

void StagingRing::reset() {
  chunk_ = 0;
  chunk_used_ = 0;
}

}  // namespace qwen35::vulkan
