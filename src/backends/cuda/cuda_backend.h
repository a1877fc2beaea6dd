// The CUDA backend: the same kernels as the reference (cuda_*.cu), launched on
// one CUDA stream. DevicePtr values are CUDA device addresses from
// cudaMallocAsync; weights are uploaded (map_host stays nullopt); captures are
// CUDA graphs recorded from the stream and replayed with one cudaGraphLaunch.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda_kernels.h"
#include "qwen35/backend.h"

namespace qwen35 {

class CudaBackend final : public GpuBackend {
 public:
  // Throws DeviceUnavailable without a CUDA driver or device, Error for a bad device index.
  explicit CudaBackend(const BackendOptions& options);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return "cuda"; }
  std::string device_description() const override { return description_; }

  DevicePtr allocate(size_t bytes) override;
  void release(DevicePtr ptr) override;
  void upload(DevicePtr dst, const void* src, size_t bytes, Stream stream) override;
  void download(void* dst, DevicePtr src, size_t bytes, Stream stream) override;
  void copy(DevicePtr dst, DevicePtr src, size_t bytes, Stream stream) override;
  void fill(DevicePtr dst, uint8_t byte_value, size_t bytes, Stream stream) override;
  // Page-locked: a 1 MB logits download then takes tens of microseconds, not hundreds.
  void* allocate_host(size_t bytes) override;
  void release_host(void* host) override;

  // One in-order stream: every Stream value names it.
  Stream default_stream() override { return Stream{0}; }
  void synchronize(Stream stream) override;

  std::optional<KernelHandle> find_kernel(std::string_view name, std::string_view args_type) override;
  void launch(KernelHandle kernel, const void* args, size_t args_bytes, Stream stream) override;

  bool supports_capture() const override { return !profiling_; }
  void begin_capture(Stream stream) override;
  GraphHandle end_capture(Stream stream) override;
  void replay(GraphHandle graph, Stream stream) override;
  void destroy_graph(GraphHandle graph) override;

  // Times each direct launch with a pair of CUDA events. While profiling is on
  // supports_capture() answers false, so that callers launch directly (a graph
  // replay would hide its kernels); the graph path is timed as a whole by bench.
  void set_profiling(bool enabled) override;
  std::vector<KernelProfile> profile() const override;

 private:
  struct TimedLaunch {
    uint64_t kernel;
    cudaEvent_t start, stop;
  };

  void require_not_capturing(std::string_view what) const;
  void release_deferred();
  cudaEvent_t take_event();
  // Waits for the timed launches, adds them to the totals and recycles their events.
  void collect_timings() const;

  int device_ = 0;
  std::string description_;
  cudaStream_t stream_ = nullptr;
  cuda::LaunchContext context_{};
  std::vector<cuda::KernelSpec> specs_;
  std::vector<const cuda::KernelSpec*> kernels_;  // KernelHandle::id indexes this
  bool async_alloc_ = false;  // stream-ordered allocation (memory pools) supported
  bool capturing_ = false;
  // The stream's last operation was a kernel launch, so the next launch may
  // overlap it (cuda_launch.cuh); copies, fills, events and graphs end that.
  bool after_kernel_ = false;
  std::vector<DevicePtr> deferred_releases_;  // released during a capture
  std::unordered_map<uint64_t, cudaGraphExec_t> graphs_;
  uint64_t next_graph_ = 1;
  bool profiling_ = false;
  mutable std::vector<TimedLaunch> timed_;
  mutable std::vector<cudaEvent_t> free_events_;
  mutable std::vector<KernelProfile> totals_;  // indexed like kernels_
};

}  // namespace qwen35
