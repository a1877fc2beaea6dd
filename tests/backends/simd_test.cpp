// The CPU backend's SIMD primitives against plain double-precision loops, for
// every instruction set compiled in and supported by this machine, forced one
// at a time (so an AVX-512 machine also checks the AVX2, SSE4 and scalar code),
// at sizes just below and above every vector width.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "cpu/simd.h"
#include "qwen35/dtype.h"
#include "support/test_support.h"
#include "support/band_passes.h"

namespace qwen35::testing {
namespace {

// float32 accumulation against double: a few ulps times sqrt(n) of the
// magnitude; 1e-5 relative to the largest term sum covers n up to ~10^4.
constexpr double kTolerance = 1e-5;

const std::vector<size_t> kSizes = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65,
                                    95, 96, 97, 127, 128, 129, 255, 256, 257, 1000};

class Simd : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { simd::force_target(GetParam()); }
  void TearDown() override { simd::force_target(0); }
};

// Weights stored as `type`, and their exact float values.
struct Weights {
  std::vector<uint16_t> half;
  std::vector<float> f32;
  std::vector<float> exact;
  const void* data(simd::WeightType type) const {
    return type == simd::WeightType::kF32 ? static_cast<const void*>(f32.data()) : half.data();
  }
};

Weights make_weights(simd::WeightType type, size_t n, uint32_t seed) {
  Weights w;
  w.f32 = random_floats(n, seed);
  w.exact = w.f32;
  if (type != simd::WeightType::kF32) {
    w.half.resize(n);
    for (size_t i = 0; i < n; ++i) {
      w.half[i] = type == simd::WeightType::kBF16 ? f32_to_bf16(w.f32[i]) : f32_to_f16(w.f32[i]);
      w.exact[i] = type == simd::WeightType::kBF16 ? bf16_to_f32(w.half[i]) : f16_to_f32(w.half[i]);
    }
  }
  return w;
}

const simd::WeightType kTypes[] = {simd::WeightType::kF32, simd::WeightType::kBF16, simd::WeightType::kF16};

TEST_P(Simd, TargetIsTheForcedOne) { EXPECT_EQ(simd::current_target(), simd::target_name(GetParam())); }

// Rows [begin, rows): 7 rows fill no 8-row pass and one 4-row pass; the 34
// rows from row 3 make four 8-row passes over bands of 4 rows (or eight 4-row
// passes over bands of 8) and leave 2 rows over, starting mid-matrix as a pool
// task does.
TEST_P(Simd, GemvRowsAndDot) {
  for (simd::WeightType type : kTypes) {
    for (size_t cols : kSizes) {
      for (const auto& [begin, rows] : {std::pair<size_t, size_t>{0, 7}, {3, 37}}) {
        SCOPED_TRACE(::testing::Message() << "type " << static_cast<int>(type) << " cols " << cols << " rows "
                                          << begin << ".." << rows);
        const Weights w = make_weights(type, rows * cols, static_cast<uint32_t>(cols));
        const auto x = random_floats(cols, 77);
        const auto base = random_floats(rows, 78);
        std::vector<float> y(rows, std::nanf(""));
        simd::gemv_rows(type, w.data(type), x.data(), base.data(), y.data(), begin, rows, cols);
        for (size_t r = 0; r < begin; ++r) ASSERT_TRUE(std::isnan(y[r])) << "row " << r << " is outside the range";
        for (size_t r = begin; r < rows; ++r) {
          double expected = 0, scale = 0;
          for (size_t c = 0; c < cols; ++c) {
            expected += double{w.exact[r * cols + c]} * x[c];
            scale += std::fabs(double{w.exact[r * cols + c]} * x[c]);
          }
          ASSERT_NEAR(y[r], base[r] + expected, kTolerance * (scale + 1)) << "row " << r;
          const void* row = static_cast<const char*>(w.data(type)) +
                            r * cols * (type == simd::WeightType::kF32 ? 4 : 2);
          ASSERT_NEAR(simd::dot(type, row, x.data(), cols), expected, kTolerance * (scale + 1)) << "row " << r;
        }
      }
    }
  }
}

// Two and four bands: every row of the passes gets gemv_rows' bits (the rows
// of a band pass and the rows left over alike), and no other row is written.
TEST_P(Simd, GemvBandsGiveGemvRowsBits) {
  for (simd::WeightType type : kTypes) {
    for (size_t cols : {size_t{1}, size_t{15}, size_t{17}, size_t{64}, size_t{65}, size_t{257}, size_t{1000}}) {
      const Weights w = make_weights(type, kBandRows * cols, static_cast<uint32_t>(cols) + 5);
      const auto x = random_floats(cols, 79);
      const auto base = random_floats(kBandRows, 80);
      for (const bool with_base : {true, false}) {
        const float* b = with_base ? base.data() : nullptr;
        std::vector<float> expected(kBandRows);
        simd::gemv_rows(type, w.data(type), x.data(), b, expected.data(), 0, kBandRows, cols);
        for (const size_t bands : {2, 4}) {
          for (const cpu::RowPasses& passes : band_passes(bands)) {
            SCOPED_TRACE(::testing::Message() << "type " << static_cast<int>(type) << " cols " << cols << " rows "
                                              << passes.begin << ".." << passes.end << " in " << bands
                                              << " bands, passes " << passes.first << ".." << passes.last
                                              << (with_base ? "" : " without base"));
            std::vector<float> y(kBandRows, std::nanf(""));
            simd::gemv_bands(type, w.data(type), x.data(), b, y.data(), passes, cols);
            expect_bits_on_passes(passes, y, expected);
          }
        }
      }
    }
  }
}

TEST_P(Simd, ElementwisePrimitives) {
  for (size_t n : kSizes) {
    SCOPED_TRACE(::testing::Message() << "n " << n);
    const auto x = random_floats(n, 1, -8, 8);
    const auto w = random_floats(n, 2);
    double sum_sq = 0;
    for (float v : x) sum_sq += double{v} * v;
    EXPECT_NEAR(simd::sum_squares(x.data(), n), sum_sq, kTolerance * sum_sq);

    std::vector<float> y(n);
    simd::scale_mul(x.data(), 0.37f, w.data(), y.data(), n);
    for (size_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(y[i], x[i] * 0.37f * w[i]);

    double expected_max = x[0];
    for (float v : x) expected_max = std::max(expected_max, double{v});
    EXPECT_EQ(simd::max_value(x.data(), n), expected_max);

    std::vector<float> e = x;
    const float total = simd::exp_shifted(e.data(), n, 0.75f, 3.0f);
    double expected_total = 0;
    for (size_t i = 0; i < n; ++i) {
      const double expected = std::exp(double{x[i]} * 0.75 - 3.0);
      expected_total += expected;
      ASSERT_NEAR(e[i], expected, 4e-6 * expected) << i;  // Highway's Exp: a few ulps
    }
    EXPECT_NEAR(total, expected_total, 1e-5 * expected_total);

    simd::silu_mul(x.data(), w.data(), y.data(), n);
    for (size_t i = 0; i < n; ++i) {
      const double expected = x[i] / (1.0 + std::exp(-double{x[i]})) * w[i];
      ASSERT_NEAR(y[i], expected, 4e-6 * (std::fabs(expected) + 1e-6)) << i;  // Highway's Exp: a few ulps
    }

    simd::sigmoid_mul(w.data(), x.data(), y.data(), n);
    for (size_t i = 0; i < n; ++i) {
      const double expected = w[i] / (1.0 + std::exp(-double{x[i]}));
      ASSERT_NEAR(y[i], expected, 4e-6 * (std::fabs(expected) + 1e-6)) << i;  // Highway's Exp: a few ulps
    }

    for (simd::WeightType type : kTypes) {
      const Weights v = make_weights(type, n, 3);
      std::vector<float> acc = random_floats(n, 4);
      const std::vector<float> before = acc;
      simd::scale_add(type, v.data(type), 0.5f, 0.25f, acc.data(), n);
      for (size_t i = 0; i < n; ++i) ASSERT_NEAR(acc[i], before[i] * 0.5 + 0.25 * v.exact[i], 1e-6);
    }
  }
}

// Gated DeltaNet's width-4 conv over channels [begin, end) of a row of `conv_dim`:
// outputs against double, the history shifted exactly, channels outside untouched.
TEST_P(Simd, Conv4SiluMatchesTheSpec) {
  for (size_t n : kSizes) {
    const size_t begin = n % 5, end = begin + n, conv_dim = end + 3;
    SCOPED_TRACE(::testing::Message() << "channels " << begin << ".." << end);
    const auto u = random_floats(conv_dim, 1, -3, 3);
    const auto w = random_floats(4 * conv_dim, 2);
    const auto history = random_floats(3 * conv_dim, 3, -3, 3);
    std::vector<float> state = history, out(conv_dim, -7.0f);
    simd::conv4_silu(u.data(), state.data(), w.data(), out.data(), begin, end, conv_dim);
    for (size_t c = 0; c < conv_dim; ++c) {
      const bool inside = c >= begin && c < end;
      if (!inside) {
        ASSERT_EQ(out[c], -7.0f) << c;
        for (size_t j = 0; j < 3; ++j) ASSERT_EQ(state[j * conv_dim + c], history[j * conv_dim + c]) << c;
        continue;
      }
      double acc = double{w[4 * c + 3]} * u[c], magnitude = std::fabs(acc);
      for (size_t j = 0; j < 3; ++j) {
        acc += double{w[4 * c + j]} * history[j * conv_dim + c];
        magnitude += std::fabs(double{w[4 * c + j]} * history[j * conv_dim + c]);
      }
      const double expected = acc / (1.0 + std::exp(-acc));
      // float32 sums of four terms (silu' <= 1.1), then Highway's Exp: a few ulps.
      ASSERT_NEAR(out[c], expected, 4e-7 * magnitude + 4e-6 * std::fabs(expected)) << c;
      ASSERT_EQ(state[c], history[conv_dim + c]) << c;
      ASSERT_EQ(state[conv_dim + c], history[2 * conv_dim + c]) << c;
      ASSERT_EQ(state[2 * conv_dim + c], u[c]) << c;
    }
  }
}

// A KV block's rows in one storage format, and their exact values: value i
// of row b's slice for KV head g is exact[b * exact_stride + g * n + i].
struct KvRows {
  std::vector<std::byte> bytes;
  std::vector<float> exact;
  size_t exact_stride;
  simd::WeightType type;
  bool fp8;
  size_t row_stride;  // as KvBlock counts it: elements, or bytes for fp8
  size_t row_bytes;
};

// Plain rows: n_heads slices plus 3 elements of padding.
KvRows plain_rows(simd::WeightType type, size_t rows, size_t heads, size_t n, uint32_t seed) {
  const size_t row_stride = heads * n + 3, element_bytes = type == simd::WeightType::kF32 ? 4 : 2;
  const Weights w = make_weights(type, rows * row_stride, seed);
  KvRows r{.bytes = std::vector<std::byte>(rows * row_stride * element_bytes), .exact = w.exact,
           .exact_stride = row_stride, .type = type, .fp8 = false, .row_stride = row_stride,
           .row_bytes = row_stride * element_bytes};
  std::memcpy(r.bytes.data(), w.data(type), r.bytes.size());
  return r;
}

// FP8 rows in the KV-cache format: heads * n codes, then a BF16 scale per 16,
// the scales spread over several binades. No NaN codes (see
// Fp8RowsDecodeEveryCodeExactly).
KvRows fp8_rows(size_t rows, size_t heads, size_t n, uint32_t seed) {
  const size_t codes = heads * n, row_bytes = codes + 2 * (codes / 16);
  KvRows r{.bytes = std::vector<std::byte>(rows * row_bytes), .exact = std::vector<float>(rows * codes),
           .exact_stride = codes, .type = simd::WeightType::kF32, .fp8 = true, .row_stride = row_bytes,
           .row_bytes = row_bytes};
  std::mt19937 rng(seed);
  for (size_t b = 0; b < rows; ++b) {
    std::byte* row = r.bytes.data() + b * row_bytes;
    for (size_t k = 0; k < codes / 16; ++k) {
      const uint16_t scale = f32_to_bf16(std::ldexp(1.0f + static_cast<float>(rng() % 128) / 128.0f,
                                                    static_cast<int>(rng() % 13) - 9));
      std::memcpy(row + codes + 2 * k, &scale, 2);
    }
    for (size_t i = 0; i < codes; ++i) {
      auto code = static_cast<uint8_t>(rng());
      if ((code & 0x7F) == 0x7F) code ^= 1;
      row[i] = std::byte{code};
      uint16_t scale;
      std::memcpy(&scale, row + codes + 2 * (i / 16), 2);
      r.exact[b * codes + i] = fp8_e4m3_to_f32(code) * bf16_to_f32(scale);
    }
  }
  return r;
}

// Every query head reads its KV head's slice. Prefetching 5 rows on asks for
// lines past the rows, which must change nothing. FP8 rows (slices of a
// multiple of 16 values) are decoded as they are read.
TEST_P(Simd, AttentionKernelsReadEachRowForEveryQueryHead) {
  for (size_t format = 0; format <= std::size(kTypes); ++format) {
    const bool fp8 = format == std::size(kTypes);  // after the plain types
    for (size_t n : {1u, 15u, 16u, 17u, 33u, 48u, 64u, 256u}) {
      if (fp8 && n % 16 != 0) continue;
      for (size_t heads : {1u, 2u}) {
        for (size_t group : {1u, 2u, 3u, 4u, 5u, 7u, 9u}) {  // every remainder after passes of 4 queries
          SCOPED_TRACE(::testing::Message() << "format " << format << " n " << n << " heads " << heads << " group "
                                            << group);
          const size_t rows = 7, queries = heads * group;
          const size_t score_stride = rows + 2, acc_stride = n + 2;
          const auto seed = static_cast<uint32_t>(n + heads);
          const KvRows r = fp8 ? fp8_rows(rows, heads, n, seed) : plain_rows(kTypes[format], rows, heads, n, seed);
          const simd::KvBlock block{.rows = r.bytes.data(), .type = r.type, .row_stride = r.row_stride,
                                    .n_rows = rows, .n_heads = heads, .head_dim = n, .group = group,
                                    .prefetch_rows = 5, .fp8 = fp8};
          const auto slice = [&](size_t b, size_t j) { return &r.exact[b * r.exact_stride + (j / group) * n]; };
          const auto q = random_floats(queries * n, 9);
          std::vector<float> scores(queries * score_stride, std::nanf(""));
          simd::attention_scores(block, q.data(), scores.data(), score_stride);
          for (size_t j = 0; j < queries; ++j) {
            for (size_t b = 0; b < score_stride; ++b) {
              if (b >= rows) {
                ASSERT_TRUE(std::isnan(scores[j * score_stride + b])) << "query " << j << " wrote past its rows";
                continue;
              }
              double expected = 0, magnitude = 0;
              for (size_t i = 0; i < n; ++i) {
                expected += double{slice(b, j)[i]} * q[j * n + i];
                magnitude += std::fabs(double{slice(b, j)[i]} * q[j * n + i]);
              }
              ASSERT_NEAR(scores[j * score_stride + b], expected, kTolerance * (magnitude + 1))
                  << "query " << j << " row " << b;
            }
          }
          const auto weights = random_floats(rows * queries, 10);  // weights[j * rows + b]: a row per query
          auto accs = random_floats(queries * acc_stride, 11);
          const auto before = accs;
          simd::attention_values(block, weights.data(), rows, accs.data(), acc_stride);
          for (size_t j = 0; j < queries; ++j) {
            for (size_t i = 0; i < acc_stride; ++i) {
              double expected = before[j * acc_stride + i], magnitude = std::fabs(expected);
              if (i < n) {
                for (size_t b = 0; b < rows; ++b) {
                  expected += double{weights[j * rows + b]} * slice(b, j)[i];
                  magnitude += std::fabs(double{weights[j * rows + b]} * slice(b, j)[i]);
                }
              }
              ASSERT_NEAR(accs[j * acc_stride + i], expected, kTolerance * (magnitude + 1))
                  << "query " << j << " index " << i;
            }
          }
        }
      }
    }
  }
}

// FP8 rows decode every code exactly (dtype.cpp's fp8_e4m3_to_f32 times the
// BF16 scale of its 16): one-hot queries score each value alone. Row 0 holds
// every code but the two NaN ones, each 16 with its own scale (zero among
// them); rows 1 and 2 hold a NaN code (positive, negative) among finite ones,
// which makes every score of its row NaN. (Sums of zeros and one value: a
// negative zero may come back as zero.)
TEST_P(Simd, Fp8RowsDecodeEveryCodeExactly) {
  const size_t n = 256, rows = 3, row_bytes = n + 2 * (n / 16);
  std::vector<uint8_t> bytes(rows * row_bytes);
  std::vector<uint8_t> finite;
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7F) != 0x7F) finite.push_back(static_cast<uint8_t>(c));
  }
  for (size_t b = 0; b < rows; ++b) {
    for (size_t i = 0; i < n; ++i) bytes[b * row_bytes + i] = finite[(i * 37 + b) % finite.size()];
    for (size_t k = 0; k < n / 16; ++k) {
      const uint16_t scale = k == 5 ? 0 : f32_to_bf16(std::ldexp(1.5f, static_cast<int>(k % 9) - 6));
      std::memcpy(&bytes[b * row_bytes + n + 2 * k], &scale, 2);
    }
  }
  for (uint8_t c : finite) ASSERT_NE(std::find(bytes.begin(), bytes.begin() + n, c), bytes.begin() + n) << int{c};
  bytes[1 * row_bytes + 37] = 0x7F;
  bytes[2 * row_bytes + 200] = 0xFF;
  std::vector<float> queries(n * n, 0.0f);
  for (size_t j = 0; j < n; ++j) queries[j * n + j] = 1.0f;
  const simd::KvBlock block{.rows = bytes.data(), .type = simd::WeightType::kF32, .row_stride = row_bytes,
                            .n_rows = rows, .n_heads = 1, .head_dim = n, .group = n, .prefetch_rows = 0,
                            .fp8 = true};
  std::vector<float> scores(n * rows, -1.0f);
  simd::attention_scores(block, queries.data(), scores.data(), rows);
  for (size_t i = 0; i < n; ++i) {
    uint16_t scale;
    std::memcpy(&scale, &bytes[n + 2 * (i / 16)], 2);
    const float expected = fp8_e4m3_to_f32(bytes[i]) * bf16_to_f32(scale);
    ASSERT_EQ(scores[i * rows], expected) << "code " << int{bytes[i]};  // -0 as 0
    EXPECT_TRUE(std::isnan(scores[i * rows + 1])) << i;
    EXPECT_TRUE(std::isnan(scores[i * rows + 2])) << i;
  }
}

// A NaN code reaches the score of its row and the output column it sits in,
// for the query heads of its KV head, and nothing else. Blocks are checked
// for NaN codes once (then decoded without the test), so one NaN code among
// a block's rows must switch the whole block to decoding with it: here in a
// vector's codes (row 2, head 0), or alone among the last codes of the block,
// past any whole vector of them (row 4, head 2).
TEST_P(Simd, Fp8NanCodesReachTheirScoresAndColumnsOnly) {
  const size_t rows = 5, heads = 3, n = 48, group = 2, queries = heads * group;  // 144 codes a row
  struct NanCode {
    size_t row, head, index;
    uint8_t code;
  };
  for (const NanCode nan : {NanCode{2, 0, 10, 0x7F}, NanCode{4, 2, n - 1, 0xFF}}) {
    SCOPED_TRACE(::testing::Message() << "NaN code in row " << nan.row << " head " << nan.head);
    KvRows r = fp8_rows(rows, heads, n, 3);
    r.bytes[nan.row * r.row_bytes + nan.head * n + nan.index] = std::byte{nan.code};
    r.exact[nan.row * r.exact_stride + nan.head * n + nan.index] = std::nanf("");
    const simd::KvBlock block{.rows = r.bytes.data(), .type = r.type, .row_stride = r.row_stride, .n_rows = rows,
                              .n_heads = heads, .head_dim = n, .group = group, .prefetch_rows = 0, .fp8 = true};
    const auto slice = [&](size_t b, size_t j) { return &r.exact[b * r.exact_stride + (j / group) * n]; };
    const auto expect_near = [](float actual, double expected, double magnitude) {
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(actual));
      } else {
        EXPECT_NEAR(actual, expected, kTolerance * (magnitude + 1));
      }
    };
    const auto q = random_floats(queries * n, 4);
    std::vector<float> scores(queries * rows);
    simd::attention_scores(block, q.data(), scores.data(), rows);
    for (size_t j = 0; j < queries; ++j) {
      for (size_t b = 0; b < rows; ++b) {
        SCOPED_TRACE(::testing::Message() << "query " << j << " row " << b);
        double expected = 0, magnitude = 0;
        for (size_t i = 0; i < n; ++i) {
          expected += double{slice(b, j)[i]} * q[j * n + i];
          magnitude += std::fabs(double{slice(b, j)[i]} * q[j * n + i]);
        }
        EXPECT_EQ(std::isnan(expected), j / group == nan.head && b == nan.row);
        expect_near(scores[j * rows + b], expected, magnitude);
      }
    }
    const auto weights = random_floats(queries * rows, 5);
    auto accs = random_floats(queries * n, 6);
    const auto before = accs;
    simd::attention_values(block, weights.data(), rows, accs.data(), n);
    for (size_t j = 0; j < queries; ++j) {
      for (size_t i = 0; i < n; ++i) {
        SCOPED_TRACE(::testing::Message() << "query " << j << " index " << i);
        double expected = before[j * n + i], magnitude = std::fabs(expected);
        for (size_t b = 0; b < rows; ++b) {
          expected += double{weights[j * rows + b]} * slice(b, j)[i];
          magnitude += std::fabs(double{weights[j * rows + b]} * slice(b, j)[i]);
        }
        EXPECT_EQ(std::isnan(expected), j / group == nan.head && i == nan.index);
        expect_near(accs[j * n + i], expected, magnitude);
      }
    }
  }
}

TEST_P(Simd, GdnHeadMatchesTheSpecOrder) {
  for (size_t dk : {1u, 8u, 15u, 16u, 17u, 128u}) {
    const size_t dv = dk + 3;
    auto state = random_floats(dv * dk, 5);  // S^T [dv, dk]
    const auto q = random_floats(dk, 6), k = random_floats(dk, 7), v = random_floats(dv, 8);
    const float decay = 0.9f, beta = 0.6f;
    // Spec 3.2 step 7 in double on S[r][c] = state[c * dk + r].
    std::vector<double> S(state.begin(), state.end());
    for (double& s : S) s *= decay;
    std::vector<double> expected_out(dv);
    for (size_t c = 0; c < dv; ++c) {
      double m = 0;
      for (size_t r = 0; r < dk; ++r) m += S[c * dk + r] * k[r];
      const double delta = beta * (v[c] - m);
      for (size_t r = 0; r < dk; ++r) S[c * dk + r] += k[r] * delta;
      for (size_t r = 0; r < dk; ++r) expected_out[c] += S[c * dk + r] * q[r];
    }
    std::vector<float> out(dv, std::nanf(""));
    simd::gdn_head(state.data(), q.data(), k.data(), v.data(), decay, beta, out.data(), dk, dv);
    for (size_t c = 0; c < dv; ++c) ASSERT_NEAR(out[c], expected_out[c], 1e-4 * std::sqrt(dk)) << "dk " << dk;
    for (size_t e = 0; e < S.size(); ++e) ASSERT_NEAR(state[e], S[e], 1e-5) << "dk " << dk;
  }
}

std::vector<int64_t> targets() {
  std::vector<int64_t> t = simd::available_targets();
  return t;
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, Simd, ::testing::ValuesIn(targets()),
                         [](const ::testing::TestParamInfo<int64_t>& info) { return simd::target_name(info.param); });

}  // namespace
}  // namespace qwen35::testing
