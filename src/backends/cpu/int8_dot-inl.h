// Four byte products summed into each int32 lane, the step every integer
// gemv (cpu_gguf_int8.cpp, cpu_mlx_int8.cpp) is built on, per target:
// AVX-512 VNNI's vpdpbusd (Highway's AVX3_DL target, which a file asks for
// with HWY_WANT_AVX3_DL), AVX2's vpmaddubsw + vpmaddwd, on 64-bit ARM
// widening multiplies and pairwise adds (ARMv8.0: Highway 1.0.3's NEON target
// does not assume the dot-product extension), and elsewhere bytes widened by
// shifts within each int32 lane. Compiled once per Highway target
// (included by each target's pass of a foreach_target file, hence the toggle
// guard instead of #pragma once); not for HWY_SCALAR, whose callers run their
// scalar twins.
#if defined(QWEN35_CPU_INT8_DOT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QWEN35_CPU_INT8_DOT_INL_H_
#undef QWEN35_CPU_INT8_DOT_INL_H_
#else
#define QWEN35_CPU_INT8_DOT_INL_H_
#endif

#include <cstdint>
#include <cstring>

#include "cpu/int8_activations.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

#if HWY_TARGET != HWY_AVX3_DL && HWY_TARGET != HWY_AVX2 && HWY_TARGET != HWY_AVX3
// Byte kByte of each int32 lane, sign-extended.
template <int kByte, class V>
HWY_INLINE V byte_of(V v) {
  return hn::ShiftRight<24>(hn::ShiftLeft<24 - 8 * kByte>(v));
}
#endif

// Lane k of acc plus sum_{j < 4} u[4k + j] * s[4k + j], for codes u in
// [0, 127] (any unsigned byte on VNNI) and s signed (|s| <= 127). Any width of
// vector.
template <class VQ, class VB, class VS>
HWY_INLINE VQ dot4(VQ acc, VB u, VS s) {
#if HWY_TARGET == HWY_AVX3_DL
  // EVEX-encoded: the VEX form belongs to AVX-VNNI, which not every CPU with
  // AVX512-VNNI has (Ice Lake has not).
  asm("%{evex%} vpdpbusd %2, %1, %0" : "+v"(acc.raw) : "v"(u.raw), "v"(s.raw));
  return acc;
#elif HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
  // u <= 127 keeps each pair's sum of products inside int16 (vpmaddubsw saturates).
  if constexpr (sizeof(u.raw) == 64) {
    return hn::Add(acc, VQ{_mm512_madd_epi16(_mm512_maddubs_epi16(u.raw, s.raw), _mm512_set1_epi16(1))});
  } else if constexpr (sizeof(u.raw) == 32) {
    return hn::Add(acc, VQ{_mm256_madd_epi16(_mm256_maddubs_epi16(u.raw, s.raw), _mm256_set1_epi16(1))});
  } else {
    return hn::Add(acc, VQ{_mm_madd_epi16(_mm_maddubs_epi16(u.raw, s.raw), _mm_set1_epi16(1))});
  }
#else
#if HWY_TARGET == HWY_NEON && HWY_ARCH_ARM_A64
  if constexpr (sizeof(u.raw) == 16) {
    // Four instructions per 16 bytes where the shifts below take twenty:
    // products of signed bytes as int16 (|u s| <= 128 * 127, so a pair's sum
    // fits), adjacent pairs summed (vpaddq keeps byte order: int16 lane m
    // holds bytes 2m and 2m + 1), and adjacent pairs of those added into the
    // int32 lanes.
    const hn::Repartition<int8_t, hn::DFromV<VQ>> d8;
    const int8x16_t a = hn::BitCast(d8, u).raw, b = hn::BitCast(d8, s).raw;
    const int16x8_t pairs = vpaddq_s16(vmull_s8(vget_low_s8(a), vget_low_s8(b)), vmull_high_s8(a, b));
    return VQ{vpadalq_s16(acc.raw, pairs)};
  }
#endif
  // Both operands read as signed bytes: exact for codes below 128, and for
  // signed weights as they are (Q8_0's dot4_signed).
  const hn::DFromV<VQ> dq;
  const VQ uq = hn::BitCast(dq, u), sq = hn::BitCast(dq, s);
  acc = hn::Add(acc, hn::Mul(byte_of<0>(uq), byte_of<0>(sq)));
  acc = hn::Add(acc, hn::Mul(byte_of<1>(uq), byte_of<1>(sq)));
  acc = hn::Add(acc, hn::Mul(byte_of<2>(uq), byte_of<2>(sq)));
  return hn::Add(acc, hn::Mul(byte_of<3>(uq), byte_of<3>(sq)));
#endif
}

// x's four codes at q broadcast as one int32 to every lane: the operand of
// dot4 for kernels whose lanes hold different rows (the regrouped layouts).
template <class DQ>
HWY_INLINE hn::Vec<hn::Repartition<int8_t, DQ>> x_quad_at(DQ dq, const int8_t* q) {
  int32_t four;
  std::memcpy(&four, q, 4);
  return hn::BitCast(hn::Repartition<int8_t, DQ>(), hn::Set(dq, four));
}

// The int32 sums of a sub-block's D digits of x (1 for x in 8 bits, 3 for
// 24: int8_activations.h) as one float: sum_d acc[d] * kDigitWeight[d].
template <size_t D, class DF, class VQ>
HWY_INLINE hn::Vec<DF> digit_sum(DF df, const VQ* acc) {
  auto sum = hn::ConvertTo(df, acc[0]);
  for (size_t d = 1; d < D; ++d) sum = hn::MulAdd(hn::ConvertTo(df, acc[d]), hn::Set(df, kDigitWeight[d]), sum);
  return sum;
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace qwen35::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // QWEN35_CPU_INT8_DOT_INL_H_
