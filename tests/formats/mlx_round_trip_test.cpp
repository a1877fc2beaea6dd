// The quantizer round trip: each golden checkpoint written as mlx8 and mlx4
// (into a temporary directory), opened back (the MLX layout detected from the
// files), decoded on the CPU backend with a float32 KV cache, and compared
// with the golden float64 logits. The bounds are measured values with margin
// (docs/accuracy.md has the numbers and how they were measured).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "formats/mlx_quantizer.h"
#include "qwen35/checkpoint.h"
#include "qwen35/model.h"
#include "support/test_support.h"

namespace qwen35::testing {
namespace {

struct RoundTripCase {
  std::string folder;
  uint32_t bits;
  uint32_t group_size;
  double max_relative_error;  // max |logit - golden| / max |golden|
  double min_top1_agreement;  // fraction of positions whose argmax matches the golden one
};

std::string case_name(const ::testing::TestParamInfo<RoundTripCase>& info) {
  std::string name = info.param.folder + "_mlx" + std::to_string(info.param.bits) + "_g" +
                     std::to_string(info.param.group_size);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

class MlxRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(MlxRoundTrip, LogitsStayNearTheGolden) {
  const RoundTripCase& param = GetParam();
  const std::filesystem::path golden = shared_dir() / "golden" / param.folder;
  TempDir out;
  const std::filesystem::path dir = out.path() / "mlx";
  write_mlx_checkpoint(open_hf_checkpoint(golden), dir, {param.bits, param.group_size});

  Checkpoint checkpoint = open_hf_checkpoint(dir);
  EXPECT_EQ(checkpoint.layout.tensor_prefix, "language_model.model.");
  EXPECT_TRUE(checkpoint.layout.norms_include_one);
  EXPECT_EQ(checkpoint.layout.conv, ConvLayout::kChannelKernelOne);
  ASSERT_TRUE(checkpoint.layout.quantization.defaults.has_value());
  EXPECT_EQ(checkpoint.layout.quantization.defaults->bits, param.bits);
  const TensorView* embed = checkpoint.tensors->find("language_model.model.embed_tokens.weight");
  ASSERT_NE(embed, nullptr);
  EXPECT_EQ(embed->dtype, DType::kU32);

  const Qwen35ForwardConfig config = checkpoint.config;
  std::unique_ptr<GpuBackend> gpu = create_backend("cpu");
  std::shared_ptr<const TensorSource> tensors = std::move(checkpoint.tensors);
  std::unique_ptr<Model> model = Model::load(*gpu, config, tensors, checkpoint.layout);
  EXPECT_EQ(model->weight_format().substr(0, 4), "mlx" + std::to_string(param.bits));

  const std::vector<int32_t> tokens = read_tokens(golden / "tokens.txt");
  const std::vector<float> golden_logits = read_f32_file(golden / "logits.f32");
  const size_t vocab = config.vocab;
  Session session(*model, static_cast<uint32_t>(tokens.size()), KvDtype::kF32);
  std::vector<float> logits;
  for (int32_t token : tokens) {
    const std::span<const float> l = session.decode(token);
    logits.insert(logits.end(), l.begin(), l.end());
  }
  ASSERT_EQ(logits.size(), golden_logits.size());
  const Deviation d = deviation(logits.data(), golden_logits.data(), logits.size());
  size_t agree = 0;
  for (size_t t = 0; t < tokens.size(); ++t) {
    const float* g = golden_logits.data() + t * vocab;
    const float* a = logits.data() + t * vocab;
    agree += std::max_element(a, a + vocab) - a == std::max_element(g, g + vocab) - g;
  }
  const double agreement = static_cast<double>(agree) / tokens.size();
  std::cout << "[ mlx      ] " << param.folder << " mlx" << param.bits << " g" << param.group_size
            << ": max |logit - golden| / max |golden| = " << d.relative() << ", top-1 agreement " << agree << "/"
            << tokens.size() << "\n";
  EXPECT_FALSE(d.has_nan);
  EXPECT_LE(d.relative(), param.max_relative_error);
  EXPECT_GE(agreement, param.min_top1_agreement);
}

// Bounds: the measured values in docs/accuracy.md times about 2 (relative
// error) and a few positions below the measured agreement. Random-weight
// goldens amplify weight noise strongly: 8-bit stays close (27-28 of 32 and
// 45 of 48 argmaxes agree), 4-bit does not (0.67-0.89 relative error, 3-9 of
// 48 argmaxes), so the 4-bit bounds check that the path works and does not regress,
// far above chance (1/1024), not that 4 bits is accurate on these models.
std::vector<RoundTripCase> cases() {
  return {
      {"tiny", 8, 64, 0.15, 0.75},                // measured 0.072, 28/32
      {"tiny", 8, 128, 0.18, 0.75},               // measured 0.088, 27/32
      {"tiny", 4, 64, 1.4, 0.09},                 // measured 0.67, 6/32
      {"tied-flat-sharded", 8, 64, 0.28, 0.85},   // measured 0.136, 45/48
      {"tied-flat-sharded", 4, 64, 1.8, 0.04},    // measured 0.89, 3/48
      {"tied-flat-sharded", 4, 32, 1.8, 0.12},    // measured 0.87, 9/48
  };
}

INSTANTIATE_TEST_SUITE_P(SharedGoldens, MlxRoundTrip, ::testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace qwen35::testing
