// A random-weight checkpoint in the exact Hugging Face layout of a config, made
// in memory. Each tensor's values depend only on the seed and the tensor's name,
// so generation runs in parallel and the result is the same on every machine.
// Scales keep activations O(1) through many layers, like a trained model's.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <future>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "qwen35/model.h"

namespace qwen35 {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t fnv1a(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : text) hash = (hash ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  return hash;
}

// How one tensor's values are drawn: uniform in [center - spread, center + spread].
struct Recipe {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype;
  float center;
  float spread;
};

class RandomWeights final : public TensorSource {
 public:
  RandomWeights(std::vector<Recipe> recipes, uint64_t seed) {
    storage_.resize(recipes.size());
    views_.resize(recipes.size());
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::future<void>> jobs;
    for (unsigned t = 0; t < threads; ++t) {
      jobs.push_back(std::async(std::launch::async, [&, t] {
        for (size_t i = t; i < recipes.size(); i += threads) generate(recipes[i], seed, i);
      }));
    }
    for (auto& job : jobs) job.get();
    for (size_t i = 0; i < views_.size(); ++i) by_name_[views_[i].name] = i;
  }

  const TensorView* find(std::string_view name) const override {
    auto it = by_name_.find(std::string(name));
    return it == by_name_.end() ? nullptr : &views_[it->second];
  }
  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const auto& [name, index] : by_name_) out.push_back(name);
    return out;
  }
  std::string origin() const override { return "random weights"; }

 private:
  void generate(const Recipe& r, uint64_t seed, size_t index) {
    size_t count = 1;
    for (int64_t d : r.shape) count *= static_cast<size_t>(d);
    auto& bytes = storage_[index];
    bytes.resize(count * dtype_size(r.dtype));
    uint64_t state = seed ^ fnv1a(r.name);
    for (size_t i = 0; i < count; ++i) {
      // 24 random bits -> uniform in [-1, 1).
      const float unit = static_cast<float>(splitmix64(state) >> 40) * (2.0f / 16777216.0f) - 1.0f;
      const float value = r.center + r.spread * unit;
      if (r.dtype == DType::kF32) {
        std::memcpy(bytes.data() + i * 4, &value, 4);
      } else {
        const uint16_t half = r.dtype == DType::kBF16 ? f32_to_bf16(value) : f32_to_f16(value);
        std::memcpy(bytes.data() + i * 2, &half, 2);
      }
    }
    views_[index] = TensorView{.name = r.name, .dtype = r.dtype, .shape = r.shape, .data = bytes.data(),
                               .bytes = bytes.size(), .file = "random weights"};
  }

  std::vector<std::vector<std::byte>> storage_;
  std::vector<TensorView> views_;
  std::map<std::string, size_t> by_name_;
};

}  // namespace

std::shared_ptr<TensorSource> make_random_weights(const Qwen35ForwardConfig& c, DType dtype, uint64_t seed) {
  c.validate();
  const std::string p = "model.language_model.";
  const int64_t H = c.hidden, I = c.intermediate;
  std::vector<Recipe> recipes;
  // A matrix [rows, cols] with uniform entries of standard deviation 1/sqrt(cols).
  auto matrix = [&](std::string name, int64_t rows, int64_t cols) {
    recipes.push_back({std::move(name), {rows, cols}, dtype, 0.0f, std::sqrt(3.0f / static_cast<float>(cols))});
  };
  auto vector = [&](std::string name, std::vector<int64_t> shape, float center, float spread, DType type) {
    recipes.push_back({std::move(name), std::move(shape), type, center, spread});
  };
  recipes.push_back({p + "embed_tokens.weight", {c.vocab, H}, dtype, 0.0f, 1.0f});
  vector(p + "norm.weight", {H}, 0.0f, 0.1f, dtype);
  if (!c.tie_word_embeddings) matrix("lm_head.weight", c.vocab, H);
  for (uint32_t i = 0; i < c.num_layers; ++i) {
    const std::string l = fmt::format("{}layers.{}.", p, i);
    vector(l + "input_layernorm.weight", {H}, 0.0f, 0.1f, dtype);
    vector(l + "post_attention_layernorm.weight", {H}, 0.0f, 0.1f, dtype);
    matrix(l + "mlp.gate_proj.weight", I, H);
    matrix(l + "mlp.up_proj.weight", I, H);
    matrix(l + "mlp.down_proj.weight", H, I);
    if (c.layer_types[i] == LayerType::kFullAttention) {
      matrix(l + "self_attn.q_proj.weight", c.q_proj_dim(), H);
      matrix(l + "self_attn.k_proj.weight", c.kv_dim(), H);
      matrix(l + "self_attn.v_proj.weight", c.kv_dim(), H);
      matrix(l + "self_attn.o_proj.weight", H, c.q_dim());
      vector(l + "self_attn.q_norm.weight", {c.head_dim}, 0.0f, 0.1f, dtype);
      vector(l + "self_attn.k_norm.weight", {c.head_dim}, 0.0f, 0.1f, dtype);
    } else {
      const int64_t nv = c.n_heads_v_lin;
      matrix(l + "linear_attn.in_proj_qkv.weight", c.conv_dim_lin(), H);
      matrix(l + "linear_attn.in_proj_z.weight", c.value_dim_lin(), H);
      matrix(l + "linear_attn.in_proj_a.weight", nv, H);
      matrix(l + "linear_attn.in_proj_b.weight", nv, H);
      matrix(l + "linear_attn.out_proj.weight", H, c.value_dim_lin());
      vector(l + "linear_attn.conv1d.weight", {c.conv_dim_lin(), 1, c.conv_kernel}, 0.0f, 0.5f, dtype);
      vector(l + "linear_attn.A_log", {nv}, 0.0f, 1.0f, DType::kF32);
      vector(l + "linear_attn.dt_bias", {nv}, 0.0f, 1.0f, dtype);
      vector(l + "linear_attn.norm.weight", {c.head_dim_v_lin}, 1.0f, 0.1f, dtype);
    }
  }
  return std::make_shared<RandomWeights>(std::move(recipes), seed);
}

}  // namespace qwen35
