// x in 8 bits per block of 32, and the scalar twin of the integer GGUF kernels.
#include "cpu/int8_activations.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "qwen35/error.h"
#include "qwen35/gguf_quants.h"

namespace qwen35::cpu {

size_t int8_activation_floats(size_t cols, size_t digits) {
  // codes: a plane per digit and the reordered plane (4 per float); scales (padded: the kernels read 16 from
  // each block of 256), sums, code sums (and a plane per digit for more than one), group scales
  return (digits + 1) * (cols / 4) + (cols / 32 + 16) + cols / 32 + 2 * (cols / 16) +
         (digits > 1 ? digits * (cols / 16) : 0);
}

void quantize_blocks_scalar(const float* x, size_t cols, int8_t* q, float* scale, float* code_sums, size_t digits) {
  for (size_t b = 0; b < cols / 32; ++b) {
    const float* xb = x + 32 * b;
    float amax = 0;
    bool finite = true;
    for (size_t k = 0; k < 32; ++k) {
      finite = finite && std::isfinite(xb[k]);
      amax = std::max(amax, std::fabs(xb[k]));
    }
    // A block that is not finite keeps codes 0 and a NaN scale, so every dot
    // that reads it is NaN, as in float arithmetic.
    scale[b] = finite ? amax / 127 : std::numeric_limits<float>::quiet_NaN();
    const float lift = lift_of(amax);
    const float inverse = finite && amax > 0 ? 127 / (amax * lift) : 0;
    int group_sum[kInt24Digits][2] = {};
    for (size_t k = 0; k < 32; ++k) {
      // Round to nearest even by adding and removing 1.5 * 2^23 (|x * inverse|
      // <= 127), inline where std::nearbyint is a library call without SSE4.1.
      // The product is rounded to a float first (this file is compiled without
      // contracting it into a fused multiply-add), as on every SIMD target.
      constexpr float kRound = 0x1.8p23f;
      float t = finite ? xb[k] * lift * inverse : 0.0f;
      for (size_t d = 0; d < digits; ++d) {
        if (d > 0) t *= 254.0f;  // the remainder's next digit
        const float v = (t + kRound) - kRound;
        const float code = v < -127.0f ? -127.0f : v > 127.0f ? 127.0f : v;
        q[d * cols + 32 * b + k] = static_cast<int8_t>(code);
        group_sum[d][k / 16] += static_cast<int>(code);
        t -= code;
      }
    }
    for (size_t d = 0; d < digits; ++d) {
      for (size_t g = 0; g < 2; ++g) code_sums[d * (cols / 16) + 2 * b + g] = static_cast<float>(group_sum[d][g]);
    }
  }
}

Int8Activations quantize_activations(const float* x, size_t cols, float* scratch, size_t digits) {
  auto* q = reinterpret_cast<int8_t*>(scratch);
  auto* q_k4 = reinterpret_cast<int8_t*>(scratch + digits * (cols / 4));
  float* scale = scratch + (digits + 1) * (cols / 4);
  float* sums = scale + cols / 32 + 16;
  std::fill(scale + cols / 32, sums, 0.0f);
  float* code_sums = sums + cols / 32;
  float* group_scale = code_sums + cols / 16;
  if (digits == 1) {
    quantize_blocks(x, cols, q, scale, code_sums);
  } else {
    float* digit_sums = group_scale + cols / 16;
    quantize_blocks(x, cols, q, scale, digit_sums, digits);
    for (size_t g = 0; g < cols / 16; ++g) {
      float s = 0;  // in order, without contraction: the scalar twin's sums are the same floats
      for (size_t d = 0; d < digits; ++d) s += kDigitWeight[d] * digit_sums[d * (cols / 16) + g];
      code_sums[g] = s;
    }
  }
  for (size_t b = 0; b < cols / 32; ++b) {
    sums[b] = scale[b] * (code_sums[2 * b] + code_sums[2 * b + 1]);  // for 8 bits, integers: exact
    group_scale[2 * b] = group_scale[2 * b + 1] = scale[b];
  }
  for (size_t block = 0; digits == 1 && block + 256 <= cols; block += 256) {
    for (size_t t = 0; t < 4; ++t) {
      for (size_t lane = 0; lane < 16; ++lane) {
        const size_t from = block + 32 * (lane % 8) + 8 * t + 4 * (lane / 8);
        std::memcpy(q_k4 + block + 64 * t + 4 * lane, q + from, 4);
      }
    }
  }
  return Int8Activations{.q = q,
                         .q_k4 = digits == 1 ? q_k4 : nullptr,
                         .scale = scale,
                         .sums = sums,
                         .code_sums = code_sums,
                         .group_scale = group_scale,
                         .digits = digits,
                         .cols = cols};
}

namespace {

// sum_k code(k) * x_k over the n elements of x from `first`, the codes from
// `code`: each digit's integer sum times its weight.
template <typename Code>
double unit_dot(const Int8Activations& x, size_t first, size_t n, const Code& code) {
  double y = 0;
  for (size_t d = 0; d < x.digits; ++d) {
    int64_t s = 0;
    for (size_t k = 0; k < n; ++k) s += int64_t{code(k)} * x.q[d * x.cols + first + k];
    y += double{kDigitWeight[d]} * static_cast<double>(s);
  }
  return y;
}

double q8_0(const GgufBlockQ8_0* b, const Int8Activations& x, size_t blocks) {
  double y = 0;
  for (size_t i = 0; i < blocks; ++i) {
    const double dot = unit_dot(x, 32 * i, 32, [&](size_t k) { return int{b[i].qs[k]}; });
    y += double{f16_to_f32(b[i].d)} * x.scale[i] * dot;
  }
  return y;
}

double q4_0(const GgufBlockQ4_0* b, const Int8Activations& x, size_t blocks) {
  double y = 0;
  for (size_t i = 0; i < blocks; ++i) {
    const double dot = unit_dot(x, 32 * i, 32, [&](size_t k) {
      return (k < 16 ? b[i].qs[k] & 15 : b[i].qs[k - 16] >> 4) - 8;
    });
    y += double{f16_to_f32(b[i].d)} * x.scale[i] * dot;
  }
  return y;
}

// Q4_K and Q5_K: sub-block j's codes by code(j, l), l < 32.
template <typename Block, typename Code>
double k4(const Block* b, const Int8Activations& x, size_t blocks, const Code& code) {
  double y = 0;
  for (size_t i = 0; i < blocks; ++i) {
    const float d = f16_to_f32(b[i].d), dmin = f16_to_f32(b[i].dmin);
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      gguf_scale_min_k4(j, b[i].scales, &sc, &m);
      const size_t unit = 8 * i + j;
      const double dot = unit_dot(x, 32 * unit, 32, [&](size_t l) { return code(b[i], j, l); });
      y += double{d * sc} * x.scale[unit] * dot - double{dmin * m} * x.sums[unit];
    }
  }
  return y;
}

int q4_k_code(const GgufBlockQ4K& b, int j, size_t l) {
  const uint8_t byte = b.qs[32 * (j / 2) + l];
  return j % 2 == 0 ? byte & 15 : byte >> 4;
}

int q5_k_code(const GgufBlockQ5K& b, int j, size_t l) {
  const uint8_t byte = b.qs[32 * (j / 2) + l];
  return (j % 2 == 0 ? byte & 15 : byte >> 4) | (((b.qh[l] >> j) & 1) << 4);
}

double q6_k(const GgufBlockQ6K* b, const Int8Activations& x, size_t blocks) {
  double y = 0;
  for (size_t i = 0; i < blocks; ++i) {
    const float d = f16_to_f32(b[i].d);
    for (int h = 0; h < 2; ++h) {
      for (int k = 0; k < 4; ++k) {
        for (int half = 0; half < 2; ++half) {  // the sub-block of 16: elements 128h + 32k + 16 half + [0, 16)
          const size_t first = 256 * i + 128 * h + 32 * k + 16 * half;
          const double dot = unit_dot(x, first, 16, [&](size_t m) {
            const size_t l = 16 * half + m;
            const uint8_t low = b[i].ql[64 * h + l + 32 * (k & 1)];
            const int low4 = k < 2 ? low & 15 : low >> 4;
            return (low4 | (((b[i].qh[32 * h + l] >> (2 * k)) & 3) << 4)) - 32;
          });
          const int sc = b[i].scales[8 * h + half + 2 * k];
          y += double{d * static_cast<float>(sc)} * x.scale[first / 32] * dot;
        }
      }
    }
  }
  return y;
}

}  // namespace

double int8_row_dot(DType type, const std::byte* row, const Int8Activations& x, size_t cols) {
  switch (type) {
    case DType::kQ8_0: return q8_0(reinterpret_cast<const GgufBlockQ8_0*>(row), x, cols / 32);
    case DType::kQ4_0: return q4_0(reinterpret_cast<const GgufBlockQ4_0*>(row), x, cols / 32);
    case DType::kQ4_K: return k4(reinterpret_cast<const GgufBlockQ4K*>(row), x, cols / 256, q4_k_code);
    case DType::kQ5_K: return k4(reinterpret_cast<const GgufBlockQ5K*>(row), x, cols / 256, q5_k_code);
    case DType::kQ6_K: return q6_k(reinterpret_cast<const GgufBlockQ6K*>(row), x, cols / 256);
    default: fail("int8 activations: {} is not a GGUF block type", dtype_name(type));
  }
}

}  // namespace qwen35::cpu
