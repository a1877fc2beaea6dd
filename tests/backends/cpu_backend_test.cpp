// The CPU backend's own pieces outside the kernels: its launch scratch, the
// choice of SIMD target (BackendOptions::simd_target), and its profile's
// waits for the pool's threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>

#include "cpu/cpu_backend.h"
#include "cpu/simd.h"
#include "qwen35/dense_weights.h"
#include "qwen35/error.h"

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

// A profiled launch split across two threads counts the caller's wait for the
// other (KernelProfile::wait_seconds), a part of the launch's time.
TEST(CpuBackend, ProfileCountsTheWaitForThePoolsThreads) {
  CpuBackend cpu(BackendOptions{.threads = 2});
  constexpr uint32_t kRows = 4096, kCols = 512;
  DeviceBuffer w(cpu, size_t{kRows} * kCols * 4), x(cpu, kCols * 4), y(cpu, kRows * 4);
  cpu.fill(w.ptr(), 0x3c, size_t{kRows} * kCols * 4, cpu.default_stream());
  cpu.fill(x.ptr(), 0x3c, kCols * 4, cpu.default_stream());
  const auto gemv = resolve_kernel<GemvArgs>(cpu, "gemv_f32");
  cpu.set_profiling(true);
  for (int i = 0; i < 20; ++i) {
    launch(cpu, gemv, GemvArgs{.w = w.ptr(), .x = x.ptr(), .y = y.ptr(), .rows = kRows, .cols = kCols},
           cpu.default_stream());
  }
  const std::vector<KernelProfile> profile = cpu.profile();
  ASSERT_EQ(profile.size(), 1u);
  EXPECT_EQ(profile[0].launches, 20u);
  EXPECT_GT(profile[0].wait_seconds, 0.0);
  EXPECT_LE(profile[0].wait_seconds, profile[0].seconds);
  cpu.set_profiling(true);  // enabling again starts from zero
  EXPECT_TRUE(cpu.profile().empty());
}

TEST(CpuBackend, UnknownSimdTargetNamesItAndTheAvailableOnes) {
  try {
    CpuBackend cpu(BackendOptions{.threads = 1, .simd_target = "avx9"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SIMD target 'avx9' is not available here"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(simd_targets()), std::string::npos) << e.what();
  }
}

// The weakest target (SCALAR on x86-64; on ARM64 NEON, the only one), named
// in lower case, runs while the backend lives, and normal dispatch returns
// after it.
TEST(CpuBackend, SimdTargetIsForcedWhileTheBackendLives) {
  const std::string best = simd::current_target();
  std::string weakest = simd::target_name(simd::available_targets().back());
  std::transform(weakest.begin(), weakest.end(), weakest.begin(), [](unsigned char c) { return std::tolower(c); });
  {
    CpuBackend cpu(BackendOptions{.threads = 1, .simd_target = weakest});
    EXPECT_EQ(simd::current_target(), simd::target_name(simd::available_targets().back()));
    EXPECT_NE(cpu.device_description().find(simd::current_target() + " (forced)"), std::string::npos)
        << cpu.device_description();
  }
  EXPECT_EQ(simd::current_target(), best);
  CpuBackend cpu(BackendOptions{.threads = 1});
  EXPECT_EQ(cpu.device_description().find("forced"), std::string::npos) << cpu.device_description();
}

}  // namespace
}  // namespace qwen35
