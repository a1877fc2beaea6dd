// The Hugging Face -> GGUF converter used by the GGUF tests and by `qwen35 bench
// --dtype q4_k` (see gguf_converter.h for what it writes and what it needs).
#include "formats/gguf_converter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>

#include "io/gguf.h"
#include "qwen35/error.h"
#include "qwen35/gguf_quants.h"

namespace qwen35 {
namespace {

std::vector<float> read_floats(const TensorSource& tensors, const std::string& name) {
  const TensorView* t = tensors.find(name);
  if (t == nullptr) fail("{}: missing tensor '{}' (converting to GGUF)", tensors.origin(), name);
  return t->to_floats();
}

// GGUF stores the layer pattern as one number: layer i is full attention when
// (i + 1) % interval == 0 (gguf_checkpoint.cpp reads it back so).
uint32_t full_attention_interval(const Qwen35ForwardConfig& c) {
  const auto first = std::find(c.layer_types.begin(), c.layer_types.end(), LayerType::kFullAttention);
  const auto interval = static_cast<uint32_t>(first - c.layer_types.begin()) + 1;
  for (uint32_t i = 0; i < c.num_layers; ++i) {
    if (((i + 1) % interval == 0) != (c.layer_types[i] == LayerType::kFullAttention)) {
      fail("GGUF converter: layer {} breaks the every-{}-layers full-attention pattern GGUF can express", i,
           interval);
    }
  }
  return interval;
}

// Grouped -> tiled (spec 2.3): new head j * nk + g is old head g * r + j.
std::vector<uint32_t> tiled_order(uint32_t nv, uint32_t nk) {
  const uint32_t r = nv / nk;
  std::vector<uint32_t> old_of(nv);
  for (uint32_t j = 0; j < r; ++j) {
    for (uint32_t g = 0; g < nk; ++g) old_of[j * nk + g] = g * r + j;
  }
  return old_of;
}

// Re-orders `n_heads` blocks of `head_rows` rows (each `row_len` long) starting at row `first`.
void reorder_rows(std::vector<float>& v, size_t row_len, size_t first, size_t head_rows,
                  const std::vector<uint32_t>& old_of) {
  const std::vector<float> copy = v;
  const size_t block = head_rows * row_len;
  for (size_t h = 0; h < old_of.size(); ++h) {
    std::memcpy(v.data() + first * row_len + h * block, copy.data() + first * row_len + old_of[h] * block,
                block * sizeof(float));
  }
}

// Re-orders column blocks of `head_cols` in every row of a [rows, n_heads * head_cols] matrix.
void reorder_cols(std::vector<float>& v, size_t rows, size_t head_cols, const std::vector<uint32_t>& old_of) {
  const std::vector<float> copy = v;
  const size_t cols = head_cols * old_of.size();
  for (size_t r = 0; r < rows; ++r) {
    for (size_t h = 0; h < old_of.size(); ++h) {
      std::memcpy(v.data() + r * cols + h * head_cols, copy.data() + r * cols + old_of[h] * head_cols,
                  head_cols * sizeof(float));
    }
  }
}

// The file's tensors in their GGUF types, converted as they are added.
class Writer {
 public:
  void add(std::string name, std::vector<int64_t> shape, const std::vector<float>& values, DType type) {
    std::vector<std::byte>& bytes = storage_.emplace_back(dtype_bytes(type, values.size()));
    const size_t row = static_cast<size_t>(shape.back());
    for (size_t r = 0; r < values.size() / row; ++r) {
      const float* x = values.data() + r * row;
      std::byte* out = bytes.data() + r * dtype_bytes(type, row);
      for (size_t i = 0; i < row; ++i) {
        if (type == DType::kF32) std::memcpy(out + 4 * i, x + i, 4);
        if (type == DType::kF16 || type == DType::kBF16) {
          const uint16_t h = type == DType::kF16 ? f32_to_f16(x[i]) : f32_to_bf16(x[i]);
          std::memcpy(out + 2 * i, &h, 2);
        }
      }
      if (is_block_dtype(type)) gguf_quantize_row(type, x, out, row);
    }
    tensors_.push_back({std::move(name), type, std::move(shape), bytes});
  }

  const std::vector<GgufTensorToWrite>& tensors() const { return tensors_; }

 private:
  std::deque<std::vector<std::byte>> storage_;  // a deque: the spans in tensors_ stay valid
  std::vector<GgufTensorToWrite> tensors_;
};

}  // namespace

void write_gguf_checkpoint(const Qwen35ForwardConfig& c, const TensorSource& t, const CheckpointLayout& layout,
                           std::string_view name, const std::filesystem::path& out, const GgufConvertOptions& o) {
  if (layout.norms_include_one || layout.conv != ConvLayout::kChannelOneKernel || layout.quantization.defaults ||
      !layout.quantization.overrides.empty()) {
    fail("{}: the GGUF converter reads the Hugging Face layout (no +1 in the norms, conv1d [C, 1, K], "
         "nothing quantized); this checkpoint is in another (MLX?)", t.origin());
  }
  const std::string p = layout.tensor_prefix;
  const std::string arch = o.architecture;
  GgufMetadataWriter meta;
  meta.add_string("general.architecture", arch);
  meta.add_string("general.name", name);
  meta.add_u32(arch + ".block_count", c.num_layers + (o.mtp_block ? 1 : 0));
  if (o.mtp_block) meta.add_u32(arch + ".nextn_predict_layers", 1);
  meta.add_u32(arch + ".context_length", c.max_position_embeddings);
  meta.add_u32(arch + ".embedding_length", c.hidden);
  meta.add_u32(arch + ".feed_forward_length", c.intermediate);
  meta.add_u32(arch + ".attention.head_count", c.n_heads_q);
  meta.add_u32(arch + ".attention.head_count_kv", c.n_heads_kv);
  meta.add_u32(arch + ".attention.key_length", c.head_dim);
  meta.add_u32(arch + ".attention.value_length", c.head_dim);
  meta.add_u32(arch + ".rope.dimension_count", c.rotary_dim);
  meta.add_i32_array(arch + ".rope.dimension_sections", {11, 11, 10, 0});  // Qwen3.5's M-RoPE split
  meta.add_f32(arch + ".rope.freq_base", static_cast<float>(c.rope_theta));
  meta.add_f32(arch + ".attention.layer_norm_rms_epsilon", c.rms_eps);
  meta.add_u32(arch + ".ssm.conv_kernel", c.conv_kernel);
  meta.add_u32(arch + ".ssm.state_size", c.head_dim_k_lin);
  meta.add_u32(arch + ".ssm.group_count", c.n_heads_k_lin);
  meta.add_u32(arch + ".ssm.time_step_rank", c.n_heads_v_lin);
  meta.add_u32(arch + ".ssm.inner_size", c.value_dim_lin());
  meta.add_u32(arch + ".full_attention_interval", full_attention_interval(c));
  meta.add_string_array("tokenizer.ggml.tokens", {"<a>", "b", ""});  // placeholder: no real tokenizer

  Writer w;
  const auto skip = [&](const std::string& tensor) {
    return std::find(o.skip.begin(), o.skip.end(), tensor) != o.skip.end();
  };
  const auto add = [&](const std::string& tensor, std::vector<int64_t> shape, const std::vector<float>& values,
                       DType type) {
    if (!skip(tensor)) w.add(tensor, std::move(shape), values, type);
  };
  const auto plus_one = [](std::vector<float> v) {
    for (float& x : v) x += 1.0f;
    return v;
  };
  const int64_t H = c.hidden, I = c.intermediate, V = c.vocab;
  add("token_embd.weight", {V, H}, read_floats(t, p + "embed_tokens.weight"), o.matrix_type);
  add("output_norm.weight", {H}, plus_one(read_floats(t, p + "norm.weight")), DType::kF32);
  if (!c.tie_word_embeddings) add("output.weight", {V, H}, read_floats(t, layout.lm_head), o.matrix_type);

  const std::vector<uint32_t> old_of = tiled_order(c.n_heads_v_lin, c.n_heads_k_lin);
  const size_t key_dim = c.key_dim_lin(), dv = c.head_dim_v_lin, nv = c.n_heads_v_lin;
  for (uint32_t i = 0; i < c.num_layers; ++i) {
    const std::string hf_layer = fmt::format("{}layers.{}.", p, i);
    const std::string blk = fmt::format("blk.{}.", i);
    const auto get = [&](std::string_view rest) { return read_floats(t, hf_layer + std::string(rest)); };
    add(blk + "attn_norm.weight", {H}, plus_one(get("input_layernorm.weight")), DType::kF32);
    add(blk + "post_attention_norm.weight", {H}, plus_one(get("post_attention_layernorm.weight")), DType::kF32);
    add(blk + "ffn_gate.weight", {I, H}, get("mlp.gate_proj.weight"), o.matrix_type);
    add(blk + "ffn_up.weight", {I, H}, get("mlp.up_proj.weight"), o.matrix_type);
    add(blk + "ffn_down.weight", {H, I}, get("mlp.down_proj.weight"), o.matrix_type);
    if (c.layer_types[i] == LayerType::kFullAttention) {
      const int64_t hd = c.head_dim;
      add(blk + "attn_q.weight", {c.q_proj_dim(), H}, get("self_attn.q_proj.weight"), o.matrix_type);
      add(blk + "attn_k.weight", {c.kv_dim(), H}, get("self_attn.k_proj.weight"), o.matrix_type);
      add(blk + "attn_v.weight", {c.kv_dim(), H}, get("self_attn.v_proj.weight"), o.matrix_type);
      add(blk + "attn_output.weight", {H, c.q_dim()}, get("self_attn.o_proj.weight"), o.matrix_type);
      add(blk + "attn_q_norm.weight", {hd}, plus_one(get("self_attn.q_norm.weight")), DType::kF32);
      add(blk + "attn_k_norm.weight", {hd}, plus_one(get("self_attn.k_norm.weight")), DType::kF32);
      continue;
    }
    std::vector<float> qkv = get("linear_attn.in_proj_qkv.weight");
    reorder_rows(qkv, H, 2 * key_dim, dv, old_of);
    add(blk + "attn_qkv.weight", {c.conv_dim_lin(), H}, qkv, o.matrix_type);
    std::vector<float> z = get("linear_attn.in_proj_z.weight");
    reorder_rows(z, H, 0, dv, old_of);
    add(blk + "attn_gate.weight", {c.value_dim_lin(), H}, z, o.matrix_type);
    std::vector<float> beta = get("linear_attn.in_proj_b.weight"), alpha = get("linear_attn.in_proj_a.weight");
    reorder_rows(beta, H, 0, 1, old_of);
    reorder_rows(alpha, H, 0, 1, old_of);
    add(blk + "ssm_beta.weight", {static_cast<int64_t>(nv), H}, beta, o.small_type);
    add(blk + "ssm_alpha.weight", {static_cast<int64_t>(nv), H}, alpha, o.small_type);
    std::vector<float> conv = get("linear_attn.conv1d.weight");  // [conv_dim, 1, Kc] -> [conv_dim, Kc]
    reorder_rows(conv, c.conv_kernel, 2 * key_dim, dv, old_of);
    add(blk + "ssm_conv1d.weight", {c.conv_dim_lin(), c.conv_kernel}, conv, DType::kF32);
    std::vector<float> dt = get("linear_attn.dt_bias"), a_log = get("linear_attn.A_log");
    reorder_rows(dt, 1, 0, 1, old_of);
    reorder_rows(a_log, 1, 0, 1, old_of);
    for (float& a : a_log) a = static_cast<float>(-std::exp(double{a}));  // ssm_a = -exp(A_log)
    add(blk + "ssm_dt.bias", {static_cast<int64_t>(nv)}, dt, DType::kF32);
    add(blk + "ssm_a", {static_cast<int64_t>(nv)}, a_log, DType::kF32);
    add(blk + "ssm_norm.weight", {static_cast<int64_t>(dv)}, get("linear_attn.norm.weight"), DType::kF32);
    std::vector<float> out_proj = get("linear_attn.out_proj.weight");
    reorder_cols(out_proj, H, dv, old_of);
    add(blk + "ssm_out.weight", {H, c.value_dim_lin()}, out_proj, o.matrix_type);
  }
  if (o.mtp_block) {
    add(fmt::format("blk.{}.nextn.eh_proj.weight", c.num_layers), {H, 2 * H}, std::vector<float>(2 * H * H),
        DType::kF32);
  }
  write_gguf(out, meta, w.tensors());
}

void write_gguf_from_checkpoint(const Checkpoint& hf, const std::filesystem::path& out,
                                const GgufConvertOptions& options) {
  write_gguf_checkpoint(hf.config, *hf.tensors, hf.layout, hf.path.filename().string(), out, options);
}

}  // namespace qwen35
