// The CUDA backend's decoding and dot products of ggml blocks, compiled for the host as well:
// tests check it bit for bit against the specification (qwen35/gguf_quants.h)
// on machines without a GPU, where the kernels themselves cannot run.
#pragma once

#include <cstdint>

#include "qwen35/dtype.h"

namespace qwen35::cuda {

// Elements 32 unit .. 32 unit + 31 of a row of `type` blocks, as the kernels decode them.
void decode_gguf_unit_on_host(DType type, const uint8_t* row, uint32_t unit, float out[32]);

// The dot of a row of `cols` columns with x as the gemvs' fast path computes it
// (piece by piece, scales factored out), summed in piece order.
float gguf_row_dot_on_host(DType type, const uint8_t* row, const float* x, uint32_t cols);

}  // namespace qwen35::cuda
