// The caller's side of weights: a checkpoint on disk seen as named host tensors
// (memory-mapped, never copied here) plus the decoder config read from it.
// The model builder (model.h) asks a TensorSource for each tensor it needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qwen35/config.h"
#include "qwen35/dtype.h"

namespace qwen35 {

struct TensorView {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;  // outermost first, as PyTorch prints it
  const std::byte* data = nullptr;
  size_t bytes = 0;
  std::string file;  // the file it lives in, for error messages

  int64_t numel() const;
  std::string shape_string() const;  // "[1024, 256]"
};

class TensorSource {
 public:
  virtual ~TensorSource() = default;
  // Null when no tensor has this exact name.
  virtual const TensorView* find(std::string_view name) const = 0;
  virtual std::vector<std::string> names() const = 0;
  // Where the tensors come from (a directory, a file, "random weights").
  virtual std::string origin() const = 0;
};

struct Checkpoint {
  std::filesystem::path path;
  Qwen35ForwardConfig config;
  // "model.language_model." (multimodal Hugging Face layout) or "model." (text-only).
  std::string tensor_prefix;
  std::unique_ptr<TensorSource> tensors;
};

// Parses a Hugging Face config.json text (text_config nested or flat) into a
// validated config. `where` names the file in error messages.
Qwen35ForwardConfig parse_hf_config(std::string_view json_text, std::string_view where);

// Opens a Hugging Face Qwen3.5 checkpoint directory: config.json plus one
// model.safetensors or several shards listed in model.safetensors.index.json.
// Every header is validated here; tensor data stays memory-mapped.
Checkpoint open_hf_checkpoint(const std::filesystem::path& dir);

}  // namespace qwen35
