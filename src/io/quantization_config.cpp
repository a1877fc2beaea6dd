// The `quantization` block mlx-lm writes into config.json:
//   "quantization": {"group_size": 64, "bits": 4,
//                    "language_model.model.layers.0.mlp.gate": {"group_size": 64, "bits": 8},
//                    "language_model.model.embed_tokens": false}
// (mlx-lm also copies it to "quantization_config"), and CheckpointLayout helpers.
#include "io/json_text.h"
#include "qwen35/checkpoint.h"
#include "qwen35/error.h"

namespace qwen35 {
namespace {

using nlohmann::json;

uint32_t read_param(const json& block, const char* key, std::string_view where, std::string_view owner) {
  const auto it = block.find(key);
  if (it == block.end() || !it->is_number_unsigned()) {
    fail("{}: quantization entry '{}' needs a non-negative integer \"{}\"", where, owner, key);
  }
  return it->get<uint32_t>();
}

QuantizationConfig::Params read_params(const json& block, std::string_view where, std::string_view owner) {
  QuantizationConfig::Params p{.bits = read_param(block, "bits", where, owner),
                               .group_size = read_param(block, "group_size", where, owner)};
  if (p.bits != 4 && p.bits != 8) fail("{}: quantization '{}': unsupported bits {} (supported: 4, 8)", where, owner, p.bits);
  if (p.group_size != 32 && p.group_size != 64 && p.group_size != 128) {
    fail("{}: quantization '{}': unsupported group_size {} (supported: 32, 64, 128)", where, owner, p.group_size);
  }
  return p;
}

}  // namespace

std::optional<QuantizationConfig::Params> QuantizationConfig::for_module(const std::string& module) const {
  const auto it = overrides.find(module);
  return it != overrides.end() ? it->second : defaults;
}

CheckpointLayout CheckpointLayout::hugging_face(std::string prefix) {
  CheckpointLayout layout;
  layout.tensor_prefix = std::move(prefix);
  return layout;
}

QuantizationConfig parse_quantization_config(std::string_view json_text, std::string_view where) {
  const json root = parse_json_object(json_text, where);
  const json* block = nullptr;
  if (const auto it = root.find("quantization"); it != root.end()) {
    block = &*it;
  } else if (const auto qc = root.find("quantization_config");
             qc != root.end() && qc->is_object() && qc->contains("bits") && !qc->contains("quant_method")) {
    block = &*qc;  // mlx-lm's copy; other tools' quantization_config blocks are not MLX affine
  }
  QuantizationConfig config;
  if (block == nullptr) return config;
  if (!block->is_object()) fail("{}: \"quantization\" must be an object, found {}", where, block->dump());
  config.defaults = read_params(*block, where, "quantization");
  for (const auto& [key, value] : block->items()) {
    if (key == "bits" || key == "group_size" || key == "mode") continue;
    if (value.is_boolean() && !value.get<bool>()) {
      config.overrides[key] = std::nullopt;
    } else if (value.is_object()) {
      config.overrides[key] = read_params(value, where, key);
    } else if (!value.is_boolean()) {
      fail("{}: quantization override '{}' must be false or {{\"bits\", \"group_size\"}}, found {}", where, key,
           value.dump());
    }
  }
  if (const auto mode = block->find("mode"); mode != block->end() && *mode != "affine") {
    fail("{}: quantization mode {} is not supported (only \"affine\")", where, mode->dump());
  }
  return config;
}

}  // namespace qwen35
