// Makes and loads the tiny talking checkpoint once per test suite.
#include "generation/generation_fixture.h"

#include "qwen35/checkpoint.h"

namespace qwen35::testing {

std::unique_ptr<TempDir> GenerationTest::dir_;
std::unique_ptr<GpuBackend> GenerationTest::gpu_;
std::unique_ptr<Model> GenerationTest::model_;
std::unique_ptr<Tokenizer> GenerationTest::tokenizer_;

void GenerationTest::SetUpTestSuite() {
  if (model_) return;
  dir_ = std::make_unique<TempDir>();
  make_chat_checkpoint(shared_dir() / "golden" / "tiny", dir_->path());
  gpu_ = create_backend("cpu", BackendOptions{.threads = 2});
  Checkpoint checkpoint = open_hf_checkpoint(dir_->path());
  model_ = Model::load(*gpu_, checkpoint.config, std::move(checkpoint.tensors), checkpoint.layout);
  tokenizer_ = std::make_unique<Tokenizer>(dir_->path() / "tokenizer.json");
}

}  // namespace qwen35::testing
