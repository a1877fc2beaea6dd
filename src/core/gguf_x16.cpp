// Q4_0, Q8_0, Q4_K, Q5_K and Q6_K regrouped 16 rows at a time (GgufBlockQ4_0x16,
// GgufBlockQ8_0x16, GgufBlockQ4Kx16, GgufBlockQ5Kx16 and GgufBlockQ6Kx16 in qwen35/gguf_quants.h): the
// conversion at load and the row lookup (embeddings), for every backend that
// keeps them so.
#include "qwen35/error.h"
#include "qwen35/gguf_quants.h"

namespace qwen35 {
namespace {

// Row `lane`'s block b into lane `lane` of a regrouped block.
template <typename Block, typename Grouped>
void place(const Block& b, size_t lane, Grouped& out) {
  out.d[lane] = b.d;
  for (size_t v = 0; v < sizeof(b.qs) / 4; ++v) std::memcpy(out.qs + 64 * v + 4 * lane, b.qs + 4 * v, 4);
}

// Q4_K and Q5_K.
template <typename Block, typename Grouped>
  requires requires(Grouped g) { g.dmin; }
void place(const Block& b, size_t lane, Grouped& out) {
  out.d[lane] = b.d;
  out.dmin[lane] = b.dmin;
  uint8_t sc[8], m[8];
  for (int j = 0; j < 8; ++j) gguf_scale_min_k4(j, b.scales, &sc[j], &m[j]);
  for (int j = 0; j < 8; ++j) out.scales_lo[16 * j + lane] = static_cast<uint8_t>((sc[j] & 0xF) | (m[j] & 0xF) << 4);
  for (int j = 0; j < 4; ++j) {
    out.scales_hi[16 * j + lane] =
        static_cast<uint8_t>(sc[j] >> 4 | (m[j] >> 4) << 2 | (sc[j + 4] >> 4) << 4 | (m[j + 4] >> 4) << 6);
  }
  for (size_t c = 0; c < 4; ++c) {
    for (size_t v = 0; v < 8; ++v) std::memcpy(gguf_x16_k4_run(out, c, v) + 4 * lane, b.qs + 32 * c + 4 * v, 4);
  }
  if constexpr (std::is_same_v<Grouped, GgufBlockQ5Kx16>) {
    for (auto& span : out.spans) std::memset(span.qh + 4 * lane, 0, 4);
    for (size_t c = 0; c < 4; ++c) {
      for (size_t v = 0; v < 8; ++v) {
        uint8_t* span_bits = out.spans[2 * c + v / 4].qh + 4 * lane;
        for (size_t k = 0; k < 4; ++k) {
          const int bits = b.qh[4 * v + k] >> (2 * c) & 3;
          span_bits[k] = static_cast<uint8_t>(span_bits[k] | bits << (2 * (v % 4)));
        }
      }
    }
  }
}

void place(const GgufBlockQ6K& b, size_t lane, GgufBlockQ6Kx16& out) {
  out.d[lane] = b.d;
  for (size_t j = 0; j < 16; ++j) {
    GgufBlockQ6Kx16::Span& span = out.spans[j];
    span.scales[lane] = b.scales[j];
    for (auto& run : span.q) std::memset(run + 4 * lane, 0, 4);
    for (size_t e = 0; e < 16; ++e) {
      gguf_x16_q6_k_add_code(span, e / 4, 4 * lane + e % 4, gguf_q6_k_code(b, 16 * j + e));
    }
  }
}

template <typename Block, typename Grouped>
void regroup(const Block* matrix, size_t rows, size_t blocks, Grouped* out) {
  for (size_t g = 0; g < rows / 16; ++g) {
    for (size_t i = 0; i < blocks; ++i) {
      for (size_t lane = 0; lane < 16; ++lane) place(matrix[(16 * g + lane) * blocks + i], lane, out[g * blocks + i]);
    }
  }
}

template <typename Grouped>
void dequantize_row(const Grouped* matrix, size_t blocks, size_t row, float* y) {
  const Grouped* group = matrix + row / 16 * blocks;
  const size_t n = dtype_block_size(Grouped::kSourceType);
  for (size_t i = 0; i < blocks; ++i) {
    const auto b = x16_row_block<typename Grouped::Source>(group[i], row % 16);
    gguf_dequantize_row(Grouped::kSourceType, &b, y + n * i, n);
  }
}

}  // namespace

std::optional<DType> gguf_regrouped_layout(DType dtype) {
  if (dtype == DType::kQ4_0) return DType::kQ4_0x16;
  if (dtype == DType::kQ8_0) return DType::kQ8_0x16;
  if (dtype == DType::kQ4_K) return DType::kQ4_Kx16;
  if (dtype == DType::kQ5_K) return DType::kQ5_Kx16;
  if (dtype == DType::kQ6_K) return DType::kQ6_Kx16;
  return std::nullopt;
}

bool is_regrouped_dtype(DType dtype) {
  return dtype == DType::kQ4_0x16 || dtype == DType::kQ8_0x16 || dtype == DType::kQ4_Kx16 ||
         dtype == DType::kQ5_Kx16 || dtype == DType::kQ6_Kx16;
}

void gguf_regroup_rows(DType dtype, const void* matrix, size_t rows, size_t blocks, void* out) {
  switch (dtype) {
    case DType::kQ4_0:
      return regroup(static_cast<const GgufBlockQ4_0*>(matrix), rows, blocks, static_cast<GgufBlockQ4_0x16*>(out));
    case DType::kQ8_0:
      return regroup(static_cast<const GgufBlockQ8_0*>(matrix), rows, blocks, static_cast<GgufBlockQ8_0x16*>(out));
    case DType::kQ4_K:
      return regroup(static_cast<const GgufBlockQ4K*>(matrix), rows, blocks, static_cast<GgufBlockQ4Kx16*>(out));
    case DType::kQ5_K:
      return regroup(static_cast<const GgufBlockQ5K*>(matrix), rows, blocks, static_cast<GgufBlockQ5Kx16*>(out));
    default:
      QWEN35_ASSERT(dtype == DType::kQ6_K);
      return regroup(static_cast<const GgufBlockQ6K*>(matrix), rows, blocks, static_cast<GgufBlockQ6Kx16*>(out));
  }
}

void gguf_dequantize_regrouped_row(DType layout, const void* matrix, size_t blocks, size_t row, float* y) {
  switch (layout) {
    case DType::kQ4_0x16: return dequantize_row(static_cast<const GgufBlockQ4_0x16*>(matrix), blocks, row, y);
    case DType::kQ8_0x16: return dequantize_row(static_cast<const GgufBlockQ8_0x16*>(matrix), blocks, row, y);
    case DType::kQ4_Kx16: return dequantize_row(static_cast<const GgufBlockQ4Kx16*>(matrix), blocks, row, y);
    case DType::kQ5_Kx16: return dequantize_row(static_cast<const GgufBlockQ5Kx16*>(matrix), blocks, row, y);
    default:
      QWEN35_ASSERT(layout == DType::kQ6_Kx16);
      return dequantize_row(static_cast<const GgufBlockQ6Kx16*>(matrix), blocks, row, y);
  }
}

}  // namespace qwen35
