// Model::load refuses bad weights with a message naming the tensor, its file,
// and what was expected: missing tensors, wrong shapes, wrong dtypes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "in_memory_tensors.h"
#include "qwen35/model.h"

namespace qwen35::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const std::string kPrefix = "model.language_model.";

class ModelErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = small_config();
    tensors_ = std::make_shared<EditableTensors>(make_random_weights(config_, DType::kBF16, 7));
    gpu_ = create_backend("cpu");
  }
  std::string load_error() {
    try {
      Model::load(*gpu_, config_, tensors_, kPrefix);
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "Model::load accepted bad weights";
    return "";
  }
  Qwen35ForwardConfig config_;
  std::shared_ptr<EditableTensors> tensors_;
  std::unique_ptr<GpuBackend> gpu_;
};

TEST_F(ModelErrors, LoadsWhenNothingIsWrong) { EXPECT_NO_THROW(Model::load(*gpu_, config_, tensors_, kPrefix)); }

TEST_F(ModelErrors, MissingTensorIsNamed) {
  const std::string name = kPrefix + "layers.2.linear_attn.in_proj_z.weight";
  tensors_->erase(name);
  EXPECT_THAT(load_error(), AllOf(HasSubstr("missing tensor"), HasSubstr(name), HasSubstr("[64, 64]")));
}

TEST_F(ModelErrors, WrongShapeIsNamedWithBothShapes) {
  const std::string name = kPrefix + "layers.3.self_attn.q_proj.weight";
  tensors_->at(name).shape = {64, 128};
  EXPECT_THAT(load_error(), AllOf(HasSubstr(name), HasSubstr("[64, 128]"), HasSubstr("[128, 64]")));
}

TEST_F(ModelErrors, WrongDtypeIsNamed) {
  const std::string name = kPrefix + "layers.0.mlp.down_proj.weight";
  tensors_->at(name).dtype = DType::kI16;
  EXPECT_THAT(load_error(), AllOf(HasSubstr(name), HasSubstr("I16")));
}

TEST_F(ModelErrors, WrongNormShapeIsNamed) {
  const std::string name = kPrefix + "layers.1.linear_attn.norm.weight";
  tensors_->at(name).shape = {15};
  EXPECT_THAT(load_error(), AllOf(HasSubstr(name), HasSubstr("[15]"), HasSubstr("[16]")));
}

TEST_F(ModelErrors, UntiedModelNeedsLmHead) {
  config_.tie_word_embeddings = false;
  EXPECT_THAT(load_error(), AllOf(HasSubstr("missing tensor"), HasSubstr("lm_head.weight")));
}

TEST_F(ModelErrors, InconsistentConfigIsRejected) {
  config_.n_heads_kv = 3;  // does not divide 2 query heads
  EXPECT_THAT(load_error(), HasSubstr("num_key_value_heads"));
}

TEST(Kernels, MissingKernelIsNamedAtResolve) {
  auto gpu = create_backend("cpu");
  try {
    resolve_kernel<RmsNormArgs>(*gpu, "no_such_kernel");
    FAIL() << "resolved a kernel that does not exist";
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()), AllOf(HasSubstr("no_such_kernel"), HasSubstr("cpu"), HasSubstr("RmsNormArgs")));
  }
}

TEST(Kernels, WrongArgumentTypeIsRejectedAtResolve) {
  auto gpu = create_backend("cpu");
  EXPECT_THROW(resolve_kernel<AddArgs>(*gpu, "rms_norm"), Error);
}

TEST(Backends, UnknownBackendIsNamed) {
  try {
    create_backend("quantum");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()), AllOf(HasSubstr("quantum"), HasSubstr("cpu")));
  }
}

}  // namespace
}  // namespace qwen35::testing
