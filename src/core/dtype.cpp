// Names, sizes and half-precision conversions of DType (see dtype.h).
#include "qwen35/dtype.h"

#include <array>
#include <cmath>
#include <limits>

namespace qwen35 {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  size_t size;        // bytes per block
  size_t block = 1;   // elements per block
};

constexpr std::array kDTypes = {
    DTypeInfo{DType::kF32, "F32", 4},  DTypeInfo{DType::kF16, "F16", 2},   DTypeInfo{DType::kBF16, "BF16", 2},
    DTypeInfo{DType::kF64, "F64", 8},  DTypeInfo{DType::kI64, "I64", 8},   DTypeInfo{DType::kI32, "I32", 4},
    DTypeInfo{DType::kI16, "I16", 2},  DTypeInfo{DType::kI8, "I8", 1},     DTypeInfo{DType::kU8, "U8", 1},
    DTypeInfo{DType::kU32, "U32", 4},  DTypeInfo{DType::kBool, "BOOL", 1}, DTypeInfo{DType::kF8E4M3, "F8_E4M3", 1},
    // ggml blocks (qwen35/gguf_quants.h): fp16 scales plus packed codes.
    DTypeInfo{DType::kQ8_0, "Q8_0", 34, 32},   DTypeInfo{DType::kQ4_0, "Q4_0", 18, 32},
    DTypeInfo{DType::kQ4_K, "Q4_K", 144, 256}, DTypeInfo{DType::kQ5_K, "Q5_K", 176, 256},
    DTypeInfo{DType::kQ6_K, "Q6_K", 210, 256},
    // Q4_0's, Q8_0's, Q4_K's, Q5_K's and Q6_K's bytes regrouped (GgufBlockQ4_0x16, ...): the
    // same bytes per block of a row.
    DTypeInfo{DType::kQ4_0x16, "Q4_0x16", 18, 32},     DTypeInfo{DType::kQ8_0x16, "Q8_0x16", 34, 32},
    DTypeInfo{DType::kQ4_Kx16, "Q4_Kx16", 144, 256},   DTypeInfo{DType::kQ5_Kx16, "Q5_Kx16", 176, 256},
    DTypeInfo{DType::kQ6_Kx16, "Q6_Kx16", 210, 256},
};

const DTypeInfo& info(DType dtype) {
  for (const DTypeInfo& entry : kDTypes) {
    if (entry.dtype == dtype) return entry;
  }
  return kDTypes[0];  // unreachable: every enumerator is in the table
}

}  // namespace

size_t dtype_size(DType dtype) { return info(dtype).size; }
size_t dtype_block_size(DType dtype) { return info(dtype).block; }
std::string_view dtype_name(DType dtype) { return info(dtype).name; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeInfo& entry : kDTypes) {
    if (entry.name == name && entry.block == 1) return entry.dtype;
  }
  return std::nullopt;
}

std::string dtype_lower_name(DType dtype) {
  std::string name(dtype_name(dtype));
  for (char& c : name) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return name;
}

// IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
float f16_to_f32(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t f32_to_f16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits > 0x7f800000u) return sign | 0x7e00u;    // NaN
  if (abs_bits >= 0x477ff000u) return sign | 0x7c00u;   // rounds to >= 65520: infinity
  if (abs_bits < 0x38800000u) {                          // below 2^-14: subnormal half
    const float magnitude = std::bit_cast<float>(abs_bits);
    return sign | static_cast<uint16_t>(std::nearbyint(magnitude * 16777216.0f));  // / 2^-24, ties to even
  }
  // Normal: rebias the exponent and round the mantissa to 10 bits, ties to even.
  uint32_t rounded = abs_bits + 0xfffu + ((abs_bits >> 13) & 1u);
  return sign | static_cast<uint16_t>((rounded - (112u << 23)) >> 13);
}

float fp8_e4m3_to_f32(uint8_t bits) {
  const uint32_t exponent = (bits >> 3) & 0xfu;
  const uint32_t mantissa = bits & 0x7u;
  float magnitude;
  if (exponent == 0xf && mantissa == 0x7) {
    magnitude = std::numeric_limits<float>::quiet_NaN();
  } else if (exponent == 0) {  // zero or subnormal: mantissa * 2^-9
    magnitude = std::ldexp(static_cast<float>(mantissa), -9);
  } else {
    magnitude = std::ldexp(static_cast<float>(8 + mantissa), static_cast<int>(exponent) - 10);
  }
  return (bits & 0x80u) ? -magnitude : magnitude;
}

uint8_t f32_to_fp8_e4m3(float value) {
  const uint8_t sign = static_cast<uint8_t>((std::bit_cast<uint32_t>(value) >> 24) & 0x80u);
  const float magnitude = std::fabs(value);
  if (std::isnan(value)) return sign | 0x7fu;
  if (magnitude >= 448.0f) return sign | 0x7eu;
  if (magnitude < 0.015625f) {  // below 2^-6: subnormal steps of 2^-9 (8 rounds up to the smallest normal)
    return sign | static_cast<uint8_t>(std::nearbyint(std::ldexp(magnitude, 9)));
  }
  int exponent = 0;
  const float fraction = std::frexp(magnitude, &exponent);  // magnitude = fraction * 2^exponent, fraction in [0.5, 1)
  // 16 * fraction in [8, 16): the implicit bit plus three mantissa bits, ties to even.
  auto steps = static_cast<uint32_t>(std::nearbyint(std::ldexp(fraction, 4)));
  int biased = exponent - 1 + 7;
  if (steps == 16) {
    steps = 8;
    ++biased;
  }
  if (biased > 15 || (biased == 15 && steps - 8 == 7)) return sign | 0x7eu;  // rounded past 448
  return sign | static_cast<uint8_t>((biased << 3) | (steps - 8));
}

}  // namespace qwen35
