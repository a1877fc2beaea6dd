// One GGUF matrix as a launch's kernels read it, shared by the float kernels
// (cpu_gguf.cpp) and the integer ones (cpu_gguf_int8.cpp).
#pragma once

#include <cstddef>
#include <string>

#include "cpu/int8_activations.h"
#include "qwen35/dtype.h"

namespace qwen35::gguf_cpu {

// The rows of one matrix for one launch: row r starts at w + r * row_bytes.
// x_sums[i] is the sum of x[32 i, 32 i + 32) (Q4_K and Q5_K only). With int8
// set, the kernels read x in 8 bits from it instead of x.
struct Rows {
  const std::byte* w;
  size_t row_bytes, cols;
  const float* x;
  const float* x_sums;
  const cpu::Int8Activations* int8 = nullptr;
};

// y[r] = base[r] (0 if null) + row r . x for r in [r0, r1), by the integer
// kernels of the target chosen at run time; m.int8 is set.
void run_int8_rows(DType type, const Rows& m, const float* base, float* y, size_t r0, size_t r1);
// The SIMD target run_int8_rows runs now ("AVX3_DL", "AVX2", ...).
std::string int8_kernel_target();

}  // namespace qwen35::gguf_cpu
