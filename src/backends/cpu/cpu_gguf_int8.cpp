// GGUF block weights against x in 8 bits (cpu/int8_activations.h): the codes
// stay integers and meet x's codes in integer dot products, four byte
// products summed into each int32 lane; only each sub-block's sum is turned
// into a float and scaled by its weight factor times x's block scale. Rows
// walk in bands, two (Q4_0: four) at a time (gguf_rows.h), as in the float
// kernels (cpu_gguf.cpp), whose block helpers they share (gguf_blocks-inl.h).
//
// The dot product per target is int8_dot-inl.h's (vpdpbusd on AVX-512 VNNI,
// whose target is compiled for the integer kernels only); the scalar target
// runs the scalar twin. On AVX-512 each vector holds 64 codes assembled in
// registers from the block's bit planes: two Q8_0/Q4_0 blocks, a Q6_K chunk,
// or for Q4_K/Q5_K a quarter of every sub-block (x's codes reordered to match);
// narrower targets walk 32 or 16 bytes at a time, Q5_K and Q6_K from a
// per-block buffer of codes.
#ifndef HWY_WANT_AVX3_DL
#define HWY_WANT_AVX3_DL 1  // Ice Lake and later: the VNNI instructions
#endif
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/cpu_gguf_int8.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "cpu/gguf_blocks-inl.h"
#include "cpu/int8_dot-inl.h"

#include <string>
#include <type_traits>

#include "cpu/gguf_rows.h"
#include "cpu/int8_activations.h"
#include "qwen35/gguf_quants.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::gguf_cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// Bytes, up to 32 per vector, and the int32 and float vectors of their quarters.
using DB = hn::CappedTag<uint8_t, 32>;
using DSB = hn::Repartition<int8_t, DB>;
using DQ = hn::Repartition<int32_t, DB>;
using DQF = hn::Repartition<float, DB>;

using cpu::HWY_NAMESPACE::dot4;

// As dot4 for signed weights w (Q8_0).
template <class VQ, class VS>
HWY_INLINE VQ dot4_signed(VQ acc, VS w, VS s) {
#if HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
  // |w| times s with w's sign, for the unsigned-by-signed instructions (|w| <=
  // 128 and |s| <= 127 still keep vpmaddubsw's pair sums inside int16).
  static_assert(sizeof(w.raw) == 32);
  const hn::Vec<DB> magnitude{_mm256_abs_epi8(w.raw)};
  return dot4(acc, magnitude, VS{_mm256_sign_epi8(s.raw, w.raw)});
#else
  return dot4(acc, w, s);
#endif
}

// Four rows ahead (see prefetch_next_rows). Two rows (one: Q4_K from DRAM
// 14.7-17.3 GB/s, two: 17.3-19.9 on the earlier Zen 4 VM) left the 2-core Zen 5
// VM's 60-75 GB/s short of bytes in flight: q4_k decode, 7 alternating
// rounds, median 82 -> 91 tok/s; q8_0 (rows twice as long) within its noise.
template <size_t R, typename Block>
HWY_INLINE void prefetch_ahead(const Block* const* b, size_t blocks, size_t i) {
  prefetch_next_rows<R, Block, 4>(b, blocks, i);
}

// Q8_0 a block per 32-byte vector, blocks [first, blocks); out[r] gets the sum.
template <size_t R>
void int8_q8_0_blocks(const GgufBlockQ8_0* const* b, const cpu::Int8Activations& x, size_t first, size_t blocks,
                      float* out) {
  const DSB ds;
  const DQ dq;
  const DQF df;
  const size_t n = hn::Lanes(ds);
  hn::Vec<DQF> total[R];
  for (size_t r = 0; r < R; ++r) total[r] = hn::Zero(df);
  for (size_t i = first; i < blocks; ++i) {
    prefetch_ahead<R>(b, blocks, i);
    hn::Vec<DQ> acc[R];
    for (size_t r = 0; r < R; ++r) acc[r] = hn::Zero(dq);
    for (size_t k = 0; k < 32; k += n) {
      const auto xv = hn::LoadU(ds, x.q + 32 * i + k);
      for (size_t r = 0; r < R; ++r) acc[r] = dot4_signed(acc[r], hn::LoadU(ds, b[r][i].qs + k), xv);
    }
    HWY_ALIGN float d[4];
    block_scales<R>(b, i, d);
    for (size_t r = 0; r < R; ++r) {
      total[r] = hn::MulAdd(hn::ConvertTo(df, acc[r]), hn::Set(df, d[r] * x.scale[i]), total[r]);
    }
  }
  lane_sums<R>(df, total, out);
}

// On VNNI the high nibbles stay in place, 16 q (vpdpbusd has no int16 step
// to saturate), and their factors are divided by 16 instead
// (exactly: a power of two), which saves a shift per 64 codes.
#if HWY_TARGET == HWY_AVX3_DL
constexpr bool kHighNibblesTimes16 = true;
#else
constexpr bool kHighNibblesTimes16 = false;
#endif

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// Q8_0 and Q4_0 on AVX-512 take two blocks (i, i + 1) per vector. The rows'
// factors d * x's scale: row r of block i in lane r, of block i + 1 in lane 4 + r.
template <size_t R, typename Block>
HWY_INLINE __m512 pair_factors(const Block* const* b, size_t i, const cpu::Int8Activations& x) {
  // Packed in general registers: through a stack array the conversion waited
  // on failed store forwarding, assembled in vector registers on a chain of
  // mask moves and word inserts.
  uint64_t first = 0, second = 0;
  for (size_t r = 0; r < R; ++r) {
    first |= uint64_t{b[r][i].d} << (16 * r);
    second |= uint64_t{b[r][i + 1].d} << (16 * r);
  }
  const __m128i halves = _mm_set_epi64x(static_cast<int64_t>(second), static_cast<int64_t>(first));
  const __m128 two_scales = _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(x.scale + i)));
  const __m256 x_scales = _mm256_permutexvar_ps(_mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1),
                                                _mm256_castps128_ps256(two_scales));
  const __m256 d = _mm256_cvtph_ps(halves);
  return _mm512_castps256_ps512(_mm256_mul_ps(d, x_scales));
}

// Row r's factors for the int32 lanes of a pair of blocks: 8 lanes each.
HWY_INLINE __m512 row_pair_factors(__m512 factors, size_t r) {
  const int lo = static_cast<int>(r), hi = static_cast<int>(4 + r);
  return _mm512_permutexvar_ps(_mm512_setr_epi32(lo, lo, lo, lo, lo, lo, lo, lo, hi, hi, hi, hi, hi, hi, hi, hi),
                               factors);
}
#endif

#if HWY_TARGET == HWY_AVX3_DL
// Q8_0 on VNNI: vpdpbusd multiplies unsigned by signed bytes, so the weights
// go in as w + 128 (w ^ 0x80) and each int32 lane starts from -128 times the
// sum of its four x codes, computed once per pair of blocks for all rows.
template <size_t R>
HWY_INLINE void int8_q8_0(const GgufBlockQ8_0* const* b, const cpu::Int8Activations& x, size_t blocks, float* out) {
  const __m512i high_bit = _mm512_set1_epi8(static_cast<char>(0x80));
  hn::Vec<DF> total[R];
  for (size_t r = 0; r < R; ++r) total[r] = hn::Zero(DF());
  size_t i = 0;
  for (; i + 2 <= blocks; i += 2) {
    prefetch_ahead<R>(b, blocks, i);  // block i + 1 shares its line or the next pair's prefetch
    const __m512i xv = _mm512_loadu_si512(x.q + 32 * i);
    __m512i minus_sums = _mm512_setzero_si512();
    asm("vpdpbusd %2, %1, %0" : "+v"(minus_sums) : "v"(high_bit), "v"(xv));
    minus_sums = _mm512_sub_epi32(_mm512_setzero_si512(), minus_sums);
    const __m512 factors = pair_factors<R>(b, i, x);
    for (size_t r = 0; r < R; ++r) {
      const __m512i pair = _mm512_inserti64x4(
          _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[r][i].qs))),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[r][i + 1].qs)), 1);
      __m512i acc = minus_sums;
      asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(_mm512_xor_si512(pair, high_bit)), "v"(xv));
      total[r].raw = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), row_pair_factors(factors, r), total[r].raw);
    }
  }
  float last[R] = {};
  if (i < blocks) int8_q8_0_blocks<R>(b, x, i, blocks, last);
  lane_sums<R>(DF(), total, out);
  for (size_t r = 0; r < R; ++r) out[r] += last[r];
}
#else
template <size_t R>
HWY_INLINE void int8_q8_0(const GgufBlockQ8_0* const* b, const cpu::Int8Activations& x, size_t blocks, float* out) {
  int8_q8_0_blocks<R>(b, x, 0, blocks, out);
}
#endif

// Q4_0 16 bytes at a time, blocks [first, blocks): a block's low nibbles meet
// x[0, 16), its high ones x[16, 32). The offset -8 is applied once per block
// through x's code sums.
template <size_t R>
void int8_q4_0_blocks(const GgufBlockQ4_0* const* b, const cpu::Int8Activations& x, size_t first, size_t blocks,
                      float* out) {
  const hn::CappedTag<uint8_t, 16> d16;
  const hn::Repartition<int8_t, decltype(d16)> ds16;
  const hn::Repartition<int32_t, decltype(d16)> dq4;
  const hn::Repartition<float, decltype(d16)> df4;
  const auto low4 = hn::Set(d16, 0x0F);
  hn::Vec<decltype(df4)> total[R];
  float offset[R];
  for (size_t r = 0; r < R; ++r) {
    total[r] = hn::Zero(df4);
    offset[r] = 0;
  }
  for (size_t i = first; i < blocks; ++i) {
    prefetch_ahead<R>(b, blocks, i);
    const auto x_lo = hn::LoadU(ds16, x.q + 32 * i);
    const auto x_hi = hn::LoadU(ds16, x.q + 32 * i + 16);
    hn::Vec<decltype(dq4)> acc[R];
    for (size_t r = 0; r < R; ++r) {
      const auto codes = hn::LoadU(d16, b[r][i].qs);
      acc[r] = dot4(dot4(hn::Zero(dq4), hn::And(codes, low4), x_lo), hn::ShiftRight<4>(codes), x_hi);
    }
    HWY_ALIGN float d[4];
    block_scales<R>(b, i, d);
    const float code_sum = x.code_sums[2 * i] + x.code_sums[2 * i + 1];
    for (size_t r = 0; r < R; ++r) {
      const float factor = d[r] * x.scale[i];
      total[r] = hn::MulAdd(hn::ConvertTo(df4, acc[r]), hn::Set(df4, factor), total[r]);
      offset[r] += factor * code_sum;
    }
  }
  for (size_t r = 0; r < R; ++r) out[r] = hn::GetLane(hn::SumOfLanes(df4, total[r])) - 8 * offset[r];
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// Q4_0 on AVX-512, two blocks per vector: each block's 16 bytes twice, the
// second copy shifted down four bits (on VNNI: masked in place, times 16), so
// the 64 codes lie in x's order. The offset -8 starts each int32 lane at -8
// (-128 for a high nibble times 16) times the sum of its four x codes.
template <size_t R>
HWY_INLINE void int8_q4_0(const GgufBlockQ4_0* const* b, const cpu::Int8Activations& x, size_t blocks, float* out) {
  const hn::Full512<uint8_t> d8;
  const hn::Full512<int8_t> ds;
  const hn::Full512<int32_t> dq;
  const auto low4 = hn::Set(d8, 0x0F);
  const __m512i high_shifts = _mm512_setr_epi64(0, 0, 0x0004000400040004, 0x0004000400040004, 0, 0,
                                                0x0004000400040004, 0x0004000400040004);
  const __m512i nibble_masks = _mm512_setr_epi64(0x0F0F0F0F0F0F0F0F, 0x0F0F0F0F0F0F0F0F, -0x0F0F0F0F0F0F0F10,
                                                 -0x0F0F0F0F0F0F0F10, 0x0F0F0F0F0F0F0F0F, 0x0F0F0F0F0F0F0F0F,
                                                 -0x0F0F0F0F0F0F0F10, -0x0F0F0F0F0F0F0F10);  // 0x0F.., 0xF0..
  hn::Vec<DF> total[R];
  for (size_t r = 0; r < R; ++r) total[r] = hn::Zero(DF());
  size_t i = 0;
  for (; i + 2 <= blocks; i += 2) {
    prefetch_ahead<R>(b, blocks, i);  // block i + 1 shares its line or the next pair's prefetch
    const auto xv = hn::LoadU(ds, x.q + 32 * i);
    const auto code_sums = dot4(hn::Zero(dq), hn::Set(d8, 1), xv);
    __m512 factors = pair_factors<R>(b, i, x);
    hn::Vec512<int32_t> minus_sums;
    if constexpr (kHighNibblesTimes16) {
      // Lanes 8..15: the same factors over 16, for the high nibbles' lanes.
      const __m256 low_half = _mm512_castps512_ps256(factors);
      factors = _mm512_insertf32x8(factors, _mm256_mul_ps(low_half, _mm256_set1_ps(0.0625f)), 1);
      const __m512i by_8_or_128 = _mm512_setr_epi32(3, 3, 3, 3, 7, 7, 7, 7, 3, 3, 3, 3, 7, 7, 7, 7);
      minus_sums = hn::Neg(hn::Vec512<int32_t>{_mm512_sllv_epi32(code_sums.raw, by_8_or_128)});
    } else {
      minus_sums = hn::Neg(hn::ShiftLeft<3>(code_sums));
    }
    for (size_t r = 0; r < R; ++r) {
      const auto twice = [&](size_t k) {
        return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b[r][i + k].qs)));
      };
      const __m512i pair = _mm512_inserti64x4(_mm512_castsi256_si512(twice(0)), twice(1), 1);
      hn::Vec512<uint8_t> codes;
      __m512 factor;
      if constexpr (kHighNibblesTimes16) {
        codes = hn::Vec512<uint8_t>{_mm512_and_si512(pair, nibble_masks)};
        const int lo = static_cast<int>(r), hi = static_cast<int>(4 + r);
        factor = _mm512_permutexvar_ps(
            _mm512_setr_epi32(lo, lo, lo, lo, lo + 8, lo + 8, lo + 8, lo + 8, hi, hi, hi, hi, hi + 8, hi + 8, hi + 8,
                              hi + 8),
            factors);
      } else {
        codes = hn::And(hn::Vec512<uint8_t>{_mm512_srlv_epi16(pair, high_shifts)}, low4);
        factor = row_pair_factors(factors, r);
      }
      const auto sums = dot4(minus_sums, codes, xv);
      total[r].raw = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums.raw), factor, total[r].raw);
    }
  }
  float last[R] = {};
  if (i < blocks) int8_q4_0_blocks<R>(b, x, i, blocks, last);
  lane_sums<R>(DF(), total, out);
  for (size_t r = 0; r < R; ++r) out[r] += last[r];
}
#else
template <size_t R>
HWY_INLINE void int8_q4_0(const GgufBlockQ4_0* const* b, const cpu::Int8Activations& x, size_t blocks, float* out) {
  int8_q4_0_blocks<R>(b, x, 0, blocks, out);
}
#endif

// Whole vectors of up to 64 bytes of a K-quant block's codes.
using DW = hn::CappedTag<uint8_t, 64>;
using DWS = hn::Repartition<int8_t, DW>;
using DWQ = hn::Repartition<int32_t, DW>;
using DWF = hn::Repartition<float, DW>;

// The codes at bytes [o, o + lanes) of a 64-element chunk of Q4_K whose 32
// bytes are at qs: low nibbles below o = 32, high ones from there.
HWY_INLINE hn::Vec<DW> chunk_nibbles(const uint8_t* qs, size_t o) {
  const DW d;
  const auto v = hn::LoadU(d, qs + o % 32);
  return o < 32 ? hn::And(v, hn::Set(d, 0x0F)) : hn::ShiftRight<4>(v);
}

// The factor of the sub-block of 32 that the vector at byte o of a block lies in.
HWY_INLINE hn::Vec<DWF> sub_block_factor(const float* factor, size_t o) { return hn::Set(DWF(), factor[o / 32]); }

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// The per-block terms of R (<= 4) rows of Q4_K/Q5_K on AVX-512 (k4_rows_terms)
// with x's side in 8 bits: its scale per sub-block, then its sums.
template <size_t R, typename Block>
HWY_INLINE void k4_block_terms(const Block* const* b, size_t i, const cpu::Int8Activations& x, hn::Vec<DF>* factors,
                               float (*)[16], hn::Vec<DF>* mins) {
  // Q4_K's odd sub-blocks are its high nibbles (see chunk_nibbles).
  constexpr bool kOddOver16 = kHighNibblesTimes16 && std::is_same_v<Block, GgufBlockQ4K>;
  __m512 x_terms = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(x.scale + 8 * i)),
                                      _mm256_loadu_ps(x.sums + 8 * i), 1);
  if constexpr (kOddOver16) x_terms = _mm512_mul_ps(x_terms, _mm512_setr_ps(1, 0.0625f, 1, 0.0625f, 1, 0.0625f, 1,
                                                                            0.0625f, 1, 1, 1, 1, 1, 1, 1, 1));
  k4_rows_terms<R>(b, i, hn::Vec<DF>{x_terms}, factors, mins);
}
#else
// Elsewhere row by row: factor[r][j] = d sc_j times x's scale of sub-block j
// (also in the lanes of factors[r] where it has 8), the min terms added to mins[r].
template <size_t R, typename Block>
HWY_INLINE void k4_block_terms(const Block* const* b, size_t i, const cpu::Int8Activations& x, hn::Vec<DF>* factors,
                               float (*factor)[16], hn::Vec<DF>* mins) {
  const D8F d8;
  static_assert(std::is_same_v<D8F, DF>);
  for (size_t r = 0; r < R; ++r) {
    mins[r] = k4_scales_and_mins(b[r][i], x.sums + 8 * i, factor[r], mins[r]);
    for (size_t j = 0; j < 8; j += hn::Lanes(d8)) {
      const auto f = hn::Mul(hn::LoadU(d8, factor[r] + j), hn::LoadU(d8, x.scale + 8 * i + j));
      hn::StoreU(f, d8, factor[r] + j);
      if (j == 0) factors[r] = f;
    }
  }
}
#endif

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// Q4_K and Q5_K on AVX-512: a block's 256 codes as four vectors t whose int32
// lane L always covers sub-block L % 8, four codes at 8t + 4 (L / 8) within it
// (x's codes come in the same order: Int8Activations::q_k4). One integer
// accumulator per row then takes the block's four dots, and is converted and
// scaled once per block, the factors of lanes L and L + 8 alike; vectors of 64
// consecutive codes, two sub-blocks each, cost a conversion, a lane permute
// for the factors and a multiply-add per 64 codes.
//
// Sub-block s's codes are the low (s even) or high (s odd) nibbles of the 32
// bytes qs[32 (s / 2), +32), so lane L of vector t is dword 2t + L / 8 of that
// region, picked from the block's 128 bytes of qs by one two-source permute.
template <size_t t>
HWY_INLINE __m512i k4_lane_dwords(__m512i qs_low, __m512i qs_high) {
  constexpr int k = 2 * static_cast<int>(t);
  const __m512i index =
      _mm512_setr_epi32(k, k, 8 + k, 8 + k, 16 + k, 16 + k, 24 + k, 24 + k, k + 1, k + 1, 9 + k, 9 + k, 17 + k,
                        17 + k, 25 + k, 25 + k);
  return _mm512_permutex2var_epi32(qs_low, index, qs_high);
}

// Vector t's codes of a Q4_K or Q5_K block (lanes of odd sub-blocks on VNNI:
// 16 times their code, with kOddOver16 factors).
template <size_t t, typename Block>
HWY_INLINE hn::Vec<DW> k4_lane_codes(__m512i qs_low, __m512i qs_high, __m512i qh) {
  const __m512i dwords = k4_lane_dwords<t>(qs_low, qs_high);
  if constexpr (std::is_same_v<Block, GgufBlockQ4K> && kHighNibblesTimes16) {
    const __m512i nibbles = _mm512_set1_epi64(static_cast<int64_t>(0xF0F0F0F00F0F0F0F));
    return hn::Vec<DW>{_mm512_and_si512(dwords, nibbles)};
  } else {
    const __m512i low = _mm512_and_si512(_mm512_srlv_epi32(dwords, _mm512_set1_epi64(int64_t{4} << 32)),
                                         _mm512_set1_epi8(0x0F));
    if constexpr (std::is_same_v<Block, GgufBlockQ4K>) {
      return hn::Vec<DW>{low};
    } else {
      // The fifth bit: bit s of qh's bytes [8t + 4 (L / 8), +4), for every
      // sub-block s the same dword, rotated left by 4 - s to bit 4 of each byte.
      constexpr int k = 2 * static_cast<int>(t);
      const __m512i bits = _mm512_permutexvar_epi32(
          _mm512_setr_epi32(k, k, k, k, k, k, k, k, k + 1, k + 1, k + 1, k + 1, k + 1, k + 1, k + 1, k + 1), qh);
      const __m512i high = _mm512_rolv_epi32(bits, _mm512_setr_epi32(4, 3, 2, 1, 0, 31, 30, 29, 4, 3, 2, 1, 0, 31,
                                                                     30, 29));
      return hn::Vec<DW>{_mm512_ternarylogic_epi32(low, high, _mm512_set1_epi8(0x10), 0xF8)};  // low | (high & 0x10)
    }
  }
}

template <size_t R, typename Block>
HWY_INLINE void int8_k4(const Block* const* b, const cpu::Int8Activations& x, size_t blocks, float* out) {
  const DWS ds;
  const DWQ dq;
  hn::Vec<DF> total[R], mins[R];
  for (size_t r = 0; r < R; ++r) {
    total[r] = hn::Zero(DF());
    mins[r] = hn::Zero(DF());
  }
  for (size_t i = 0; i < blocks; ++i) {
    prefetch_ahead<R>(b, blocks, i);
    hn::Vec<DF> factors[R];
    k4_block_terms<R>(b, i, x, factors, nullptr, mins);
    const int8_t* xq = x.q_k4 + 256 * i;
    const auto x0 = hn::LoadU(ds, xq), x1 = hn::LoadU(ds, xq + 64), x2 = hn::LoadU(ds, xq + 128),
               x3 = hn::LoadU(ds, xq + 192);
    for (size_t r = 0; r < R; ++r) {
      const Block& block = b[r][i];
      const __m512i qs_low = _mm512_loadu_si512(block.qs), qs_high = _mm512_loadu_si512(block.qs + 64);
      __m512i qh = _mm512_setzero_si512();
      if constexpr (std::is_same_v<Block, GgufBlockQ5K>) {
        qh = _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block.qh)));
      }
      auto acc = dot4(hn::Zero(dq), k4_lane_codes<0, Block>(qs_low, qs_high, qh), x0);
      acc = dot4(acc, k4_lane_codes<1, Block>(qs_low, qs_high, qh), x1);
      acc = dot4(acc, k4_lane_codes<2, Block>(qs_low, qs_high, qh), x2);
      acc = dot4(acc, k4_lane_codes<3, Block>(qs_low, qs_high, qh), x3);
      const __m512 factor = _mm512_shuffle_f32x4(factors[r].raw, factors[r].raw, 0x44);  // lanes 0..7 twice
      total[r].raw = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc.raw), factor, total[r].raw);
    }
  }
  k4_results<R>(total, mins, out);
}
#else
// Elsewhere vectors of up to 32 consecutive codes: Q4_K's straight from its
// nibbles, Q5_K's assembled per block into a buffer.
template <size_t R, typename Block>
HWY_INLINE void int8_k4(const Block* const* b, const cpu::Int8Activations& x, size_t blocks, float* out) {
  constexpr bool kFiveBits = std::is_same_v<Block, GgufBlockQ5K>;
  const DW db;
  const DWS ds;
  const DWQ dq;
  const DWF df;
  const size_t n = hn::Lanes(ds);
  hn::Vec<DWF> total[R];
  hn::Vec<DF> mins[R];
  for (size_t r = 0; r < R; ++r) {
    total[r] = hn::Zero(df);
    mins[r] = hn::Zero(DF());
  }
  HWY_ALIGN uint8_t q[kFiveBits ? R : 1][256];
  for (size_t i = 0; i < blocks; ++i) {
    prefetch_ahead<R>(b, blocks, i);
    if constexpr (kFiveBits) {
      for (size_t r = 0; r < R; ++r) {
        decode_q5_k_chunk<0>(b[r][i], q[r]);
        decode_q5_k_chunk<1>(b[r][i], q[r]);
        decode_q5_k_chunk<2>(b[r][i], q[r]);
        decode_q5_k_chunk<3>(b[r][i], q[r]);
      }
    }
    HWY_ALIGN float factor[R][16];
    hn::Vec<DF> factors[R];
    k4_block_terms<R>(b, i, x, factors, factor, mins);
    const int8_t* xq = x.q + 256 * i;
    for (size_t o = 0; o < 256; o += n) {
      const auto xv = hn::LoadU(ds, xq + o);
      for (size_t r = 0; r < R; ++r) {
        hn::Vec<DW> codes;
        if constexpr (kFiveBits) {
          codes = hn::Load(db, q[r] + o);
        } else {
          codes = chunk_nibbles(b[r][i].qs + 32 * (o / 64), o % 64);
        }
        const auto sums = hn::ConvertTo(df, dot4(hn::Zero(dq), codes, xv));
        total[r] = hn::MulAdd(sums, sub_block_factor(factor[r], o), total[r]);
      }
    }
  }
  k4_results<R>(total, mins, out);
}
#endif

// For the int32 lanes of the vector at byte o of a Q6_K block, the factors of
// their groups of 16 elements (four lanes each): factor[g] for g < 16, also
// the lanes of `factors` where it has 16. Looked up in registers: a table
// stored and reloaded per vector stalled on store forwarding.
HWY_INLINE hn::Vec<DWF> group_factors(hn::Vec<DF> factors, const float* factor, size_t o) {
  const DWF df;
  if constexpr (hn::MaxLanes(df) == 16) {  // four groups per vector
    HWY_ALIGN static constexpr int32_t kGroupOfLane[4][16] = {{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3},
                                                              {4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7},
                                                              {8, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 10, 11, 11, 11, 11},
                                                              {12, 12, 12, 12, 13, 13, 13, 13, 14, 14, 14, 14, 15,
                                                               15, 15, 15}};
    return hn::TableLookupLanes(factors, hn::SetTableIndices(df, kGroupOfLane[o / 64]));
  } else if constexpr (hn::MaxLanes(df) == 8) {  // two groups, from the stored half holding them
    HWY_ALIGN static constexpr int32_t kGroupOfLane[4][8] = {
        {0, 0, 0, 0, 1, 1, 1, 1}, {2, 2, 2, 2, 3, 3, 3, 3}, {4, 4, 4, 4, 5, 5, 5, 5}, {6, 6, 6, 6, 7, 7, 7, 7}};
    const auto half = hn::Load(df, factor + o / 128 * 8);
    return hn::TableLookupLanes(half, hn::SetTableIndices(df, kGroupOfLane[o / 32 % 4]));
  } else {  // one group
    return hn::Set(df, factor[o / 16]);
  }
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// On AVX-512, Q6_K's 64 codes at byte o (a multiple of 64) of a block straight
// from ql and qh, with no per-block buffer: elements 128h + 64m + [0, 64) take
// their low four bits from the 64 bytes ql[64h, +64) (low nibbles for m = 0,
// high ones for m = 1) and their top two from qh[32h, +32), read twice, bits
// 2k and 2k + 1 for k = 2m below the middle and 2m + 1 above. Rotating each
// dword left by 4 - 2k brings those bits to bits 4 and 5 of their own byte.
constexpr bool kQ6KCodesInRegisters = true;
HWY_INLINE hn::Vec<DW> q6_k_codes(const GgufBlockQ6K& b, size_t o) {
  const size_t h = o / 128, m = o / 64 % 2;
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const __m512i ql = _mm512_loadu_si512(b.ql + 64 * h);
  const __m512i low = _mm512_and_si512(m == 0 ? ql : _mm512_srli_epi16(ql, 4), nibble);
  const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + 32 * h)));
  const __m512i rotations = m == 0 ? _mm512_setr_epi32(4, 4, 4, 4, 4, 4, 4, 4, 2, 2, 2, 2, 2, 2, 2, 2)
                                   : _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 30, 30, 30, 30, 30, 30, 30, 30);
  const __m512i high = _mm512_rolv_epi32(qh, rotations);
  return hn::Vec<DW>{_mm512_ternarylogic_epi32(low, high, _mm512_set1_epi8(0x30), 0xF8)};  // low | (high & 0x30)
}
#else
constexpr bool kQ6KCodesInRegisters = false;
HWY_INLINE hn::Vec<DW> q6_k_codes(const GgufBlockQ6K&, size_t) { return hn::Zero(DW()); }
#endif

// Q6_K: the codes q (0..63) assembled per block (or, on AVX-512, per vector
// from ql and qh); the offset -32 goes through x's code sums per group of 16.
// With x in D digits (1, or 3 for 24 bits) the codes, assembled once, meet each
// digit in a dot product of its own. Q6_K is the one row-major layout that
// takes x in 24 bits: matrices whose rows are not a multiple of 16, or with
// --no-regroup; the others run Q6_Kx16 (cpu_gguf_x16.cpp), whose sums per 16
// rows are converted and scaled once per sub-block instead of per vector.
template <size_t R, size_t D>
HWY_INLINE void int8_q6_k(const GgufBlockQ6K* const* b, const cpu::Int8Activations& x, size_t blocks, float* out) {
  const DW db;
  const DWS ds;
  const DWQ dq;
  const DWF df;
  const DF df16;
  const size_t n = hn::Lanes(ds);
  hn::Vec<DWF> total[R];
  hn::Vec<DF> offsets[R];
  for (size_t r = 0; r < R; ++r) {
    total[r] = hn::Zero(df);
    offsets[r] = hn::Zero(df16);
  }
  HWY_ALIGN uint8_t q[kQ6KCodesInRegisters ? 1 : R][256];
  for (size_t i = 0; i < blocks; ++i) {
    prefetch_ahead<R>(b, blocks, i);
    HWY_ALIGN float d[4];
    block_scales<R>(b, i, d);
    HWY_ALIGN float factor[R][16];
    hn::Vec<DF> factors[R];
    for (size_t r = 0; r < R; ++r) {
      if constexpr (!kQ6KCodesInRegisters) decode_q6_k<0>(b[r][i], q[r]);
      for (size_t g = 0; g < 16; g += hn::Lanes(df16)) {  // d * scales[g] * x's scale
        const auto sc = hn::ConvertTo(df16, hn::PromoteTo(DI(), hn::LoadU(DI8(), b[r][i].scales + g)));
        const auto f = hn::Mul(hn::Mul(hn::Set(df16, d[r]), sc), hn::LoadU(df16, x.group_scale + 16 * i + g));
        offsets[r] = hn::MulAdd(f, hn::LoadU(df16, x.code_sums + 16 * i + g), offsets[r]);
        hn::Store(f, df16, factor[r] + g);
        if (g == 0) factors[r] = f;
      }
    }
    const int8_t* xq = x.q + 256 * i;
    for (size_t o = 0; o < 256; o += n) {
      hn::Vec<DWS> xv[D];
      for (size_t d = 0; d < D; ++d) xv[d] = hn::LoadU(ds, xq + d * x.cols + o);
      for (size_t r = 0; r < R; ++r) {
        const auto codes = kQ6KCodesInRegisters ? q6_k_codes(b[r][i], o) : hn::Load(db, q[r] + o);
        hn::Vec<DWQ> digit_sums[D];
        for (size_t d = 0; d < D; ++d) digit_sums[d] = dot4(hn::Zero(dq), codes, xv[d]);
        const auto sums = cpu::HWY_NAMESPACE::digit_sum<D>(df, digit_sums);
        total[r] = hn::MulAdd(sums, group_factors(factors[r], factor[r], o), total[r]);
      }
    }
  }
  for (size_t r = 0; r < R; ++r) total[r] = hn::MulAdd(hn::Set(df, -32.0f), offsets[r], total[r]);
  lane_sums<R>(df, total, out);
}

// y[r] = base[r] + row r . x for the rows of passes p, in int8_row_bands
// bands: Q4_0 four, Q6_K two or four (as the host reads fastest), the others two.
template <DType kType, typename Block, typename Kernel>
void int8_rows(const Rows& m, const float* base, float* y, const cpu::RowPasses& p, Kernel kernel) {
  const auto walk = [&](auto bands) {
    rows_t<Block, decltype(bands)::value>(m, base, y, p, [&](auto rows_n, const Block* const* b, float* out) {
      kernel(rows_n, b, *m.int8, m.row_bytes / sizeof(Block), out);
    });
  };
  using Two = std::integral_constant<size_t, 2>;
  using Four = std::integral_constant<size_t, 4>;
  if constexpr (kType == DType::kQ4_0) {
    walk(Four());
  } else if constexpr (kType == DType::kQ6_K) {
    p.bands == 4 ? walk(Four()) : walk(Two());
  } else {
    walk(Two());
  }
}

// The exported kernel, one per target, for every GGUF type.
void Int8Rows(DType type, const Rows& m, const float* base, float* y, const cpu::RowPasses& p) {
  const auto k4 = [](auto rows_n, auto b, const auto& x, size_t blocks, float* out) {
    int8_k4<decltype(rows_n)::value>(b, x, blocks, out);
  };
  switch (type) {
    case DType::kQ8_0:
      return int8_rows<DType::kQ8_0, GgufBlockQ8_0>(m, base, y, p, [](auto rows_n, auto b, const auto& x,
                                                                         size_t blocks, float* out) {
        int8_q8_0<decltype(rows_n)::value>(b, x, blocks, out);
      });
    case DType::kQ4_0:
      return int8_rows<DType::kQ4_0, GgufBlockQ4_0>(m, base, y, p, [](auto rows_n, auto b, const auto& x,
                                                                         size_t blocks, float* out) {
        int8_q4_0<decltype(rows_n)::value>(b, x, blocks, out);
      });
    case DType::kQ4_K: return int8_rows<DType::kQ4_K, GgufBlockQ4K>(m, base, y, p, k4);
    case DType::kQ5_K: return int8_rows<DType::kQ5_K, GgufBlockQ5K>(m, base, y, p, k4);
    default:
      return int8_rows<DType::kQ6_K, GgufBlockQ6K>(m, base, y, p, [](auto rows_n, auto b, const auto& x,
                                                                        size_t blocks, float* out) {
        constexpr size_t R = decltype(rows_n)::value;
        if (x.digits == cpu::kInt24Digits) return int8_q6_k<R, cpu::kInt24Digits>(b, x, blocks, out);
        int8_q6_k<R, 1>(b, x, blocks, out);
      });
  }
}

#else  // HWY_TARGET == HWY_SCALAR: the scalar twin.

void Int8Rows(DType type, const Rows& m, const float* base, float* y, const cpu::RowPasses& p) {
  cpu::for_each_row(p, [&](size_t r) {
    const double dot = cpu::int8_row_dot(type, m.w + r * m.row_bytes, *m.int8, m.cols);
    y[r] = (base ? base[r] : 0.0f) + static_cast<float>(dot);
  });
}
#endif  // HWY_TARGET != HWY_SCALAR

// The target these kernels run as (AVX3_DL where the CPU has VNNI, which the
// float kernels' files do not compile for).
int64_t Int8Target() { return HWY_TARGET; }

}  // namespace qwen35::gguf_cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qwen35::gguf_cpu {

HWY_EXPORT(Int8Rows);
HWY_EXPORT(Int8Target);

std::string int8_kernel_target() { return hwy::TargetName(HWY_DYNAMIC_DISPATCH(Int8Target)()); }

void run_int8_rows(DType type, const Rows& m, const float* base, float* y, const cpu::RowPasses& p) {
  HWY_DYNAMIC_DISPATCH(Int8Rows)(type, m, base, y, p);
}

}  // namespace qwen35::gguf_cpu
#endif  // HWY_ONCE
