// The MLX quantizer: see mlx_quantizer.h for the rules.
#include "formats/mlx_quantizer.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "io/safetensors.h"
#include "qwen35/error.h"

namespace qwen35 {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMlxPrefix = "language_model.model.";
constexpr std::string_view kMlxLmHead = "language_model.lm_head.weight";


// mlx-lm quantizes every Linear and Embedding: the `*_proj` ones, and the
// Gated DeltaNet input projections `in_proj_qkv`, `in_proj_z`, `in_proj_a`, `in_proj_b`.
bool is_quantizable(std::string_view rest, const TensorView& t, bool is_lm_head, uint32_t group_size) {
  const bool in_proj = rest.find("linear_attn.in_proj_") != std::string_view::npos && rest.ends_with(".weight");
  const bool linear = is_lm_head || rest == "embed_tokens.weight" || rest.ends_with("_proj.weight") || in_proj;
  return linear && is_float_dtype(t.dtype) && t.shape.size() == 2 && t.shape[1] % group_size == 0;
}

bool is_zero_centred_norm(std::string_view rest) {
  return rest.ends_with("norm.weight") && !rest.ends_with("linear_attn.norm.weight");
}

}  // namespace

// The quantizer's output: tensors under MLX names, in memory, each either owned
// here (quantized or transformed) or a view of the source's bytes.
class MlxQuantizedTensors final : public TensorSource {
 public:
  explicit MlxQuantizedTensors(std::string origin) : origin_(std::move(origin)) {}
  std::span<const std::byte> keep(std::vector<std::byte> bytes) { return owned_.emplace_back(std::move(bytes)); }
  void add(std::string name, DType dtype, std::vector<int64_t> shape, std::span<const std::byte> bytes) {
    tensors_.push_back(TensorToWrite{std::move(name), dtype, std::move(shape), bytes});
    const TensorToWrite& t = tensors_.back();
    views_.emplace(t.name, TensorView{.name = t.name, .dtype = t.dtype, .shape = t.shape, .data = t.bytes.data(),
                                      .bytes = t.bytes.size(), .file = origin_});
  }
  std::vector<TensorToWrite> to_write() const { return {tensors_.begin(), tensors_.end()}; }

  const TensorView* find(std::string_view name) const override {
    const auto it = views_.find(std::string(name));
    return it == views_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> names() const override {
    std::vector<std::string> names;
    for (const TensorToWrite& t : tensors_) names.push_back(t.name);
    return names;
  }
  std::string origin() const override { return origin_; }

 private:
  std::string origin_;
  std::deque<std::vector<std::byte>> owned_;
  std::deque<TensorToWrite> tensors_;
  std::map<std::string, TensorView> views_;
};

namespace {

using Writer = MlxQuantizedTensors;

void add_quantized(Writer& out, const std::string& module, const TensorView& t, MlxAffineParams p) {
  const auto rows = static_cast<uint32_t>(t.shape[0]), cols = static_cast<uint32_t>(t.shape[1]);
  if (!is_float_dtype(t.dtype)) fail("quantize: '{}' is {}, not a float tensor", t.name, dtype_name(t.dtype));
  const uint32_t words = cols * p.bits / 32, groups = cols / p.group_size;
  const size_t scale_size = dtype_size(t.dtype);
  std::vector<std::byte> codes(size_t{rows} * words * 4), scales(size_t{rows} * groups * scale_size),
      biases(scales.size());
  // Rows are independent: each thread widens and quantizes its own (a 9B
  // checkpoint has matrices of a billion weights).
  const auto quantize_rows = [&](uint32_t begin, uint32_t end) {
    std::vector<float> w(cols);
    for (uint32_t r = begin; r < end; ++r) {
      for (uint32_t c = 0; c < cols; ++c) w[c] = t.float_at(size_t{r} * cols + c);
      mlx_quantize_row(w.data(), cols, p, t.dtype, reinterpret_cast<uint32_t*>(codes.data()) + size_t{r} * words,
                       scales.data() + size_t{r} * groups * scale_size,
                       biases.data() + size_t{r} * groups * scale_size);
    }
  };
  const uint32_t threads = std::clamp<uint32_t>(std::thread::hardware_concurrency(), 1, std::max(rows / 64, 1u));
  std::vector<std::future<void>> jobs;
  for (uint32_t i = 0; i < threads; ++i) {
    jobs.push_back(std::async(std::launch::async, quantize_rows, static_cast<uint32_t>(uint64_t{rows} * i / threads),
                              static_cast<uint32_t>(uint64_t{rows} * (i + 1) / threads)));
  }
  for (auto& job : jobs) job.get();
  out.add(module + ".weight", DType::kU32, {rows, words}, out.keep(std::move(codes)));
  out.add(module + ".scales", t.dtype, {rows, groups}, out.keep(std::move(scales)));
  out.add(module + ".biases", t.dtype, {rows, groups}, out.keep(std::move(biases)));
}

void add_tensor(Writer& out, const CheckpointLayout& layout, const std::string& out_name, std::string_view rest,
                const TensorView& t, MlxAffineParams p) {
  const bool is_lm_head = out_name == kMlxLmHead;
  if (is_quantizable(rest, t, is_lm_head, p.group_size)) {
    add_quantized(out, out_name.substr(0, out_name.size() - std::string_view(".weight").size()), t, p);
  } else if (rest.ends_with("conv1d.weight") && layout.conv == ConvLayout::kChannelOneKernel &&
             t.shape.size() == 3) {
    out.add(out_name, t.dtype, {t.shape[0], t.shape[2], t.shape[1]}, {t.data, t.bytes});  // same element order
  } else if (is_zero_centred_norm(rest) && !layout.norms_include_one && is_float_dtype(t.dtype)) {
    std::vector<float> w = t.to_floats();
    for (float& v : w) v += 1.0f;
    std::vector<std::byte> bytes(w.size() * 4);
    std::memcpy(bytes.data(), w.data(), bytes.size());
    out.add(out_name, DType::kF32, t.shape, out.keep(std::move(bytes)));
  } else {
    out.add(out_name, t.dtype, t.shape, {t.data, t.bytes});
  }
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read {}", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_config(const fs::path& source_dir, const fs::path& out_dir, MlxAffineParams p) {
  nlohmann::json config = nlohmann::json::parse(read_text(source_dir / "config.json"));
  const nlohmann::json block = {{"group_size", p.group_size}, {"bits", p.bits}};
  config["quantization"] = block;
  config["quantization_config"] = block;
  std::ofstream out(out_dir / "config.json");
  out << config.dump(2) << "\n";
  if (!out) fail("{}: cannot write config.json", out_dir.string());
}

// Tokenizer, chat template and generation settings travel with the weights.
void copy_side_files(const fs::path& source_dir, const fs::path& out_dir) {
  for (const fs::directory_entry& entry : fs::directory_iterator(source_dir)) {
    const fs::path name = entry.path().filename();
    const std::string ext = entry.path().extension().string();
    const bool side = ext == ".json" || ext == ".jinja" || ext == ".txt" || ext == ".model";
    if (!entry.is_regular_file() || !side || name == "config.json" || name == "model.safetensors.index.json") continue;
    fs::copy_file(entry.path(), out_dir / name, fs::copy_options::overwrite_existing);
  }
}

}  // namespace

namespace {

std::unique_ptr<MlxQuantizedTensors> quantize_tensors(const TensorSource& source, const CheckpointLayout& layout,
                                                      MlxAffineParams p) {
  if (p.bits != 4 && p.bits != 8) fail("quantize: unsupported bits {} (supported: 4, 8)", p.bits);
  if (p.group_size != 32 && p.group_size != 64 && p.group_size != 128) {
    fail("quantize: unsupported group size {} (supported: 32, 64, 128)", p.group_size);
  }
  if (layout.quantization.defaults) fail("quantize: {} is already quantized", source.origin());
  auto out = std::make_unique<MlxQuantizedTensors>(source.origin() + " quantized to mlx" + std::to_string(p.bits));
  for (const std::string& name : source.names()) {
    const TensorView& t = *source.find(name);
    if (t.dtype == DType::kU32) fail("quantize: {} is already quantized ('{}')", source.origin(), name);
    if (name == layout.lm_head) {
      add_tensor(*out, layout, std::string(kMlxLmHead), "lm_head.weight", t, p);
    } else if (name.starts_with(layout.tensor_prefix)) {
      const std::string_view rest = std::string_view(name).substr(layout.tensor_prefix.size());
      if (rest.starts_with("mtp.") || rest.starts_with("visual.")) continue;
      add_tensor(*out, layout, std::string(kMlxPrefix) + std::string(rest), rest, t, p);
    }
  }
  return out;
}

}  // namespace

MlxQuantized quantize_to_mlx(const TensorSource& source, const CheckpointLayout& layout, MlxAffineParams p) {
  MlxQuantized result;
  result.tensors = quantize_tensors(source, layout, p);
  result.layout.tensor_prefix = std::string(kMlxPrefix);
  result.layout.lm_head = std::string(kMlxLmHead);
  result.layout.norms_include_one = true;
  result.layout.conv = ConvLayout::kChannelKernelOne;
  result.layout.quantization.defaults = QuantizationConfig::Params{.bits = p.bits, .group_size = p.group_size};
  return result;
}

void write_mlx_checkpoint(const Checkpoint& source, const fs::path& out_dir, MlxAffineParams p) {
  if (fs::exists(out_dir / "config.json")) fail("quantize: {} already holds a checkpoint", out_dir.string());
  const std::unique_ptr<MlxQuantizedTensors> quantized = quantize_tensors(*source.tensors, source.layout, p);
  fs::create_directories(out_dir);
  write_safetensors(out_dir / "model.safetensors", quantized->to_write(), {{"format", "mlx"}});
  write_config(source.path, out_dir, p);
  copy_side_files(source.path, out_dir);
}

}  // namespace qwen35
