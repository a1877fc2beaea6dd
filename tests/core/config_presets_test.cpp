// The built-in model shapes behind `--preset` (spec 2.3's size table).
#include <gtest/gtest.h>

#include "qwen35/config.h"

namespace qwen35 {
namespace {

TEST(ConfigPresets, NineBillionMatchesTheSpecTable) {
  const Qwen35ForwardConfig c = Qwen35ForwardConfig::qwen35_9b();
  EXPECT_NO_THROW(c.validate());
  EXPECT_EQ(c.summary(),
            "hidden 4096 x 32 layers (8 full attention, 24 Gated DeltaNet), intermediate 12288, vocab 248320, "
            "attention heads 16/4 of 256, DeltaNet heads 16/32 of 128/128");
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_EQ(c.layer_types[3], LayerType::kFullAttention);
  EXPECT_EQ(c.layer_types[4], LayerType::kLinearAttention);
}

TEST(ConfigPresets, LookUpByName) {
  EXPECT_EQ(Qwen35ForwardConfig::preset("0.8b")->hidden, 1024u);
  EXPECT_EQ(Qwen35ForwardConfig::preset("9b")->hidden, 4096u);
  EXPECT_FALSE(Qwen35ForwardConfig::preset("7b").has_value());
  EXPECT_FALSE(Qwen35ForwardConfig::preset("").has_value());
}

}  // namespace
}  // namespace qwen35
