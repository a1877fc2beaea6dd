#include "host/kv_rows.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace qwen35 {
namespace {

// All 256 codes decoded once: the attention inner loop is a table lookup.
const std::array<float, 256>& fp8_table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (uint32_t code = 0; code < 256; ++code) t[code] = fp8_e4m3_to_f32(static_cast<uint8_t>(code));
    return t;
  }();
  return table;
}

// The block scale: the smallest power of two s with 448 s >= max_abs, so the
// largest value lands in E4M3's top binade. A power of two makes scaling exact,
// which lets GPU kernels reproduce this byte for byte, and costs nothing in
// precision (E4M3's relative step does not depend on the scale). A block too
// small to matter (or NaN) gets scale 0 and codes 0.
float fp8_block_scale(float max_abs) {
  if (!(max_abs >= 0x1p-100f)) return 0.0f;
  int exponent = 0;
  const float fraction = std::frexp(max_abs, &exponent);  // max_abs = fraction * 2^exponent
  return std::ldexp(1.0f, fraction <= 0.875f ? exponent - 9 : exponent - 8);
}

}  // namespace

void quantize_fp8_kv(const float* x, uint32_t n, uint8_t* codes, uint16_t* scales) {
  for (uint32_t b = 0; b < n / kKvFp8Block; ++b) {
    const float* block = x + size_t{b} * kKvFp8Block;
    float max_abs = 0;
    for (uint32_t i = 0; i < kKvFp8Block; ++i) max_abs = std::max(max_abs, std::fabs(block[i]));
    const float scale = fp8_block_scale(max_abs);
    const float inverse = scale > 0 ? 1.0f / scale : 0.0f;  // exact: scale is a power of two
    scales[b] = f32_to_bf16(scale);
    for (uint32_t i = 0; i < kKvFp8Block; ++i) codes[size_t{b} * kKvFp8Block + i] = f32_to_fp8_e4m3(block[i] * inverse);
  }
}

void dequantize_fp8_kv(const uint8_t* row, uint32_t kv_dim, uint32_t first, uint32_t n, float* out) {
  const std::array<float, 256>& table = fp8_table();
  const uint16_t* scales = fp8_kv_scales(row, kv_dim) + first / kKvFp8Block;
  const uint8_t* codes = row + first;
  for (uint32_t b = 0; b < n / kKvFp8Block; ++b) {
    const float scale = bf16_to_f32(scales[b]);
    for (uint32_t i = 0; i < kKvFp8Block; ++i) {
      out[b * kKvFp8Block + i] = table[codes[b * kKvFp8Block + i]] * scale;
    }
  }
}

}  // namespace qwen35
