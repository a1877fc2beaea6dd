// parse_hf_config: nested and flat configs, the documented defaults, and one
// test per kind of bad config, each checking the message names file and field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "io_test_util.h"
#include "qwen35/checkpoint.h"
#include "support/test_support.h"

namespace qwen35 {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using testing::error_message;
using ::testing::HasSubstr;
using testing::small_text_config;

constexpr std::string_view kWhere = "/models/small/config.json";

Qwen35ForwardConfig parse(const json& config) { return parse_hf_config(config.dump(), kWhere); }

std::string parse_error(const json& config) {
  return error_message([&] { parse(config); });
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(HfConfig, GoldenTinyNestedConfig) {
  const auto path = testing::shared_dir() / "golden" / "tiny" / "config.json";
  const Qwen35ForwardConfig c = parse_hf_config(read_text(path), path.string());
  EXPECT_EQ(c.hidden, 256u);
  EXPECT_EQ(c.intermediate, 512u);
  EXPECT_EQ(c.num_layers, 4u);
  EXPECT_EQ(c.vocab, 1024u);
  EXPECT_FLOAT_EQ(c.rms_eps, 1e-6f);
  EXPECT_EQ(c.n_heads_q, 2u);
  EXPECT_EQ(c.n_heads_kv, 1u);
  EXPECT_EQ(c.head_dim, 256u);
  EXPECT_EQ(c.rotary_dim, 64u);
  EXPECT_DOUBLE_EQ(c.rope_theta, 1e7);
  EXPECT_EQ(c.n_heads_k_lin, 2u);
  EXPECT_EQ(c.n_heads_v_lin, 4u);
  EXPECT_EQ(c.head_dim_k_lin, 128u);
  EXPECT_EQ(c.head_dim_v_lin, 128u);
  EXPECT_EQ(c.conv_kernel, 4u);
  EXPECT_EQ(c.value_head_map, ValueHeadMap::kGrouped);
  EXPECT_EQ(c.layer_types, (std::vector<LayerType>{LayerType::kLinearAttention, LayerType::kLinearAttention,
                                                   LayerType::kLinearAttention, LayerType::kFullAttention}));
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_EQ(c.max_position_embeddings, 262144u);
}

TEST(HfConfig, FlatConfig) {
  const Qwen35ForwardConfig c = parse(small_text_config());
  EXPECT_EQ(c.hidden, 8u);
  EXPECT_EQ(c.head_dim, 8u);
  EXPECT_EQ(c.rotary_dim, 2u);
  EXPECT_EQ(c.num_full_attention_layers(), 1u);
}

TEST(HfConfig, LayerTypesDerivedFromInterval) {
  json config = small_text_config();
  config.erase("layer_types");
  config["num_hidden_layers"] = 8;
  Qwen35ForwardConfig c = parse(config);  // default interval 4: layers 3 and 7
  ASSERT_EQ(c.layer_types.size(), 8u);
  for (uint32_t i = 0; i < 8; ++i) {
    EXPECT_EQ(c.layer_types[i], i == 3 || i == 7 ? LayerType::kFullAttention : LayerType::kLinearAttention) << i;
  }
  config["full_attention_interval"] = 2;
  c = parse(config);
  EXPECT_EQ(c.num_full_attention_layers(), 4u);
  EXPECT_EQ(c.layer_types[1], LayerType::kFullAttention);
}

TEST(HfConfig, Defaults) {
  json config = small_text_config();
  for (const char* field : {"head_dim", "rope_parameters", "rms_norm_eps", "linear_key_head_dim",
                            "linear_value_head_dim", "linear_conv_kernel_dim", "tie_word_embeddings"}) {
    config.erase(field);
  }
  config["hidden_size"] = 16;
  const Qwen35ForwardConfig c = parse(config);
  EXPECT_EQ(c.head_dim, 8u);    // hidden / heads
  EXPECT_EQ(c.rotary_dim, 2u);  // partial_rotary_factor 0.25
  EXPECT_DOUBLE_EQ(c.rope_theta, 1e7);
  EXPECT_FLOAT_EQ(c.rms_eps, 1e-6f);
  EXPECT_EQ(c.head_dim_k_lin, 128u);
  EXPECT_EQ(c.conv_kernel, 4u);
  EXPECT_FALSE(c.tie_word_embeddings);
}

TEST(HfConfig, RopeFieldsAtTextConfigLevel) {
  json config = small_text_config();
  config.erase("rope_parameters");
  config["rope_theta"] = 5000.0;
  config["partial_rotary_factor"] = 0.5;
  const Qwen35ForwardConfig c = parse(config);
  EXPECT_DOUBLE_EQ(c.rope_theta, 5000.0);
  EXPECT_EQ(c.rotary_dim, 4u);
}

TEST(HfConfig, TieFlagFallsBackToTopLevel) {
  json text = small_text_config();
  text.erase("tie_word_embeddings");
  json config = {{"model_type", "qwen3_5"}, {"tie_word_embeddings", true}, {"text_config", text}};
  EXPECT_TRUE(parse(config).tie_word_embeddings);
  config["text_config"]["tie_word_embeddings"] = false;  // text_config wins when it has the flag
  EXPECT_FALSE(parse(config).tie_word_embeddings);
}

TEST(HfConfig, MalformedJson) {
  EXPECT_THAT(error_message([] { parse_hf_config("{\"hidden_size\": 8,\n  \"vocab_size\": }", kWhere); }),
              AllOf(HasSubstr(kWhere), HasSubstr("malformed JSON"), HasSubstr("line 2, column")));
}

TEST(HfConfig, TopLevelNotAnObject) {
  EXPECT_THAT(error_message([] { parse_hf_config("[1]", kWhere); }),
              AllOf(HasSubstr(kWhere), HasSubstr("JSON object"), HasSubstr("array")));
}

TEST(HfConfig, FieldOfWrongType) {
  json config = small_text_config();
  config["hidden_size"] = "abc";
  EXPECT_THAT(parse_error(config), AllOf(HasSubstr(kWhere), HasSubstr("hidden_size"), HasSubstr("\"abc\""),
                                         HasSubstr("non-negative integer")));
}

TEST(HfConfig, WrongTypeInsideTextConfigNamesTheJsonPath) {
  json config = {{"text_config", small_text_config()}};
  config["text_config"]["rms_norm_eps"] = "small";
  EXPECT_THAT(parse_error(config),
              AllOf(HasSubstr(kWhere), HasSubstr("text_config.rms_norm_eps"), HasSubstr("\"small\"")));
}

TEST(HfConfig, NegativeNumber) {
  json config = small_text_config();
  config["num_key_value_heads"] = -2;
  EXPECT_THAT(parse_error(config), AllOf(HasSubstr(kWhere), HasSubstr("num_key_value_heads"), HasSubstr("-2")));
}

TEST(HfConfig, NegativeRopeTheta) {
  json config = small_text_config();
  config["rope_parameters"]["rope_theta"] = -1.0;
  EXPECT_THAT(parse_error(config), AllOf(HasSubstr(kWhere), HasSubstr("rope_parameters.rope_theta"),
                                         HasSubstr("positive"), HasSubstr("-1.0")));
}

TEST(HfConfig, MissingRequiredField) {
  json config = small_text_config();
  config.erase("vocab_size");
  EXPECT_THAT(parse_error(config), AllOf(HasSubstr(kWhere), HasSubstr("missing required field vocab_size")));
}

TEST(HfConfig, TextConfigNotAnObject) {
  const json config = {{"text_config", 3}};
  EXPECT_THAT(parse_error(config), AllOf(HasSubstr(kWhere), HasSubstr("text_config"), HasSubstr("JSON object")));
}

TEST(HfConfig, UnknownLayerType) {
  json config = small_text_config();
  config["layer_types"][2] = "sliding_attention";
  EXPECT_THAT(parse_error(config),
              AllOf(HasSubstr(kWhere), HasSubstr("layer_types[2]"), HasSubstr("\"sliding_attention\"")));
}

TEST(HfConfig, LayerTypesLengthMismatch) {
  json config = small_text_config();
  config["num_hidden_layers"] = 5;
  EXPECT_THAT(parse_error(config),
              AllOf(HasSubstr(kWhere), HasSubstr("layer_types has 4 entries"), HasSubstr("num_hidden_layers is 5")));
}

TEST(HfConfig, AttentionHeadsNotAMultipleOfKvHeads) {
  json config = small_text_config();
  config["num_attention_heads"] = 3;
  config["num_key_value_heads"] = 2;
  EXPECT_THAT(parse_error(config),
              AllOf(HasSubstr(kWhere), HasSubstr("num_attention_heads (3)"), HasSubstr("num_key_value_heads (2)")));
}

TEST(HfConfig, LinearValueHeadsNotAMultipleOfKeyHeads) {
  json config = small_text_config();
  config["linear_num_key_heads"] = 2;
  config["linear_num_value_heads"] = 3;
  EXPECT_THAT(parse_error(config),
              AllOf(HasSubstr(kWhere), HasSubstr("linear_num_value_heads (3)"), HasSubstr("linear_num_key_heads (2)")));
}

TEST(HfConfig, ZeroAttentionHeads) {
  json config = small_text_config();
  config["num_attention_heads"] = 0;
  EXPECT_THAT(parse_error(config), AllOf(HasSubstr(kWhere), HasSubstr("num_attention_heads"), HasSubstr("found 0")));
}

TEST(HfConfig, RotaryFactorNotGivingWholeDims) {
  json config = small_text_config();
  config["rope_parameters"]["partial_rotary_factor"] = 0.3;
  EXPECT_THAT(parse_error(config), AllOf(HasSubstr(kWhere), HasSubstr("partial_rotary_factor = 0.3")));
}

TEST(HfConfig, MoeModelTypeRejected) {
  json config = {{"model_type", "qwen3_5_moe"}, {"text_config", small_text_config()}};
  EXPECT_THAT(parse_error(config), AllOf(HasSubstr(kWhere), HasSubstr("qwen3_5_moe"), HasSubstr("MoE not supported")));
}

TEST(HfConfig, NumExpertsRejected) {
  json config = small_text_config();
  config["num_experts"] = 256;
  EXPECT_THAT(parse_error(config),
              AllOf(HasSubstr(kWhere), HasSubstr("num_experts is 256"), HasSubstr("MoE not supported")));
}

TEST(HfConfig, ScaledRopeRejected) {
  json config = small_text_config();
  config["rope_parameters"]["rope_type"] = "yarn";
  EXPECT_THAT(parse_error(config),
              AllOf(HasSubstr(kWhere), HasSubstr("rope_parameters.rope_type"), HasSubstr("\"yarn\"")));
}

TEST(HfConfig, UngatedAttentionRejected) {
  json config = small_text_config();
  config["attn_output_gate"] = false;
  EXPECT_THAT(parse_error(config), AllOf(HasSubstr(kWhere), HasSubstr("attn_output_gate")));
}

}  // namespace
}  // namespace qwen35
