// VulkanBackend: memory, transfers, launches and captures (see vulkan_backend.h).
#include "vulkan/vulkan_backend.h"

#include <cstring>

namespace qwen35 {

VulkanBackend::VulkanBackend(const BackendOptions& options)
    : context_(std::make_unique<vulkan::Context>(options.device)),
      heap_(*context_),
      staging_(*context_),
      pipelines_(*context_),
      commands_(*context_) {}

VulkanBackend::~VulkanBackend() {
  try {
    if (!commands_.capturing()) flush();
  } catch (const Error&) {
    // A lost device cannot be waited for; the members below free what they own regardless.
  }
  vkDeviceWaitIdle(context_->device());
}

void VulkanBackend::require_not_capturing(std::string_view what) const {
  if (commands_.capturing())
    fail("Vulkan backend: {} cannot be recorded in a capture (only launches and copies)", what);
}

DevicePtr VulkanBackend::allocate(size_t bytes) { return heap_.allocate(bytes); }

void VulkanBackend::release(DevicePtr ptr) {
  if (ptr.is_null()) return;
  if (commands_.idle()) {
    heap_.release(ptr);
  } else {
    deferred_releases_.push_back(ptr);
  }
}

vulkan::StagingRing::Slice VulkanBackend::take_staging(size_t bytes) {
  if (std::optional<vulkan::StagingRing::Slice> slice = staging_.take(bytes)) return *slice;
  flush();
  std::optional<vulkan::StagingRing::Slice> slice = staging_.take(bytes);
  QWEN35_ASSERT(slice.has_value());
  return *slice;
}

void VulkanBackend::upload(DevicePtr dst, const void* src, size_t bytes, Stream) {
  require_not_capturing("upload");
  const vulkan::BufferRange target = heap_.locate(dst, bytes);
  for (size_t done = 0; done < bytes;) {
    const vulkan::StagingRing::Slice slice = take_staging(bytes - done);
    std::memcpy(slice.host, static_cast<const std::byte*>(src) + done, slice.bytes);
    const VkBufferCopy region{.srcOffset = slice.range.offset, .dstOffset = target.offset + done, .size = slice.bytes};
    vkCmdCopyBuffer(commands_.target(), slice.range.buffer, target.buffer, 1, &region);
    commands_.barrier();
    done += slice.bytes;
  }
}

void VulkanBackend::download(void* dst, DevicePtr src, size_t bytes, Stream) {
  require_not_capturing("download");
  const vulkan::BufferRange source = heap_.locate(src, bytes);
  for (size_t done = 0; done < bytes;) {
    const vulkan::StagingRing::Slice slice = take_staging(bytes - done);
    const VkBufferCopy region{.srcOffset = source.offset + done, .dstOffset = slice.range.offset, .size = slice.bytes};
    vkCmdCopyBuffer(commands_.target(), source.buffer, slice.range.buffer, 1, &region);
    commands_.barrier();
    downloads_.push_back(PendingDownload{static_cast<std::byte*>(dst) + done, slice.host, slice.bytes});
    done += slice.bytes;
  }
}

void VulkanBackend::copy(DevicePtr dst, DevicePtr src, size_t bytes, Stream) {
  if (bytes == 0) return;
  const vulkan::BufferRange to = heap_.locate(dst, bytes);
  const vulkan::BufferRange from = heap_.locate(src, bytes);
  // vkCmdCopyBuffer needs disjoint regions.
  QWEN35_ASSERT(to.buffer != from.buffer || to.offset >= from.offset + bytes || from.offset >= to.offset + bytes);
  const VkBufferCopy region{.srcOffset = from.offset, .dstOffset = to.offset, .size = bytes};
  vkCmdCopyBuffer(commands_.target(), from.buffer, to.buffer, 1, &region);
  commands_.barrier();
}

void VulkanBackend::fill(DevicePtr dst, uint8_t byte_value, size_t bytes, Stream) {
  require_not_capturing("fill");
  if (bytes == 0) return;
  const vulkan::BufferRange target = heap_.locate(dst, bytes);
  if (target.offset % 4 == 0 && bytes % 4 == 0) {  // vkCmdFillBuffer's alignment rules
    vkCmdFillBuffer(commands_.target(), target.buffer, target.offset, bytes, 0x01010101u * byte_value);
    commands_.barrier();
    return;
  }
  for (size_t done = 0; done < bytes;) {
    const vulkan::StagingRing::Slice slice = take_staging(bytes - done);
    std::memset(slice.host, byte_value, slice.bytes);
    const VkBufferCopy region{.srcOffset = slice.range.offset, .dstOffset = target.offset + done, .size = slice.bytes};
    vkCmdCopyBuffer(commands_.target(), slice.range.buffer, target.buffer, 1, &region);
    commands_.barrier();
    done += slice.bytes;
  }
}

void VulkanBackend::flush() {
  commands_.submit_and_wait();
  for (const PendingDownload& d : downloads_) std::memcpy(d.dst, d.staged, d.bytes);
  downloads_.clear();
  staging_.reset();
  for (DevicePtr ptr : deferred_releases_) heap_.release(ptr);
  deferred_releases_.clear();
}

void VulkanBackend::synchronize(Stream) {
  require_not_capturing("synchronize");
  flush();
}

std::optional<KernelHandle> VulkanBackend::find_kernel(std::string_view name, std::string_view args_type) {
  for (const vulkan::KernelSpec& spec : vulkan::kernel_specs()) {
    if (spec.name != name) continue;
    if (spec.args_type != args_type)
      fail("backend 'vulkan': kernel '{}' takes {}, not {}", name, spec.args_type, args_type);
    for (size_t i = 0; i < kernels_.size(); ++i) {
      if (kernels_[i].spec == &spec) return KernelHandle{i};
    }
    kernels_.push_back(Resolved{&spec, pipelines_.get(spec.name)});
    return KernelHandle{kernels_.size() - 1};
  }
  return std::nullopt;
}

void VulkanBackend::launch(KernelHandle kernel, const void* args, size_t args_bytes, Stream) {
  QWEN35_ASSERT(kernel.id < kernels_.size());
  const Resolved& resolved = kernels_[kernel.id];
  QWEN35_ASSERT(args_bytes == resolved.spec->args_bytes);
  VkCommandBuffer commands = commands_.target();
  vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, resolved.pipeline);
  // Push constants are copied into the command buffer now, so a capture keeps these arguments.
  vkCmdPushConstants(commands, pipelines_.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, static_cast<uint32_t>(args_bytes),
                     args);
  vkCmdDispatch(commands, resolved.spec->workgroups(args, context_->subgroup_size()), 1, 1);
  commands_.barrier();
}

void VulkanBackend::begin_capture(Stream) { commands_.begin_capture(); }

GraphHandle VulkanBackend::end_capture(Stream) { return commands_.end_capture(); }

void VulkanBackend::replay(GraphHandle graph, Stream) { commands_.replay(graph); }

void VulkanBackend::destroy_graph(GraphHandle graph) {
  if (!commands_.capturing() && !commands_.idle()) flush();  // the graph may be queued for a replay
  commands_.destroy_graph(graph);
}

}  // namespace qwen35
