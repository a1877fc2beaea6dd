// ggml's block-quantized weight types as GGUF files store them (llama.cpp
// ggml-common.h), rows of `cols` elements cut into blocks, every scale fp16:
//
//   Q8_0 (32 elements, 34 bytes)   | d | qs[32] int8 |               w = d * q
//   Q4_0 (32 elements, 18 bytes)   | d | qs[16] |  byte k: element k (low nibble), k + 16 (high)
//                                                                   w = d * (q - 8)
//   Q4_K (256 elements, 144 bytes) | d | dmin | scales[12] | qs[128] |
//        eight sub-blocks of 32 with 6-bit (scale, min) pairs unpacked by
//        gguf_scale_min_k4; chunk c of 64 elements: qs[32c + l] holds element
//        64c + l (low nibble, sub-block 2c) and 64c + 32 + l (high, sub-block 2c + 1)
//                                              w = (d * sc) * q - (dmin * m)
//   Q5_K (256 elements, 176 bytes) | d | dmin | scales[12] | qh[32] | qs[128] |
//        as Q4_K plus a fifth bit: element 64c + l takes bit 2c of qh[l],
//        element 64c + 32 + l bit 2c + 1             w = (d * sc) * q - (dmin * m)
//   Q6_K (256 elements, 210 bytes) | ql[128] | qh[64] | scales[16] int8 | d |
//        halves h of 128: element 128h + 32k + l (k < 4, l < 32) has low four
//        bits from ql[64h + l + 32 (k & 1)] (low nibble for k < 2, high for
//        k >= 2) and high two bits from qh[32h + l] bits 2k, 2k + 1; its
//        sub-block of 16 uses scales[8h + l / 16 + 2k]    w = (d * sc) * (q - 32)
//
// Each product is rounded as written (no fused multiply-add), as llama.cpp's
// dequantize_row_* does. The scalar functions here are the specification the
// kernels follow; the quantizers are simple (round to nearest, no search) and
// exist for tests and tools.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>

#include "qwen35/dtype.h"

namespace qwen35 {

struct GgufBlockQ8_0 {
  uint16_t d;  // fp16
  int8_t qs[32];
};
struct GgufBlockQ4_0 {
  uint16_t d;
  uint8_t qs[16];
};
struct GgufBlockQ4K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qs[128];
};
struct GgufBlockQ5K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
struct GgufBlockQ6K {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;
};
// Q4_0 and Q8_0 regrouped for the CPU's integer gemvs (DType::kQ4_0x16,
// kQ8_0x16): block i of the 16 rows 16g .. 16g + 15, stored at block
// g * blocks + i, holds their 16 scales, then the codes in runs of 64 bytes,
// run v holding each row's bytes 4v .. 4v + 3 in turn: qs[64 v + 4 r + k] =
// row 16g + r's qs[4 v + k] (4 runs for Q4_0, 8 for Q8_0). Each 4-byte lane
// of a run is then one row's codes, so one integer dot product of a run
// against four of x's codes serves 16 rows at once. Each regrouped block
// names the block (Source) and type (kSourceType) its rows came from.
struct GgufBlockQ4_0x16 {
  using Source = GgufBlockQ4_0;
  static constexpr DType kSourceType = DType::kQ4_0;
  uint16_t d[16];
  uint8_t qs[256];
};
struct GgufBlockQ8_0x16 {
  using Source = GgufBlockQ8_0;
  static constexpr DType kSourceType = DType::kQ8_0;
  uint16_t d[16];
  int8_t qs[512];
};
// Q4_K regrouped the same way (DType::kQ4_Kx16), a super-block of 256
// columns for 16 rows in as many bytes as theirs: the 16 rows' d and dmin;
// their sub-blocks' 6-bit scales and mins lane by lane, scales_lo[16 j + r]
// holding the low four bits of row r's scale (low nibble) and min (high) of
// sub-block j, scales_hi[16 j + r] (j < 4) the top two bits of its scale and
// min of sub-blocks j (bits 0-1, 2-3) and j + 4 (bits 4-5, 6-7); then the
// codes, chunk c (64 elements, sub-blocks 2c and 2c + 1) in runs of 64 bytes
// as Q4_0x16's: qs[512 c + 64 v + 4 r + k] = row r's qs[32 c + 4 v + k].
struct GgufBlockQ4Kx16 {
  using Source = GgufBlockQ4K;
  static constexpr DType kSourceType = DType::kQ4_K;
  uint16_t d[16];
  uint16_t dmin[16];
  uint8_t scales_lo[128];
  uint8_t scales_hi[64];
  uint8_t qs[2048];
};
// Q5_K as Q4_K (DType::kQ5_Kx16), its codes and fifth bits interleaved in
// spans of four runs, so that a kernel reads each block from its first byte
// to its last: span s = 2c + h (chunk c, half h) holds the fifth bits of its
// runs, then the runs themselves. spans[s].qs[64 u + 4 r + k] = row r's
// qs[32 c + 4 (4 h + u) + k], as Q4_Kx16's qs[512 c + 64 (4 h + u) + 4 r +
// k]; bits 2u and 2u + 1 of spans[s].qh[4 r + k] are bits 2c and 2c + 1 of
// row r's qh[4 (4 h + u) + k], the fifth bits of that byte's low and high
// codes. With the fifth bits of all four chunks in one 512-byte array ahead
// of the codes, as until the thirty-third session, a kernel went back and
// forth between the two, and the hardware prefetcher of the Zen 5 host lost
// the stream: one thread read such matrices from DRAM at half the rate of
// Q4_Kx16's (docs/performance.md).
struct GgufBlockQ5Kx16 {
  using Source = GgufBlockQ5K;
  static constexpr DType kSourceType = DType::kQ5_K;
  struct Span {
    uint8_t qh[64];
    uint8_t qs[256];
  };
  uint16_t d[16];
  uint16_t dmin[16];
  uint8_t scales_lo[128];
  uint8_t scales_hi[64];
  Span spans[8];
};
// Q6_K regrouped (DType::kQ6_Kx16): the 16 rows' d, then a span per
// sub-block j of 16 columns, in column order, so that a kernel reads each
// block from its first byte to its last: the 16 rows' scales[j], then the
// sub-block's four runs of 64 codes (run v: each row's codes of columns
// 16 j + 4 v .. 16 j + 4 v + 3, row r's at bytes 4 r .. 4 r + 3) in three
// arrays of 64 bytes. q[0] holds run 0's six bits and, in bits 6-7, the top
// two of run 2; q[1] run 1 and the top two of run 3; q[2] the low four bits
// of run 2 and, in its high nibble, those of run 3 (gguf_x16_q6_k_code).
// Runs 0 and 1 are then one mask each, runs 2 and 3 a shift, a mask and a merge.
struct GgufBlockQ6Kx16 {
  using Source = GgufBlockQ6K;
  static constexpr DType kSourceType = DType::kQ6_K;
  struct Span {
    int8_t scales[16];
    uint8_t q[3][64];
  };
  uint16_t d[16];
  Span spans[16];
};
static_assert(sizeof(GgufBlockQ8_0) == 34 && sizeof(GgufBlockQ4_0) == 18 && sizeof(GgufBlockQ4K) == 144 &&
              sizeof(GgufBlockQ5K) == 176 && sizeof(GgufBlockQ6K) == 210 &&
              sizeof(GgufBlockQ4_0x16) == 16 * sizeof(GgufBlockQ4_0) &&
              sizeof(GgufBlockQ8_0x16) == 16 * sizeof(GgufBlockQ8_0) &&
              sizeof(GgufBlockQ4Kx16) == 16 * sizeof(GgufBlockQ4K) &&
              sizeof(GgufBlockQ5Kx16) == 16 * sizeof(GgufBlockQ5K) &&
              sizeof(GgufBlockQ6Kx16) == 16 * sizeof(GgufBlockQ6K));

// The code (0 .. 63, before the offset -32) of element e (< 256) of a Q6_K
// block; its scale is scales[e / 16].
inline int gguf_q6_k_code(const GgufBlockQ6K& b, size_t e) {
  const size_t h = e / 128, k = e % 128 / 32, l = e % 32;
  const uint8_t low = b.ql[64 * h + l + 32 * (k & 1)];
  return (k < 2 ? low & 0xF : low >> 4) | (b.qh[32 * h + l] >> (2 * k) & 3) << 4;
}
// Adds code q's bits for element e to a block whose bits there are zero.
inline void gguf_q6_k_add_code(GgufBlockQ6K& b, size_t e, int q) {
  const size_t h = e / 128, k = e % 128 / 32, l = e % 32;
  b.ql[64 * h + l + 32 * (k & 1)] |= static_cast<uint8_t>((q & 0xF) << (k < 2 ? 0 : 4));
  b.qh[32 * h + l] |= static_cast<uint8_t>((q >> 4) << (2 * k));
}

// The code of run v (< 4), byte i (< 64: row i / 4's code of column 4 v +
// i % 4 of the sub-block) of a regrouped Q6_K span; and code q's bits
// added to a span whose bits there are zero.
inline int gguf_x16_q6_k_code(const GgufBlockQ6Kx16::Span& s, size_t v, size_t i) {
  if (v < 2) return s.q[v][i] & 0x3F;
  return (v == 2 ? s.q[2][i] & 0xF : s.q[2][i] >> 4) | (s.q[v - 2][i] >> 6) << 4;
}
inline void gguf_x16_q6_k_add_code(GgufBlockQ6Kx16::Span& s, size_t v, size_t i, int q) {
  if (v < 2) {
    s.q[v][i] |= static_cast<uint8_t>(q);
  } else {
    s.q[2][i] |= static_cast<uint8_t>((q & 0xF) << (v == 2 ? 0 : 4));
    s.q[v - 2][i] |= static_cast<uint8_t>((q >> 4) << 6);
  }
}

// Scale and min of sub-block j (< 8) from the 12 packed bytes of Q4_K/Q5_K:
// j < 4: low six bits of bytes j and j + 4; otherwise the low / high nibble of
// byte j + 4 with the top two bits of byte j - 4 / j above them.
inline void gguf_scale_min_k4(int j, const uint8_t* q, uint8_t* scale, uint8_t* min) {
  if (j < 4) {
    *scale = q[j] & 63;
    *min = q[j + 4] & 63;
  } else {
    *scale = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *min = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Run v (< 8) of chunk c (< 4) of a regrouped Q4_K or Q5_K block (b may be
// const): 64 bytes of codes, row r's four at 4 r.
template <typename Grouped>
auto* gguf_x16_k4_run(Grouped& b, size_t c, size_t v) {
  if constexpr (std::is_same_v<std::remove_const_t<Grouped>, GgufBlockQ5Kx16>) {
    return b.spans[2 * c + v / 4].qs + 64 * (v % 4);
  } else {
    return b.qs + 512 * c + 64 * v;
  }
}

// Scale and min of sub-block j (< 8) of row `lane` of a regrouped Q4_K or Q5_K block.
template <typename Grouped>
void gguf_x16_scale_min_k4(const Grouped& b, size_t lane, int j, uint8_t* scale, uint8_t* min) {
  const uint8_t lo = b.scales_lo[16 * j + lane];
  const int hi = b.scales_hi[16 * (j % 4) + lane] >> (j < 4 ? 0 : 4);
  *scale = static_cast<uint8_t>((lo & 0xF) | (hi & 3) << 4);
  *min = static_cast<uint8_t>((lo >> 4) | (hi >> 2 & 3) << 4);
}

// Row `lane` (< 16) of a regrouped block as the block it came from
// (GgufBlockQ4_0 from GgufBlockQ4_0x16, GgufBlockQ8_0 from GgufBlockQ8_0x16,
// GgufBlockQ4K from GgufBlockQ4Kx16, GgufBlockQ5K from GgufBlockQ5Kx16,
// GgufBlockQ6K from GgufBlockQ6Kx16).
template <typename Block, typename Grouped>
Block x16_row_block(const Grouped& b, size_t lane) {
  static_assert(sizeof(Grouped) == 16 * sizeof(Block));
  Block out;
  out.d = b.d[lane];
  if constexpr (std::is_same_v<Grouped, GgufBlockQ6Kx16>) {
    std::memset(out.ql, 0, sizeof(out.ql));
    std::memset(out.qh, 0, sizeof(out.qh));
    for (size_t j = 0; j < 16; ++j) {
      out.scales[j] = b.spans[j].scales[lane];
      for (size_t e = 0; e < 16; ++e) {
        gguf_q6_k_add_code(out, 16 * j + e, gguf_x16_q6_k_code(b.spans[j], e / 4, 4 * lane + e % 4));
      }
    }
  } else if constexpr (std::is_same_v<Grouped, GgufBlockQ4Kx16> || std::is_same_v<Grouped, GgufBlockQ5Kx16>) {
    out.dmin = b.dmin[lane];
    for (int j = 0; j < 4; ++j) {  // gguf_scale_min_k4 backwards
      uint8_t sc, m, sc4, m4;
      gguf_x16_scale_min_k4(b, lane, j, &sc, &m);
      gguf_x16_scale_min_k4(b, lane, j + 4, &sc4, &m4);
      out.scales[j] = static_cast<uint8_t>(sc | (sc4 >> 4) << 6);
      out.scales[j + 4] = static_cast<uint8_t>(m | (m4 >> 4) << 6);
      out.scales[j + 8] = static_cast<uint8_t>((sc4 & 0xF) | (m4 & 0xF) << 4);
    }
    for (size_t c = 0; c < 4; ++c) {
      for (size_t v = 0; v < 8; ++v) std::memcpy(out.qs + 32 * c + 4 * v, gguf_x16_k4_run(b, c, v) + 4 * lane, 4);
    }
    if constexpr (std::is_same_v<Grouped, GgufBlockQ5Kx16>) {
      std::memset(out.qh, 0, sizeof(out.qh));
      for (size_t c = 0; c < 4; ++c) {
        for (size_t v = 0; v < 8; ++v) {
          const uint8_t* span_bits = b.spans[2 * c + v / 4].qh + 4 * lane;
          for (size_t k = 0; k < 4; ++k) {
            const int bits = span_bits[k] >> (2 * (v % 4)) & 3;
            out.qh[4 * v + k] = static_cast<uint8_t>(out.qh[4 * v + k] | bits << (2 * c));
          }
        }
      }
    }
  } else {
    for (size_t v = 0; v < sizeof(out.qs) / 4; ++v) std::memcpy(out.qs + 4 * v, b.qs + 64 * v + 4 * lane, 4);
  }
  return out;
}

namespace gguf_detail {
inline void dequantize_q8_0(const GgufBlockQ8_0* b, float* y, size_t blocks) {
  for (size_t i = 0; i < blocks; ++i, y += 32) {
    const float d = f16_to_f32(b[i].d);
    for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(b[i].qs[j]) * d;
  }
}

inline void dequantize_q4_0(const GgufBlockQ4_0* b, float* y, size_t blocks) {
  for (size_t i = 0; i < blocks; ++i, y += 32) {
    const float d = f16_to_f32(b[i].d);
    for (int j = 0; j < 16; ++j) {
      y[j] = static_cast<float>((b[i].qs[j] & 0x0F) - 8) * d;
      y[j + 16] = static_cast<float>((b[i].qs[j] >> 4) - 8) * d;
    }
  }
}

// Q4_K and Q5_K share everything but the fifth bit (qh null for Q4_K).
inline void dequantize_k4(float d, float dmin, const uint8_t* scales, const uint8_t* qs, const uint8_t* qh, float* y) {
  for (int c = 0; c < 4; ++c) {
    for (int half = 0; half < 2; ++half) {
      uint8_t sc, m;
      gguf_scale_min_k4(2 * c + half, scales, &sc, &m);
      const float d1 = d * sc, m1 = dmin * m;
      for (int l = 0; l < 32; ++l) {
        int q = half == 0 ? qs[32 * c + l] & 0xF : qs[32 * c + l] >> 4;
        if (qh != nullptr && (qh[l] >> (2 * c + half) & 1)) q += 16;
        *y++ = d1 * static_cast<float>(q) - m1;
      }
    }
  }
}

inline void dequantize_q6_k(const GgufBlockQ6K* b, float* y, size_t blocks) {
  for (size_t i = 0; i < blocks; ++i, y += 256) {
    const float d = f16_to_f32(b[i].d);
    for (size_t e = 0; e < 256; ++e) {
      y[e] = d * static_cast<float>(b[i].scales[e / 16]) * static_cast<float>(gguf_q6_k_code(b[i], e) - 32);
    }
  }
}

}  // namespace gguf_detail

// y[n] = the `n` elements (a multiple of the block size, not checked here) stored
// in `blocks` of the block type `type`; written block by block as llama.cpp's
// dequantize_row_* is.
inline void gguf_dequantize_row(DType type, const void* blocks, float* y, size_t n) {
  using namespace gguf_detail;
  const size_t count = n / dtype_block_size(type);
  switch (type) {
    case DType::kQ8_0:
      return dequantize_q8_0(static_cast<const GgufBlockQ8_0*>(blocks), y, count);
    case DType::kQ4_0:
      return dequantize_q4_0(static_cast<const GgufBlockQ4_0*>(blocks), y, count);
    case DType::kQ4_K:
      for (size_t i = 0; i < count; ++i) {
        const auto& b = static_cast<const GgufBlockQ4K*>(blocks)[i];
        dequantize_k4(f16_to_f32(b.d), f16_to_f32(b.dmin), b.scales, b.qs, nullptr, y + 256 * i);
      }
      return;
    case DType::kQ5_K:
      for (size_t i = 0; i < count; ++i) {
        const auto& b = static_cast<const GgufBlockQ5K*>(blocks)[i];
        dequantize_k4(f16_to_f32(b.d), f16_to_f32(b.dmin), b.scales, b.qs, b.qh, y + 256 * i);
      }
      return;
    case DType::kQ6_K:
      return dequantize_q6_k(static_cast<const GgufBlockQ6K*>(blocks), y, count);
    default:
      return;
  }
}

// The layout that regroups `dtype` 16 rows at a time (kQ4_0x16 for kQ4_0,
// kQ8_0x16 for kQ8_0, kQ4_Kx16 for kQ4_K, kQ5_Kx16 for kQ5_K, kQ6_Kx16 for
// kQ6_K), nullopt for other types; and
// whether `dtype` is one.
std::optional<DType> gguf_regrouped_layout(DType dtype);
bool is_regrouped_dtype(DType dtype);
// `rows` rows of `blocks` blocks of Q4_0, Q8_0, Q4_K, Q5_K or Q6_K regrouped into its layout
// (rows a multiple of 16, not checked here); `out` holds as many bytes.
void gguf_regroup_rows(DType dtype, const void* matrix, size_t rows, size_t blocks, void* out);
// y = row `row` (blocks * dtype_block_size(layout) floats) of a regrouped
// matrix of `blocks` blocks per row.
void gguf_dequantize_regrouped_row(DType layout, const void* matrix, size_t blocks, size_t row, float* y);

// Quantizes `n` floats into blocks of `type` (round to nearest, scales from the
// block's extremes; K-quant sub-block scales relative to the block's largest).
// Throws Error when `type` is not a block type or n is not a multiple of its block.
// (src/formats/gguf_quants.cpp)
void gguf_quantize_row(DType type, const float* x, void* blocks, size_t n);

}  // namespace qwen35
