// A checkpoint decoded over a golden's tokens (float32 KV cache, all
// positions) and compared with the golden logits: what the format round-trip
// tests (GGUF, MLX) measure.
#pragma once

#include <string>
#include <vector>

#include "qwen35/backend.h"
#include "qwen35/checkpoint.h"

namespace qwen35::testing {

struct Decoded {
  std::vector<float> logits;
  double relative_error;  // max |logit - golden| / max |golden|
  size_t agree, tokens;   // positions whose argmax is the golden one, of all
};

// Decodes `checkpoint` over golden/<folder>/tokens.txt on `backend` (with
// `options`, 2 threads), against its logits.
Decoded decode_against_golden(const std::string& folder, Checkpoint checkpoint, const std::string& backend = "cpu",
                              BackendOptions options = {});

// One checkpoint decoded with float activations and with other options.
struct FloatAndOther {
  Decoded float_x, other;
};

// `other`'s logits are `float_x`'s to float32's precision (x in 24 bits,
// BackendOptions::int24_activations): within 3e-5 of their largest, the bound
// the GPU backends' float32 arithmetic gets against the CPU's; not equal
// (the integer kernels did run); the same argmax as often. Prints the
// deviation after `what`.
void expect_float32_grade(const Decoded& float_x, const Decoded& other, const std::string& what);

}  // namespace qwen35::testing
