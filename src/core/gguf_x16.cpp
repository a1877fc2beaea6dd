// Q4_0 and Q8_0 regrouped 16 rows at a time (GgufBlockQ4_0x16 and
// GgufBlockQ8_0x16 in qwen35/gguf_quants.h): the conversion at load and the
// row lookup (embeddings), for every backend that keeps them so.
#include <type_traits>

#include "qwen35/error.h"
#include "qwen35/gguf_quants.h"

namespace qwen35 {
namespace {

template <typename Block, typename Grouped>
void regroup(const Block* matrix, size_t rows, size_t blocks, Grouped* out) {
  for (size_t g = 0; g < rows / 16; ++g) {
    for (size_t i = 0; i < blocks; ++i) {
      Grouped& grouped = out[g * blocks + i];
      for (size_t lane = 0; lane < 16; ++lane) {
        const Block& b = matrix[(16 * g + lane) * blocks + i];
        grouped.d[lane] = b.d;
        for (size_t v = 0; v < sizeof(b.qs) / 4; ++v) std::memcpy(grouped.qs + 64 * v + 4 * lane, b.qs + 4 * v, 4);
      }
    }
  }
}

template <typename Block, typename Grouped>
void dequantize_row(const Grouped* matrix, size_t blocks, size_t row, float* y) {
  const Grouped* group = matrix + row / 16 * blocks;
  for (size_t i = 0; i < blocks; ++i) {
    const Block b = x16_row_block<Block>(group[i], row % 16);
    gguf_dequantize_row(std::is_same_v<Block, GgufBlockQ4_0> ? DType::kQ4_0 : DType::kQ8_0, &b, y + 32 * i, 32);
  }
}

}  // namespace

std::optional<DType> gguf_regrouped_layout(DType dtype) {
  if (dtype == DType::kQ4_0) return DType::kQ4_0x16;
  if (dtype == DType::kQ8_0) return DType::kQ8_0x16;
  return std::nullopt;
}

bool is_regrouped_dtype(DType dtype) { return dtype == DType::kQ4_0x16 || dtype == DType::kQ8_0x16; }

void gguf_regroup_rows(DType dtype, const void* matrix, size_t rows, size_t blocks, void* out) {
  if (dtype == DType::kQ4_0) {
    return regroup(static_cast<const GgufBlockQ4_0*>(matrix), rows, blocks, static_cast<GgufBlockQ4_0x16*>(out));
  }
  QWEN35_ASSERT(dtype == DType::kQ8_0);
  regroup(static_cast<const GgufBlockQ8_0*>(matrix), rows, blocks, static_cast<GgufBlockQ8_0x16*>(out));
}

void gguf_dequantize_regrouped_row(DType layout, const void* matrix, size_t blocks, size_t row, float* y) {
  if (layout == DType::kQ4_0x16) {
    return dequantize_row<GgufBlockQ4_0>(static_cast<const GgufBlockQ4_0x16*>(matrix), blocks, row, y);
  }
  QWEN35_ASSERT(layout == DType::kQ8_0x16);
  dequantize_row<GgufBlockQ8_0>(static_cast<const GgufBlockQ8_0x16*>(matrix), blocks, row, y);
}

}  // namespace qwen35
