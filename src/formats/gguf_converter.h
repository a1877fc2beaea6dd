// Writes a Hugging Face-layout Qwen3.5 decoder as a llama.cpp-style GGUF with
// the converter's transforms (spec 2.3: norms +1, ssm_a = -exp(A_log), conv1d
// squeezed, value heads re-ordered to tiled). For tests and `qwen35 bench
// --dtype q4_k`, not a user-facing converter: the tokenizer is a 3-token placeholder.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "qwen35/checkpoint.h"
#include "qwen35/dtype.h"

namespace qwen35 {

struct GgufConvertOptions {
  DType matrix_type = DType::kQ8_0;  // every linear projection and the embedding / lm_head
  DType small_type = DType::kF32;    // ssm_alpha / ssm_beta ([nv, H]): left unquantized, as converters do
  std::string architecture = "qwen35";
  std::vector<std::string> skip;     // GGUF tensor names to leave out (tests of the loader's errors)
  bool mtp_block = false;            // add an MTP block blk.L (nextn_predict_layers 1, counted in block_count)
};

// `tensors` must hold float tensors (F32, F16, BF16) in the Hugging Face layout
// `layout` (norms without the +1, conv1d [C, 1, K], nothing quantized); throws
// Error otherwise. `name` becomes general.name. Each tensor is widened to f32 one
// at a time; the file's tensors, in their GGUF types, are held until written.
void write_gguf_checkpoint(const Qwen35ForwardConfig& config, const TensorSource& tensors,
                           const CheckpointLayout& layout, std::string_view name, const std::filesystem::path& out,
                           const GgufConvertOptions& options);

// The same for an opened checkpoint, named after its path.
void write_gguf_from_checkpoint(const Checkpoint& hf, const std::filesystem::path& out,
                                const GgufConvertOptions& options);

}  // namespace qwen35
