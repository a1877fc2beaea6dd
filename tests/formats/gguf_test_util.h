// Test helpers for GGUF: a Hugging Face checkpoint (the goldens) written as a
// llama.cpp-style GGUF with the converter's transforms (spec 2.3: norms +1,
// ssm_a = -exp(A_log), conv1d squeezed, value heads re-ordered to tiled), and
// random ggml blocks with finite scales.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "qwen35/checkpoint.h"
#include "qwen35/dtype.h"

namespace qwen35::testing {

struct GgufConvertOptions {
  DType matrix_type = DType::kQ8_0;  // every linear projection and the embedding / lm_head
  DType small_type = DType::kF32;    // ssm_alpha / ssm_beta ([nv, H]): left unquantized, as converters do
  std::string architecture = "qwen35";
  std::vector<std::string> skip;     // GGUF tensor names to leave out
  bool mtp_block = false;            // add an MTP block blk.L (nextn_predict_layers 1, counted in block_count)
};

void write_gguf_from_checkpoint(const Checkpoint& hf, const std::filesystem::path& out,
                                const GgufConvertOptions& options);

// `blocks` random blocks of `type` with random codes and finite fp16 scales.
std::vector<std::byte> random_blocks(DType type, size_t blocks, uint32_t seed);

}  // namespace qwen35::testing
