// open_hf_checkpoint: the two golden checkpoints (nested config + one file;
// flat config + index + shards, tied), and hand-made broken directories.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/safetensors.h"
#include "io_test_util.h"
#include "qwen35/checkpoint.h"
#include "support/test_support.h"

namespace qwen35 {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::AllOf;
using testing::error_message;
using ::testing::HasSubstr;
using testing::write_file;

fs::path golden(std::string_view name) { return testing::shared_dir() / "golden" / name; }

TEST(HfCheckpoint, GoldenTiny) {
  const Checkpoint ckpt = open_hf_checkpoint(golden("tiny"));
  EXPECT_EQ(ckpt.path, golden("tiny"));
  EXPECT_EQ(ckpt.layout.tensor_prefix, "model.language_model.");
  EXPECT_EQ(ckpt.config.hidden, 256u);
  EXPECT_EQ(ckpt.config.num_layers, 4u);
  EXPECT_EQ(ckpt.config.layer_types[3], LayerType::kFullAttention);
  EXPECT_EQ(ckpt.config.num_full_attention_layers(), 1u);
  EXPECT_EQ(ckpt.config.n_heads_v_lin, 4u);
  EXPECT_EQ(ckpt.config.n_heads_k_lin, 2u);
  EXPECT_FALSE(ckpt.config.tie_word_embeddings);
  EXPECT_EQ(ckpt.tensors->origin(), golden("tiny").string());

  const TensorView* embed = ckpt.tensors->find("model.language_model.embed_tokens.weight");
  ASSERT_NE(embed, nullptr);
  EXPECT_EQ(embed->dtype, DType::kBF16);
  EXPECT_EQ(embed->shape_string(), "[1024, 256]");
  EXPECT_EQ(embed->bytes, 1024u * 256u * 2u);
  EXPECT_EQ(embed->file, (golden("tiny") / "model.safetensors").string());
  const TensorView* a_log = ckpt.tensors->find("model.language_model.layers.0.linear_attn.A_log");
  ASSERT_NE(a_log, nullptr);
  EXPECT_EQ(a_log->dtype, DType::kF32);
  EXPECT_EQ(a_log->shape_string(), "[4]");
  EXPECT_EQ(ckpt.tensors->find("model.language_model.layers.3.self_attn.q_proj.weight")->shape_string(), "[1024, 256]");
  ASSERT_NE(ckpt.tensors->find("lm_head.weight"), nullptr);
  EXPECT_EQ(ckpt.tensors->find("embed_tokens.weight"), nullptr);  // exact names only
  // 4 layers: 3 DeltaNet (14 tensors each) + 1 attention (11), embed, norm, lm_head.
  EXPECT_EQ(ckpt.tensors->names().size(), 3u * 14u + 11u + 3u);
}

TEST(HfCheckpoint, GoldenTiedFlatSharded) {
  const Checkpoint ckpt = open_hf_checkpoint(golden("tied-flat-sharded"));
  EXPECT_EQ(ckpt.layout.tensor_prefix, "model.");
  EXPECT_TRUE(ckpt.config.tie_word_embeddings);
  EXPECT_EQ(ckpt.config.num_layers, 8u);
  EXPECT_EQ(ckpt.config.num_full_attention_layers(), 2u);
  EXPECT_EQ(ckpt.config.layer_types[7], LayerType::kFullAttention);
  EXPECT_EQ(ckpt.config.intermediate, 768u);
  EXPECT_EQ(ckpt.tensors->find("lm_head.weight"), nullptr);

  const TensorView* first = ckpt.tensors->find("model.layers.0.linear_attn.A_log");
  const TensorView* last = ckpt.tensors->find("model.layers.7.self_attn.q_proj.weight");
  ASSERT_NE(first, nullptr);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(first->dtype, DType::kF32);
  EXPECT_EQ(last->dtype, DType::kF32);
  EXPECT_EQ(last->shape_string(), "[2048, 256]");
  EXPECT_THAT(first->file, HasSubstr("model-00001-of-00002.safetensors"));
  EXPECT_THAT(last->file, HasSubstr("model-00002-of-00002.safetensors"));
  EXPECT_EQ(ckpt.tensors->find("model.embed_tokens.weight")->dtype, DType::kF32);
  EXPECT_EQ(ckpt.tensors->find("model.norm.weight")->shape_string(), "[256]");
}

// A small valid checkpoint directory that each test then breaks in one way.
class HfCheckpointDir : public ::testing::Test {
 protected:
  void SetUp() override { write_file(dir() / "config.json", testing::small_text_config().dump(2)); }

  const fs::path& dir() const { return temp_.path(); }

  void write_tensors(const fs::path& file, const std::vector<std::string>& names) {
    std::vector<TensorToWrite> tensors;
    for (const std::string& name : names) tensors.push_back({name, DType::kF32, {2}, std::as_bytes(std::span(two_))});
    write_safetensors(file, tensors);
  }

  void write_index(const json& weight_map) {
    write_file(dir() / "model.safetensors.index.json",
               json{{"metadata", json::object()}, {"weight_map", weight_map}}.dump());
  }

  std::string open_error() {
    return error_message([&] { open_hf_checkpoint(dir()); });
  }

  testing::TempDir temp_;
  std::vector<float> two_ = {1.0f, 2.0f};
};

TEST_F(HfCheckpointDir, SingleFileWithLmHeadStaysUntied) {
  write_tensors(dir() / "model.safetensors", {"model.embed_tokens.weight", "lm_head.weight"});
  const Checkpoint ckpt = open_hf_checkpoint(dir());
  EXPECT_EQ(ckpt.layout.tensor_prefix, "model.");
  EXPECT_FALSE(ckpt.config.tie_word_embeddings);
  EXPECT_EQ(ckpt.tensors->names(), (std::vector<std::string>{"lm_head.weight", "model.embed_tokens.weight"}));
}

TEST_F(HfCheckpointDir, MissingLmHeadMeansTied) {
  write_tensors(dir() / "model.safetensors", {"model.embed_tokens.weight"});
  EXPECT_TRUE(open_hf_checkpoint(dir()).config.tie_word_embeddings);
}

TEST_F(HfCheckpointDir, UnindexedFilesAreAllOpened) {
  write_tensors(dir() / "b.safetensors", {"model.language_model.norm.weight", "mtp.fc.weight"});
  write_tensors(dir() / "a.safetensors", {"model.visual.patch_embed.weight"});
  const Checkpoint ckpt = open_hf_checkpoint(dir());
  EXPECT_EQ(ckpt.layout.tensor_prefix, "model.language_model.");
  EXPECT_EQ(ckpt.tensors->names().size(), 3u);
  EXPECT_NE(ckpt.tensors->find("mtp.fc.weight"), nullptr);
}

// The Hugging Face hub cache presents snapshots as symlinks into a blob store.
TEST_F(HfCheckpointDir, SymlinkedFilesAsInTheHubCache) {
  const fs::path blobs = dir() / "blobs";
  fs::create_directory(blobs);
  write_tensors(blobs / "1234abcd", {"model.embed_tokens.weight"});
  fs::rename(dir() / "config.json", blobs / "5678ef01");
  fs::create_symlink(blobs / "1234abcd", dir() / "model.safetensors");
  fs::create_symlink(blobs / "5678ef01", dir() / "config.json");
  const Checkpoint ckpt = open_hf_checkpoint(dir());
  EXPECT_EQ(ckpt.config.hidden, 8u);
  ASSERT_NE(ckpt.tensors->find("model.embed_tokens.weight"), nullptr);
}

TEST_F(HfCheckpointDir, MissingDirectory) {
  const fs::path missing = dir() / "nope";
  EXPECT_THAT(error_message([&] { open_hf_checkpoint(missing); }),
              AllOf(HasSubstr(missing.string()), HasSubstr("does not exist")));
}

TEST_F(HfCheckpointDir, MissingConfigJson) {
  fs::remove(dir() / "config.json");
  write_tensors(dir() / "model.safetensors", {"lm_head.weight"});
  EXPECT_THAT(open_error(), AllOf(HasSubstr((dir() / "config.json").string()), HasSubstr("not found")));
}

TEST_F(HfCheckpointDir, MalformedConfigJson) {
  write_file(dir() / "config.json", "{\"hidden_size\": 8,,}");
  EXPECT_THAT(open_error(),
              AllOf(HasSubstr((dir() / "config.json").string()), HasSubstr("malformed JSON"), HasSubstr("column")));
}

TEST_F(HfCheckpointDir, InconsistentConfigNamesTheFile) {
  json config = testing::small_text_config();
  config["num_attention_heads"] = 3;
  config["num_key_value_heads"] = 2;
  write_file(dir() / "config.json", config.dump());
  EXPECT_THAT(open_error(), AllOf(HasSubstr((dir() / "config.json").string()), HasSubstr("num_attention_heads (3)")));
}

TEST_F(HfCheckpointDir, MoeConfig) {
  json config = testing::small_text_config();
  config["model_type"] = "qwen3_5_moe_text";
  write_file(dir() / "config.json", config.dump());
  EXPECT_THAT(open_error(), AllOf(HasSubstr((dir() / "config.json").string()), HasSubstr("MoE not supported yet")));
}

TEST_F(HfCheckpointDir, NoTensorFiles) {
  EXPECT_THAT(open_error(), AllOf(HasSubstr(dir().string()), HasSubstr("no *.safetensors")));
}

TEST_F(HfCheckpointDir, TruncatedTensorFile) {
  write_tensors(dir() / "model.safetensors", {"a", "b"});
  fs::resize_file(dir() / "model.safetensors", fs::file_size(dir() / "model.safetensors") - 3);
  EXPECT_THAT(open_error(), AllOf(HasSubstr((dir() / "model.safetensors").string()), HasSubstr("truncated")));
}

TEST_F(HfCheckpointDir, IndexNamesMissingShard) {
  write_tensors(dir() / "model-00001-of-00002.safetensors", {"model.embed_tokens.weight"});
  write_index({{"model.embed_tokens.weight", "model-00001-of-00002.safetensors"},
               {"model.norm.weight", "model-00002-of-00002.safetensors"}});
  EXPECT_THAT(open_error(),
              AllOf(HasSubstr("model.safetensors.index.json"), HasSubstr("'model.norm.weight'"),
                    HasSubstr((dir() / "model-00002-of-00002.safetensors").string()), HasSubstr("does not exist")));
}

TEST_F(HfCheckpointDir, IndexNamesTensorNotInItsShard) {
  write_tensors(dir() / "model-00001-of-00002.safetensors", {"model.embed_tokens.weight"});
  write_tensors(dir() / "model-00002-of-00002.safetensors", {"model.norm.weight"});
  write_index({{"model.embed_tokens.weight", "model-00001-of-00002.safetensors"},
               {"model.norm.weight", "model-00001-of-00002.safetensors"}});
  EXPECT_THAT(
      open_error(),
      AllOf(HasSubstr((dir() / "model.safetensors.index.json").string()), HasSubstr("'model.norm.weight'"),
            HasSubstr((dir() / "model-00001-of-00002.safetensors").string()), HasSubstr("does not contain it")));
}

TEST_F(HfCheckpointDir, MalformedIndexJson) {
  write_tensors(dir() / "model.safetensors", {"lm_head.weight"});
  write_file(dir() / "model.safetensors.index.json", "{\"weight_map\": {");
  EXPECT_THAT(open_error(),
              AllOf(HasSubstr((dir() / "model.safetensors.index.json").string()), HasSubstr("malformed JSON")));
}

TEST_F(HfCheckpointDir, IndexWithoutWeightMap) {
  write_file(dir() / "model.safetensors.index.json", R"({"metadata": {}})");
  EXPECT_THAT(open_error(),
              AllOf(HasSubstr((dir() / "model.safetensors.index.json").string()), HasSubstr("weight_map")));
}

TEST_F(HfCheckpointDir, TensorInTwoFiles) {
  write_tensors(dir() / "a.safetensors", {"model.norm.weight"});
  write_tensors(dir() / "b.safetensors", {"model.norm.weight"});
  EXPECT_THAT(open_error(), AllOf(HasSubstr("'model.norm.weight'"), HasSubstr((dir() / "a.safetensors").string()),
                                  HasSubstr((dir() / "b.safetensors").string())));
}

TEST_F(HfCheckpointDir, TensorInTwoIndexedShards) {
  write_tensors(dir() / "s1.safetensors", {"model.norm.weight"});
  write_tensors(dir() / "s2.safetensors", {"model.norm.weight", "lm_head.weight"});
  write_index({{"model.norm.weight", "s1.safetensors"}, {"lm_head.weight", "s2.safetensors"}});
  EXPECT_THAT(open_error(), AllOf(HasSubstr("'model.norm.weight'"), HasSubstr((dir() / "s1.safetensors").string()),
                                  HasSubstr((dir() / "s2.safetensors").string())));
}

}  // namespace
}  // namespace qwen35
