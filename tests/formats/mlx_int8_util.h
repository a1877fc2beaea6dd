// What the tests of MLX weights against x in 8 bits share: a test matrix as
// the CPU kernels take it, x quantized as they quantize it, and the float64
// reference with the bound that rounding x allows.
#pragma once

#include <cmath>
#include <vector>

#include "cpu/int8_activations.h"
#include "cpu/mlx_int8.h"
#include "cpu/simd.h"
#include "mlx_test_util.h"

namespace qwen35::testing {

inline simd::MlxRows rows_of(const QuantizedMatrix& m) {
  return simd::MlxRows{.codes = m.codes.data(), .scales = m.scales.data(), .biases = m.biases.data(),
                       .scale_type = weight_type(m.scale_dtype), .bits = m.params.bits, .cols = m.cols,
                       .group_size = m.params.group_size};
}

struct Quantized {
  std::vector<float> scratch;
  cpu::MlxInt8Activations x;
  Quantized(const std::vector<float>& v, uint32_t bits, uint32_t group_size, size_t digits = 1)
      : scratch(cpu::mlx_int8_activation_floats(v.size(), group_size, digits)) {
    x = cpu::quantize_mlx_activations(v.data(), v.size(), bits, group_size, scratch.data(), digits);
  }
};

// Per row: the float64 dot with W dequantized by the specification, sum |w x|,
// and sum |w| * (x's step / 2), the most that rounding x to 8 bits can move
// the dot (the bias terms use the sums of x as quantized, so the whole of w
// meets x rounded).
struct Reference {
  std::vector<double> y, magnitude, rounding;
};

inline Reference reference(const QuantizedMatrix& m, const std::vector<float>& x) {
  std::vector<float> scratch(cpu::int8_activation_floats(m.cols));
  const cpu::Int8Activations q = cpu::quantize_activations(x.data(), m.cols, scratch.data());
  Reference ref{std::vector<double>(m.rows), std::vector<double>(m.rows), std::vector<double>(m.rows)};
  for (uint32_t r = 0; r < m.rows; ++r) {
    for (uint32_t c = 0; c < m.cols; ++c) {
      const double w = m.dequantized[size_t{r} * m.cols + c];
      ref.y[r] += w * x[c];
      ref.magnitude[r] += std::fabs(w * x[c]);
      ref.rounding[r] += std::fabs(w) * q.scale[c / 32] / 2;
    }
  }
  return ref;
}

// float32 sums of integer lane sums times float factors: relative to sum |w x|.
inline constexpr double kKernelTolerance = 4e-6;

}  // namespace qwen35::testing
