#include "golden_decode.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

#include "qwen35/model.h"
#include "support/test_support.h"

namespace qwen35::testing {

Decoded decode_against_golden(const std::string& folder, Checkpoint checkpoint, const std::string& backend,
                              BackendOptions options) {
  const std::filesystem::path golden = shared_dir() / "golden" / folder;
  const Qwen35ForwardConfig config = checkpoint.config;
  options.threads = 2;
  std::unique_ptr<GpuBackend> gpu = create_backend(backend, options);
  std::shared_ptr<const TensorSource> tensors = std::move(checkpoint.tensors);
  std::unique_ptr<Model> model = Model::load(*gpu, config, tensors, checkpoint.layout);
  const std::vector<int32_t> tokens = read_tokens(golden / "tokens.txt");
  const std::vector<float> golden_logits = read_f32_file(golden / "logits.f32");
  Session session(*model, static_cast<uint32_t>(tokens.size()), KvDtype::kF32);
  Decoded out{};
  for (int32_t token : tokens) {
    const std::span<const float> l = session.decode(token);
    out.logits.insert(out.logits.end(), l.begin(), l.end());
  }
  EXPECT_EQ(out.logits.size(), golden_logits.size());
  const Deviation d = deviation(out.logits.data(), golden_logits.data(), out.logits.size());
  EXPECT_FALSE(d.has_nan);
  out.relative_error = d.relative();
  out.tokens = tokens.size();
  const size_t vocab = config.vocab;
  for (size_t t = 0; t < tokens.size(); ++t) {
    const float* g = golden_logits.data() + t * vocab;
    const float* a = out.logits.data() + t * vocab;
    out.agree += std::max_element(a, a + vocab) - a == std::max_element(g, g + vocab) - g;
  }
  return out;
}

void expect_float32_grade(const Decoded& float_x, const Decoded& other, const std::string& what) {
  const Deviation d = deviation(other.logits.data(), float_x.logits.data(), float_x.logits.size());
  std::cout << what << ": max |logit - float activations'| / max = " << d.relative() << "\n";
  EXPECT_FALSE(d.has_nan);
  EXPECT_GT(d.relative(), 0.0);
  EXPECT_LE(d.relative(), 3e-5);
  EXPECT_EQ(other.agree, float_x.agree);
}

}  // namespace qwen35::testing
