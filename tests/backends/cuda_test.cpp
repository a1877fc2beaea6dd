// What the shared suites do not reach on the CUDA backend: transfers and
// allocation refused while capturing, the split attention at lengths beyond one
// slice per block, the gemv paths chosen by pointer alignment, and the device
// index. Replay itself is checked for every capturing backend in
// capture_test.cpp and tests/model/replay_test.cpp. Skipped, never passed,
// where no CUDA device exists.
#include <gtest/gtest.h>

#include <cstring>

#include "qwen35/dense_weights.h"
#include "qwen35/device_bandwidth.h"
#include "qwen35/kernels.h"
#include "support/test_support.h"

namespace qwen35::testing {
namespace {

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      gpu_ = create_backend("cuda");
    } catch (const DeviceUnavailable& e) {
      GTEST_SKIP() << e.what();
    }
  }
  std::vector<float> download_floats(GpuBackend& gpu, DevicePtr src, size_t count) {
    std::vector<float> out(count);
    gpu.download(out.data(), src, count * sizeof(float), gpu.default_stream());
    gpu.synchronize(gpu.default_stream());
    return out;
  }
  DeviceBuffer upload_floats(GpuBackend& gpu, const std::vector<float>& values) {
    DeviceBuffer buffer(gpu, values.size() * sizeof(float));
    gpu.upload(buffer.ptr(), values.data(), buffer.bytes(), gpu.default_stream());
    gpu.synchronize(gpu.default_stream());
    return buffer;
  }
  Stream stream() { return gpu_->default_stream(); }
  std::unique_ptr<GpuBackend> gpu_;
};

TEST_F(CudaTest, NamesItsDevice) {
  EXPECT_EQ(gpu_->name(), "cuda");
  EXPECT_FALSE(gpu_->device_description().empty());
  EXPECT_TRUE(gpu_->supports_capture());
  EXPECT_FALSE(gpu_->map_host(this, 16).has_value()) << "weights are uploaded, never mapped";
  std::cout << "[ device   ] " << gpu_->device_description() << "\n";
}

// The bench's roofline: a plausible bandwidth (above 1 GB/s, below 100 TB/s),
// and the probe's buffer left as it was filled (the kernel only reads).
TEST_F(CudaTest, ReadProbeMeasuresWithoutWriting) {
  const std::optional<DeviceReadProbe> probe = DeviceReadProbe::create(*gpu_, size_t{256} << 20);
  ASSERT_TRUE(probe.has_value()) << "the CUDA backend has a memory_read_probe kernel";
  const double gbps = probe->measure(3);
  EXPECT_GT(gbps, 1.0);
  EXPECT_LT(gbps, 1e5);
}

// Page-locked host memory: writable, and a download into it arrives whole.
TEST_F(CudaTest, DownloadsIntoPageLockedHostMemory) {
  std::vector<float> values(1 << 16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * static_cast<float>(i) - 7.0f;
  const DeviceBuffer device = upload_floats(*gpu_, values);
  auto* host = static_cast<float*>(gpu_->allocate_host(values.size() * sizeof(float)));
  std::fill(host, host + values.size(), -1.0f);
  gpu_->download(host, device.ptr(), values.size() * sizeof(float), stream());
  gpu_->synchronize(stream());
  EXPECT_EQ(std::memcmp(host, values.data(), values.size() * sizeof(float)), 0);
  gpu_->release_host(host);
}

TEST_F(CudaTest, DeviceIndexOutOfRangeIsAnErrorNotAMissingDevice) {
  try {
    create_backend("cuda", BackendOptions{.device = 1000});
    FAIL() << "device 1000 accepted";
  } catch (const DeviceUnavailable& e) {
    FAIL() << "a bad index must not read as 'no device' (tests would skip): " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--device 1000"), std::string::npos) << e.what();
  }
}

TEST_F(CudaTest, CaptureRefusesHostTransfersAndAllocation) {
  DeviceBuffer buffer(*gpu_, 64);
  float host[16] = {};
  gpu_->begin_capture(stream());
  EXPECT_THROW(gpu_->upload(buffer.ptr(), host, sizeof(host), stream()), Error);
  EXPECT_THROW(gpu_->download(host, buffer.ptr(), sizeof(host), stream()), Error);
  EXPECT_THROW(gpu_->allocate(64), Error);
  EXPECT_THROW(gpu_->synchronize(stream()), Error);
  gpu_->copy(buffer.ptr(), buffer.ptr().offset(32), 32, stream());  // device-to-device copies are recorded
  gpu_->fill(buffer.ptr(), 0, 16, stream());                         // and so are fills
  gpu_->destroy_graph(gpu_->end_capture(stream()));
  gpu_->synchronize(stream());
}

// One captured attention launch replayed at growing lengths, up to more
// positions than the blocks' slices hold at once, against the reference.
TEST_F(CudaTest, CapturedAttentionFollowsTheDeviceSequenceLength) {
  std::unique_ptr<GpuBackend> reference = create_backend("reference");
  for (const std::string dtype : {"f32", "bf16"}) {
    const uint32_t n_kv = 2, n_q = 8, head_dim = 256, capacity = 3000;
    const size_t cache_count = size_t{capacity} * n_kv * head_dim;
    const std::vector<float> q = random_floats(size_t{n_q} * head_dim, 11, -2, 2);
    const std::vector<float> k = random_floats(cache_count, 12, -2, 2), v = random_floats(cache_count, 13);
    std::vector<uint8_t> k_bytes, v_bytes;
    const auto to_cache = [&](const std::vector<float>& values, std::vector<uint8_t>& bytes) {
      if (dtype == "f32") {
        bytes.resize(values.size() * 4);
        std::memcpy(bytes.data(), values.data(), bytes.size());
      } else {
        bytes.resize(values.size() * 2);
        for (size_t i = 0; i < values.size(); ++i) {
          const uint16_t b = f32_to_bf16(values[i]);
          std::memcpy(bytes.data() + 2 * i, &b, 2);
        }
      }
    };
    to_cache(k, k_bytes);
    to_cache(v, v_bytes);
    struct Arrays {
      DeviceBuffer q, k_cache, v_cache, step, out;
    };
    const auto make = [&](GpuBackend& gpu) {
      Arrays a{DeviceBuffer(gpu, q.size() * 4), DeviceBuffer(gpu, k_bytes.size()), DeviceBuffer(gpu, v_bytes.size()),
               DeviceBuffer(gpu, sizeof(DecodeStepParams)), DeviceBuffer(gpu, q.size() * 4)};
      gpu.upload(a.q.ptr(), q.data(), a.q.bytes(), gpu.default_stream());
      gpu.upload(a.k_cache.ptr(), k_bytes.data(), k_bytes.size(), gpu.default_stream());
      gpu.upload(a.v_cache.ptr(), v_bytes.data(), v_bytes.size(), gpu.default_stream());
      gpu.synchronize(gpu.default_stream());
      return a;
    };
    const auto args = [&](const Arrays& a) {
      return AttentionDecodeArgs{.q = a.q.ptr(), .k_cache = a.k_cache.ptr(), .v_cache = a.v_cache.ptr(),
                                 .step = a.step.ptr(), .out = a.out.ptr(), .n_heads_q = n_q, .n_heads_kv = n_kv,
                                 .head_dim = head_dim, .scale = 0.0625f};
    };
    Arrays actual = make(*gpu_), expected = make(*reference);
    const std::string name = "attention_decode_" + dtype;
    gpu_->begin_capture(stream());
    launch(*gpu_, resolve_kernel<AttentionDecodeArgs>(*gpu_, name), args(actual), stream());
    const GraphHandle graph = gpu_->end_capture(stream());
    const auto ref_kernel = resolve_kernel<AttentionDecodeArgs>(*reference, name);
    for (uint32_t seq_len : {1u, 2u, 31u, 129u, 1000u, 2999u}) {
      SCOPED_TRACE(::testing::Message() << dtype << " seq_len=" << seq_len);
      const DecodeStepParams step{.position = seq_len - 1, .cache_pos = seq_len - 1, .seq_len = seq_len, .reserved = 0};
      gpu_->upload(actual.step.ptr(), &step, sizeof(step), stream());
      gpu_->replay(graph, stream());
      reference->upload(expected.step.ptr(), &step, sizeof(step), reference->default_stream());
      launch(*reference, ref_kernel, args(expected), reference->default_stream());
      const std::vector<float> got = download_floats(*gpu_, actual.out.ptr(), q.size());
      const std::vector<float> want = download_floats(*reference, expected.out.ptr(), q.size());
      const Deviation d = deviation(got.data(), want.data(), got.size());
      EXPECT_FALSE(d.has_nan);
      // Float32 dot products of 256 terms and an online softmax over up to 3000
      // positions against double: a few float ulps of the output scale.
      EXPECT_LE(d.max_abs_error, 5e-5 * std::max(1.0, d.max_abs_reference));
    }
    gpu_->destroy_graph(graph);
  }
}

// gemv on the 16-byte path (aligned) and the element path (x one float off
// alignment, odd rows), on a matrix larger than the conformance suite's.
TEST_F(CudaTest, GemvPathsChosenByAlignmentAgree) {
  std::unique_ptr<GpuBackend> reference = create_backend("reference");
  const uint32_t rows = 4099, cols = 2048;
  const std::vector<float> w = random_floats(size_t{rows} * cols, 21);
  std::vector<uint16_t> w_bf16(w.size());
  for (size_t i = 0; i < w.size(); ++i) w_bf16[i] = f32_to_bf16(w[i]);
  const std::vector<float> x = random_floats(cols + 1, 22);
  for (uint32_t x_offset : {0u, 1u}) {
    SCOPED_TRACE(::testing::Message() << "x offset " << x_offset << " floats");
    std::vector<float> y[2];
    GpuBackend* backends[2] = {gpu_.get(), reference.get()};
    for (int b = 0; b < 2; ++b) {
      GpuBackend& gpu = *backends[b];
      DeviceBuffer wd(gpu, w_bf16.size() * 2), xd = upload_floats(gpu, x), yd(gpu, rows * 4);
      gpu.upload(wd.ptr(), w_bf16.data(), wd.bytes(), gpu.default_stream());
      launch(gpu, resolve_kernel<GemvArgs>(gpu, "gemv_bf16"),
             GemvArgs{.w = wd.ptr(), .x = xd.ptr().at<float>(x_offset), .y = yd.ptr(), .rows = rows, .cols = cols},
             gpu.default_stream());
      y[b] = download_floats(gpu, yd.ptr(), rows);
    }
    const Deviation d = deviation(y[0].data(), y[1].data(), rows);
    EXPECT_FALSE(d.has_nan);
    EXPECT_LE(d.max_abs_error, 2e-5 * std::max(1.0, d.max_abs_reference));
  }
}

}  // namespace
}  // namespace qwen35::testing
