// The CPU backend's fp8 KV quantizer against the scalar one the reference
// backend uses (host/kv_rows.h), byte for byte, on every target compiled in
// and supported here: the two backends' caches must stay identical.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cpu/fp8_kv_quantize.h"
#include "cpu/simd.h"
#include "host/kv_rows.h"
#include "qwen35/kernels.h"

namespace qwen35::testing {
namespace {

class Fp8KvQuantizer : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { simd::force_target(GetParam()); }
  void TearDown() override { simd::force_target(0); }
};

// Both quantizers over x; the first differing code or scale is reported with its input.
void expect_same_bytes(const std::vector<float>& x) {
  const auto n = static_cast<uint32_t>(x.size());
  std::vector<uint8_t> codes(n, 0xAA), twin_codes(n, 0x55);
  std::vector<uint16_t> scales(n / kKvFp8Block, 0xAAAA), twin_scales(n / kKvFp8Block, 0x5555);
  cpu::quantize_fp8_kv(x.data(), n, codes.data(), scales.data());
  quantize_fp8_kv(x.data(), n, twin_codes.data(), twin_scales.data());
  for (uint32_t b = 0; b < n / kKvFp8Block; ++b) {
    ASSERT_EQ(scales[b], twin_scales[b]) << "block " << b << " starting with " << x[b * kKvFp8Block];
  }
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(codes[i], twin_codes[i]) << "value " << i << ": " << std::hexfloat << x[i] << " in block "
                                       << i / kKvFp8Block;
  }
}

// Blocks of random values, each block its own magnitude from 2^-125 to 2^125
// (so scales from 0 to the largest), signs mixed, some values far smaller
// than their block's largest (codes below 2^-6, and float subnormals).
TEST_P(Fp8KvQuantizer, MatchesTheScalarOneOnRandomBlocks) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-125, 125), shrink(0, 40);
  for (uint32_t n : {16u, 32u, 48u, 512u, 1024u, 4096u}) {
    SCOPED_TRACE(::testing::Message() << "n " << n);
    std::vector<float> x(n);
    for (uint32_t b = 0; b < n / kKvFp8Block; ++b) {
      const int e = exponent(rng);
      for (uint32_t i = 0; i < kKvFp8Block; ++i) {
        const int down = i % 4 == 3 ? shrink(rng) : 0;
        x[b * kKvFp8Block + i] = std::ldexp(unit(rng), std::max(e - down, -149));
      }
    }
    expect_same_bytes(x);
  }
}

// With 448 first, the scale is 1 and the rest are coded as they are: a sweep
// over the float bit patterns from 0 to 448 (every 1021st, both signs), then
// every tie between two codes, normal and subnormal, and the values either
// side of 2^-6.
TEST_P(Fp8KvQuantizer, CodesEveryMagnitudeUpTo448AsTheScalarOne) {
  std::vector<float> x;
  auto add = [&x](float v) {
    if (x.size() % kKvFp8Block == 0) x.push_back(448.0f);
    x.push_back(v);
  };
  for (uint32_t bits = 0; bits <= std::bit_cast<uint32_t>(448.0f); bits += 1021) {
    add(std::bit_cast<float>(bits));
    add(-std::bit_cast<float>(bits + 509));
  }
  for (int e = -9; e <= 8; ++e) {
    for (int m = 0; m < 16; ++m) add(std::ldexp(static_cast<float>(2 * m + 1), e - 4));  // halfway, 3-bit mantissas
  }
  for (int m = 0; m < 16; ++m) add(std::ldexp(static_cast<float>(2 * m + 1), -10));  // halfway, subnormal steps
  add(0x1p-6f);
  add(std::nextafter(0x1p-6f, 0.0f));
  add(std::nextafter(0x1p-6f, 1.0f));
  add(-0.0f);
  while (x.size() % kKvFp8Block != 0) add(1.0f);
  expect_same_bytes(x);
}

// The scale's edges: a largest value of 1.75 * 2^k (the last with the smaller
// scale) and the float after it, tiny blocks on either side of 2^-100 (scale
// 0 below, codes keeping the sign of zero), zeros of both signs, the largest
// float, and blocks holding a NaN or an infinity (left to the scalar one).
TEST_P(Fp8KvQuantizer, MatchesTheScalarOneAtTheEdges) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const std::vector<float> firsts = {1.75f, std::nextafter(1.75f, 2.0f), 0x1.cp-90f, std::nextafter(0x1.cp-90f, 1.0f),
                                     0x1p-100f, std::nextafter(0x1p-100f, 0.0f), 0x1p-120f, -0x1p-110f, 0.0f, -0.0f,
                                     std::numeric_limits<float>::max(), std::numeric_limits<float>::quiet_NaN(), kInf,
                                     -kInf, std::numeric_limits<float>::denorm_min(), 3e-39f};
  std::vector<float> x;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (float first : firsts) {
    x.push_back(first);
    for (uint32_t i = 1; i < kKvFp8Block; ++i) {
      const float magnitude = std::isfinite(first) && first != 0.0f ? std::fabs(first) : 1.0f;
      x.push_back(i % 2 ? -0.0f : unit(rng) * magnitude);
    }
  }
  expect_same_bytes(x);
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, Fp8KvQuantizer, ::testing::ValuesIn(simd::available_targets()),
                         [](const ::testing::TestParamInfo<int64_t>& info) { return simd::target_name(info.param); });

}  // namespace
}  // namespace qwen35::testing
