// GGUF weights against x in 24 bits (BackendOptions::int24_activations):
// three 8-bit digits rebuild x to float32's precision, the scalar twin stays
// that close to the float64 dot, and the CPU kernels of every SIMD target
// match the twin.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "cpu/gguf_x16.h"
#include "cpu/int8_activations.h"
#include "cpu/simd.h"
#include "gguf_int8_util.h"
#include "gguf_test_util.h"
#include "qwen35/backend.h"
#include "qwen35/dense_weights.h"
#include "support/test_support.h"

namespace qwen35::testing {
namespace {

constexpr size_t kDigits = cpu::kInt24Digits;
constexpr double kLastStep = 254.0 * 254.0;  // the third digit's step, in units of x's 8-bit step

// x's digit d at element i as the kernels read it.
int digit(const cpu::Int8Activations& x, size_t d, size_t i) { return x.q[d * x.cols + i]; }

double rebuilt(const cpu::Int8Activations& x, size_t i) {
  double t = 0;
  for (size_t d = 0; d < kDigits; ++d) t += double{cpu::kDigitWeight[d]} * digit(x, d, i);
  return double{x.scale[i / 32]} * t;
}

// Each element within half the third digit's step (plus the float32 rounding
// of x times the inverse scale), the first digit the 8-bit code, every digit
// an 8-bit code, and the sums the kernels use those of the digits.
TEST(Int24Activations, DigitsRebuildXToFloat32Precision) {
  const std::vector<float> x = varied_floats(4096, 1);
  const GgufQuantized q(x, kDigits), q8(x);
  double worst = 0;  // the largest error, in half third-digit steps
  for (size_t b = 0; b < x.size() / 32; ++b) {
    ASSERT_EQ(q.x.scale[b], q8.x.scale[b]) << "block " << b;
    double block_sum = 0;
    for (size_t g = 0; g < 2; ++g) {
      double group_sum = 0;
      for (size_t d = 0; d < kDigits; ++d) {
        int digit_sum = 0;
        for (size_t k = 16 * g; k < 16 * g + 16; ++k) digit_sum += digit(q.x, d, 32 * b + k);
        group_sum += double{cpu::kDigitWeight[d]} * digit_sum;
      }
      ASSERT_NEAR(q.x.code_sums[2 * b + g], group_sum, 1e-6 * (std::fabs(group_sum) + 1)) << "block " << b;
      block_sum += q.x.code_sums[2 * b + g];
    }
    ASSERT_NEAR(q.x.sums[b], q.x.scale[b] * block_sum, 1e-6 * std::fabs(q.x.scale[b]) * (std::fabs(block_sum) + 1));
    for (size_t k = 0; k < 32; ++k) {
      const size_t i = 32 * b + k;
      ASSERT_EQ(digit(q.x, 0, i), q8.x.q[i]) << "element " << i;
      for (size_t d = 0; d < kDigits; ++d) ASSERT_LE(std::abs(digit(q.x, d, i)), 127) << "element " << i;
      const double half_step = q.x.scale[b] / 2 / kLastStep;
      const double error = std::fabs(rebuilt(q.x, i) - x[i]);
      ASSERT_LE(error, half_step * 1.0001 + 2e-7 * std::fabs(x[i])) << "element " << i << " x " << x[i];
      if (half_step > 0) worst = std::max(worst, error / half_step);
    }
  }
  EXPECT_GT(worst, 0.5);  // the digits do round: the bound is not loose to the point of meaning nothing
}

// The twin's dot with x in 24 bits against the float64 one: within what
// rounding x to 24 bits can move it, 254^2 times less than 8 bits can.
TEST(Int24Activations, TwinWithinTheRoundingOfX) {
  EXPECT_GT(twin_error_over_rounding(kDigits, 1 / kLastStep, 4e-7), 1e-3);
}

TEST(Int24Activations, CpuKernelsMatchTheTwinOnTheChosenTarget) { check_gguf_cpu_kernels(kGgufInt8Types, kDigits); }

TEST(Int24Activations, CpuGemvPropagatesNaN) {
  check_gemv_propagates_nan(kGgufInt8Types, {.threads = 2, .int24_activations = true});
}

// y = W x on a CPU backend with `options`, W of `type` loaded as `layout`.
std::vector<float> cpu_gemv(const BackendOptions& options, DType type, DType layout, uint32_t rows, uint32_t cols,
                            uint32_t seed) {
  const std::vector<std::byte> w = random_blocks(type, rows * cols / dtype_block_size(type), seed);
  std::unique_ptr<GpuBackend> gpu = create_backend("cpu", options);
  const auto m = make_dense_weights(*gpu, type, rows, cols, w.data(), gpu->default_stream());
  EXPECT_EQ(m->dtype(), layout);
  Device d{*gpu, {}};
  return d.gemv(*m, d.put(varied_floats(cols, seed + 1)), rows);
}

// Q8_0 stays row-major with float x (its float kernel is the faster one):
// its gemv is the float backend's to the bit.
TEST(Int24Activations, Q8_0KeepsFloatX) {
  const std::vector<float> float_x = cpu_gemv({.threads = 2}, DType::kQ8_0, DType::kQ8_0, 32, 256, 10);
  const std::vector<float> int24 =
      cpu_gemv({.threads = 2, .int24_activations = true}, DType::kQ8_0, DType::kQ8_0, 32, 256, 10);
  EXPECT_EQ(std::memcmp(float_x.data(), int24.data(), float_x.size() * sizeof(float)), 0);
}

// int8_activations wins over int24_activations; either regroups Q4_K.
TEST(Int24Activations, Int8WinsWhereBothAreSet) {
  const auto q4_k = [](const BackendOptions& options) {
    return cpu_gemv(options, DType::kQ4_K, DType::kQ4_Kx16, 16, 256, 8);
  };
  const std::vector<float> both = q4_k({.threads = 2, .int8_activations = true, .int24_activations = true});
  EXPECT_EQ(both, q4_k({.threads = 2, .int8_activations = true}));
  EXPECT_NE(both, q4_k({.threads = 2, .int24_activations = true}));
}

class Int24Cpu : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { simd::force_target(GetParam()); }
  void TearDown() override { simd::force_target(0); }
};

TEST_P(Int24Cpu, KernelsMatchTheTwin) { check_gguf_cpu_kernels(kGgufInt8Types, kDigits); }

// The CPU backend's tuning knobs (GpuBackend::set_tuning) change how the
// regrouped kernels walk a matrix, not a bit of what they compute: 240 rows
// are 15 groups of 16, which one, two or four bands split with groups over,
// for x in 8 and in 24 bits.
TEST_P(Int24Cpu, TuningKnobsChangeNoBit) {
  constexpr uint32_t kRows = 240, kCols = 1024;
  const std::vector<float> x = varied_floats(kCols, 21);
  const std::pair<std::string_view, int64_t> settings[] = {
      {"gguf-x16-bands", 1}, {"gguf-x16-bands", 2}, {"gguf-x16-bands", 4},
      {"gguf-x16-prefetch", 1}, {"gguf-x16-prefetch", 512}, {"gguf-x16-prefetch", 8192},
      {"gguf-x16-q5-prefetch-lines", 32}, {"gguf-x16-q5-prefetch-lines", 44}};
  for (const BackendOptions& options : {BackendOptions{.threads = 2, .int8_activations = true},
                                        BackendOptions{.threads = 2, .int24_activations = true}}) {
    std::unique_ptr<GpuBackend> gpu = create_backend("cpu", options);
    for (DType type : kGgufInt8Types) {
      if (type == DType::kQ8_0 && !options.int8_activations) continue;  // row-major, float x
      SCOPED_TRACE(::testing::Message() << dtype_name(type)
                                        << (options.int8_activations ? ", x in 8 bits" : ", x in 24 bits"));
      const std::vector<std::byte> w = random_blocks(type, kRows * kCols / dtype_block_size(type), 22);
      const auto m = make_dense_weights(*gpu, type, kRows, kCols, w.data(), gpu->default_stream());
      ASSERT_EQ(m->dtype(), *gguf_regrouped_layout(type));
      Device d{*gpu, {}};
      const DevicePtr dx = d.put(x);
      const std::vector<float> defaults = d.gemv(*m, dx, kRows);
      for (const auto& [knob, value] : settings) {
        gpu->set_tuning(knob, value);
        // The knob reaches what the kernels read.
        const size_t digits = options.int8_activations ? 1 : kDigits;
        ASSERT_EQ(knob == "gguf-x16-bands"               ? gguf_cpu::x16_bands(m->dtype(), digits)
                  : knob == "gguf-x16-q5-prefetch-lines" ? gguf_cpu::x16_q5_prefetch_lines()
                                                         : gguf_cpu::x16_prefetch_bytes(m->dtype(), digits),
                  static_cast<size_t>(value));
        const std::vector<float> tuned = d.gemv(*m, dx, kRows);
        gpu->set_tuning(knob, 0);
        ASSERT_EQ(std::memcmp(tuned.data(), defaults.data(), kRows * sizeof(float)), 0) << knob << "=" << value;
      }
    }
  }
  // 0 restores each layout's own defaults, which depend on the host
  // (cpu::band_host()) except Q6_Kx16's distance with x in 24 bits.
  EXPECT_EQ(gguf_cpu::x16_prefetch_bytes(DType::kQ6_Kx16, kDigits), gguf_cpu::kQ6KOneBandPrefetchBytes);
  EXPECT_EQ(gguf_cpu::x16_prefetch_bytes(DType::kQ4_Kx16, kDigits), gguf_cpu::kX16PrefetchBytes);
  const cpu::BandHost host = cpu::band_host();
  EXPECT_EQ(gguf_cpu::x16_q5_prefetch_lines(), gguf_cpu::default_x16_q5_prefetch_lines(host));
  for (cpu::BandHost any : {cpu::BandHost::kAmdZen4, cpu::BandHost::kAmdZen5, cpu::BandHost::kOther}) {
    EXPECT_EQ(gguf_cpu::default_x16_q5_prefetch_lines(any),
              any == cpu::BandHost::kAmdZen4 ? gguf_cpu::kQ5KBlockLines : gguf_cpu::kQ5KCodeLines);
  }
  if (host == cpu::BandHost::kAmdZen4) {
    for (DType type : kGgufInt8Types) {
      const DType layout = *gguf_regrouped_layout(type);
      EXPECT_EQ(gguf_cpu::x16_bands(layout, 1), gguf_cpu::kZen4X16Bands) << dtype_name(type);
      EXPECT_EQ(gguf_cpu::x16_bands(layout, kDigits), gguf_cpu::kZen4X16Bands) << dtype_name(type);
    }
    EXPECT_EQ(gguf_cpu::x16_prefetch_bytes(DType::kQ6_Kx16, 1), gguf_cpu::kQ6KOneBandPrefetchBytes);
    return;
  }
  EXPECT_EQ(gguf_cpu::x16_bands(DType::kQ6_Kx16, kDigits), gguf_cpu::kHeavyInt24Bands);
  EXPECT_EQ(gguf_cpu::x16_bands(DType::kQ4_Kx16, kDigits), gguf_cpu::kX16Int24Bands);
  // With x in 8 bits Zen 5 takes the counts of x in 24 bits, except Q8_0x16's.
  const bool zen5 = host == cpu::BandHost::kAmdZen5;
  EXPECT_EQ(gguf_cpu::x16_prefetch_bytes(DType::kQ6_Kx16, 1),
            zen5 ? gguf_cpu::kQ6KOneBandPrefetchBytes : gguf_cpu::kX16PrefetchBytes);
  EXPECT_EQ(gguf_cpu::x16_bands(DType::kQ8_0x16, 1), gguf_cpu::kX16Bands);
  EXPECT_EQ(gguf_cpu::x16_bands(DType::kQ6_Kx16, 1), zen5 ? gguf_cpu::kHeavyInt24Bands : gguf_cpu::kX16Bands);
  EXPECT_EQ(gguf_cpu::x16_bands(DType::kQ4_0x16, 1), zen5 ? gguf_cpu::kX16Int24Bands : gguf_cpu::kX16Bands);
}

TEST(Int24Activations, TuningKnobsRefuseWhatTheyDoNotKnow) {
  std::unique_ptr<GpuBackend> gpu = create_backend("cpu", BackendOptions{.threads = 2});
  EXPECT_EQ(gpu->tuning_knobs(),
            (std::vector<std::string>{"attention-prefetch", "attention-prefetch-level", "dense-bands",
                                      "dense-prefetch", "gguf-x16-bands", "gguf-x16-prefetch",
                                      "gguf-x16-q5-prefetch-lines", "heavy-int8-bands", "mlx-x16-bands",
                                      "mlx-x16-prefetch", "solo-bytes"}));
  const auto message = [&](std::string_view knob, int64_t value) {
    try {
      gpu->set_tuning(knob, value);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("warp-drive", 1).find("no tuning knob 'warp-drive'"), std::string::npos);
  EXPECT_NE(message("gguf-x16-bands", 3).find("not 3"), std::string::npos);
  EXPECT_NE(message("gguf-x16-bands", -1).find("not -1"), std::string::npos);
  EXPECT_NE(message("heavy-int8-bands", 1).find("not 1"), std::string::npos);
  EXPECT_NE(message("gguf-x16-prefetch", 1 << 20).find("not 1048576"), std::string::npos);
  EXPECT_NE(message("gguf-x16-q5-prefetch-lines", 40).find("not 40"), std::string::npos);
  EXPECT_NE(message("mlx-x16-bands", 8).find("not 8"), std::string::npos);
  EXPECT_NE(message("mlx-x16-prefetch", 65537).find("not 65537"), std::string::npos);
  gpu->set_tuning("gguf-x16-bands", 0);
  const std::unique_ptr<GpuBackend> reference = create_backend("reference", BackendOptions{});
  EXPECT_TRUE(reference->tuning_knobs().empty());
  EXPECT_THROW(reference->set_tuning("gguf-x16-bands", 1), Error);
}

// The digits of every target against the scalar twin's, to the bit: random
// blocks of several magnitudes, an all-zero block (varied_floats), exact
// halves, subnormals, and blocks holding a NaN or an infinity; the outputs
// start as garbage, as a reused scratch does, so every code and sum must be
// written.
TEST_P(Int24Cpu, QuantizerMatchesTheScalarTwinToTheBit) {
  for (size_t cols : {32u, 96u, 1024u, 4096u + 32u}) {
    SCOPED_TRACE(::testing::Message() << "cols " << cols);
    std::vector<float> x = varied_floats(cols, static_cast<uint32_t>(cols));
    if (cols >= 1024) {
      for (size_t k = 0; k < 32; ++k) x[128 + k] = k == 0 ? 127.0f : static_cast<float>(k) - 15.5f;
      for (size_t k = 0; k < 32; ++k) x[192 + k] = 1e-40f * static_cast<float>(k + 1);
      x[256 + 7] = std::numeric_limits<float>::quiet_NaN();
      x[288 + 31] = std::numeric_limits<float>::infinity();
    }
    if (cols > 2048) x[2048 + 3] = -std::numeric_limits<float>::infinity();  // the first block of a later chunk
    std::vector<int8_t> q(kDigits * cols, 0x55), q_twin(kDigits * cols, 0x33);
    std::vector<float> scale(cols / 32, 5.0f), scale_twin(cols / 32, 3.0f);
    std::vector<float> sums(kDigits * cols / 16, 5.0f), sums_twin(kDigits * cols / 16, 3.0f);
    cpu::quantize_blocks(x.data(), cols, q.data(), scale.data(), sums.data(), kDigits);
    cpu::quantize_blocks_scalar(x.data(), cols, q_twin.data(), scale_twin.data(), sums_twin.data(), kDigits);
    for (size_t k = 0; k < q.size(); ++k) {
      ASSERT_EQ(q[k], q_twin[k]) << "digit " << k / cols << " element " << k % cols << " x " << x[k % cols];
    }
    ASSERT_EQ(std::memcmp(scale.data(), scale_twin.data(), scale.size() * sizeof(float)), 0);
    ASSERT_EQ(sums, sums_twin);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, Int24Cpu, ::testing::ValuesIn(simd::available_targets()),
                         [](const ::testing::TestParamInfo<int64_t>& info) { return simd::target_name(info.param); });

}  // namespace
}  // namespace qwen35::testing
