// simd::mlx_gemv_rows for every instruction set compiled in and supported
// here, forced one at a time, against the dequantize-then-double gemv, for 4
// and 8 bits, every group size and scale dtype, with a base (residual) row,
// over 7 rows (no full pass of 8 bands) and over rows 3..37 of 37 (four 8-row
// or eight 4-row passes and 2 rows left over, starting mid-matrix); and
// simd::mlx_gemv_bands against mlx_gemv_rows, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "cpu/simd.h"
#include "mlx_test_util.h"
#include "support/band_passes.h"

namespace qwen35::testing {
namespace {

class MlxSimd : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { simd::force_target(GetParam()); }
  void TearDown() override { simd::force_target(0); }
};

TEST_P(MlxSimd, GemvRowsMatchDequantizedGemv) {
  for (uint32_t bits : {4u, 8u}) {
    for (uint32_t gs : {32u, 64u, 128u}) {
      for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
        // 1152 columns: 36 groups of 32, whole vectors of each row's scales on every target, then some left over.
        for (const auto& [cols, begin, rows] :
             {std::tuple{128u, 0u, 7u}, {384u, 0u, 7u}, {128u, 3u, 37u}, {1152u, 0u, 9u}}) {
          SCOPED_TRACE(::testing::Message() << bits << " bits, group " << gs << ", " << dtype_suffix(dtype) << ", cols "
                                            << cols << ", rows " << begin << ".." << rows);
          const QuantizedMatrix m = quantize_random(rows, cols, {bits, gs}, dtype, bits + gs + cols);
          const std::vector<float> x = random_floats(cols, 3, -2, 2);
          const std::vector<float> base = random_floats(rows, 4);
          std::vector<float> coded(cols), sums(cols / gs), y(rows, std::nanf(""));
          simd::mlx_prepare_x(bits, x.data(), cols, gs, coded.data(), sums.data());
          const simd::MlxRows w{.codes = m.codes.data(), .scales = m.scales.data(), .biases = m.biases.data(),
                                .scale_type = weight_type(dtype), .bits = bits, .cols = cols, .group_size = gs};
          simd::mlx_gemv_rows(w, coded.data(), sums.data(), base.data(), y.data(), begin, rows);
          for (uint32_t r = 0; r < begin; ++r) ASSERT_TRUE(std::isnan(y[r])) << "row " << r << " is outside the range";
          for (uint32_t r = begin; r < rows; ++r) {
            double want = base[r], scale = 0;
            for (uint32_t c = 0; c < cols; ++c) {
              want += double{m.dequantized[size_t{r} * cols + c]} * x[c];
              scale += std::fabs(double{m.dequantized[size_t{r} * cols + c]} * x[c]);
            }
            // float32 accumulation of the factored form: see kGemvTolerance in mlx_affine_test.cpp.
            ASSERT_NEAR(y[r], want, 1e-5 * (scale + 1)) << "row " << r;
          }
        }
      }
    }
  }
}

// In two bands and in four, every row of the passes gets mlx_gemv_rows' bits
// (the rows of a pass of the bands and the rows left over alike), and no
// other row is written.
TEST_P(MlxSimd, GemvBandsGiveGemvRowsBits) {
  for (uint32_t bits : {4u, 8u}) {
    for (uint32_t gs : {32u, 64u, 128u}) {
      for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
        for (uint32_t cols : {128u, 384u, 1152u}) {
          if (cols % gs != 0) continue;
          const QuantizedMatrix m = quantize_random(kBandRows, cols, {bits, gs}, dtype, bits + gs + cols + 2);
          const std::vector<float> x = random_floats(cols, 7, -2, 2);
          const std::vector<float> base = random_floats(kBandRows, 8);
          std::vector<float> coded(cols), sums(cols / gs), expected(kBandRows);
          simd::mlx_prepare_x(bits, x.data(), cols, gs, coded.data(), sums.data());
          const simd::MlxRows w{.codes = m.codes.data(), .scales = m.scales.data(), .biases = m.biases.data(),
                                .scale_type = weight_type(dtype), .bits = bits, .cols = cols, .group_size = gs};
          simd::mlx_gemv_rows(w, coded.data(), sums.data(), base.data(), expected.data(), 0, kBandRows);
          SCOPED_TRACE(::testing::Message() << bits << " bits, group " << gs << ", " << dtype_suffix(dtype)
                                            << ", cols " << cols);
          expect_bits_in_bands(expected, [&](const cpu::RowPasses& passes, float* y) {
            simd::mlx_gemv_bands(w, coded.data(), sums.data(), base.data(), y, passes);
          });
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, MlxSimd, ::testing::ValuesIn(simd::available_targets()),
                         [](const ::testing::TestParamInfo<int64_t>& info) { return simd::target_name(info.param); });

}  // namespace
}  // namespace qwen35::testing
