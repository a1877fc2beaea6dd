// What every backend that records its launches (Vulkan command buffers, CUDA
// graphs) must do on replay: use the arguments copied at record time, read the
// per-token values from device memory, and run each replay, in order. Backends
// that launch directly, or have no device here, are skipped.
#include <gtest/gtest.h>

#include "qwen35/backend.h"
#include "qwen35/kernels.h"

namespace qwen35::testing {
namespace {

class Capture : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    try {
      gpu_ = create_backend(GetParam());
    } catch (const DeviceUnavailable& e) {
      GTEST_SKIP() << e.what();
    }
    if (!gpu_->supports_capture()) GTEST_SKIP() << GetParam() << " launches directly; nothing is replayed";
  }
  std::vector<float> download_floats(DevicePtr src, size_t count) {
    std::vector<float> out(count);
    gpu_->download(out.data(), src, count * sizeof(float), stream());
    gpu_->synchronize(stream());
    return out;
  }
  Stream stream() { return gpu_->default_stream(); }
  std::unique_ptr<GpuBackend> gpu_;
};

// kv_append reads cache_pos from device memory: one recording, replayed after
// each upload of new step values and new keys, fills one slot per replay.
TEST_P(Capture, ReplayReadsPerTokenValuesFromDeviceMemory) {
  const uint32_t kv_dim = 24, capacity = 4;
  DeviceBuffer k(*gpu_, kv_dim * 4), v(*gpu_, kv_dim * 4), step(*gpu_, sizeof(DecodeStepParams));
  DeviceBuffer k_cache(*gpu_, capacity * kv_dim * 4), v_cache(*gpu_, capacity * kv_dim * 4);
  gpu_->fill(k_cache.ptr(), 0, k_cache.bytes(), stream());
  gpu_->fill(v_cache.ptr(), 0, v_cache.bytes(), stream());
  const auto kernel = resolve_kernel<KvAppendArgs>(*gpu_, "kv_append_f32");

  gpu_->begin_capture(stream());
  KvAppendArgs args{.k = k.ptr(), .v = v.ptr(), .k_cache = k_cache.ptr(), .v_cache = v_cache.ptr(),
                    .step = step.ptr(), .kv_dim = kv_dim};
  launch(*gpu_, kernel, args, stream());
  args.kv_dim = 1;  // the recording must have copied the arguments
  const GraphHandle graph = gpu_->end_capture(stream());

  for (uint32_t slot = 0; slot < capacity; ++slot) {
    const DecodeStepParams params{.position = slot, .cache_pos = slot, .seq_len = slot + 1, .reserved = 0};
    const std::vector<float> keys(kv_dim, static_cast<float>(slot + 1)), values(kv_dim, -static_cast<float>(slot + 1));
    gpu_->upload(step.ptr(), &params, sizeof(params), stream());
    gpu_->upload(k.ptr(), keys.data(), kv_dim * 4, stream());
    gpu_->upload(v.ptr(), values.data(), kv_dim * 4, stream());
    gpu_->replay(graph, stream());
    gpu_->synchronize(stream());
  }
  const std::vector<float> keys = download_floats(k_cache.ptr(), capacity * kv_dim);
  const std::vector<float> values = download_floats(v_cache.ptr(), capacity * kv_dim);
  for (uint32_t i = 0; i < capacity * kv_dim; ++i) {
    ASSERT_EQ(keys[i], static_cast<float>(i / kv_dim + 1)) << "element " << i;
    ASSERT_EQ(values[i], -static_cast<float>(i / kv_dim + 1)) << "element " << i;
  }
  gpu_->destroy_graph(graph);
}

// The same recording replayed twice before one wait runs twice, in order.
TEST_P(Capture, GraphReplayedTwiceInOneBatchRunsTwice) {
  const uint32_t n = 100;
  DeviceBuffer x(*gpu_, n * 4);
  const std::vector<float> ones(n, 1.0f);
  gpu_->upload(x.ptr(), ones.data(), n * 4, stream());
  const auto add = resolve_kernel<AddArgs>(*gpu_, "add");
  gpu_->begin_capture(stream());
  launch(*gpu_, add, AddArgs{.a = x.ptr(), .b = x.ptr(), .y = x.ptr(), .n = n}, stream());  // x = 2x
  const GraphHandle graph = gpu_->end_capture(stream());
  gpu_->replay(graph, stream());
  gpu_->replay(graph, stream());
  gpu_->synchronize(stream());
  for (float value : download_floats(x.ptr(), n)) ASSERT_EQ(value, 4.0f);
  gpu_->destroy_graph(graph);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, Capture, ::testing::ValuesIn(backend_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace qwen35::testing
