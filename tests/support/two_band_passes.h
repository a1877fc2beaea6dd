// What the kernels that walk rows as passes of two bands (cpu/row_bands.h)
// are checked on: the passes a share may be claimed in, and that a call
// writes the rows of its passes, each with the bits of the one-row kernel,
// and no other row.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu/row_bands.h"

namespace qwen35::testing {

// Rows of the matrices the passes below lie in.
inline constexpr size_t kTwoBandRows = 45;

// 37 rows from row 3 are bands of 18 and one row over (passes 0..18): all of
// them, a claim from inside the bands, one reaching past them, the row over
// alone; and a share of one row (no band at all).
inline constexpr std::array<cpu::RowPasses, 5> kTwoBandPasses = {
    cpu::RowPasses{3, 40, 2, 0, 19}, cpu::RowPasses{3, 40, 2, 5, 12}, cpu::RowPasses{3, 40, 2, 17, 19},
    cpu::RowPasses{3, 40, 2, 18, 19}, cpu::RowPasses{44, 45, 2, 0, 1}};

// y (kTwoBandRows, NaN before the call) holds expected's bits at the rows of
// passes p and NaN elsewhere.
inline void expect_bits_on_passes(const cpu::RowPasses& p, const std::vector<float>& y,
                                  const std::vector<float>& expected) {
  // Spelled out from RowPasses' definition, not through row_bands.h's
  // walkers, which the kernels under test use.
  std::vector<bool> in_passes(y.size(), false);
  const size_t band = (p.end - p.begin) / 2;
  for (size_t j = p.first; j < p.last; ++j) {
    if (j < band) {
      in_passes[p.begin + j] = in_passes[p.begin + band + j] = true;
    } else {
      in_passes[p.begin + 2 * band + (j - band)] = true;
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

}  // namespace qwen35::testing
