// x for the tests of x in 24 bits (three 8-bit digits, cpu/int8_activations.h).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "support/test_support.h"

namespace qwen35::testing {

// x whose blocks of 32 lean on x's second and third 8-bit digits (x in 24
// bits): element 0 of each is +-127 (the scale 1), elements 1-15 multiples of
// 1/254 and 16-31 of 1/254^2 below 127 of them, so their first digits (and
// the last ones' second) are 0. Against random weights a kernel that dropped
// or misweighted a digit would be off by about 1e-4 of sum |w x|, 25 times
// the kernel checks' tolerance (4e-6 of it); with random x, by about the
// float32 rounding that tolerance allows.
inline std::vector<float> digit_rich_floats(size_t n, uint32_t seed) {
  const std::vector<float> j = random_floats(n, seed, -126, 126);
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) {
    const float step = i % 32 < 16 ? 1.0f / 254 : 1.0f / (254.0f * 254.0f);
    x[i] = i % 32 == 0 ? (j[i] < 0 ? -127.0f : 127.0f) : std::round(j[i]) * step;
  }
  return x;
}

}  // namespace qwen35::testing
