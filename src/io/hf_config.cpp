// parse_hf_config: a Hugging Face Qwen3.5 config.json (multimodal with a nested
// text_config, or flat text-only) into Qwen35ForwardConfig, per spec section 1.
// Every field is type-checked; errors name the file and the field's JSON path.
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "io/json_text.h"
#include "qwen35/checkpoint.h"
#include "qwen35/error.h"

namespace qwen35 {
namespace {

using nlohmann::json;

// Spec section 1: values transformers' Qwen3_5TextConfig uses when a field is absent.
constexpr uint32_t kDefaultFullAttentionInterval = 4;
constexpr double kDefaultRopeTheta = 1e7;
constexpr double kDefaultPartialRotaryFactor = 0.25;
constexpr double kDefaultRmsNormEps = 1e-6;

// A JSON object read on behalf of one file: `prefix` is its JSON path
// ("text_config." or empty) so that messages name the exact field.
class FieldReader {
 public:
  FieldReader(const json& object, std::string prefix, std::string_view where)
      : object_(object), prefix_(std::move(prefix)), where_(where) {}

  std::string path(std::string_view field) const { return prefix_ + std::string(field); }

  const json* find(std::string_view field) const {
    const auto it = object_.find(field);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }

  uint32_t required_u32(std::string_view field) const {
    const std::optional<uint32_t> value = optional_u32(field);
    if (!value) fail("{}: missing required field {} (a non-negative integer)", where_, path(field));
    return *value;
  }

  std::optional<uint32_t> optional_u32(std::string_view field) const {
    const json* value = find(field);
    if (value == nullptr) return std::nullopt;
    if (!value->is_number_unsigned()) {
      fail("{}: field {} must be a non-negative integer, found {}", where_, path(field), value->dump());
    }
    const uint64_t number = value->get<uint64_t>();
    if (number > std::numeric_limits<uint32_t>::max()) {
      fail("{}: field {} = {} is larger than this engine supports ({})", where_, path(field), number,
           std::numeric_limits<uint32_t>::max());
    }
    return static_cast<uint32_t>(number);
  }

  std::optional<double> optional_positive_number(std::string_view field) const {
    const json* value = find(field);
    if (value == nullptr) return std::nullopt;
    if (!value->is_number()) fail("{}: field {} must be a number, found {}", where_, path(field), value->dump());
    const double number = value->get<double>();
    if (!(number > 0.0) || !std::isfinite(number)) {
      fail("{}: field {} must be positive, found {}", where_, path(field), value->dump());
    }
    return number;
  }

  std::optional<bool> optional_bool(std::string_view field) const {
    const json* value = find(field);
    if (value == nullptr) return std::nullopt;
    if (!value->is_boolean()) fail("{}: field {} must be true or false, found {}", where_, path(field), value->dump());
    return value->get<bool>();
  }

  std::optional<std::string> optional_string(std::string_view field) const {
    const json* value = find(field);
    if (value == nullptr) return std::nullopt;
    if (!value->is_string()) fail("{}: field {} must be a string, found {}", where_, path(field), value->dump());
    return value->get<std::string>();
  }

  // A nested object, or nullopt when absent.
  std::optional<FieldReader> optional_object(std::string_view field) const {
    const json* value = find(field);
    if (value == nullptr) return std::nullopt;
    if (!value->is_object()) fail("{}: field {} must be a JSON object, found {}", where_, path(field), value->dump());
    return FieldReader(*value, path(field) + ".", where_);
  }

 private:
  const json& object_;
  std::string prefix_;
  std::string_view where_;
};

// Mixture-of-experts FFNs are not implemented: refuse them here rather than
// fail later on a missing mlp.gate_proj.
void reject_moe(const FieldReader& top, const FieldReader& text, std::string_view where) {
  for (const FieldReader* reader : {&top, &text}) {
    const std::optional<std::string> model_type = reader->optional_string("model_type");
    if (model_type && model_type->starts_with("qwen3_5_moe")) {
      fail("{}: {} is \"{}\": MoE not supported yet (only dense Qwen3.5 decoders)", where, reader->path("model_type"),
           *model_type);
    }
  }
  const std::optional<uint32_t> experts = text.optional_u32("num_experts");
  if (experts && *experts > 0) {
    fail("{}: {} is {}: MoE not supported yet (only dense Qwen3.5 decoders)", where, text.path("num_experts"),
         *experts);
  }
}

// The decoder this engine runs has gated attention without biases and SiLU
// MLPs; a config asking for something else would decode wrongly, not fail.
void reject_unsupported_variants(const FieldReader& text, std::string_view where) {
  if (text.optional_bool("attention_bias").value_or(false)) {
    fail("{}: {} is true, but this engine supports only bias-free attention", where, text.path("attention_bias"));
  }
  if (!text.optional_bool("attn_output_gate").value_or(true)) {
    fail("{}: {} is false, but this engine supports only gated attention", where, text.path("attn_output_gate"));
  }
  const std::optional<std::string> act = text.optional_string("hidden_act");
  if (act && *act != "silu") fail("{}: {} is \"{}\", expected \"silu\"", where, text.path("hidden_act"), *act);
}

std::vector<LayerType> parse_layer_types(const FieldReader& text, uint32_t num_layers, std::string_view where) {
  std::vector<LayerType> types;
  const json* listed = text.find("layer_types");
  if (listed == nullptr) {
    // Spec section 1: layer i is full attention iff (i + 1) % interval == 0.
    const uint32_t interval = text.optional_u32("full_attention_interval").value_or(kDefaultFullAttentionInterval);
    if (interval == 0) fail("{}: field {} must be positive, found 0", where, text.path("full_attention_interval"));
    for (uint32_t i = 0; i < num_layers; ++i) {
      types.push_back((i + 1) % interval == 0 ? LayerType::kFullAttention : LayerType::kLinearAttention);
    }
    return types;
  }
  if (!listed->is_array()) {
    fail("{}: field {} must be an array of strings, found {}", where, text.path("layer_types"), listed->dump());
  }
  for (size_t i = 0; i < listed->size(); ++i) {
    const json& item = (*listed)[i];
    if (item == "full_attention") {
      types.push_back(LayerType::kFullAttention);
    } else if (item == "linear_attention") {
      types.push_back(LayerType::kLinearAttention);
    } else {
      fail("{}: {}[{}] is {}, expected \"full_attention\" or \"linear_attention\"", where, text.path("layer_types"), i,
           item.dump());
    }
  }
  return types;
}

// rope_parameters (current exports) wins over text_config-level fields (older ones).
void parse_rope(const FieldReader& text, Qwen35ForwardConfig& config, std::string_view where) {
  const std::optional<FieldReader> rope = text.optional_object("rope_parameters");
  const FieldReader& source = rope ? *rope : text;
  const std::optional<std::string> rope_type = source.optional_string("rope_type");
  if (rope_type && *rope_type != "default") {
    fail("{}: {} is \"{}\": only \"default\" RoPE (no scaling) is supported", where, source.path("rope_type"),
         *rope_type);
  }
  config.rope_theta = source.optional_positive_number("rope_theta").value_or(kDefaultRopeTheta);
  const double factor = source.optional_positive_number("partial_rotary_factor").value_or(kDefaultPartialRotaryFactor);
  const double rotary = config.head_dim * factor;
  if (factor > 1.0 || rotary != std::floor(rotary)) {
    fail("{}: {} = {} with head_dim {} does not give a whole rotary dimension of at most head_dim", where,
         source.path("partial_rotary_factor"), factor, config.head_dim);
  }
  config.rotary_dim = static_cast<uint32_t>(rotary);
}

}  // namespace

Qwen35ForwardConfig parse_hf_config(std::string_view json_text, std::string_view where) {
  const json root = parse_json_object(json_text, where);
  const FieldReader top(root, "", where);
  const std::optional<FieldReader> nested = top.optional_object("text_config");
  const FieldReader& text = nested ? *nested : top;
  reject_moe(top, text, where);
  reject_unsupported_variants(text, where);

  Qwen35ForwardConfig config;
  config.hidden = text.required_u32("hidden_size");
  config.intermediate = text.required_u32("intermediate_size");
  config.num_layers = text.required_u32("num_hidden_layers");
  config.vocab = text.required_u32("vocab_size");
  config.rms_eps = static_cast<float>(text.optional_positive_number("rms_norm_eps").value_or(kDefaultRmsNormEps));

  config.n_heads_q = text.required_u32("num_attention_heads");
  config.n_heads_kv = text.required_u32("num_key_value_heads");
  if (config.n_heads_q == 0) fail("{}: field {} must be positive, found 0", where, text.path("num_attention_heads"));
  config.head_dim = text.optional_u32("head_dim").value_or(config.hidden / config.n_heads_q);
  parse_rope(text, config, where);

  // Dims and kernel default to the values every released size uses (spec section 1).
  config.n_heads_k_lin = text.required_u32("linear_num_key_heads");
  config.n_heads_v_lin = text.required_u32("linear_num_value_heads");
  config.head_dim_k_lin = text.optional_u32("linear_key_head_dim").value_or(128);
  config.head_dim_v_lin = text.optional_u32("linear_value_head_dim").value_or(128);
  config.conv_kernel = text.optional_u32("linear_conv_kernel_dim").value_or(4);
  config.value_head_map = ValueHeadMap::kGrouped;  // spec 0.3: HF weights are grouped

  config.layer_types = parse_layer_types(text, config.num_layers, where);
  config.tie_word_embeddings =
      text.optional_bool("tie_word_embeddings").value_or(top.optional_bool("tie_word_embeddings").value_or(false));
  config.max_position_embeddings =
      text.optional_u32("max_position_embeddings").value_or(config.max_position_embeddings);

  try {
    config.validate();
  } catch (const Error& e) {
    fail("{}: {}", where, e.what());
  }
  return config;
}

}  // namespace qwen35
