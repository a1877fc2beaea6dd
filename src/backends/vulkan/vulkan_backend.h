// The Vulkan backend: the same kernels as the reference, as GLSL compute
// shaders (shaders/) compiled to SPIR-V at build time. DevicePtr values are
// Vulkan buffer device addresses; kernel arguments travel as push constants;
// work is recorded into command buffers and submitted when the host waits;
// captures are command buffers replayed with one submit per token.
#pragma once

#include <memory>
#include <vector>

#include "qwen35/backend.h"
#include "vulkan/vulkan_commands.h"
#include "vulkan/vulkan_context.h"
#include "vulkan/vulkan_kernels.h"
#include "vulkan/vulkan_memory.h"
#include "vulkan/vulkan_pipelines.h"

namespace qwen35 {

class VulkanBackend final : public GpuBackend {
 public:
  // Throws DeviceUnavailable without a usable Vulkan device.
  explicit VulkanBackend(const BackendOptions& options);
  ~VulkanBackend() override;

  std::string name() const override { return "vulkan"; }
  std::string device_description() const override { return context_->description(); }

  DevicePtr allocate(size_t bytes) override;
  void release(DevicePtr ptr) override;
  void upload(DevicePtr dst, const void* src, size_t bytes, Stream stream) override;
  void download(void* dst, DevicePtr src, size_t bytes, Stream stream) override;
  void copy(DevicePtr dst, DevicePtr src, size_t bytes, Stream stream) override;
  void fill(DevicePtr dst, uint8_t byte_value, size_t bytes, Stream stream) override;

  // One queue: every stream is the same in-order stream.
  Stream default_stream() override { return Stream{0}; }
  void synchronize(Stream stream) override;

  std::optional<KernelHandle> find_kernel(std::string_view name, std::string_view args_type) override;
  void launch(KernelHandle kernel, const void* args, size_t args_bytes, Stream stream) override;

  bool supports_capture() const override { return true; }
  void begin_capture(Stream stream) override;
  GraphHandle end_capture(Stream stream) override;
  void replay(GraphHandle graph, Stream stream) override;
  void destroy_graph(GraphHandle graph) override;

 private:
  struct PendingDownload {
    void* dst;
    const std::byte* staged;
    size_t bytes;
  };
  struct Resolved {
    const vulkan::KernelSpec* spec;
    VkPipeline pipeline;
  };

  // Runs everything recorded, waits, then completes downloads and releases.
  void flush();
  // Staging memory for a transfer, flushing first when the ring is full.
  vulkan::StagingRing::Slice take_staging(size_t bytes);
  void require_not_capturing(std::string_view what) const;

  std::unique_ptr<vulkan::Context> context_;
  vulkan::DeviceHeap heap_;
  vulkan::StagingRing staging_;
  vulkan::Pipelines pipelines_;
  vulkan::CommandRecorder commands_;
  std::vector<Resolved> kernels_;  // KernelHandle::id indexes this
  std::vector<PendingDownload> downloads_;
  std::vector<DevicePtr> deferred_releases_;  // released while the GPU may still use them
};

}  // namespace qwen35
