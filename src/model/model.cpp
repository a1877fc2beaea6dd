// Model::load: every tensor the decoder needs, checked once against the config
// (presence, dtype, shape) and placed on the backend. Norm weights become f32
// multipliers here, (1 + w) for the zero-centred ones (spec 0.1) unless the
// checkpoint already holds the +1 (MLX), so no kernel ever needs to know a
// checkpoint's norm convention. Matrices come from the weight-format registry
// (src/formats), so the model never asks how a matrix is stored.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "formats/weight_format.h"
#include "qwen35/model.h"

namespace qwen35 {
namespace {

// Widens one element of a float tensor to double.
double element(const TensorView& t, size_t i) {
  switch (t.dtype) {
    case DType::kF32: {
      float v;
      std::memcpy(&v, t.data + i * 4, 4);
      return v;
    }
    case DType::kBF16:
    case DType::kF16: {
      uint16_t v;
      std::memcpy(&v, t.data + i * 2, 2);
      return t.dtype == DType::kBF16 ? bf16_to_f32(v) : f16_to_f32(v);
    }
    default:
      return 0;  // unreachable: require_float_tensor checked the dtype
  }
}

}  // namespace

class Model::Builder {
 public:
  Builder(Model& model, GpuBackend& gpu, const CheckpointLayout& layout, const LoadProgress& progress)
      : model_(model), gpu_(gpu), stream_(gpu.default_stream()), layout_(layout), prefix_(layout.tensor_prefix),
        progress_(progress) {
    if (!progress_) return;
    // Every tensor under the prefix, plus an untied lm_head: what load() will read.
    const std::string lm_head_module = layout_.lm_head.substr(0, layout_.lm_head.rfind('.') + 1);  // "lm_head."
    for (const std::string& name : model_.tensors_->names()) {
      if (name.starts_with(prefix_) || (name.starts_with(lm_head_module) && !model_.config_.tie_word_embeddings)) {
        bytes_total_ += model_.tensors_->find(name)->bytes;
      }
    }
  }

  // The last report: everything placed.
  void finish() {
    if (progress_) progress_(bytes_done_, bytes_done_);
  }

  // The linear or embedding module whose weight is `name` ("....weight"), in whatever format it is stored.
  const QuantWeights* matrix(const std::string& name, uint32_t rows, uint32_t cols) {
    const std::string module = name.substr(0, name.size() - std::string_view(".weight").size());
    PlacedMatrix m = make_matrix(
        gpu_, MatrixRequest{*model_.tensors_, module, rows, cols, layout_.quantization}, stream_);
    model_.matrices_.push_back(std::move(m.weights));
    for (const TensorView* t : m.tensors) placed(*t);
    return model_.matrices_.back().get();
  }

  // A float tensor as f32 on the device, each value v stored as offset + v.
  DeviceBuffer f32_buffer(const std::string& name, std::vector<int64_t> shape, double offset = 0.0) {
    const TensorView& t = require_float_tensor(*model_.tensors_, name, shape);
    std::vector<float> values(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(offset + element(t, i));
    DeviceBuffer buffer(gpu_, values.size() * sizeof(float));
    gpu_.upload(buffer.ptr(), values.data(), values.size() * sizeof(float), stream_);
    gpu_.synchronize(stream_);  // `values` is a local
    placed(t);
    return buffer;
  }
  DevicePtr vector(const std::string& name, std::vector<int64_t> shape, double offset = 0.0) {
    model_.vectors_.push_back(f32_buffer(name, std::move(shape), offset));
    return model_.vectors_.back().ptr();
  }
  // Spec 0.1: the multiplier is 1 + w, unless the checkpoint stores it so already.
  double norm_offset() const { return layout_.norms_include_one ? 0.0 : 1.0; }
  DevicePtr zero_centred_norm(const std::string& name, uint32_t n) { return vector(name, {n}, norm_offset()); }
  std::vector<int64_t> conv_shape(uint32_t channels, uint32_t kernel) const {
    if (layout_.conv == ConvLayout::kChannelKernelOne) return {channels, kernel, 1};
    return {channels, 1, kernel};
  }

  void placed(const TensorView& t) {
    bytes_done_ += t.bytes;
    // The total never drops below what is done, should a tensor be counted twice or missed.
    if (progress_) progress_(bytes_done_, std::max(bytes_done_, bytes_total_));
  }

  std::string layer(uint32_t i, std::string_view rest) const { return fmt::format("{}layers.{}.{}", prefix_, i, rest); }
  const std::string& prefix() const { return prefix_; }

 private:
  Model& model_;
  GpuBackend& gpu_;
  Stream stream_;
  const CheckpointLayout& layout_;
  std::string prefix_;
  const LoadProgress& progress_;
  size_t bytes_total_ = 0;
  size_t bytes_done_ = 0;
};

std::unique_ptr<Model> Model::load(GpuBackend& gpu, const Qwen35ForwardConfig& config,
                                   std::shared_ptr<const TensorSource> tensors, const std::string& prefix,
                                   const LoadProgress& progress) {
  return load(gpu, config, std::move(tensors), CheckpointLayout::hugging_face(prefix), progress);
}

std::unique_ptr<Model> Model::load(GpuBackend& gpu, const Qwen35ForwardConfig& config,
                                   std::shared_ptr<const TensorSource> tensors, const CheckpointLayout& layout,
                                   const LoadProgress& progress) {
  config.validate();
  const std::string& prefix = layout.tensor_prefix;
  std::unique_ptr<Model> model(new Model());
  model->config_ = config;
  model->gpu_ = &gpu;
  model->tensors_ = std::move(tensors);
  Builder b(*model, gpu, layout, progress);
  const Qwen35ForwardConfig& c = config;
  const uint32_t H = c.hidden, I = c.intermediate;

  model->embedding_ = b.matrix(prefix + "embed_tokens.weight", c.vocab, H);
  model->final_norm_ = b.f32_buffer(prefix + "norm.weight", {H}, b.norm_offset());  // zero-centred
  model->lm_head_ = c.tie_word_embeddings ? model->embedding_ : b.matrix(layout.lm_head, c.vocab, H);

  for (uint32_t i = 0; i < c.num_layers; ++i) {
    auto name = [&](std::string_view rest) { return b.layer(i, rest); };
    const DevicePtr input_norm = b.zero_centred_norm(name("input_layernorm.weight"), H);
    const DevicePtr post_norm = b.zero_centred_norm(name("post_attention_layernorm.weight"), H);
    const QuantWeights* gate = b.matrix(name("mlp.gate_proj.weight"), I, H);
    const QuantWeights* up = b.matrix(name("mlp.up_proj.weight"), I, H);
    const QuantWeights* down = b.matrix(name("mlp.down_proj.weight"), H, I);
    if (c.layer_types[i] == LayerType::kFullAttention) {
      FullAttentionLayer l{};
      l.input_norm = input_norm;
      l.post_norm = post_norm;
      l.q_proj = b.matrix(name("self_attn.q_proj.weight"), c.q_proj_dim(), H);
      l.k_proj = b.matrix(name("self_attn.k_proj.weight"), c.kv_dim(), H);
      l.v_proj = b.matrix(name("self_attn.v_proj.weight"), c.kv_dim(), H);
      l.o_proj = b.matrix(name("self_attn.o_proj.weight"), H, c.q_dim());
      l.q_norm = b.zero_centred_norm(name("self_attn.q_norm.weight"), c.head_dim);
      l.k_norm = b.zero_centred_norm(name("self_attn.k_norm.weight"), c.head_dim);
      l.gate_proj = gate;
      l.up_proj = up;
      l.down_proj = down;
      model->layers_.push_back(Layer{l});
    } else {
      const uint32_t nv = c.n_heads_v_lin;
      LinearAttentionLayer l{};
      l.input_norm = input_norm;
      l.post_norm = post_norm;
      l.in_proj_qkv = b.matrix(name("linear_attn.in_proj_qkv.weight"), c.conv_dim_lin(), H);
      l.in_proj_z = b.matrix(name("linear_attn.in_proj_z.weight"), c.value_dim_lin(), H);
      l.in_proj_a = b.matrix(name("linear_attn.in_proj_a.weight"), nv, H);
      l.in_proj_b = b.matrix(name("linear_attn.in_proj_b.weight"), nv, H);
      l.out_proj = b.matrix(name("linear_attn.out_proj.weight"), H, c.value_dim_lin());
      l.conv_weight = b.vector(name("linear_attn.conv1d.weight"), b.conv_shape(c.conv_dim_lin(), c.conv_kernel));
      l.a_log = b.vector(name("linear_attn.A_log"), {nv});
      l.dt_bias = b.vector(name("linear_attn.dt_bias"), {nv});
      l.norm_weight = b.vector(name("linear_attn.norm.weight"), {c.head_dim_v_lin});  // plain, not zero-centred
      l.gate_proj = gate;
      l.up_proj = up;
      l.down_proj = down;
      model->layers_.push_back(Layer{l});
    }
  }
  b.finish();
  return model;
}

size_t Model::weight_bytes_per_token() const {
  size_t bytes = 0;
  for (const auto& m : matrices_) {
    if (m.get() != embedding_ || embedding_ == lm_head_) bytes += m->weight_bytes();
  }
  return bytes + embedding_->weight_bytes() / embedding_->out_features();
}

std::string Model::weight_format() const { return embedding_->format_name(); }

}  // namespace qwen35
