// GGUF weights against x in 8 bits (BackendOptions::int8_activations): the
// quantizer's rounding, the scalar twin against dequantize-then-float64
// within the bound the quantization of x allows, and the CPU kernels of every
// SIMD target (the VNNI one too, where the CPU has it) against the twin.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>

#include "cpu/int8_activations.h"
#include "cpu/simd.h"
#include "gguf_int8_util.h"
#include "gguf_test_util.h"
#include "qwen35/backend.h"
#include "qwen35/dense_weights.h"
#include "qwen35/error.h"
#include "qwen35/gguf_quants.h"
#include "support/band_passes.h"
#include "support/test_support.h"

namespace qwen35::testing {
namespace {

constexpr auto& kTypes = kGgufInt8Types;

TEST(Int8Activations, RoundToNearestWithinHalfAStep) {
  const std::vector<float> x = varied_floats(4096, 1);
  const GgufQuantized q(x);
  for (size_t b = 0; b < x.size() / 32; ++b) {
    float amax = 0;
    int code_sum[2] = {0, 0}, code_max = 0;
    for (size_t k = 0; k < 32; ++k) {
      amax = std::max(amax, std::fabs(x[32 * b + k]));
      const int code = q.x.q[32 * b + k];
      code_sum[k / 16] += code;
      code_max = std::max(code_max, std::abs(code));
      ASSERT_NEAR(code * q.x.scale[b], x[32 * b + k], 0.5001f * q.x.scale[b]) << "block " << b << " element " << k;
    }
    ASSERT_EQ(q.x.scale[b], amax / 127) << "block " << b;
    ASSERT_EQ(code_max, amax > 0 ? 127 : 0) << "block " << b;  // the largest element maps to +-127
    ASSERT_EQ(q.x.sums[b], q.x.scale[b] * static_cast<float>(code_sum[0] + code_sum[1]));  // x's sum as quantized
    for (int g = 0; g < 2; ++g) {
      ASSERT_EQ(q.x.code_sums[2 * b + g], static_cast<float>(code_sum[g]));
      ASSERT_EQ(q.x.group_scale[2 * b + g], q.x.scale[b]);
    }
  }
}

// A block of tiny elements (127 / max overflows a float) gets the codes of
// the same block scaled up by a power of two, and its own scale.
TEST(Int8Activations, TinyBlocksKeepTheirCodes) {
  const std::vector<float> x = random_floats(64, 7, 0.01f, 1);
  for (int exponent : {-110, -126, -140}) {
    std::vector<float> tiny(x.size());
    for (size_t k = 0; k < x.size(); ++k) tiny[k] = std::ldexp(x[k], exponent);
    const GgufQuantized q(x), q_tiny(tiny);
    for (size_t k = 0; k < x.size(); ++k) {
      // Below 2^-126 the tiny floats themselves are rounded (subnormals): a code may move by one.
      ASSERT_NEAR(q_tiny.x.q[k], q.x.q[k], exponent < -120 ? 1 : 0) << "2^" << exponent << " element " << k;
    }
    EXPECT_GT(q_tiny.x.scale[0], 0) << "2^" << exponent;
  }
}

TEST(Int8Activations, NonFiniteBlockGivesNaN) {
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    std::vector<float> x = random_floats(64, 2);
    x[40] = bad;
    const GgufQuantized q(x);
    EXPECT_TRUE(std::isfinite(q.x.scale[0]));
    EXPECT_TRUE(std::isnan(q.x.scale[1])) << bad;
    const std::vector<std::byte> w = random_blocks(DType::kQ8_0, 2, 3);
    EXPECT_TRUE(std::isnan(cpu::int8_row_dot(DType::kQ8_0, w.data(), q.x, 64))) << bad;
  }
}

TEST(Int8Activations, TwinWithinTheRoundingOfX) {
  // The bound is not loose to the point of meaning nothing: rounding errors
  // partly cancel, but they do move the result.
  EXPECT_GT(twin_error_over_rounding(1, 1.0, 1e-6), 1e-3);
}

TEST(Int8Activations, CpuKernelsMatchTheTwinOnTheChosenTarget) { check_gguf_cpu_kernels(); }

class Int8Cpu : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { simd::force_target(GetParam()); }
  void TearDown() override { simd::force_target(0); }
};

TEST_P(Int8Cpu, KernelsMatchTheTwin) { check_gguf_cpu_kernels(); }

// Q6_K's rows in each band count a host may choose, whichever this one does.
TEST_P(Int8Cpu, Q6KMatchesTheTwinInEveryBandCount) {
  for (size_t bands : testing::kHeavyInt8Bands) {
    SCOPED_TRACE(::testing::Message() << bands << " bands");
    const testing::ForcedHeavyInt8Bands forced(bands);
    check_gguf_cpu_kernels(std::array{DType::kQ6_K});
  }
}

// The quantizer of every target against its scalar twin, to the bit: random
// blocks of several magnitudes, an all-zero block (varied_floats), exact
// halves to round to even, a block of one nonzero element, subnormals, and
// blocks holding a NaN or an infinity.
TEST_P(Int8Cpu, QuantizerMatchesTheScalarTwinToTheBit) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (size_t cols : {32u, 96u, 1024u, 4096u + 32u}) {
    SCOPED_TRACE(::testing::Message() << "cols " << cols);
    std::vector<float> x = varied_floats(cols, static_cast<uint32_t>(cols));
    if (cols >= 1024) {
      // max 127, so the inverse scale is 1 and the rest are exact halves: round half to even
      for (size_t k = 0; k < 32; ++k) x[128 + k] = k == 0 ? 127.0f : static_cast<float>(k) - 15.5f;
      std::fill(x.begin() + 160, x.begin() + 192, 0.0f);
      x[170] = -3e-39f;  // a subnormal alone in its block
      for (size_t k = 0; k < 32; ++k) x[192 + k] = 1e-40f * static_cast<float>(k + 1);
      x[256 + 7] = std::numeric_limits<float>::quiet_NaN();
      x[288 + 31] = kInf;
      x[320] = -kInf;
      x[352 + 5] = 3e38f;
    }
    if (cols > 2048) x[2048 + 3] = std::numeric_limits<float>::quiet_NaN();  // the first block of a later chunk
    // Outputs that start as garbage, as a reused scratch does: every code and sum must be written.
    std::vector<int8_t> q(cols, 0x55), q_twin(cols, 0x33);
    std::vector<float> scale(cols / 32, 5.0f), scale_twin(cols / 32, 3.0f);
    std::vector<float> sums(cols / 16, 5.0f), sums_twin(cols / 16, 3.0f);
    cpu::quantize_blocks(x.data(), cols, q.data(), scale.data(), sums.data());
    cpu::quantize_blocks_scalar(x.data(), cols, q_twin.data(), scale_twin.data(), sums_twin.data());
    for (size_t k = 0; k < cols; ++k) ASSERT_EQ(q[k], q_twin[k]) << "element " << k << " x " << x[k];
    for (size_t b = 0; b < cols / 32; ++b) {
      ASSERT_EQ(std::memcmp(&scale[b], &scale_twin[b], sizeof(float)), 0) << "block " << b << ": " << scale[b];
    }
    for (size_t g = 0; g < cols / 16; ++g) ASSERT_EQ(sums[g], sums_twin[g]) << "group " << g;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, Int8Cpu, ::testing::ValuesIn(simd::available_targets()),
                         [](const ::testing::TestParamInfo<int64_t>& info) { return simd::target_name(info.param); });

TEST(Int8Activations, CpuGemvPropagatesNaN) {
  check_gemv_propagates_nan(kTypes, {.threads = 2, .int8_activations = true});
}

// The regrouped layouts hold each row as it came: every row read back (the
// embedding lookup, row_to_f32) dequantizes to the bit as before, and
// without int8 activations, or with regroup_rows off, the rows stay as they are.
template <typename Block, typename Grouped>
void check_regrouped_rows(DType type, DType layout) {
  SCOPED_TRACE(dtype_name(type));
  const uint32_t rows = 48, blocks = 3, cols = blocks * static_cast<uint32_t>(dtype_block_size(type));
  const std::vector<std::byte> w = random_blocks(type, rows * blocks, 8);
  std::vector<Grouped> grouped(rows / 16 * blocks);
  ASSERT_EQ(grouped.size() * sizeof(Grouped), w.size());
  gguf_regroup_rows(type, w.data(), rows, blocks, grouped.data());
  std::unique_ptr<GpuBackend> gpu = create_backend("cpu", BackendOptions{.threads = 2, .int8_activations = true});
  const auto m = make_dense_weights(*gpu, type, rows, cols, w.data(), gpu->default_stream());
  ASSERT_EQ(m->dtype(), layout);
  Device d{*gpu, {}};
  const DevicePtr y = d.put(std::vector<float>(cols, NAN));
  std::vector<float> want(cols), got(cols);
  for (uint32_t r = 0; r < rows; ++r) {
    SCOPED_TRACE(::testing::Message() << "row " << r);
    const auto* row = reinterpret_cast<const Block*>(w.data()) + r * blocks;
    for (uint32_t i = 0; i < blocks; ++i) {
      const Block b = x16_row_block<Block>(grouped[r / 16 * blocks + i], r % 16);
      ASSERT_EQ(std::memcmp(&b, &row[i], sizeof(b)), 0) << "block " << i;
    }
    gguf_dequantize_row(type, row, want.data(), cols);
    gguf_dequantize_regrouped_row(layout, grouped.data(), blocks, r, got.data());
    ASSERT_EQ(std::memcmp(got.data(), want.data(), cols * sizeof(float)), 0);
    m->dequantize_row(*gpu, r, y, gpu->default_stream());
    const std::vector<float> through_backend = d.get(y, cols);
    ASSERT_EQ(std::memcmp(through_backend.data(), want.data(), cols * sizeof(float)), 0);
  }
  const BackendOptions float_x{.threads = 2}, unregrouped{.threads = 2, .int8_activations = true, .regroup_rows = false};
  for (const BackendOptions& options : {float_x, unregrouped}) {
    std::unique_ptr<GpuBackend> plain = create_backend("cpu", options);
    EXPECT_EQ(make_dense_weights(*plain, type, rows, cols, w.data(), plain->default_stream())->dtype(), type);
  }
  // Rows not a multiple of 16 stay as they are too.
  EXPECT_EQ(make_dense_weights(*gpu, type, 40, cols, w.data(), gpu->default_stream())->dtype(), type);
  // A layout of rows in groups is not one a single row can be quantized into.
  std::vector<float> x = random_floats(cols, 9);
  EXPECT_THROW(gguf_quantize_row(layout, x.data(), grouped.data(), cols), Error);
}

TEST(RegroupedRows, ReadBackAsTheirBlocks) {
  check_regrouped_rows<GgufBlockQ4_0, GgufBlockQ4_0x16>(DType::kQ4_0, DType::kQ4_0x16);
  check_regrouped_rows<GgufBlockQ8_0, GgufBlockQ8_0x16>(DType::kQ8_0, DType::kQ8_0x16);
  check_regrouped_rows<GgufBlockQ4K, GgufBlockQ4Kx16>(DType::kQ4_K, DType::kQ4_Kx16);
  check_regrouped_rows<GgufBlockQ5K, GgufBlockQ5Kx16>(DType::kQ5_K, DType::kQ5_Kx16);
  check_regrouped_rows<GgufBlockQ6K, GgufBlockQ6Kx16>(DType::kQ6_K, DType::kQ6_Kx16);
  for (DType other : {DType::kBF16, DType::kF32}) {
    EXPECT_FALSE(gguf_regrouped_layout(other).has_value()) << dtype_name(other);
  }
}

}  // namespace
}  // namespace qwen35::testing
