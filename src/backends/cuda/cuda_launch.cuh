// Kernel launches with programmatic dependent launch (PDL, compute capability
// 9.0 and newer). Decode is a chain of a few hundred small kernels, each
// waiting for the last: normally the next kernel is only launched once the
// previous one has finished and its memory is flushed, so every launch adds its
// set-up time and the first DRAM round trip to the token. With PDL the next
// kernel is launched while the previous one runs; its blocks stop at
// griddepcontrol.wait until the previous kernel has completed and its writes
// are visible. A gemv first asks L2 for the start of its weights, which no
// kernel writes, so that read overlaps the previous kernel's tail.
//
// The rule that keeps this correct: every kernel calls
// start_after_previous_kernel() before it reads or writes anything another
// kernel touches. A kernel launched without the attribute (or on a device
// without PDL) passes the wait at once.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "cuda_kernels.h"

namespace qwen35::cuda {

// Waits until the kernels before this one on the stream have completed and
// their writes are visible, then lets the next kernel be launched (its blocks
// wait in turn, so waits chain: each kernel starts after all earlier ones).
__device__ inline void start_after_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Asks L2 to fetch bytes [p, p + bytes) ahead of their use (a hint: nothing is
// read into registers, and no fault is raised). p and bytes need not be aligned:
// the span is widened to 16-byte bounds, which stay inside the allocation
// (cudaMalloc's granularity is far coarser).
__device__ inline void prefetch_l2(const void* p, size_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{15};
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes + 15) & ~uintptr_t{15};
  constexpr uintptr_t kMaxSpan = uintptr_t{1} << 20;  // keeps size within the instruction's 32 bits
  for (uintptr_t at = begin; at < end; at += kMaxSpan) {
    const uint32_t size = static_cast<uint32_t>(end - at < kMaxSpan ? end - at : kMaxSpan);
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(at), "r"(size) : "memory");
  }
#else
  (void)p, (void)bytes;
#endif
}

// kernel<<<grid, block, 0, ctx.stream>>>(args...), marked as allowed to overlap
// the previous kernel where ctx says so. Errors surface through
// cudaGetLastError, which CudaBackend::launch checks after every launcher.
template <typename... Params, typename... Args>
void launch_kernel(const LaunchContext& ctx, void (*kernel)(Params...), dim3 grid, dim3 block, Args&&... args) {
  cudaLaunchAttribute overlap{};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = 0;
  config.stream = ctx.stream;
  config.attrs = ctx.overlap_previous_kernel ? &overlap : nullptr;
  config.numAttrs = ctx.overlap_previous_kernel ? 1 : 0;
  (void)cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace qwen35::cuda
