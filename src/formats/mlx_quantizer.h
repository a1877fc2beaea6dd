// Writes an MLX-layout checkpoint (spec 2.2) from any checkpoint this project
// opens (what `qwen35 quantize` does), or makes one in memory (what `qwen35
// bench --dtype mlx8` does).
#pragma once

#include <filesystem>
#include <memory>

#include "qwen35/checkpoint.h"
#include "qwen35/mlx_affine.h"

namespace qwen35 {

// Rules: every 2-D float `*_proj.weight`, `linear_attn.in_proj_*.weight`,
// `embed_tokens.weight` and the lm_head whose row length the group size
// divides is quantized (scales and biases in
// the source dtype); the rest is copied, with the sanitize transforms mlx-lm
// applies: names `language_model.model.*` / `language_model.lm_head.weight`,
// conv1d as [C, K, 1], zero-centred norms with the +1 baked in (stored F32 so
// that 1 + w is exact), A_log and everything else unchanged. config.json gains
// the "quantization" block (and mlx-lm's "quantization_config" copy);
// tokenizer and generation files are copied. One model.safetensors is written.
void write_mlx_checkpoint(const Checkpoint& source, const std::filesystem::path& out_dir, MlxAffineParams params);

// The same quantization in memory: the MLX-named tensors and the layout that
// loads them. Tensors copied unchanged are views of `source`'s bytes, so
// `source` must outlive the result.
struct MlxQuantized {
  std::unique_ptr<TensorSource> tensors;
  CheckpointLayout layout;
};
MlxQuantized quantize_to_mlx(const TensorSource& source, const CheckpointLayout& layout, MlxAffineParams params);

}  // namespace qwen35
