// Simple round-to-nearest quantizers for ggml's block types (layouts and the
// dequantization specification in qwen35/gguf_quants.h): for tests and tools.
#include "qwen35/gguf_quants.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "qwen35/error.h"

namespace qwen35 {
namespace {

// Rounds to fp16 and returns the stored bits and the value they hold.
float round_f16(float v, uint16_t* bits) {
  *bits = f32_to_f16(v);
  return f16_to_f32(*bits);
}

int nearest(float v) { return static_cast<int>(std::nearbyint(v)); }

void quantize_q8_0(const float* x, GgufBlockQ8_0* b, size_t blocks) {
  for (size_t i = 0; i < blocks; ++i, x += 32) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = round_f16(amax / 127.0f, &b[i].d);
    for (int j = 0; j < 32; ++j) b[i].qs[j] = static_cast<int8_t>(d > 0 ? std::clamp(nearest(x[j] / d), -127, 127) : 0);
  }
}

// llama.cpp's quantize_row_q4_0_ref: the extreme value maps to -8.
void quantize_q4_0(const float* x, GgufBlockQ4_0* b, size_t blocks) {
  for (size_t i = 0; i < blocks; ++i, x += 32) {
    float extreme = 0;
    for (int j = 0; j < 32; ++j) {
      if (std::fabs(x[j]) > std::fabs(extreme)) extreme = x[j];
    }
    const float d = round_f16(extreme / -8.0f, &b[i].d);
    for (int j = 0; j < 16; ++j) {
      const int q0 = d != 0 ? std::clamp(nearest(x[j] / d) + 8, 0, 15) : 8;
      const int q1 = d != 0 ? std::clamp(nearest(x[j + 16] / d) + 8, 0, 15) : 8;
      b[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

// Q4_K / Q5_K: per sub-block of 32 an affine range [min(0, lo), hi] with
// `levels` steps; the scales and mins as 6-bit multiples of the block's d and
// dmin. Writes the codes (0..levels) of the 256 elements into `codes`.
void quantize_k_affine(const float* x, int levels, uint16_t* d_bits, uint16_t* dmin_bits, uint8_t* scales,
                       uint8_t* codes) {
  float sub_scale[8], sub_min[8];
  for (int j = 0; j < 8; ++j) {
    const auto [lo, hi] = std::minmax_element(x + 32 * j, x + 32 * j + 32);
    const float mn = std::min(0.0f, *lo);
    sub_scale[j] = (*hi - mn) / static_cast<float>(levels);
    sub_min[j] = -mn;
  }
  const float d = round_f16(*std::max_element(sub_scale, sub_scale + 8) / 63.0f, d_bits);
  const float dmin = round_f16(*std::max_element(sub_min, sub_min + 8) / 63.0f, dmin_bits);
  std::memset(scales, 0, 12);
  for (int j = 0; j < 8; ++j) {
    const int ls = d > 0 ? std::clamp(nearest(sub_scale[j] / d), 0, 63) : 0;
    const int lm = dmin > 0 ? std::clamp(nearest(sub_min[j] / dmin), 0, 63) : 0;
    if (j < 4) {
      scales[j] = static_cast<uint8_t>(ls);
      scales[j + 4] = static_cast<uint8_t>(lm);
    } else {
      scales[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
      scales[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
      scales[j] |= static_cast<uint8_t>((lm >> 4) << 6);
    }
    uint8_t sc, m;
    gguf_scale_min_k4(j, scales, &sc, &m);  // read back what was packed
    const float d1 = d * sc, m1 = dmin * m;
    for (int l = 0; l < 32; ++l) {
      codes[32 * j + l] =
          static_cast<uint8_t>(d1 > 0 ? std::clamp(nearest((x[32 * j + l] + m1) / d1), 0, levels) : 0);
    }
  }
}

void quantize_q4_k(const float* x, GgufBlockQ4K* b, size_t blocks) {
  uint8_t codes[256];
  for (size_t i = 0; i < blocks; ++i, x += 256) {
    quantize_k_affine(x, 15, &b[i].d, &b[i].dmin, b[i].scales, codes);
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) b[i].qs[32 * c + l] = static_cast<uint8_t>(codes[64 * c + l] | (codes[64 * c + 32 + l] << 4));
    }
  }
}

void quantize_q5_k(const float* x, GgufBlockQ5K* b, size_t blocks) {
  uint8_t codes[256];
  for (size_t i = 0; i < blocks; ++i, x += 256) {
    quantize_k_affine(x, 31, &b[i].d, &b[i].dmin, b[i].scales, codes);
    std::memset(b[i].qh, 0, sizeof(b[i].qh));
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        const int lo = codes[64 * c + l], hi = codes[64 * c + 32 + l];
        b[i].qs[32 * c + l] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
        b[i].qh[l] |= static_cast<uint8_t>(((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
      }
    }
  }
}

// Per sub-block of 16 a symmetric scale amax / 31, stored as an int8 multiple of d.
void quantize_q6_k(const float* x, GgufBlockQ6K* b, size_t blocks) {
  for (size_t i = 0; i < blocks; ++i, x += 256) {
    float sub_scale[16];
    for (int j = 0; j < 16; ++j) {
      float amax = 0;
      for (int l = 0; l < 16; ++l) amax = std::max(amax, std::fabs(x[16 * j + l]));
      sub_scale[j] = amax / 31.0f;
    }
    const float d = round_f16(*std::max_element(sub_scale, sub_scale + 16) / 127.0f, &b[i].d);
    std::memset(b[i].ql, 0, sizeof(b[i].ql));
    std::memset(b[i].qh, 0, sizeof(b[i].qh));
    for (int j = 0; j < 16; ++j) b[i].scales[j] = static_cast<int8_t>(d > 0 ? std::clamp(nearest(sub_scale[j] / d), -127, 127) : 0);
    for (int h = 0; h < 2; ++h) {
      for (int k = 0; k < 4; ++k) {
        for (int l = 0; l < 32; ++l) {
          const int e = 128 * h + 32 * k + l;
          const float step = d * static_cast<float>(b[i].scales[8 * h + l / 16 + 2 * k]);
          const int q = (step > 0 ? std::clamp(nearest(x[e] / step), -32, 31) : 0) + 32;
          b[i].ql[64 * h + l + 32 * (k & 1)] |= static_cast<uint8_t>((q & 0xF) << (k < 2 ? 0 : 4));
          b[i].qh[32 * h + l] |= static_cast<uint8_t>((q >> 4) << (2 * k));
        }
      }
    }
  }
}

void check_length(DType type, size_t n) {
  if (!is_block_dtype(type) || is_regrouped_dtype(type)) fail("{} is not a GGUF block type", dtype_name(type));
  if (n % dtype_block_size(type) != 0) {
    fail("{}: row length {} is not a multiple of the block size {}", dtype_name(type), n, dtype_block_size(type));
  }
}

}  // namespace

void gguf_quantize_row(DType type, const float* x, void* blocks, size_t n) {
  check_length(type, n);
  const size_t count = n / dtype_block_size(type);
  switch (type) {
    case DType::kQ8_0:
      return quantize_q8_0(x, static_cast<GgufBlockQ8_0*>(blocks), count);
    case DType::kQ4_0:
      return quantize_q4_0(x, static_cast<GgufBlockQ4_0*>(blocks), count);
    case DType::kQ4_K:
      return quantize_q4_k(x, static_cast<GgufBlockQ4K*>(blocks), count);
    case DType::kQ5_K:
      return quantize_q5_k(x, static_cast<GgufBlockQ5K*>(blocks), count);
    case DType::kQ6_K:
      return quantize_q6_k(x, static_cast<GgufBlockQ6K*>(blocks), count);
    default:
      return;
  }
}

}  // namespace qwen35
