// Qwen35ForwardConfig: the dimensions of one Qwen3.5 text decoder, filled from a
// checkpoint's config.json (see docs/qwen35-spec.md section 1) or a preset.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qwen35 {

enum class LayerType : uint8_t { kLinearAttention, kFullAttention };

// Which key head a Gated DeltaNet value head reads (spec 0.3). Hugging Face and
// MLX weights are grouped (j / (nv/nk)); llama.cpp's GGUF re-orders to tiled (j % nk).
enum class ValueHeadMap : uint8_t { kGrouped, kTiled };

struct Qwen35ForwardConfig {
  uint32_t hidden = 0;        // H
  uint32_t intermediate = 0;  // I (dense SwiGLU width)
  uint32_t num_layers = 0;
  uint32_t vocab = 0;
  float rms_eps = 1e-6f;

  // Gated full attention.
  uint32_t n_heads_q = 0;
  uint32_t n_heads_kv = 0;
  uint32_t head_dim = 0;
  uint32_t rotary_dim = 0;  // head_dim * partial_rotary_factor (64 of 256)
  double rope_theta = 1e7;

  // Gated DeltaNet (linear attention).
  uint32_t n_heads_k_lin = 0;
  uint32_t n_heads_v_lin = 0;
  uint32_t head_dim_k_lin = 0;
  uint32_t head_dim_v_lin = 0;
  uint32_t conv_kernel = 0;  // Kc
  ValueHeadMap value_head_map = ValueHeadMap::kGrouped;

  std::vector<LayerType> layer_types;  // [num_layers]
  bool tie_word_embeddings = false;
  uint32_t max_position_embeddings = 262144;

  // Derived sizes.
  uint32_t q_proj_dim() const { return 2 * n_heads_q * head_dim; }  // query + output gate
  uint32_t q_dim() const { return n_heads_q * head_dim; }
  uint32_t kv_dim() const { return n_heads_kv * head_dim; }
  uint32_t key_dim_lin() const { return n_heads_k_lin * head_dim_k_lin; }
  uint32_t value_dim_lin() const { return n_heads_v_lin * head_dim_v_lin; }  // also z
  uint32_t conv_dim_lin() const { return 2 * key_dim_lin() + value_dim_lin(); }
  uint32_t num_full_attention_layers() const;
  uint32_t num_linear_attention_layers() const;

  // Throws Error naming the first inconsistent field (zero sizes, heads that do
  // not divide, layer_types of the wrong length, odd rotary_dim, ...).
  void validate() const;
  std::string summary() const;

  // The real Qwen3.5-0.8B text decoder shape.
  static Qwen35ForwardConfig qwen35_0_8b();
  // The real Qwen3.5-9B text decoder shape (spec 2.3: untied lm_head, 32 value heads on 16 key heads).
  static Qwen35ForwardConfig qwen35_9b();
  // A built-in shape by name ("0.8b", "9b"); empty if there is none of that name.
  static std::optional<Qwen35ForwardConfig> preset(std::string_view name);
  static constexpr std::string_view kPresetNames = "0.8b, 9b";
};

std::string_view layer_type_name(LayerType type);

}  // namespace qwen35
