// Random blocks used by the GGUF tests (see gguf_test_util.h).
#include "gguf_test_util.h"

#include <cstddef>
#include <cstring>
#include <random>

#include "qwen35/gguf_quants.h"

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

}  // namespace qwen35::testing
