// The CPU backend's own pieces outside the kernels: its launch scratch.
#include <gtest/gtest.h>

#include <cstdint>

#include "cpu/cpu_backend.h"

namespace qwen35 {
namespace {

// The kernels read x from the launch scratch in vectors of up to 64 bytes;
// from memory only 16-byte aligned (std::vector's), some processes had every
// such load straddle two cache lines (the int8 mlx4 gemv ran at 16-26 GB/s
// from cache against 35-38 aligned).
TEST(CpuBackend, LaunchScratchStartsACacheLine) {
  CpuBackend cpu(BackendOptions{.threads = 1});
  for (size_t count : {1u, 17u, 1000u, 5000u, 300000u, 64u}) {
    float* p = cpu.launch_scratch(count);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << count;
    for (size_t i = 0; i < count; ++i) p[i] = static_cast<float>(i);  // all of it is usable
    EXPECT_EQ(p[count - 1], static_cast<float>(count - 1));
  }
}

}  // namespace
}  // namespace qwen35
