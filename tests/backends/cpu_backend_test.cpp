// The CPU backend's own pieces outside the kernels: its launch scratch, the
// choice of SIMD target (BackendOptions::simd_target), its profile's waits
// for the pool's threads, and attention's split across them.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cpu/cpu_backend.h"
#include "cpu/row_bands.h"
#include "cpu/simd.h"
#include "qwen35/dense_weights.h"
#include "qwen35/error.h"
#include "qwen35/kernels.h"
#include "support/test_support.h"

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

// The dense gemvs' tuning knobs (GpuBackend::set_tuning: dense-bands,
// dense-prefetch) change how a launch walks the matrix, and solo-bytes
// whether one thread or two walk it (1000 and 500 KB, shared by default), not
// a bit of y: f32 rows of 4 KB and bf16 rows of 2 KB (short: four bands by
// default, two on Zen 4), 250 rows so that bands leave rows over, on two threads.
TEST(CpuBackend, DenseTuningKnobsChangeNoBit) {
  CpuBackend cpu(BackendOptions{.threads = 2});
  constexpr uint32_t kRows = 250, kCols = 1024;
  const std::vector<float> w_f32 = testing::random_floats(size_t{kRows} * kCols, 41);
  const std::vector<float> x_values = testing::random_floats(kCols, 42);
  std::vector<uint16_t> w_bf16(w_f32.size());  // the floats' upper halves
  for (size_t i = 0; i < w_f32.size(); ++i) w_bf16[i] = static_cast<uint16_t>(std::bit_cast<uint32_t>(w_f32[i]) >> 16);
  DeviceBuffer f32(cpu, w_f32.size() * 4), bf16(cpu, w_bf16.size() * 2), x(cpu, kCols * 4), y(cpu, kRows * 4);
  cpu.upload(f32.ptr(), w_f32.data(), w_f32.size() * 4, cpu.default_stream());
  cpu.upload(bf16.ptr(), w_bf16.data(), w_bf16.size() * 2, cpu.default_stream());
  cpu.upload(x.ptr(), x_values.data(), kCols * 4, cpu.default_stream());
  const std::pair<std::string_view, int64_t> settings[] = {{"dense-bands", 1},    {"dense-bands", 2},
                                                            {"dense-bands", 4},    {"dense-prefetch", 1},
                                                            {"dense-prefetch", 64}, {"dense-prefetch", 8192},
                                                            {"solo-bytes", 1},      {"solo-bytes", 1 << 20}};
  for (const auto& [kernel_name, w] : {std::pair{"gemv_f32", f32.ptr()}, std::pair{"gemv_bf16", bf16.ptr()}}) {
    SCOPED_TRACE(kernel_name);
    const auto gemv = resolve_kernel<GemvArgs>(cpu, kernel_name);
    const auto run = [&] {
      cpu.fill(y.ptr(), 0xff, kRows * 4, cpu.default_stream());  // NaNs
      launch(cpu, gemv, GemvArgs{.w = w, .x = x.ptr(), .y = y.ptr(), .rows = kRows, .cols = kCols},
             cpu.default_stream());
      std::vector<float> out(kRows);
      cpu.download(out.data(), y.ptr(), kRows * 4, cpu.default_stream());
      return out;
    };
    const std::vector<float> defaults = run();
    for (float v : defaults) ASSERT_FALSE(std::isnan(v));
    for (const auto& [knob, value] : settings) {
      cpu.set_tuning(knob, value);
      const std::vector<float> tuned = run();
      cpu.set_tuning(knob, 0);
      ASSERT_EQ(std::memcmp(tuned.data(), defaults.data(), kRows * 4), 0) << knob << "=" << value;
    }
  }
  EXPECT_EQ(cpu::dense_gemv_bands(4096), cpu::default_dense_gemv_bands(4096, cpu::band_host()));
  EXPECT_EQ(cpu::dense_gemv_prefetch_bytes(), cpu::default_dense_gemv_prefetch_bytes(cpu::band_host()));
  cpu.set_tuning("dense-bands", 1);
  EXPECT_EQ(cpu::dense_gemv_bands(4096), 1u);
  cpu.set_tuning("dense-prefetch", 8);
  EXPECT_EQ(cpu::dense_gemv_prefetch_bytes(), 0u);  // under a line: none
  cpu.set_tuning("dense-prefetch", 0);
  cpu.set_tuning("dense-bands", 0);
  EXPECT_THROW(cpu.set_tuning("dense-bands", 3), Error);
  EXPECT_THROW(cpu.set_tuning("dense-prefetch", 65537), Error);
  EXPECT_THROW(cpu.set_tuning("solo-bytes", (16 << 20) + 1), Error);
}

// The shape of attention_runs' launches.
constexpr uint32_t kHeadsQ = 8, kHeadsKv = 2, kHeadDim = 64;
constexpr float kAttentionScale = 0.125f;

// attention_runs' query and f32 caches over seq_len positions (the same for every backend).
struct AttentionInputs {
  std::vector<float> q, k, v;
};
AttentionInputs attention_inputs(uint32_t seq_len) {
  using testing::random_floats;
  const size_t cache_floats = size_t{seq_len} * kHeadsKv * kHeadDim;
  return {random_floats(kHeadsQ * kHeadDim, 1, -2, 2), random_floats(cache_floats, 2, -2, 2),
          random_floats(cache_floats, 3)};
}

// Decode attention over seq_len positions of attention_inputs(seq_len),
// launched `runs` times: the output of each launch.
std::vector<std::vector<float>> attention_runs(CpuBackend& cpu, uint32_t seq_len, int runs) {
  const auto buffer = [&](const std::vector<float>& values) {
    DeviceBuffer b(cpu, values.size() * sizeof(float));
    cpu.upload(b.ptr(), values.data(), values.size() * sizeof(float), cpu.default_stream());
    return b;
  };
  const AttentionInputs inputs = attention_inputs(seq_len);
  const DeviceBuffer q = buffer(inputs.q), k = buffer(inputs.k), v = buffer(inputs.v);
  DeviceBuffer out(cpu, kHeadsQ * kHeadDim * sizeof(float)), step(cpu, sizeof(DecodeStepParams));
  const DecodeStepParams params{.position = seq_len - 1, .cache_pos = seq_len - 1, .seq_len = seq_len, .reserved = 0};
  cpu.upload(step.ptr(), &params, sizeof(params), cpu.default_stream());
  const auto attention = resolve_kernel<AttentionDecodeArgs>(cpu, "attention_decode_f32");
  std::vector<std::vector<float>> results;
  for (int run = 0; run < runs; ++run) {
    launch(cpu, attention,
           AttentionDecodeArgs{.q = q.ptr(), .k_cache = k.ptr(), .v_cache = v.ptr(), .step = step.ptr(),
                               .out = out.ptr(), .n_heads_q = kHeadsQ, .n_heads_kv = kHeadsKv,
                               .head_dim = kHeadDim, .scale = kAttentionScale},
           cpu.default_stream());
    std::vector<float>& result = results.emplace_back(kHeadsQ * kHeadDim);
    cpu.download(result.data(), out.ptr(), result.size() * sizeof(float), cpu.default_stream());
    cpu.synchronize(cpu.default_stream());
  }
  return results;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Decode attention's pieces of positions go to whichever thread takes them
// first, and are merged in order: a launch gives the same bits every time,
// however the threads happened to split it (3001 positions: 32 pieces over 3
// threads; 200 positions: 7 pieces of one block, 224 KB, which one thread
// reads alone unless solo-bytes forces them to be shared by stealing).
TEST(CpuBackend, AttentionGivesTheSameBitsHoweverTheThreadsSplitIt) {
  CpuBackend cpu(BackendOptions{.threads = 3});
  for (int64_t solo_bytes : {0, 1}) {
    cpu.set_tuning("solo-bytes", solo_bytes);
    for (uint32_t seq_len : {3001u, 200u}) {
      const std::vector<std::vector<float>> results = attention_runs(cpu, seq_len, 50);
      ASSERT_TRUE(std::any_of(results[0].begin(), results[0].end(), [](float x) { return x != 0.0f; }));
      for (size_t run = 1; run < results.size(); ++run) {
        ASSERT_TRUE(same_bits(results[run], results[0]))
            << seq_len << " positions, run " << run << ", solo-bytes " << solo_bytes;
      }
    }
  }
  cpu.set_tuning("solo-bytes", 0);
}

// Long contexts put several blocks of 32 positions in a piece, scored in runs
// of up to 32 blocks between the steps of an online softmax: the output is
// the plain softmax-weighted sum, in double here. On one thread 3001
// positions make pieces of 6 blocks (the last piece, and its last block,
// partial) and 20000 pieces of 40 blocks, each two runs (32 and 8 blocks);
// on three threads pieces of 2 and 14 blocks.
TEST(CpuBackend, LongContextAttentionIsThePlainSoftmax) {
  for (unsigned threads : {1u, 3u}) {
    CpuBackend cpu(BackendOptions{.threads = threads});
    for (uint32_t seq_len : {3001u, 1000u, 20000u}) {
      SCOPED_TRACE(::testing::Message() << threads << " threads, " << seq_len << " positions");
      const std::vector<float> out = attention_runs(cpu, seq_len, 1)[0];
      const auto [q, k, v] = attention_inputs(seq_len);
      for (uint32_t h = 0; h < kHeadsQ; ++h) {
        const size_t slice = size_t{h / (kHeadsQ / kHeadsKv)} * kHeadDim;
        std::vector<double> scores(seq_len);
        for (uint32_t t = 0; t < seq_len; ++t) {
          double dot = 0;
          for (uint32_t i = 0; i < kHeadDim; ++i) {
            dot += double{q[h * kHeadDim + i]} * k[t * kHeadsKv * kHeadDim + slice + i];
          }
          scores[t] = double{kAttentionScale} * dot;
        }
        const double max = *std::max_element(scores.begin(), scores.end());
        double total = 0;
        for (double& s : scores) total += s = std::exp(s - max);
        for (uint32_t i = 0; i < kHeadDim; ++i) {
          double expected = 0;
          for (uint32_t t = 0; t < seq_len; ++t) expected += scores[t] * v[t * kHeadsKv * kHeadDim + slice + i];
          expected /= total;
          ASSERT_NEAR(out[h * kHeadDim + i], expected, 1e-5) << "head " << h << " element " << i;
        }
      }
    }
  }
}

// Up to 16 blocks a thread, each block is a piece of its own whatever the
// thread count, so one thread and three give the same bits, the pieces read
// by one thread (up to solo-bytes, 256 KB by default) or shared (solo-bytes 1).
TEST(CpuBackend, ShortContextAttentionOnThreeThreadsEqualsOne) {
  CpuBackend one(BackendOptions{.threads = 1}), three(BackendOptions{.threads = 3});
  for (int64_t solo_bytes : {0, 1}) {
    three.set_tuning("solo-bytes", solo_bytes);
    for (uint32_t seq_len : {1u, 33u, 200u, 512u}) {
      const std::vector<float> expected = attention_runs(one, seq_len, 1)[0];
      const std::vector<std::vector<float>> results = attention_runs(three, seq_len, 20);
      for (size_t run = 0; run < results.size(); ++run) {
        ASSERT_TRUE(same_bits(results[run], expected))
            << seq_len << " positions, run " << run << ", solo-bytes " << solo_bytes;
      }
    }
  }
  three.set_tuning("solo-bytes", 0);
}

// How far ahead attention asks for its rows and into which cache level (the
// tuning knobs attention-prefetch and attention-prefetch-level) changes no
// bit, near the end of the cache too.
TEST(CpuBackend, AttentionPrefetchDistanceChangesNoBit) {
  CpuBackend cpu(BackendOptions{.threads = 2});
  for (uint32_t seq_len : {100u, 3001u}) {
    const std::vector<float> expected = attention_runs(cpu, seq_len, 1)[0];
    for (int64_t level : {1, 2}) {
      cpu.set_tuning("attention-prefetch-level", level);
      for (int64_t blocks : {1, 5, 16}) {
        cpu.set_tuning("attention-prefetch", blocks);
        const std::vector<float> got = attention_runs(cpu, seq_len, 1)[0];
        cpu.set_tuning("attention-prefetch", 0);
        ASSERT_TRUE(same_bits(got, expected))
            << seq_len << " positions, " << blocks << " blocks ahead into L" << level;
      }
    }
    cpu.set_tuning("attention-prefetch-level", 0);
  }
  EXPECT_THROW(cpu.set_tuning("attention-prefetch", 17), Error);
  EXPECT_THROW(cpu.set_tuning("attention-prefetch-level", 3), Error);
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
