// A whole decode on every backend that records its launches (Vulkan command
// buffers, CUDA graphs): Session records each layer once and replays it (no
// observer), or launches directly (with an observer). Both must give the same
// logits bit for bit, across a reset, and match the golden. Backends that do
// not capture, or have no device here, are skipped.
#include <gtest/gtest.h>

#include "qwen35/checkpoint.h"
#include "qwen35/model.h"
#include "support/test_support.h"

namespace qwen35::testing {
namespace {

class ReplayedDecode : public ::testing::TestWithParam<std::string> {};

TEST_P(ReplayedDecode, EqualsDirectLaunchesAndTheGolden) {
  std::unique_ptr<GpuBackend> gpu;
  try {
    gpu = create_backend(GetParam());
  } catch (const DeviceUnavailable& e) {
    GTEST_SKIP() << e.what();
  }
  if (!gpu->supports_capture()) GTEST_SKIP() << GetParam() << " launches directly; nothing is replayed";
  const std::filesystem::path dir = shared_dir() / "golden" / "tiny";
  Checkpoint checkpoint = open_hf_checkpoint(dir);
  const Qwen35ForwardConfig config = checkpoint.config;
  std::shared_ptr<const TensorSource> tensors = std::move(checkpoint.tensors);
  std::unique_ptr<Model> model = Model::load(*gpu, config, tensors, checkpoint.layout);
  const std::vector<int32_t> tokens = read_tokens(dir / "tokens.txt");
  const std::vector<float> golden = read_f32_file(dir / "logits.f32");
  const auto run = [&](Session& session) {
    std::vector<float> all;
    for (int32_t token : tokens) {
      const std::span<const float> logits = session.decode(token);
      all.insert(all.end(), logits.begin(), logits.end());
    }
    return all;
  };

  Session direct(*model, static_cast<uint32_t>(tokens.size()), KvDtype::kF32);
  direct.set_layer_observer([](uint32_t, std::span<const float>) {});
  const std::vector<float> expected = run(direct);

  Session replayed(*model, static_cast<uint32_t>(tokens.size()), KvDtype::kF32);
  const std::vector<float> first = run(replayed);
  replayed.reset();
  const std::vector<float> second = run(replayed);
  ASSERT_EQ(first.size(), golden.size());
  EXPECT_TRUE(first == expected) << "replayed logits differ from direct launches";
  EXPECT_TRUE(second == expected) << "replay after reset differs";
  const Deviation d = deviation(first.data(), golden.data(), golden.size());
  EXPECT_FALSE(d.has_nan);
  EXPECT_LE(d.relative(), 1e-4) << "golden/README.md bound for float32 KV";
}

INSTANTIATE_TEST_SUITE_P(AllBackends, ReplayedDecode, ::testing::ValuesIn(backend_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace qwen35::testing
