// open_hf_checkpoint: a Hugging Face checkpoint directory (config.json plus one
// model.safetensors, several shards named by model.safetensors.index.json, or
// any *.safetensors) opened as one TensorSource. Every shard is mapped once and
// every header validated here; a tensor name must live in exactly one file.
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

#include "io/json_text.h"
#include "io/safetensors.h"
#include "qwen35/checkpoint.h"
#include "qwen35/error.h"

namespace qwen35 {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kMultimodalPrefix = "model.language_model.";
constexpr std::string_view kMlxPrefix = "language_model.model.";  // mlx-lm's sanitized names
constexpr std::string_view kTextOnlyPrefix = "model.";
constexpr std::string_view kMlxLmHead = "language_model.lm_head.weight";

std::string read_text_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read {}", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail("error while reading {}", path.string());
  return text.str();
}

// The distinct shard files the index names (each checked to exist), and in
// `listed` which tensors the index places in each.
std::vector<fs::path> shards_from_index(const fs::path& dir, const fs::path& index_path,
                                        std::multimap<fs::path, std::string>& listed) {
  const json index = parse_json_object(read_text_file(index_path), index_path.string());
  const auto map = index.find("weight_map");
  if (map == index.end() || !map->is_object()) {
    fail("{}: no \"weight_map\" object (tensor name -> shard file) at the top level", index_path.string());
  }
  std::vector<fs::path> shards;
  for (const auto& [name, file] : map->items()) {
    if (!file.is_string()) {
      fail("{}: weight_map entry for '{}' must be a file name, found {}", index_path.string(), name, file.dump());
    }
    const fs::path shard = dir / file.get<std::string>();
    if (std::find(shards.begin(), shards.end(), shard) == shards.end()) {
      if (!fs::is_regular_file(shard)) {
        fail("{}: weight_map places tensor '{}' in {}, but that file does not exist", index_path.string(), name,
             shard.string());
      }
      shards.push_back(shard);
    }
    listed.emplace(shard, name);
  }
  if (shards.empty()) fail("{}: weight_map is empty", index_path.string());
  return shards;
}

std::vector<fs::path> safetensors_in(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".safetensors") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) fail("{}: no model.safetensors.index.json and no *.safetensors files", dir.string());
  return files;
}

class HfTensorSource final : public TensorSource {
 public:
  HfTensorSource(fs::path dir, std::vector<SafetensorsFile> files) : dir_(std::move(dir)), files_(std::move(files)) {
    for (const SafetensorsFile& file : files_) {
      for (const TensorView& view : file.tensors()) {
        const auto [it, inserted] = by_name_.emplace(view.name, &view);
        if (!inserted) {
          fail("{}: tensor '{}' appears in both {} and {}", dir_.string(), view.name, it->second->file, view.file);
        }
      }
    }
  }

  const TensorView* find(std::string_view name) const override {
    const auto it = by_name_.find(std::string(name));
    return it == by_name_.end() ? nullptr : it->second;
  }

  std::vector<std::string> names() const override {
    std::vector<std::string> names;
    names.reserve(by_name_.size());
    for (const auto& [name, view] : by_name_) names.push_back(name);
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string origin() const override { return dir_.string(); }

 private:
  fs::path dir_;
  std::vector<SafetensorsFile> files_;  // owns the mappings the views point into
  std::unordered_map<std::string, const TensorView*> by_name_;
};

std::string detect_prefix(const TensorSource& tensors) {
  bool multimodal = false;
  for (const std::string& name : tensors.names()) {
    if (name.starts_with(kMlxPrefix)) return std::string(kMlxPrefix);
    multimodal = multimodal || name.starts_with(kMultimodalPrefix);
  }
  return std::string(multimodal ? kMultimodalPrefix : kTextOnlyPrefix);
}

// The layout as the files hold it. mlx-lm's sanitize moves conv1d to [C, K, 1]
// and adds +1 to the zero-centred norms in the same step (spec 2.2), so the
// conv1d shape of the first linear-attention layer tells both.
CheckpointLayout detect_layout(const TensorSource& tensors) {
  CheckpointLayout layout = CheckpointLayout::hugging_face(detect_prefix(tensors));
  if (tensors.find(std::string(kMlxLmHead)) != nullptr) layout.lm_head = std::string(kMlxLmHead);
  for (const std::string& name : tensors.names()) {
    if (!name.starts_with(layout.tensor_prefix) || !name.ends_with("linear_attn.conv1d.weight")) continue;
    const std::vector<int64_t>& shape = tensors.find(name)->shape;
    if (shape.size() == 3 && shape[2] == 1 && shape[1] != 1) {
      layout.conv = ConvLayout::kChannelKernelOne;
      layout.norms_include_one = true;
    }
    break;
  }
  return layout;
}

}  // namespace

Checkpoint open_hf_checkpoint(const fs::path& dir) {
  if (!fs::is_directory(dir)) fail("checkpoint directory {} does not exist or is not a directory", dir.string());
  const fs::path config_path = dir / "config.json";
  if (!fs::is_regular_file(config_path)) {
    fail("{}: config.json not found in the checkpoint directory", config_path.string());
  }

  Checkpoint checkpoint;
  checkpoint.path = dir;
  const std::string config_text = read_text_file(config_path);
  checkpoint.config = parse_hf_config(config_text, config_path.string());

  const fs::path index_path = dir / "model.safetensors.index.json";
  std::multimap<fs::path, std::string> listed;  // shard -> tensors the index places there
  const std::vector<fs::path> paths =
      fs::exists(index_path) ? shards_from_index(dir, index_path, listed) : safetensors_in(dir);

  std::vector<SafetensorsFile> files;
  for (const fs::path& path : paths) {
    files.emplace_back(path);
    for (auto [it, end] = listed.equal_range(path); it != end; ++it) {
      if (files.back().find(it->second) == nullptr) {
        fail("{}: weight_map places tensor '{}' in {}, but that file does not contain it", index_path.string(),
             it->second, path.string());
      }
    }
  }
  checkpoint.tensors = std::make_unique<HfTensorSource>(dir, std::move(files));
  checkpoint.layout = detect_layout(*checkpoint.tensors);
  checkpoint.layout.quantization = parse_quantization_config(config_text, config_path.string());
  // Spec section 1: a checkpoint without lm_head.weight is tied whatever the config says.
  if (checkpoint.tensors->find(checkpoint.layout.lm_head) == nullptr) checkpoint.config.tie_word_embeddings = true;
  return checkpoint;
}

}  // namespace qwen35
