#include "qwen35/device_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace qwen35 {

std::optional<DeviceReadProbe> DeviceReadProbe::create(GpuBackend& gpu, size_t bytes) {
  const Kernel<MemoryReadProbeArgs> kernel = try_resolve_kernel<MemoryReadProbeArgs>(gpu, "memory_read_probe");
  if (!kernel.valid()) return std::nullopt;
  return DeviceReadProbe(gpu, kernel, bytes / 16 * 16);
}

DeviceReadProbe::DeviceReadProbe(GpuBackend& gpu, Kernel<MemoryReadProbeArgs> kernel, size_t bytes)
    : gpu_(&gpu),
      kernel_(kernel),
      data_(gpu, bytes),
      sink_(gpu, 16),
      bytes_(bytes) {
  // Every byte 0x5a: the kernel stores only for a sum this can never give.
  const Stream stream = gpu.default_stream();
  gpu.fill(data_.ptr(), 0x5a, bytes_, stream);
  gpu.synchronize(stream);
}

double DeviceReadProbe::measure(int repeats) const {
  using Clock = std::chrono::steady_clock;
  const Stream stream = gpu_->default_stream();
  const MemoryReadProbeArgs args{.data = data_.ptr(), .sink = sink_.ptr(), .bytes = bytes_};
  launch(*gpu_, kernel_, args, stream);  // warm-up
  gpu_->synchronize(stream);
  std::vector<double> gbps;
  constexpr int kLaunchesPerSample = 4;  // back to back: the synchronize's latency spreads over them
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto start = Clock::now();
    for (int i = 0; i < kLaunchesPerSample; ++i) launch(*gpu_, kernel_, args, stream);
    gpu_->synchronize(stream);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    gbps.push_back(kLaunchesPerSample * static_cast<double>(bytes_) / 1e9 / seconds);
  }
  std::sort(gbps.begin(), gbps.end());
  return gbps[gbps.size() / 2];
}

}  // namespace qwen35
