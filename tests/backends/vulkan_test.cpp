// What the shared suites do not reach on the Vulkan backend: host transfers
// refused while recording, transfers of any size and alignment through the
// staging ring, and the device index. Replay itself is checked for every
// capturing backend in capture_test.cpp and tests/model/replay_test.cpp.
// Skipped, never passed, where no Vulkan device exists.
#include <gtest/gtest.h>

#include <numeric>

#include "qwen35/kernels.h"
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

}  // namespace
}  // namespace qwen35::testing
