// One GGUF matrix as a launch's kernels read it.
#pragma once

#include <cstddef>

#include "qwen35/dtype.h"

namespace qwen35::gguf_cpu {

// The rows of one matrix for one launch: row r starts at w + r * row_bytes.
// x_sums[i] is the sum of x[32 i, 32 i + 32) (Q4_K and Q5_K only).
struct Rows {
  const std::byte* w;
  size_t row_bytes, cols;
  const float* x;
  const float* x_sums;
};

}  // namespace qwen35::gguf_cpu
