// Qwen35ForwardConfig validation, summary and presets.
#include "qwen35/config.h"

#include <algorithm>

#include "qwen35/error.h"

namespace qwen35 {

std::string_view layer_type_name(LayerType type) {
  return type == LayerType::kFullAttention ? "full_attention" : "linear_attention";
}

uint32_t Qwen35ForwardConfig::num_full_attention_layers() const {
  return static_cast<uint32_t>(std::count(layer_types.begin(), layer_types.end(), LayerType::kFullAttention));
}

uint32_t Qwen35ForwardConfig::num_linear_attention_layers() const {
  return static_cast<uint32_t>(layer_types.size()) - num_full_attention_layers();
}

void Qwen35ForwardConfig::validate() const {
  auto require_positive = [](uint32_t value, std::string_view field) {
    if (value == 0) fail("config: {} must be positive, got 0", field);
  };
  require_positive(hidden, "hidden_size");
  require_positive(num_layers, "num_hidden_layers");
  require_positive(vocab, "vocab_size");
  require_positive(intermediate, "intermediate_size");
  if (layer_types.size() != num_layers) {
    fail("config: layer_types has {} entries but num_hidden_layers is {}", layer_types.size(), num_layers);
  }
  if (!(rms_eps > 0.0f)) fail("config: rms_norm_eps must be positive, got {}", rms_eps);
  if (num_full_attention_layers() > 0) {
    require_positive(n_heads_q, "num_attention_heads");
    require_positive(n_heads_kv, "num_key_value_heads");
    require_positive(head_dim, "head_dim");
    if (n_heads_q % n_heads_kv != 0) {
      fail("config: num_attention_heads ({}) is not a multiple of num_key_value_heads ({})", n_heads_q, n_heads_kv);
    }
    if (rotary_dim % 2 != 0 || rotary_dim > head_dim) {
      fail("config: rotary dimension {} must be even and at most head_dim {}", rotary_dim, head_dim);
    }
    if (!(rope_theta > 0.0)) fail("config: rope_theta must be positive, got {}", rope_theta);
  }
  if (num_linear_attention_layers() > 0) {
    require_positive(n_heads_k_lin, "linear_num_key_heads");
    require_positive(n_heads_v_lin, "linear_num_value_heads");
    require_positive(head_dim_k_lin, "linear_key_head_dim");
    require_positive(head_dim_v_lin, "linear_value_head_dim");
    require_positive(conv_kernel, "linear_conv_kernel_dim");
    if (n_heads_v_lin % n_heads_k_lin != 0) {
      fail("config: linear_num_value_heads ({}) is not a multiple of linear_num_key_heads ({})", n_heads_v_lin,
           n_heads_k_lin);
    }
  }
}

std::string Qwen35ForwardConfig::summary() const {
  return fmt::format(
      "hidden {} x {} layers ({} full attention, {} Gated DeltaNet), intermediate {}, vocab {}, "
      "attention heads {}/{} of {}, DeltaNet heads {}/{} of {}/{}",
      hidden, num_layers, num_full_attention_layers(), num_linear_attention_layers(), intermediate, vocab, n_heads_q,
      n_heads_kv, head_dim, n_heads_k_lin, n_heads_v_lin, head_dim_k_lin, head_dim_v_lin);
}

namespace {

// The dense Qwen3.5 sizes: three Gated DeltaNet layers, then one full attention.
std::vector<LayerType> every_fourth_full_attention(uint32_t num_layers) {
  std::vector<LayerType> types;
  for (uint32_t i = 0; i < num_layers; ++i) {
    types.push_back((i + 1) % 4 == 0 ? LayerType::kFullAttention : LayerType::kLinearAttention);
  }
  return types;
}

}  // namespace

Qwen35ForwardConfig Qwen35ForwardConfig::qwen35_0_8b() {
  Qwen35ForwardConfig c;
  c.hidden = 1024;
  c.intermediate = 3584;
  c.num_layers = 24;
  c.vocab = 248320;
  c.rms_eps = 1e-6f;
  c.n_heads_q = 8;
  c.n_heads_kv = 2;
  c.head_dim = 256;
  c.rotary_dim = 64;
  c.rope_theta = 1e7;
  c.n_heads_k_lin = 16;
  c.n_heads_v_lin = 16;
  c.head_dim_k_lin = 128;
  c.head_dim_v_lin = 128;
  c.conv_kernel = 4;
  c.tie_word_embeddings = true;
  c.layer_types = every_fourth_full_attention(c.num_layers);
  return c;
}

Qwen35ForwardConfig Qwen35ForwardConfig::qwen35_9b() {
  Qwen35ForwardConfig c = qwen35_0_8b();
  c.hidden = 4096;
  c.intermediate = 12288;
  c.num_layers = 32;
  c.n_heads_q = 16;
  c.n_heads_kv = 4;
  c.n_heads_v_lin = 32;
  c.tie_word_embeddings = false;
  c.layer_types = every_fourth_full_attention(c.num_layers);
  return c;
}

std::optional<Qwen35ForwardConfig> Qwen35ForwardConfig::preset(std::string_view name) {
  if (name == "0.8b") return qwen35_0_8b();
  if (name == "9b") return qwen35_9b();
  return std::nullopt;
}

}  // namespace qwen35
