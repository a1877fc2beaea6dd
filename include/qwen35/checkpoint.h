// The caller's side of weights: a checkpoint on disk seen as named host tensors
// (memory-mapped, never copied here) plus the decoder config read from it.
// The model builder (model.h) asks a TensorSource for each tensor it needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
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
  // Element i of an F32, F16 or BF16 tensor as float32.
  float float_at(size_t i) const;
  // All elements as float32; throws Error naming the tensor unless F32, F16 or BF16.
  std::vector<float> to_floats() const;
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

// The `quantization` block of an MLX config.json: default bits and group size,
// and per-module overrides keyed by module path ("language_model.model.layers.0.mlp.gate_proj");
// an override of `false` (nullopt here) means that module is not quantized.
struct QuantizationConfig {
  struct Params {
    uint32_t bits = 0;
    uint32_t group_size = 0;
  };
  std::optional<Params> defaults;
  std::map<std::string, std::optional<Params>> overrides;

  // The parameters for the module whose tensors are `module`.weight/.scales/.biases.
  std::optional<Params> for_module(const std::string& module) const;
};

// How a checkpoint stores the decoder, decided by the loader from what the files
// hold and consumed by Model::load, so that the model code never asks which
// tool wrote the checkpoint.
enum class ConvLayout : uint8_t {
  kChannelOneKernel,  // Hugging Face conv1d.weight [conv_dim, 1, K]
  kChannelKernelOne   // MLX conv layout [conv_dim, K, 1] (same element order)
};

struct CheckpointLayout {
  std::string tensor_prefix = "model.language_model.";  // or "model.", "language_model.model."
  std::string lm_head = "lm_head.weight";                // "language_model.lm_head.weight" in MLX files
  bool norms_include_one = false;                        // zero-centred norms already hold the +1 (MLX)
  ConvLayout conv = ConvLayout::kChannelOneKernel;
  QuantizationConfig quantization;

  // The Hugging Face layout with tensors under `prefix`.
  static CheckpointLayout hugging_face(std::string prefix);
};

struct Checkpoint {
  std::filesystem::path path;
  Qwen35ForwardConfig config;
  CheckpointLayout layout;
  std::unique_ptr<TensorSource> tensors;
};

// Parses a Hugging Face config.json text (text_config nested or flat) into a
// validated config. `where` names the file in error messages.
Qwen35ForwardConfig parse_hf_config(std::string_view json_text, std::string_view where);

// The `quantization` block of a config.json text (empty when there is none);
// bits must be 4 or 8 and group_size 32, 64 or 128. `where` names the file.
QuantizationConfig parse_quantization_config(std::string_view json_text, std::string_view where);

// Opens a Hugging Face Qwen3.5 checkpoint directory: config.json plus one
// model.safetensors or several shards listed in model.safetensors.index.json.
// Every header is validated here; tensor data stays memory-mapped. MLX
// checkpoints (names "language_model.model.*") open here too: the layout is
// read from the tensors themselves.
Checkpoint open_hf_checkpoint(const std::filesystem::path& dir);

// Opens a llama.cpp GGUF file (arch `qwen35`; spec 2.3): config from the
// `qwen35.*` metadata, tensors shown under the Hugging Face names, value heads
// kept in the file's tiled order (config.value_head_map = kTiled).
Checkpoint open_gguf_checkpoint(const std::filesystem::path& file);

// A `.gguf` file opens with open_gguf_checkpoint, a directory with open_hf_checkpoint.
Checkpoint open_checkpoint(const std::filesystem::path& path);

}  // namespace qwen35
