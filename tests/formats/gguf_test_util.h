// Test helpers for GGUF: random ggml blocks with finite scales. (The golden ->
// GGUF converter the tests use is the library's, formats/gguf_converter.h.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "qwen35/dtype.h"

namespace qwen35::testing {

// `blocks` random blocks of `type` with random codes and finite fp16 scales.
std::vector<std::byte> random_blocks(DType type, size_t blocks, uint32_t seed);

}  // namespace qwen35::testing
