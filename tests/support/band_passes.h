// What the kernels that walk rows as passes of bands (cpu/row_bands.h) are
// checked on: the passes a share may be claimed in, and that a call writes the
// rows of its passes, each with the bits of the one-row kernel, and no other
// row.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu/row_bands.h"

namespace qwen35::testing {

// The band counts a host may choose for the integer Q6_K and mlx4 gemvs
// (cpu::heavy_int8_gemv_bands), each forced in turn for the backend tests.
inline constexpr size_t kHeavyInt8Bands[] = {2, 4};

// Forces cpu::heavy_int8_gemv_bands() to `bands` while it lives.
class ForcedHeavyInt8Bands {
 public:
  explicit ForcedHeavyInt8Bands(size_t bands) { cpu::set_heavy_int8_gemv_bands(bands); }
  ~ForcedHeavyInt8Bands() { cpu::set_heavy_int8_gemv_bands(0); }
  ForcedHeavyInt8Bands(const ForcedHeavyInt8Bands&) = delete;
  ForcedHeavyInt8Bands& operator=(const ForcedHeavyInt8Bands&) = delete;
};

// Rows of the matrices the passes below lie in.
inline constexpr size_t kBandRows = 45;

// In `bands` bands, 37 rows from row 3 are bands of 37 / bands rows and
// 37 % bands rows over (1 in two bands, 1 in four): all passes, a claim from
// inside the bands, one reaching past them, the rows over alone; and a share
// of one row (no band at all).
inline std::vector<cpu::RowPasses> band_passes(size_t bands) {
  const size_t band = 37 / bands, passes = cpu::pass_count(37, bands);
  return {cpu::RowPasses{3, 40, bands, 0, passes}, cpu::RowPasses{3, 40, bands, 2, band - 2},
          cpu::RowPasses{3, 40, bands, band - 1, passes}, cpu::RowPasses{3, 40, bands, band, passes},
          cpu::RowPasses{44, 45, bands, 0, 1}};
}

// y (kBandRows, NaN before the call) holds expected's bits at the rows of
// passes p and NaN elsewhere.
inline void expect_bits_on_passes(const cpu::RowPasses& p, const std::vector<float>& y,
                                  const std::vector<float>& expected) {
  // Spelled out from RowPasses' definition, not through row_bands.h's
  // walkers, which the kernels under test use.
  std::vector<bool> in_passes(y.size(), false);
  const size_t band = (p.end - p.begin) / p.bands;
  for (size_t j = p.first; j < p.last; ++j) {
    if (j < band) {
      for (size_t k = 0; k < p.bands; ++k) in_passes[p.begin + k * band + j] = true;
    } else {
      in_passes[p.begin + p.bands * band + (j - band)] = true;
    }
  }
  for (size_t r = 0; r < y.size(); ++r) {
    if (!in_passes[r]) {
      ASSERT_TRUE(std::isnan(y[r])) << "row " << r << " is outside the passes";
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(y[r]), std::bit_cast<uint32_t>(expected[r])) << "row " << r;
    }
  }
}

// For two and four bands and each of their band_passes: run(passes, y) on y
// of kBandRows NaNs, then expect_bits_on_passes against expected.
template <typename Run>
void expect_bits_in_bands(const std::vector<float>& expected, const Run& run) {
  for (const size_t bands : {2, 4}) {
    for (const cpu::RowPasses& passes : band_passes(bands)) {
      SCOPED_TRACE(::testing::Message() << bands << " bands, rows " << passes.begin << ".." << passes.end
                                        << ", passes " << passes.first << ".." << passes.last);
      std::vector<float> y(kBandRows, std::nanf(""));
      run(passes, y.data());
      expect_bits_on_passes(passes, y, expected);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace qwen35::testing
