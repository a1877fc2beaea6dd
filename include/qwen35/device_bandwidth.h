// A probe of a device's memory read bandwidth (the roofline of a GPU decode),
// through the backend's "memory_read_probe" kernel: it reads a large buffer
// once per launch; a few launches back to back are timed from the host around a synchronize.
// Backends without that kernel have no probe (DeviceReadProbe::create is empty).
#pragma once

#include <optional>

#include "qwen35/backend.h"

namespace qwen35 {

// Reads every byte of [data, data + bytes) (bytes a multiple of 16); writes
// `sink` only if the data sum to a value the probe never fills, so nothing is
// optimised away and nothing is written.
struct MemoryReadProbeArgs {
  static constexpr std::string_view kTypeName = "MemoryReadProbeArgs";
  DevicePtr data, sink;
  size_t bytes;
};

class DeviceReadProbe {
 public:
  // Empty if `gpu` has no probe kernel. `bytes`: make it many times the last-level cache.
  static std::optional<DeviceReadProbe> create(GpuBackend& gpu, size_t bytes);
  // GB/s (1e9 bytes) of reading the buffer: the median of `repeats` samples.
  double measure(int repeats) const;

 private:
  DeviceReadProbe(GpuBackend& gpu, Kernel<MemoryReadProbeArgs> kernel, size_t bytes);
  GpuBackend* gpu_;
  Kernel<MemoryReadProbeArgs> kernel_;
  DeviceBuffer data_, sink_;
  size_t bytes_;
};

}  // namespace qwen35
