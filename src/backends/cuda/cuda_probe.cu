// memory_read_probe (qwen35/device_bandwidth.h): the roofline of a decode,
// measured as a plain grid-stride read of 16-byte words with four loads in
// flight per thread, the access pattern of the gemv kernels.
#include "cuda_common.cuh"
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "qwen35/device_bandwidth.h"

namespace qwen35::cuda {
namespace {

constexpr unsigned kProbeThreads = 512;
constexpr uint32_t kProbeUnroll = 4;

__global__ void __launch_bounds__(kProbeThreads) memory_read_probe_kernel(const uint4* data, size_t words,
                                                                          uint32_t* sink) {
  start_after_previous_kernel();
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  uint32_t acc = 0;
  size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; i + (kProbeUnroll - 1) * stride < words; i += kProbeUnroll * stride) {
    uint4 v[kProbeUnroll];
#pragma unroll
    for (uint32_t u = 0; u < kProbeUnroll; ++u) v[u] = __ldcs(data + i + u * stride);  // streaming: no L2 reuse
#pragma unroll
    for (uint32_t u = 0; u < kProbeUnroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < words; i += stride) {
    const uint4 v = __ldcs(data + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0xdeadbeefu) *sink = acc;  // never, for the probe's fill: keeps the loads
}

void memory_read_probe(const MemoryReadProbeArgs& a, const LaunchContext& ctx) {
  const size_t words = a.bytes / 16;
  const unsigned blocks = blocks_for(words, size_t{kProbeThreads} * 16, static_cast<size_t>(ctx.multiprocessors) * 4);
  launch_kernel(ctx, memory_read_probe_kernel, blocks, kProbeThreads, as<const uint4>(a.data), words,
                as<uint32_t>(a.sink));
}

}  // namespace

void add_probe_kernels(std::vector<KernelSpec>& specs) {
  specs.push_back(kernel_spec<MemoryReadProbeArgs, memory_read_probe>("memory_read_probe"));
}

}  // namespace qwen35::cuda
