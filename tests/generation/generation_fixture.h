// The tiny talking checkpoint (chat_checkpoint.h), made and loaded once per test process,
// and fresh Sessions on it.
#pragma once

#include <memory>

#include <gtest/gtest.h>

#include "generation/chat_checkpoint.h"
#include "qwen35/error.h"
#include "qwen35/generation.h"
#include "support/test_support.h"

namespace qwen35::testing {

class GenerationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite();

  static const Model& model() { return *model_; }
  static const Tokenizer& tokenizer() { return *tokenizer_; }
  // f32 KV: chat-versus-one-shot comparisons need no rounding between them either way.
  static Session new_session(uint32_t capacity) { return Session(*model_, capacity, KvDtype::kF32); }

 private:
  static std::unique_ptr<TempDir> dir_;
  static std::unique_ptr<GpuBackend> gpu_;
  static std::unique_ptr<Model> model_;
  static std::unique_ptr<Tokenizer> tokenizer_;
};

}  // namespace qwen35::testing
