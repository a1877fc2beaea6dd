// The two layer forwards called directly, as a user of the library would: the
// debug hook sees the named intermediates; a weight format without fused
// kernels takes the composed path (chosen through supports()) with the same
// result, while calling its missing fused op fails loudly; and a full KV
// cache is refused before anything is written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "../model/in_memory_tensors.h"
#include "qwen35/model.h"
#include "support/test_support.h"

namespace qwen35::testing {
namespace {

using ::testing::HasSubstr;

// Forwards the required operations to another weight and advertises no fused ones.
class WithoutFusedOps final : public QuantWeights {
 public:
  explicit WithoutFusedOps(const QuantWeights& inner) : inner_(inner) {}
  uint32_t out_features() const override { return inner_.out_features(); }
  uint32_t in_features() const override { return inner_.in_features(); }
  std::string format_name() const override { return "unfused-" + inner_.format_name(); }
  size_t weight_bytes() const override { return inner_.weight_bytes(); }
  void gemv(GpuBackend& gpu, DevicePtr x, DevicePtr y, Stream s) const override { inner_.gemv(gpu, x, y, s); }
  void dequantize_row(GpuBackend& gpu, uint32_t row, DevicePtr y, Stream s) const override {
    inner_.dequantize_row(gpu, row, y, s);
  }

 private:
  const QuantWeights& inner_;
};

class ForwardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = small_config();
    gpu_ = create_backend("cpu");
    model_ = Model::load(*gpu_, config_, make_random_weights(config_, DType::kBF16, 5), "model.language_model.");
    kernels_ = Qwen35Kernels::resolve(*gpu_, KvDtype::kF32);
    stream_ = gpu_->default_stream();
    x_ = DeviceBuffer(*gpu_, config_.hidden * sizeof(float));
    const auto x = random_floats(config_.hidden, 99);
    gpu_->upload(x_.ptr(), x.data(), x.size() * sizeof(float), stream_);
  }
  std::vector<float> download(DevicePtr p, size_t n) {
    std::vector<float> out(n);
    gpu_->download(out.data(), p, n * sizeof(float), stream_);
    gpu_->synchronize(stream_);
    return out;
  }
  // Runs the linear layer 0 for three tokens from zero state; returns the outputs.
  std::vector<float> run_linear(const LinearAttentionLayer& layer, const DebugHook* hook) {
    LinearAttentionState state = LinearAttentionState::allocate(*gpu_, config_, stream_);
    LinearAttentionScratch scratch = LinearAttentionScratch::allocate(*gpu_, config_, stream_);
    DeviceBuffer out(*gpu_, config_.hidden * sizeof(float));
    std::vector<float> all;
    for (int t = 0; t < 3; ++t) {
      forward_linear_attention(*gpu_, config_, kernels_, layer, state, scratch, x_.ptr(), out.ptr(), stream_, hook);
      const auto y = download(out.ptr(), config_.hidden);
      all.insert(all.end(), y.begin(), y.end());
    }
    return all;
  }
  Qwen35ForwardConfig config_;
  std::unique_ptr<GpuBackend> gpu_;
  std::unique_ptr<Model> model_;
  Qwen35Kernels kernels_;
  Stream stream_;
  DeviceBuffer x_;
};

TEST_F(ForwardTest, DebugHookSeesNamedIntermediates) {
  std::vector<std::string> names;
  bool all_finite = true;
  const DebugHook hook = [&](std::string_view name, DevicePtr buffer, size_t count) {
    names.emplace_back(name);
    for (float v : download(buffer, count)) all_finite = all_finite && std::isfinite(v);
  };
  run_linear(std::get<LinearAttentionLayer>(model_->layers()[0].weights), &hook);
  EXPECT_THAT(names, ::testing::IsSupersetOf({"x_norm", "qkv", "z", "qkv_conv", "core", "out", "x_out"}));
  EXPECT_TRUE(all_finite);
}

TEST_F(ForwardTest, ComposedPathMatchesFusedPath) {
  const auto& fused = std::get<LinearAttentionLayer>(model_->layers()[0].weights);
  ASSERT_TRUE(fused.down_proj->supports(FusedOp::kSiluGateResidual));
  const WithoutFusedOps out_proj(*fused.out_proj), gate(*fused.gate_proj), up(*fused.up_proj), down(*fused.down_proj);
  LinearAttentionLayer composed = fused;
  composed.out_proj = &out_proj;
  composed.gate_proj = &gate;
  composed.up_proj = &up;
  composed.down_proj = &down;
  const std::vector<float> a = run_linear(fused, nullptr);
  const std::vector<float> b = run_linear(composed, nullptr);
  const Deviation d = deviation(b.data(), a.data(), a.size());
  EXPECT_LE(d.relative(), 1e-5);  // same float math, only the summation grouping differs
}

TEST_F(ForwardTest, MissingFusedOpFailsLoudly) {
  const auto& layer = std::get<LinearAttentionLayer>(model_->layers()[0].weights);
  const WithoutFusedOps down(*layer.down_proj);
  EXPECT_FALSE(down.supports(FusedOp::kSiluGate));
  try {
    down.gemv_silu_gate_resid(*gpu_, x_.ptr(), x_.ptr(), x_.ptr(), x_.ptr(), stream_);
    FAIL() << "a missing fused op succeeded";
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("gemv_silu_gate_resid"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("unfused-bf16"));
  }
}

TEST_F(ForwardTest, FullAttentionRefusesCachePosAtCapacity) {
  const auto& layer = std::get<FullAttentionLayer>(model_->layers()[3].weights);
  FullAttentionScratch scratch = FullAttentionScratch::allocate(*gpu_, config_, stream_);
  LayerKvCache kv = LayerKvCache::allocate(*gpu_, config_, 4, KvDtype::kF32);
  gpu_->fill(kv.k.ptr(), 0x11, kv.k.bytes(), stream_);
  DeviceBuffer params(*gpu_, sizeof(DecodeStepParams));
  for (uint32_t pos = 0; pos < 4; ++pos) {
    const DecodeStep step = upload_decode_step(*gpu_, params.ptr(), pos, pos, stream_);
    EXPECT_NO_THROW(forward_full_attention(*gpu_, config_, kernels_, layer, scratch, kv, step, x_.ptr(), stream_));
  }
  std::vector<uint8_t> before(kv.k.bytes()), after(kv.k.bytes());
  gpu_->download(before.data(), kv.k.ptr(), before.size(), stream_);
  const DecodeStep full = upload_decode_step(*gpu_, params.ptr(), 4, 4, stream_);
  try {
    forward_full_attention(*gpu_, config_, kernels_, layer, scratch, kv, full, x_.ptr(), stream_);
    FAIL() << "wrote past the KV cache";
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("cache_pos 4"));
  }
  gpu_->download(after.data(), kv.k.ptr(), after.size(), stream_);
  EXPECT_EQ(before, after);
}

TEST_F(ForwardTest, AttentionWorksAtAnyPositionBelowCapacity) {
  // No maximum-length scratch: a cache of 5000 tokens, attending at position 4999.
  const auto& layer = std::get<FullAttentionLayer>(model_->layers()[3].weights);
  FullAttentionScratch scratch = FullAttentionScratch::allocate(*gpu_, config_, stream_);
  LayerKvCache kv = LayerKvCache::allocate(*gpu_, config_, 5000, KvDtype::kF32);
  gpu_->fill(kv.k.ptr(), 0, kv.k.bytes(), stream_);
  gpu_->fill(kv.v.ptr(), 0, kv.v.bytes(), stream_);
  DeviceBuffer params(*gpu_, sizeof(DecodeStepParams));
  const DecodeStep step = upload_decode_step(*gpu_, params.ptr(), 4999, 4999, stream_);
  const DevicePtr out = forward_full_attention(*gpu_, config_, kernels_, layer, scratch, kv, step, x_.ptr(), stream_);
  for (float v : download(out, config_.hidden)) ASSERT_TRUE(std::isfinite(v));
}

}  // namespace
}  // namespace qwen35::testing
