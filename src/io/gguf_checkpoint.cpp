// open_gguf_checkpoint: a llama.cpp GGUF file (arch `qwen35`, spec 2.3) as a
// Checkpoint. The config comes from the `qwen35.*` metadata; the tensors are
// shown to the model builder under the Hugging Face names (one table below),
// so the model code is the same for every container. The converter's
// transforms are honoured or undone here: norms already hold the +1 (layout
// flag), conv1d [conv_dim, Kc] is shown as [conv_dim, 1, Kc] (same element
// order), ssm_a = -exp(A_log) is turned back into A_log, and the value heads
// stay in the file's tiled order (config.value_head_map = kTiled): every
// per-value-head tensor (v rows of attn_qkv and the conv channels, attn_gate,
// ssm_alpha/beta, ssm_a, ssm_dt, ssm_out columns) was permuted alike.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <unordered_map>

#include "io/gguf.h"
#include "qwen35/checkpoint.h"
#include "qwen35/error.h"

namespace qwen35 {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "model.";  // the Hugging Face text-only names the builder asks for

// One tensor the model needs: its Hugging Face name after `model.layers.N.`
// (or at the top level), and the GGUF names converters use for it, preferred first.
struct NameEntry {
  std::string_view hf;
  std::vector<std::string_view> gguf;
};

const std::vector<NameEntry>& layer_common_names() {
  static const std::vector<NameEntry> names = {
      {"input_layernorm.weight", {"attn_norm.weight"}},
      {"post_attention_layernorm.weight", {"post_attention_norm.weight", "ffn_norm.weight"}},
      {"mlp.gate_proj.weight", {"ffn_gate.weight"}},
      {"mlp.up_proj.weight", {"ffn_up.weight"}},
      {"mlp.down_proj.weight", {"ffn_down.weight"}},
  };
  return names;
}

const std::vector<NameEntry>& full_attention_names() {
  static const std::vector<NameEntry> names = {
      {"self_attn.q_proj.weight", {"attn_q.weight"}},          {"self_attn.k_proj.weight", {"attn_k.weight"}},
      {"self_attn.v_proj.weight", {"attn_v.weight"}},          {"self_attn.o_proj.weight", {"attn_output.weight"}},
      {"self_attn.q_norm.weight", {"attn_q_norm.weight"}},     {"self_attn.k_norm.weight", {"attn_k_norm.weight"}},
  };
  return names;
}

constexpr std::string_view kALog = "linear_attn.A_log";
constexpr std::string_view kConv = "linear_attn.conv1d.weight";

const std::vector<NameEntry>& linear_attention_names() {
  static const std::vector<NameEntry> names = {
      {"linear_attn.in_proj_qkv.weight", {"attn_qkv.weight"}},
      {"linear_attn.in_proj_z.weight", {"attn_gate.weight"}},
      {"linear_attn.in_proj_b.weight", {"ssm_beta.weight"}},
      {"linear_attn.in_proj_a.weight", {"ssm_alpha.weight"}},
      {kConv, {"ssm_conv1d.weight"}},
      {"linear_attn.dt_bias", {"ssm_dt.bias", "ssm_dt", "ssm_dt.weight"}},
      {kALog, {"ssm_a", "ssm_a.weight"}},
      {"linear_attn.norm.weight", {"ssm_norm.weight"}},
      {"linear_attn.out_proj.weight", {"ssm_out.weight"}},
  };
  return names;
}

// Reads the typed metadata `arch`.`key`.
class Metadata {
 public:
  Metadata(const GgufContents& contents, std::string where, std::string arch)
      : contents_(contents), where_(std::move(where)), arch_(std::move(arch)) {}

  const GgufValue* find(std::string_view key) const { return contents_.find(arch_ + "." + std::string(key)); }

  uint32_t u32(std::string_view key, std::string_view meaning, std::optional<uint32_t> fallback = std::nullopt) const {
    const GgufValue* v = find(key);
    if (v == nullptr) {
      if (fallback) return *fallback;
      fail("{}: missing metadata '{}.{}' ({})", where_, arch_, key, meaning);
    }
    int64_t value = -1;
    if (const auto* u = std::get_if<uint64_t>(&v->scalar); u && v->is_integer()) {
      value = *u <= 0xffffffffu ? static_cast<int64_t>(*u) : -1;
    } else if (const auto* i = std::get_if<int64_t>(&v->scalar); i && v->is_integer()) {
      value = *i <= 0xffffffff ? *i : -1;
    }
    if (value < 0) {
      fail("{}: metadata '{}.{}' ({}) must be a non-negative integer below 2^32, found {}", where_, arch_, key,
           meaning, v->describe());
    }
    return static_cast<uint32_t>(value);
  }

  double number(std::string_view key, std::string_view meaning) const {
    const GgufValue* v = find(key);
    if (v == nullptr) fail("{}: missing metadata '{}.{}' ({})", where_, arch_, key, meaning);
    if (const auto* d = std::get_if<double>(&v->scalar)) return *d;
    if (const auto* u = std::get_if<uint64_t>(&v->scalar); u && v->is_integer()) return static_cast<double>(*u);
    if (const auto* i = std::get_if<int64_t>(&v->scalar); i && v->is_integer()) return static_cast<double>(*i);
    fail("{}: metadata '{}.{}' ({}) must be a number, found {}", where_, arch_, key, meaning, v->describe());
  }

 private:
  const GgufContents& contents_;
  std::string where_;
  std::string arch_;
};

std::string architecture(const GgufContents& contents, const std::string& where) {
  const GgufValue* arch = contents.find("general.architecture");
  if (arch == nullptr) fail("{}: missing metadata 'general.architecture' (expected 'qwen35')", where);
  const auto* name = std::get_if<std::string_view>(&arch->scalar);
  if (name == nullptr || arch->type != GgufValueType::kString) {
    fail("{}: metadata 'general.architecture' must be a string, found {}", where, arch->describe());
  }
  if (*name == "qwen35moe") {
    fail("{}: architecture 'qwen35moe' (Qwen3.5 mixture of experts) is not supported yet; only dense 'qwen35' "
         "GGUF files load",
         where);
  }
  if (*name != "qwen35") fail("{}: unsupported architecture '{}' (expected 'qwen35')", where, *name);
  return std::string(*name);
}

Qwen35ForwardConfig config_from_metadata(const GgufContents& contents, const std::string& where) {
  const Metadata m(contents, where, architecture(contents, where));
  Qwen35ForwardConfig c;
  const uint32_t blocks = m.u32("block_count", "number of layers");
  const uint32_t mtp_layers = m.u32("nextn_predict_layers", "multi-token-prediction layers", 0);
  if (mtp_layers >= blocks) {
    fail("{}: metadata qwen35.nextn_predict_layers ({}) leaves no decoder layers of block_count {}", where, mtp_layers,
         blocks);
  }
  // The MTP block(s) come last and are ignored (spec 2.3). llama.cpp counts them
  // in block_count; should a file count them outside, its blk.{block_count} exists.
  const std::string past_last = fmt::format("blk.{}.", blocks);
  const bool mtp_outside = std::any_of(contents.tensors.begin(), contents.tensors.end(),
                                       [&](const TensorView& t) { return t.name.starts_with(past_last); });
  c.num_layers = mtp_outside ? blocks : blocks - mtp_layers;
  c.hidden = m.u32("embedding_length", "hidden size");
  c.intermediate = m.u32("feed_forward_length", "MLP width");
  c.n_heads_q = m.u32("attention.head_count", "query heads");
  c.n_heads_kv = m.u32("attention.head_count_kv", "key/value heads");
  c.head_dim = m.u32("attention.key_length", "attention head dim",
                     c.n_heads_q > 0 ? std::optional<uint32_t>(c.hidden / c.n_heads_q) : std::nullopt);
  const uint32_t value_length = m.u32("attention.value_length", "attention value head dim", c.head_dim);
  if (value_length != c.head_dim) {
    fail("{}: attention.value_length {} differs from attention.key_length {}; Qwen3.5 uses one head dim", where,
         value_length, c.head_dim);
  }
  c.rotary_dim = m.u32("rope.dimension_count", "rotary dims", c.head_dim);
  c.rope_theta = m.number("rope.freq_base", "RoPE theta");
  c.rms_eps = static_cast<float>(m.number("attention.layer_norm_rms_epsilon", "RMSNorm epsilon"));
  c.conv_kernel = m.u32("ssm.conv_kernel", "DeltaNet conv kernel");
  c.head_dim_k_lin = m.u32("ssm.state_size", "DeltaNet key head dim");
  c.n_heads_k_lin = m.u32("ssm.group_count", "DeltaNet key heads");
  c.n_heads_v_lin = m.u32("ssm.time_step_rank", "DeltaNet value heads");
  const uint32_t inner = m.u32("ssm.inner_size", "DeltaNet value heads x value head dim");
  if (c.n_heads_v_lin == 0 || inner % c.n_heads_v_lin != 0) {
    fail("{}: metadata qwen35.ssm.inner_size {} is not a multiple of qwen35.ssm.time_step_rank {}", where, inner,
         c.n_heads_v_lin);
  }
  c.head_dim_v_lin = inner / c.n_heads_v_lin;
  const uint32_t interval = m.u32("full_attention_interval", "every how many layers one is full attention", 4);
  if (interval == 0) fail("{}: metadata qwen35.full_attention_interval must be positive", where);
  for (uint32_t i = 0; i < c.num_layers; ++i) {
    c.layer_types.push_back((i + 1) % interval == 0 ? LayerType::kFullAttention : LayerType::kLinearAttention);
  }
  c.max_position_embeddings = m.u32("context_length", "training context", c.max_position_embeddings);
  // Spec 0.3: llama.cpp's converter puts the value heads in tiled order.
  c.value_head_map = ValueHeadMap::kTiled;
  return c;
}

class GgufTensorSource final : public TensorSource {
 public:
  explicit GgufTensorSource(const fs::path& path) : file_(path) {
    for (const TensorView& view : file_.contents().tensors) by_gguf_name_.emplace(view.name, &view);
  }

  const GgufContents& contents() const { return file_.contents(); }

  // Shows GGUF tensor `gguf` (the first of the candidates present) as `hf`;
  // fails naming the preferred GGUF name when none is present.
  void add(const std::string& hf, const std::string& block, const NameEntry& entry) {
    const TensorView* found = nullptr;
    for (std::string_view candidate : entry.gguf) {
      if (const auto it = by_gguf_name_.find(block + std::string(candidate)); it != by_gguf_name_.end()) {
        found = it->second;
        break;
      }
    }
    if (found == nullptr) {
      fail("{}: missing tensor '{}{}' (the model's '{}')", origin(), block, entry.gguf.front(), hf);
    }
    TensorView view = *found;
    if (entry.hf == kConv && view.shape.size() == 2) view.shape = {view.shape[0], 1, view.shape[1]};
    if (entry.hf == kALog) view = a_log_from_ssm_a(view);
    by_name_.emplace(hf, std::move(view));
  }

  void add_optional(const std::string& hf, const std::string& gguf) {
    if (const auto it = by_gguf_name_.find(gguf); it != by_gguf_name_.end()) by_name_.emplace(hf, *it->second);
  }

  const TensorView* find(std::string_view name) const override {
    const auto it = by_name_.find(std::string(name));
    return it == by_name_.end() ? nullptr : &it->second;
  }

  std::vector<std::string> names() const override {
    std::vector<std::string> names;
    for (const auto& [name, view] : by_name_) names.push_back(name);
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string origin() const override { return file_.path().string(); }

 private:
  // ssm_a holds -exp(A_log) (spec 0.7); the kernels take A_log, recovered in
  // double (one float rounding, so -exp(A_log) comes back within an ulp or two).
  TensorView a_log_from_ssm_a(const TensorView& ssm_a) {
    if (!is_float_dtype(ssm_a.dtype)) {
      fail("{}: tensor '{}' has dtype {}; expected F32, F16 or BF16", ssm_a.file, ssm_a.name, dtype_name(ssm_a.dtype));
    }
    std::vector<float>& values = owned_.emplace_back(static_cast<size_t>(ssm_a.numel()));
    for (size_t i = 0; i < values.size(); ++i) {
      const double a = ssm_a.float_at(i);
      if (!(a < 0.0)) {
        fail("{}: tensor '{}' element {} is {}; expected ssm_a = -exp(A_log) < 0", ssm_a.file, ssm_a.name, i, a);
      }
      values[i] = static_cast<float>(std::log(-a));
    }
    TensorView view = ssm_a;
    view.dtype = DType::kF32;
    view.data = reinterpret_cast<const std::byte*>(values.data());
    view.bytes = values.size() * sizeof(float);
    return view;
  }

  GgufFile file_;
  std::unordered_map<std::string, const TensorView*> by_gguf_name_;
  std::unordered_map<std::string, TensorView> by_name_;
  std::vector<std::vector<float>> owned_;  // derived tensors (A_log); inner buffers never move
};

}  // namespace

Checkpoint open_gguf_checkpoint(const fs::path& path) {
  if (!fs::is_regular_file(path)) fail("GGUF file {} does not exist or is not a regular file", path.string());
  auto tensors = std::make_unique<GgufTensorSource>(path);
  const std::string where = path.string();
  Checkpoint checkpoint;
  checkpoint.path = path;
  checkpoint.config = config_from_metadata(tensors->contents(), where);
  Qwen35ForwardConfig& c = checkpoint.config;

  tensors->add(std::string(kPrefix) + "embed_tokens.weight", "", {"", {"token_embd.weight"}});
  const TensorView* embed = tensors->find(std::string(kPrefix) + "embed_tokens.weight");
  if (embed->shape.size() != 2) {
    fail("{}: tensor 'token_embd.weight' has shape {}; expected [vocab, {}]", where, embed->shape_string(), c.hidden);
  }
  c.vocab = static_cast<uint32_t>(embed->shape[0]);
  tensors->add(std::string(kPrefix) + "norm.weight", "", {"", {"output_norm.weight"}});
  tensors->add_optional("lm_head.weight", "output.weight");
  c.tie_word_embeddings = tensors->find("lm_head.weight") == nullptr;

  for (uint32_t i = 0; i < c.num_layers; ++i) {
    const std::string block = fmt::format("blk.{}.", i);
    const std::string layer = fmt::format("{}layers.{}.", kPrefix, i);
    auto add_all = [&](const std::vector<NameEntry>& entries) {
      for (const NameEntry& e : entries) tensors->add(layer + std::string(e.hf), block, e);
    };
    add_all(layer_common_names());
    add_all(c.layer_types[i] == LayerType::kFullAttention ? full_attention_names() : linear_attention_names());
  }
  try {
    c.validate();
  } catch (const Error& e) {
    fail("{}: {}", where, e.what());
  }

  checkpoint.layout = CheckpointLayout::hugging_face(std::string(kPrefix));
  checkpoint.layout.norms_include_one = true;  // the converter adds +1 to every zero-centred norm (spec 0.1)
  checkpoint.tensors = std::move(tensors);
  return checkpoint;
}

Checkpoint open_checkpoint(const fs::path& path) {
  if (!fs::is_regular_file(path)) return open_hf_checkpoint(path);
  char magic[4] = {};
  std::ifstream(path, std::ios::binary).read(magic, 4);
  if (path.extension() == ".gguf" || std::memcmp(magic, "GGUF", 4) == 0) return open_gguf_checkpoint(path);
  fail("{} is a file but not a GGUF file; expected a .gguf file or a Hugging Face / MLX checkpoint directory",
       path.string());
}

}  // namespace qwen35
