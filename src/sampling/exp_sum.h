// The softmax normaliser over a whole vocabulary, on vectors: the sampler's
// draws without top-k (temperature alone, top-p alone) sum exp over every
// token: 0.7-0.8 ms a token in scalar double for Qwen3.5's 248320 logits.
#pragma once

#include <cstddef>
#include <span>

namespace qwen35::sampling {

struct ExpSum {
  double sum = 0;    // of exp(double(l - shift)) over the counted logits
  size_t count = 0;  // logits l > -inf with l >= lower
};

// Each term is exp of the float difference l - shift widened to double, as
// std::exp(static_cast<double>(l - shift)) gives it to within an ulp or so
// (Highway's Exp); the terms are summed in lanes, not in id order, so the sum
// may differ from a scalar loop's in its last bits, and between SIMD targets.
// Logits must not be NaN.
ExpSum sum_exp(std::span<const float> logits, float shift, float lower);

}  // namespace qwen35::sampling
