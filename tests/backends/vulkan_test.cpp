// What the shared suites do not reach on the Vulkan backend: host transfers
// refused while recording, transfers of any size and alignment through the
// staging ring, the device index, and the MLX shaders' own fused multiply-add. Replay itself is checked for every
// capturing backend in capture_test.cpp and tests/model/replay_test.cpp.
// Skipped, never passed, where no Vulkan device exists.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <numeric>
#include <random>

#include "qwen35/kernels.h"
#include "qwen35/mlx_affine.h"
#include "support/test_support.h"

namespace qwen35::testing {
namespace {

class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      gpu_ = create_backend("vulkan");
    } catch (const DeviceUnavailable& e) {
      GTEST_SKIP() << e.what();
    }
  }
  Stream stream() { return gpu_->default_stream(); }
  std::unique_ptr<GpuBackend> gpu_;
};

TEST_F(VulkanTest, NamesItsDevice) {
  EXPECT_EQ(gpu_->name(), "vulkan");
  EXPECT_FALSE(gpu_->device_description().empty());
  EXPECT_TRUE(gpu_->supports_capture());
  std::cout << "[ device   ] " << gpu_->device_description() << "\n";
}

TEST_F(VulkanTest, DeviceIndexOutOfRangeIsAnErrorNotAMissingDevice) {
  try {
    create_backend("vulkan", BackendOptions{.device = 1000});
    FAIL() << "device 1000 accepted";
  } catch (const DeviceUnavailable& e) {
    FAIL() << "a bad index must not read as 'no device' (tests would skip): " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--device 1000"), std::string::npos) << e.what();
  }
}

TEST_F(VulkanTest, CaptureRefusesHostTransfers) {
  DeviceBuffer buffer(*gpu_, 64);
  float host[16] = {};
  gpu_->begin_capture(stream());
  EXPECT_THROW(gpu_->upload(buffer.ptr(), host, sizeof(host), stream()), Error);
  EXPECT_THROW(gpu_->download(host, buffer.ptr(), sizeof(host), stream()), Error);
  EXPECT_THROW(gpu_->fill(buffer.ptr(), 0, sizeof(host), stream()), Error);
  gpu_->copy(buffer.ptr(), buffer.ptr().offset(32), 32, stream());  // device-to-device copies are recorded
  gpu_->destroy_graph(gpu_->end_capture(stream()));
}

// More bytes than the staging ring holds (64 MiB) in one upload and one
// download, and fills, copies and downloads at odd offsets and lengths.
TEST_F(VulkanTest, TransfersOfAnySizeAndAlignment) {
  const size_t bytes = (size_t{72} << 20) + 3;
  std::vector<uint8_t> data(bytes);
  std::iota(data.begin(), data.end(), uint8_t{7});
  DeviceBuffer big(*gpu_, bytes);
  gpu_->upload(big.ptr(), data.data(), bytes, stream());
  std::vector<uint8_t> back(bytes, 0);
  gpu_->download(back.data(), big.ptr(), bytes, stream());
  gpu_->synchronize(stream());
  ASSERT_TRUE(back == data) << "round trip through the staging ring changed the bytes";

  DeviceBuffer small(*gpu_, 64);
  gpu_->fill(small.ptr(), 0x11, 64, stream());
  gpu_->fill(small.ptr().offset(3), 0xee, 5, stream());  // unaligned: staged
  gpu_->copy(small.ptr().offset(41), big.ptr().offset(1), 7, stream());
  uint8_t window[13] = {};
  gpu_->download(window, small.ptr().offset(1), sizeof(window), stream());
  uint8_t tail[9] = {};
  gpu_->download(tail, small.ptr().offset(40), sizeof(tail), stream());
  gpu_->synchronize(stream());
  const uint8_t expected_window[13] = {0x11, 0x11, 0xee, 0xee, 0xee, 0xee, 0xee, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11};
  for (size_t i = 0; i < sizeof(window); ++i) EXPECT_EQ(window[i], expected_window[i]) << "byte " << i + 1;
  EXPECT_EQ(tail[0], 0x11);
  for (size_t i = 0; i < 7; ++i) EXPECT_EQ(tail[i + 1], data[1 + i]) << "copied byte " << i;
  EXPECT_EQ(tail[8], 0x11);
}

// MLX row dequantization is one fused multiply-add per weight on every backend,
// but Vulkan does not promise that fma() is fused (lavapipe's is not), so the
// shader rounds scale * code + bias itself, in integers (mlx_rows.glsl,
// fma_code). Checked here against std::fma where that is hard: biases from
// 2^-120 to 2^40 times the product, either sign (so sums cancel), and enough
// weights that products landing exactly between two floats occur.
TEST_F(VulkanTest, MlxRowDequantizationIsAFusedMultiplyAdd) {
  constexpr uint32_t kGroup = 32, kGroups = 4096, kCols = kGroup * kGroups;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(0.5f, 1.0f);
  std::uniform_int_distribution<int> spread(-120, 40), sign(0, 1);
  std::vector<float> scales(kGroups), biases(kGroups);
  for (uint32_t g = 0; g < kGroups; ++g) {
    scales[g] = std::ldexp(unit(rng), -6) * (sign(rng) ? -1.0f : 1.0f);
    biases[g] = std::ldexp(unit(rng), spread(rng)) * std::fabs(scales[g]) * 64.0f * (sign(rng) ? -1.0f : 1.0f);
  }
  std::vector<uint32_t> codes(kCols / 4);
  for (uint32_t& word : codes) word = static_cast<uint32_t>(rng());
  const auto upload = [&](const auto& host) {
    DeviceBuffer buffer(*gpu_, host.size() * sizeof(host[0]));
    gpu_->upload(buffer.ptr(), host.data(), host.size() * sizeof(host[0]), stream());
    return buffer;
  };
  DeviceBuffer d_codes = upload(codes), d_scales = upload(scales), d_biases = upload(biases);
  DeviceBuffer d_row(*gpu_, kCols * sizeof(float));
  launch(*gpu_, resolve_kernel<MlxRowToF32Args>(*gpu_, "row_to_f32_mlx8_f32"),
         MlxRowToF32Args{.w = {d_codes.ptr(), d_scales.ptr(), d_biases.ptr()}, .y = d_row.ptr(), .row = 0,
                         .cols = kCols, .group_size = kGroup},
         stream());
  std::vector<float> row(kCols);
  gpu_->download(row.data(), d_row.ptr(), kCols * sizeof(float), stream());
  gpu_->synchronize(stream());
  size_t mismatches = 0;
  for (uint32_t c = 0; c < kCols; ++c) {
    const uint32_t code = (codes[c / 4] >> (8 * (c % 4))) & 0xffu;
    const float want = mlx_dequantize(scales[c / kGroup], code, biases[c / kGroup]);
    if (std::bit_cast<uint32_t>(row[c]) != std::bit_cast<uint32_t>(want) && ++mismatches <= 5) {
      ADD_FAILURE() << "column " << c << ": fma(" << scales[c / kGroup] << ", " << code << ", "
                    << biases[c / kGroup] << ") = " << want << ", shader " << row[c];
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

}  // namespace
}  // namespace qwen35::testing
