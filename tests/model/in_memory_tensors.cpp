// See in_memory_tensors.h.
#include "in_memory_tensors.h"

namespace qwen35::testing {

Qwen35ForwardConfig small_config() {
  Qwen35ForwardConfig c;
  c.hidden = 64;
  c.intermediate = 96;
  c.num_layers = 4;
  c.vocab = 50;
  c.n_heads_q = 2;
  c.n_heads_kv = 1;
  c.head_dim = 32;
  c.rotary_dim = 8;
  c.n_heads_k_lin = 2;
  c.n_heads_v_lin = 4;
  c.head_dim_k_lin = 16;
  c.head_dim_v_lin = 16;
  c.conv_kernel = 4;
  c.layer_types = {LayerType::kLinearAttention, LayerType::kLinearAttention, LayerType::kLinearAttention,
                   LayerType::kFullAttention};
  c.tie_word_embeddings = true;
  return c;
}

EditableTensors::EditableTensors(std::shared_ptr<const TensorSource> base) : base_(std::move(base)) {
  for (const std::string& name : base_->names()) views_.emplace(name, *base_->find(name));
}

const TensorView* EditableTensors::find(std::string_view name) const {
  auto it = views_.find(name);
  return it == views_.end() ? nullptr : &it->second;
}

std::vector<std::string> EditableTensors::names() const {
  std::vector<std::string> out;
  for (const auto& [name, view] : views_) out.push_back(name);
  return out;
}

}  // namespace qwen35::testing
