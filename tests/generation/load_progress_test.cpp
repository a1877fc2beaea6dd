// Model::load's progress callback: monotone, never past its total, and ending at exactly
// the bytes of every tensor the model uses.
#include <gtest/gtest.h>

#include "qwen35/checkpoint.h"
#include "qwen35/model.h"
#include "support/test_support.h"

namespace qwen35::testing {
namespace {

TEST(LoadProgress, CountsEveryTensorOnce) {
  Checkpoint checkpoint = open_hf_checkpoint(shared_dir() / "golden" / "tiny");
  size_t tensor_bytes = 0;
  for (const std::string& name : checkpoint.tensors->names()) tensor_bytes += checkpoint.tensors->find(name)->bytes;
  auto gpu = create_backend("cpu", BackendOptions{.threads = 2});
  std::vector<std::pair<size_t, size_t>> calls;
  auto model = Model::load(*gpu, checkpoint.config, std::move(checkpoint.tensors), checkpoint.layout,
                           [&](size_t done, size_t total) { calls.emplace_back(done, total); });
  ASSERT_GT(calls.size(), 10u);
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_LE(calls[i].first, calls[i].second) << "call " << i;
    if (i > 0) {
      EXPECT_GE(calls[i].first, calls[i - 1].first) << "call " << i;
    }
  }
  // golden/tiny holds exactly the language model's tensors.
  EXPECT_EQ(calls.front().second, tensor_bytes);
  EXPECT_EQ(calls.back(), std::make_pair(tensor_bytes, tensor_bytes));
}

TEST(LoadProgress, IsOptional) {
  Checkpoint checkpoint = open_hf_checkpoint(shared_dir() / "golden" / "tiny");
  auto gpu = create_backend("cpu", BackendOptions{.threads = 2});
  EXPECT_NO_THROW(Model::load(*gpu, checkpoint.config, std::move(checkpoint.tensors), checkpoint.layout));
}

}  // namespace
}  // namespace qwen35::testing
