// The scalar dtype conversions every kernel relies on, checked exhaustively
// over all 16-bit patterns against their definitions.
#include <gtest/gtest.h>

#include <cmath>

#include "qwen35/dtype.h"

namespace qwen35 {
namespace {

TEST(DType, Bf16RoundTripsEveryPattern) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const float value = bf16_to_f32(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(value))));
      continue;
    }
    ASSERT_EQ(f32_to_bf16(value), bits) << bits;
  }
}

TEST(DType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f + 1.0f / 256), f32_to_bf16(1.0f));               // tie -> even (down)
  EXPECT_EQ(f32_to_bf16(1.0f + 3.0f / 256), f32_to_bf16(1.0f + 4.0f / 256));  // tie -> even (up)
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(1.0f + 1.5f / 256)), 1.0f + 2.0f / 256);
}

TEST(DType, F16MatchesItsDefinitionForEveryPattern) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const uint32_t exponent = (bits >> 10) & 31, mantissa = bits & 1023;
    const double sign = (bits & 0x8000) ? -1.0 : 1.0;
    const float value = f16_to_f32(static_cast<uint16_t>(bits));
    if (exponent == 31) {
      EXPECT_TRUE(mantissa ? std::isnan(value) : std::isinf(value));
      continue;
    }
    const double expected = exponent == 0 ? sign * std::ldexp(mantissa, -24)
                                          : sign * std::ldexp(1024 + mantissa, static_cast<int>(exponent) - 25);
    ASSERT_EQ(value, expected) << bits;
    ASSERT_EQ(f32_to_f16(value), bits) << bits;
  }
}

TEST(DType, F16RoundsAndSaturates) {
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // rounds up to infinity
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f16_to_f32(f32_to_f16(1.0f + 1.0f / 2048)), 1.0f);  // tie -> even
  EXPECT_EQ(f32_to_f16(1e-9f), 0);
}

TEST(DType, Fp8E4M3MatchesItsDefinitionForEveryPattern) {
  for (uint32_t bits = 0; bits < 256; ++bits) {
    const uint32_t exponent = (bits >> 3) & 15, mantissa = bits & 7;
    const double sign = (bits & 0x80) ? -1.0 : 1.0;
    const float value = fp8_e4m3_to_f32(static_cast<uint8_t>(bits));
    if (exponent == 15 && mantissa == 7) {
      EXPECT_TRUE(std::isnan(value)) << bits;
      EXPECT_EQ(f32_to_fp8_e4m3(value) & 0x7f, 0x7f);
      continue;
    }
    const double expected = exponent == 0 ? sign * std::ldexp(mantissa, -9)
                                          : sign * std::ldexp(8 + mantissa, static_cast<int>(exponent) - 10);
    ASSERT_EQ(value, expected) << bits;
    ASSERT_EQ(f32_to_fp8_e4m3(value), bits) << bits;
  }
}

TEST(DType, Fp8E4M3RoundsToNearestEvenAndSaturates) {
  EXPECT_EQ(fp8_e4m3_to_f32(f32_to_fp8_e4m3(1.0625f)), 1.0f);     // tie between 1 and 1.125 -> even (1)
  EXPECT_EQ(fp8_e4m3_to_f32(f32_to_fp8_e4m3(1.1875f)), 1.25f);    // tie between 1.125 and 1.25 -> even (1.25)
  EXPECT_EQ(fp8_e4m3_to_f32(f32_to_fp8_e4m3(1.07f)), 1.125f);
  EXPECT_EQ(fp8_e4m3_to_f32(f32_to_fp8_e4m3(-3.0e-3f)), -0.00390625f);  // subnormal: 2 * 2^-9
  EXPECT_EQ(fp8_e4m3_to_f32(f32_to_fp8_e4m3(0.0155f)), 0.015625f);      // rounds up into the normals
  EXPECT_EQ(f32_to_fp8_e4m3(1e-4f), 0);
  EXPECT_EQ(fp8_e4m3_to_f32(f32_to_fp8_e4m3(460.0f)), 448.0f);
  EXPECT_EQ(fp8_e4m3_to_f32(f32_to_fp8_e4m3(-1e9f)), -448.0f);
  EXPECT_EQ(fp8_e4m3_to_f32(f32_to_fp8_e4m3(INFINITY)), 448.0f);
}

TEST(DType, NamesParse) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kU32, DType::kF8E4M3}) {
    EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  }
  EXPECT_FALSE(parse_dtype("F33").has_value());
  EXPECT_EQ(dtype_lower_name(DType::kBF16), "bf16");
  EXPECT_EQ(dtype_lower_name(DType::kF8E4M3), "f8_e4m3");
  EXPECT_TRUE(is_float_dtype(DType::kF16));
  EXPECT_FALSE(is_float_dtype(DType::kU32));
  EXPECT_EQ(dtype_size(DType::kBF16), 2u);
}

}  // namespace
}  // namespace qwen35
