// Random blocks and varied x for the GGUF and MLX tests (see gguf_test_util.h).
#include "gguf_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>

#include "qwen35/gguf_quants.h"
#include "support/test_support.h"

namespace qwen35::testing {

std::vector<std::byte> random_blocks(DType type, size_t blocks, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> bytes(blocks * dtype_size(type));
  for (std::byte& b : bytes) b = static_cast<std::byte>(rng() & 0xff);
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  const auto set_half = [&](size_t offset) {
    const uint16_t h = f32_to_f16(scale(rng));
    std::memcpy(bytes.data() + offset, &h, 2);
  };
  for (size_t i = 0; i < blocks; ++i) {
    const size_t at = i * dtype_size(type);
    if (type == DType::kQ6_K) {
      set_half(at + offsetof(GgufBlockQ6K, d));
    } else {
      set_half(at);                                                        // d
      if (type == DType::kQ4_K || type == DType::kQ5_K) set_half(at + 2);  // dmin
    }
  }
  return bytes;
}

std::vector<float> varied_floats(size_t n, uint32_t seed) {
  std::vector<float> x = random_floats(n, seed, -1, 1);
  for (size_t k = 0; k < n; ++k) x[k] *= std::ldexp(1.0f, static_cast<int>((k / 32) % 7) - 3);
  if (n >= 96) std::fill(x.begin() + 64, x.begin() + 96, 0.0f);
  return x;
}

}  // namespace qwen35::testing
