// Q4_0 regrouped 16 rows at a time (GgufBlockQ4_0x16 in qwen35/gguf_quants.h):
// the conversion at load and the row lookup (embeddings), shared by every
// backend that keeps Q4_0 this way.
#include <cstring>

#include "qwen35/gguf_quants.h"

namespace qwen35 {

void gguf_pack_q4_0x16(const GgufBlockQ4_0* q4_0, size_t rows, size_t blocks, GgufBlockQ4_0x16* out) {
  for (size_t g = 0; g < rows / 16; ++g) {
    for (size_t i = 0; i < blocks; ++i) {
      GgufBlockQ4_0x16& packed = out[g * blocks + i];
      for (size_t lane = 0; lane < 16; ++lane) {
        const GgufBlockQ4_0& b = q4_0[(16 * g + lane) * blocks + i];
        packed.d[lane] = b.d;
        for (size_t v = 0; v < 4; ++v) std::memcpy(packed.qs + 64 * v + 4 * lane, b.qs + 4 * v, 4);
      }
    }
  }
}

void gguf_dequantize_q4_0x16_row(const GgufBlockQ4_0x16* matrix, size_t blocks, size_t row, float* y) {
  const GgufBlockQ4_0x16* group = matrix + row / 16 * blocks;
  for (size_t i = 0; i < blocks; ++i) {
    const GgufBlockQ4_0 b = q4_0x16_row_block(group[i], row % 16);
    gguf_detail::dequantize_q4_0(&b, y + 32 * i, 1);
  }
}

}  // namespace qwen35
