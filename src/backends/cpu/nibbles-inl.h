// The float values of 4-bit codes for the Q4_0, Q4_K and MLX 4-bit gemvs,
// compiled once per Highway target (included by each target's pass of a
// foreach_target file, hence the toggle guard instead of #pragma once).
//
// On AVX-512 a code's value is one lane permute of a table of the 16 values:
// the permute reads only the low four bits of each index, so a low nibble
// needs no mask and no int-to-float conversion, two of the three operations
// of widening it (Q4_K's gemv: 13.6 -> 14.8 GB/s). Elsewhere: mask, convert
// and add the offset, if any.
#if defined(QWEN35_CPU_NIBBLES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QWEN35_CPU_NIBBLES_INL_H_
#undef QWEN35_CPU_NIBBLES_INL_H_
#else
#define QWEN35_CPU_NIBBLES_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Up to 16 lanes: the vectors of codes widened from 16 bytes.
using NibbleFloats = hn::CappedTag<float, 16>;
using NibbleCodes = hn::Rebind<uint32_t, NibbleFloats>;

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// What nibble_values takes besides the codes: the table of c + kOffset.
template <int kOffset>
HWY_INLINE hn::Vec<NibbleFloats> nibble_table() {
  const NibbleFloats df;
  return hn::Add(hn::Iota(df, 0), hn::Set(df, static_cast<float>(kOffset)));
}
// (c & 15) + kOffset for each code lane c (any bits above the low four).
// The index is built without IndicesFromVec, whose debug-build check wants
// indices below 16.
template <int kOffset>
HWY_INLINE hn::Vec<NibbleFloats> nibble_values(hn::Vec<NibbleCodes> codes, hn::Vec<NibbleFloats> table) {
  return hn::TableLookupLanes(table, hn::Indices512<float>{codes.raw});
}
#else
template <int kOffset>
HWY_INLINE hn::Vec<NibbleFloats> nibble_table() {
  return hn::Set(NibbleFloats(), static_cast<float>(kOffset));
}
template <int kOffset>
HWY_INLINE hn::Vec<NibbleFloats> nibble_values(hn::Vec<NibbleCodes> codes, hn::Vec<NibbleFloats> offset) {
  const NibbleFloats df;
  const auto values =
      hn::ConvertTo(df, hn::BitCast(hn::Rebind<int32_t, NibbleFloats>(), hn::And(codes, hn::Set(NibbleCodes(), 0xFu))));
  if constexpr (kOffset == 0) return values;
  return hn::Add(values, offset);
}
#endif

}  // namespace qwen35::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // QWEN35_CPU_NIBBLES_INL_H_
