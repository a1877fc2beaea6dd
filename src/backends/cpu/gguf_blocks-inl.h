// What the GGUF gemvs of both kinds share (cpu_gguf.cpp with float x,
// cpu_gguf_int8.cpp with x in 8 bits): block scales, prefetching, the
// K-quants' scale unpacking and code assembly, and the walk over row bands.
// Compiled once per Highway target (included by each target's pass of a
// foreach_target file, hence the toggle guard instead of #pragma once).
#if defined(QWEN35_CPU_GGUF_BLOCKS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QWEN35_CPU_GGUF_BLOCKS_INL_H_
#undef QWEN35_CPU_GGUF_BLOCKS_INL_H_
#else
#define QWEN35_CPU_GGUF_BLOCKS_INL_H_
#endif

#include <cstring>
#include <type_traits>

#include "cpu/gguf_rows.h"
#include "cpu/nibbles-inl.h"
#include "cpu/prefetch.h"
#include "cpu/row_bands.h"
#include "hwy/highway.h"
#include "qwen35/gguf_quants.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::gguf_cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// At most 16 lanes: every loop below walks 16 or 32 codes at a time.
using DF = hn::CappedTag<float, 16>;
using DU = hn::Rebind<uint32_t, DF>;
using DI = hn::Rebind<int32_t, DF>;
using DU8 = hn::Rebind<uint8_t, DF>;
using DI8 = hn::Rebind<int8_t, DF>;

HWY_INLINE hn::Vec<DU> bytes_at(const uint8_t* p) { return hn::PromoteTo(DU(), hn::LoadU(DU8(), p)); }
HWY_INLINE hn::Vec<DF> to_float(hn::Vec<DU> codes) { return hn::ConvertTo(DF(), hn::BitCast(DI(), codes)); }

using cpu::HWY_NAMESPACE::nibble_table;
using cpu::HWY_NAMESPACE::nibble_values;

// Up to four fp16 values as floats in one vector conversion (F16C where the
// target has it). The scalar conversion, with its rare-case call, made the
// compiler keep the kernels' accumulators on the stack around it.
HWY_INLINE void halves_to_floats(const uint16_t (&bits)[4], float* out) {
  const hn::CappedTag<float, 4> d4;
  const hn::Rebind<hwy::float16_t, decltype(d4)> dh4;
  const auto* halves = reinterpret_cast<const hwy::float16_t*>(bits);
  for (size_t k = 0; k < 4; k += hn::Lanes(d4)) {  // one step, except on targets of fewer lanes (scalar)
    hn::StoreU(hn::PromoteTo(d4, hn::LoadU(dh4, halves + k)), d4, out + k);
  }
}

// The block scales d of block i of the R (<= 4) rows, in memory at out. The
// compiler is kept from carrying them over in registers: then it extracts
// each row's scale with a shuffle and a broadcast, two operations on the port
// the widening also needs, where a broadcast from memory costs only a load
// (Q8_0's gemv: 24.4 -> 25.9 GB/s cached).
template <size_t R, typename Block>
HWY_INLINE void block_scales(const Block* const* b, size_t i, float* out) {
  static_assert(R <= 4);
  HWY_ALIGN uint16_t bits[4] = {0, 0, 0, 0};
  for (size_t r = 0; r < R; ++r) bits[r] = b[r][i].d;
  halves_to_floats(bits, out);
#if defined(__GNUC__) || defined(__clang__)
  asm volatile("" : : "r"(out) : "memory");  // an opaque use of memory: the floats are read back from it
#endif
}

// Each block also prefetches the same block of a later row of its band (see
// rows_t), kRowsAhead rows on, as the dense gemv does: the DRAM-bound Q8_0 gemv
// read at 11 GB/s without prefetching, against 26 GB/s with its matrix in
// cache. The integer kernels, about twice as fast per row, look further ahead
// (cpu_gguf_int8.cpp's prefetch_ahead; the float ones gain nothing). The
// address may lie past the matrix (the last rows): a prefetch never faults.
template <size_t R, typename Block, size_t kRowsAhead = 1>
HWY_INLINE void prefetch_next_rows(const Block* const* b, size_t blocks, size_t i) {
  for (size_t r = 0; r < R; ++r) {
    for (size_t offset = 0; offset < sizeof(Block); offset += 64) {
      cpu::prefetch_past(b[r] + i, kRowsAhead * blocks * sizeof(Block) + offset);
    }
  }
}

// The 12 packed bytes of Q4_K/Q5_K as 8 scales then 8 mins (gguf_scale_min_k4
// for j = 0..7, done on four words at once as llama.cpp's kernels do).
HWY_INLINE void unpack_k4_scales(const uint8_t* packed, uint8_t* out) {
  constexpr uint32_t kLow6 = 0x3f3f3f3f, kLow4 = 0x0f0f0f0f, kLow2 = 0x03030303;
  uint32_t u[4];
  std::memcpy(u, packed, 12);
  u[3] = ((u[2] >> 4) & kLow4) | (((u[1] >> 6) & kLow2) << 4);  // mins 4..7
  const uint32_t mins_low = u[1] & kLow6;                         // mins 0..3
  u[1] = (u[2] & kLow4) | (((u[0] >> 6) & kLow2) << 4);          // scales 4..7
  u[2] = mins_low;
  u[0] &= kLow6;                                                  // scales 0..3
  std::memcpy(out, u, 16);
}

#if HWY_TARGET != HWY_SCALAR
// The same 16 bytes, in each 128-bit block of `packed` from the 12 packed
// bytes at its start (the next 4 are ignored): each output byte gathers its
// low-bits and its high-bits source byte, then masks and shifts, with no round
// trip through memory. Any vector of whole blocks: the integer kernels unpack
// four rows' scales in one AVX-512 vector.
template <class D>
HWY_INLINE hn::Vec<D> k4_scale_bytes(D d, hn::Vec<D> packed) {
  HWY_ALIGN static constexpr uint8_t kLowSource[16] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11};
  HWY_ALIGN static constexpr uint8_t kHighSource[16] = {0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7};
  HWY_ALIGN static constexpr uint8_t kLowMask[16] = {63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15};
  HWY_ALIGN static constexpr uint8_t kHighMask[16] = {0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30,
                                                      0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30};
  // mins 4..7 take the upper nibble of their low-bits source, the others its low bits.
  HWY_ALIGN static constexpr uint8_t kUpperNibble[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF};
  const auto low = hn::TableLookupBytes(packed, hn::LoadDup128(d, kLowSource));
  const auto high = hn::TableLookupBytes(packed, hn::LoadDup128(d, kHighSource));
  const auto upper_nibble = hn::MaskFromVec(hn::LoadDup128(d, kUpperNibble));
  const auto low_bits = hn::And(hn::IfThenElse(upper_nibble, hn::ShiftRight<4>(low), low), hn::LoadDup128(d, kLowMask));
  return hn::Or(low_bits, hn::And(hn::ShiftRight<2>(high), hn::LoadDup128(d, kHighMask)));
}

// One block's: reads 16 bytes at `packed` (the codes follow the scales in
// every K-quant block).
HWY_INLINE void unpack_k4_scales_simd(const uint8_t* packed, uint8_t* out) {
  const hn::Full128<uint8_t> d;
  hn::StoreU(k4_scale_bytes(d, hn::LoadU(d, packed)), d, out);
}
#endif

// Up to eight lanes for the sums of the eight min terms.
using D8F = hn::CappedTag<float, 8>;

// Q4_K: per row, the sum over sub-blocks s of
// (d sc_s) (q_s . x_s) - (dmin m_s) sum(x_s).
// One Q4_K/Q5_K block: scale[0..7] = d * sc and scale[8..15] = dmin * m (one
// vector of 16 on AVX-512), and the min term (dmin * m) . x_sums added to `mins`.
template <typename Block>
HWY_INLINE hn::Vec<D8F> k4_scales_and_mins(const Block& block, const float* x_sums, float* scale, hn::Vec<D8F> mins) {
  const DF df;
  const D8F d8;
  HWY_ALIGN uint8_t sc_min[16];
#if HWY_TARGET != HWY_SCALAR
  unpack_k4_scales_simd(block.scales, sc_min);
#else
  unpack_k4_scales(block.scales, sc_min);
#endif
  HWY_ALIGN float d_dmin[4];
  halves_to_floats({block.d, block.dmin, 0, 0}, d_dmin);
  const auto vd = hn::Set(df, d_dmin[0]), vdmin = hn::Set(df, d_dmin[1]);
  for (size_t k = 0; k < 16; k += hn::Lanes(df)) {
    const auto factor = hn::IfThenElse(hn::FirstN(df, k < 8 ? 8 - k : 0), vd, vdmin);
    hn::StoreU(hn::Mul(factor, to_float(bytes_at(sc_min + k))), df, scale + k);
  }
  for (size_t j = 0; j < 8; j += hn::Lanes(d8)) {
    mins = hn::MulAdd(hn::LoadU(d8, scale + 8 + j), hn::LoadU(d8, x_sums + j), mins);
  }
  return mins;
}


#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// The per-block terms of R (<= 4) rows of Q4_K/Q5_K on AVX-512, each row's
// scales unpacked in one 128-bit lane of a single vector (so four rows cost
// what one did), then per row: lanes j < 8 of factors[r] get d sc_j times
// lane j of x_terms (x's scale of sub-block j; 1 for float x), lanes 8 + j the
// min term dmin m_j times lane 8 + j (sum(x_j)), which is added to mins[r]
// (whose lanes 8..15 count; see k4_result).
template <size_t R, typename Block>
HWY_INLINE void k4_rows_terms(const Block* const* b, size_t i, hn::Vec<DF> x_terms_vector, hn::Vec<DF>* factors,
                              hn::Vec<DF>* mins) {
  const __m512 x_terms = x_terms_vector.raw;
  static_assert(R <= 4);
  const auto scales_of = [&](size_t r) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[r][i].scales)); };
  __m512i packed = _mm512_castsi128_si512(scales_of(0));
  if constexpr (R > 1) packed = _mm512_inserti32x4(packed, scales_of(1), 1);
  if constexpr (R > 2) packed = _mm512_inserti32x4(packed, scales_of(2), 2);
  if constexpr (R > 3) packed = _mm512_inserti32x4(packed, scales_of(3), 3);
  // In each 128-bit lane: 8 scales, then 8 mins.
  const __m512i bytes = k4_scale_bytes(hn::Full512<uint8_t>(), hn::Vec512<uint8_t>{packed}).raw;
  // d and dmin of every row, as floats 2r and 2r + 1.
  // (Packed in general registers, then one conversion for all rows.)
  uint64_t halves[2] = {0, 0};
  for (size_t r = 0; r < R; ++r) {
    uint32_t pair;
    std::memcpy(&pair, &b[r][i].d, 4);
    halves[r / 2] |= uint64_t{pair} << (32 * (r % 2));
  }
  const __m128i halves_vector = _mm_set_epi64x(static_cast<int64_t>(halves[1]), static_cast<int64_t>(halves[0]));
  const __m512 d_dmin = _mm512_castps256_ps512(_mm256_cvtph_ps(halves_vector));
  const auto row_terms = [&](auto r_constant) {
    constexpr int r = decltype(r_constant)::value;
    const __m512i d_or_dmin = _mm512_set_epi32(2 * r + 1, 2 * r + 1, 2 * r + 1, 2 * r + 1, 2 * r + 1, 2 * r + 1,
                                               2 * r + 1, 2 * r + 1, 2 * r, 2 * r, 2 * r, 2 * r, 2 * r, 2 * r, 2 * r,
                                               2 * r);
    const __m512 codes = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(bytes, r)));
    const __m512 terms = _mm512_mul_ps(_mm512_mul_ps(_mm512_permutexvar_ps(d_or_dmin, d_dmin), codes), x_terms);
    factors[r] = hn::Vec<DF>{terms};
    mins[r] = hn::Add(mins[r], factors[r]);
  };
  row_terms(std::integral_constant<int, 0>());
  if constexpr (R > 1) row_terms(std::integral_constant<int, 1>());
  if constexpr (R > 2) row_terms(std::integral_constant<int, 2>());
  if constexpr (R > 3) row_terms(std::integral_constant<int, 3>());
}

// A row's result, to be summed over its lanes: its products less its min
// terms (lanes 8..15 of mins).
HWY_INLINE hn::Vec<DF> k4_result_lanes(hn::Vec<DF> total, hn::Vec<DF> mins) {
  return hn::Vec<DF>{_mm512_mask_sub_ps(total.raw, 0xFF00, total.raw, mins.raw)};
}
#else
HWY_INLINE hn::Vec<DF> k4_result_lanes(hn::Vec<DF> total, hn::Vec<DF> mins) { return hn::Sub(total, mins); }
#endif

// out[r] = the sum of v[r]'s lanes for r < R <= 4. With 16 lanes the rows
// share one tree of shuffles, 14 operations for four rows where each row
// alone takes about 8 (SumOfLanes: _mm512_reduce_add_ps). A short row's
// final sums (1024 columns: 4 blocks) are a large part of a kernel call: with
// a reduction per row the integer Q4_K kernel took 10-15% longer and the
// float Q8_0 and Q4_0 ones 1.4-1.5x (docs/performance.md, fifteenth session).
template <size_t R, class D>
HWY_INLINE void lane_sums(D d, const hn::Vec<D>* v, float* out) {
  static_assert(R >= 1 && R <= 4);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (hn::MaxLanes(d) == 16) {
    const __m512 zero = _mm512_setzero_ps();
    const __m512 a0 = v[0].raw, a1 = R > 1 ? v[1].raw : zero;
    // 128-bit quarters [a0 q0 + q2, a0 q1 + q3, a1 q0 + q2, a1 q1 + q3], and a2, a3 alike.
    const __m512 s01 = _mm512_add_ps(_mm512_shuffle_f32x4(a0, a1, 0x44), _mm512_shuffle_f32x4(a0, a1, 0xEE));
    __m512 s23 = zero;
    if constexpr (R > 2) {
      const __m512 a2 = v[2].raw, a3 = R > 3 ? v[3].raw : zero;
      s23 = _mm512_add_ps(_mm512_shuffle_f32x4(a2, a3, 0x44), _mm512_shuffle_f32x4(a2, a3, 0xEE));
    }
    // Quarter k: four partial sums of row k, then their total in its first lane.
    const __m512 t = _mm512_add_ps(_mm512_shuffle_f32x4(s01, s23, 0x88), _mm512_shuffle_f32x4(s01, s23, 0xDD));
    const __m512 u = _mm512_add_ps(t, _mm512_permute_ps(t, 0x4E));
    const __m512 w = _mm512_add_ps(u, _mm512_permute_ps(u, 0xB1));
    const __m128 sums = _mm512_castps512_ps128(
        _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), w));
    HWY_ALIGN float all[4];
    _mm_store_ps(all, sums);
    for (size_t r = 0; r < R; ++r) out[r] = all[r];
    return;
  }
#endif
  for (size_t r = 0; r < R; ++r) out[r] = hn::GetLane(hn::SumOfLanes(d, v[r]));
}

// out[r] = the result of row r of a K-quant with mins (Q4_K, Q5_K).
template <size_t R>
HWY_INLINE void k4_results(const hn::Vec<DF>* total, const hn::Vec<DF>* mins, float* out) {
  hn::Vec<DF> lanes[R];
  for (size_t r = 0; r < R; ++r) lanes[r] = k4_result_lanes(total[r], mins[r]);
  lane_sums<R>(DF(), lanes, out);
}

// The float kernels' per-block terms of R rows of Q4_K/Q5_K: scale[r][j] =
// d sc_j and the min terms (dmin m) . x_sums added to mins[r] (read it with
// k4_result). On AVX-512 all R rows' scales are unpacked in one vector: done a
// row at a time, with d and dmin converted per row, they took ~10% of the
// Q4_K gemv from the caches.
template <size_t R, typename Block>
HWY_INLINE void k4_float_terms(const Block* const* b, size_t i, const float* x_sums, float (*scale)[16],
                               hn::Vec<DF>* mins) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  const __m512 x_terms = _mm512_insertf32x8(_mm512_set1_ps(1.0f), _mm256_loadu_ps(x_sums), 1);
  hn::Vec<DF> factors[R];
  k4_rows_terms<R>(b, i, hn::Vec<DF>{x_terms}, factors, mins);
  for (size_t r = 0; r < R; ++r) hn::Store(factors[r], DF(), scale[r]);
#else
  static_assert(std::is_same_v<D8F, DF>);
  for (size_t r = 0; r < R; ++r) mins[r] = k4_scales_and_mins(b[r][i], x_sums, scale[r], mins[r]);
#endif
}

// Q5_K's fifth bit of element 64c + 32 * upper + l is bit 2c + upper of qh[l];
// moved to bit 4 with compile-time shifts.
template <int kBit>
HWY_INLINE hn::Vec<hn::CappedTag<uint8_t, 32>> bit_to_16(hn::Vec<hn::CappedTag<uint8_t, 32>> v) {
  const hn::CappedTag<uint8_t, 32> d8;
  if constexpr (kBit < 4) return hn::And(hn::ShiftLeft<4 - kBit>(v), hn::Set(d8, 0x10));
  if constexpr (kBit == 4) return hn::And(v, hn::Set(d8, 0x10));
  if constexpr (kBit > 4) return hn::And(hn::ShiftRight<kBit - 4>(v), hn::Set(d8, 0x10));
}

template <int kChunk>
HWY_INLINE void decode_q5_k_chunk(const GgufBlockQ5K& b, uint8_t* q) {
  const hn::CappedTag<uint8_t, 32> d8;
  const auto low4 = hn::Set(d8, 0x0F);
  for (size_t l = 0; l < 32; l += hn::Lanes(d8)) {
    const auto codes = hn::LoadU(d8, b.qs + 32 * kChunk + l);
    const auto high = hn::LoadU(d8, b.qh + l);
    hn::StoreU(hn::Or(hn::And(codes, low4), bit_to_16<2 * kChunk>(high)), d8, q + 64 * kChunk + l);
    hn::StoreU(hn::Or(hn::ShiftRight<4>(codes), bit_to_16<2 * kChunk + 1>(high)), d8, q + 64 * kChunk + 32 + l);
  }
}


// Q6_K's 256 codes assembled on whole byte vectors (16 or 32 at a time),
// q - kOffset as bytes: the float kernel takes q - 32 as int8, the integer one
// q itself.
template <uint8_t kOffset>
HWY_INLINE void decode_q6_k(const GgufBlockQ6K& b, uint8_t* out) {
  const hn::CappedTag<uint8_t, 32> d8;
  const size_t n8 = hn::Lanes(d8);
  const auto low4 = hn::Set(d8, 0x0F), bits45 = hn::Set(d8, 0x30), offset = hn::Set(d8, kOffset);
  for (size_t h = 0; h < 2; ++h) {
    for (size_t l = 0; l < 32; l += n8) {
      const auto low_a = hn::LoadU(d8, b.ql + 64 * h + l);
      const auto low_b = hn::LoadU(d8, b.ql + 64 * h + 32 + l);
      const auto high = hn::LoadU(d8, b.qh + 32 * h + l);
      // Element 128h + 32k + l: high bits 2k, 2k + 1 of qh moved to bits 4, 5.
      hn::StoreU(hn::Sub(hn::Or(hn::And(low_a, low4), hn::And(hn::ShiftLeft<4>(high), bits45)), offset), d8,
                 out + 128 * h + l);
      hn::StoreU(hn::Sub(hn::Or(hn::And(low_b, low4), hn::And(hn::ShiftLeft<2>(high), bits45)), offset), d8,
                 out + 128 * h + 32 + l);
      hn::StoreU(hn::Sub(hn::Or(hn::ShiftRight<4>(low_a), hn::And(high, bits45)), offset), d8, out + 128 * h + 64 + l);
      hn::StoreU(hn::Sub(hn::Or(hn::ShiftRight<4>(low_b), hn::And(hn::ShiftRight<2>(high), bits45)), offset), d8,
                 out + 128 * h + 96 + l);
    }
  }
}


// y[r] = base[r] + row r . x for the rows of passes p, in R bands (row_bands.h).
template <typename Block, size_t R, typename Kernel>
void rows_t(const Rows& m, const float* base, float* y, const cpu::RowPasses& p, Kernel kernel) {
  cpu::for_row_bands<R>(p, base, y, [&](auto rows_n, size_t first, size_t stride, float* out) {
    const Block* rows[decltype(rows_n)::value];
    const std::byte* first_row = m.w + first * m.row_bytes;
    for (size_t k = 0; k < rows_n; ++k) rows[k] = reinterpret_cast<const Block*>(first_row + k * stride * m.row_bytes);
    kernel(rows_n, rows, out);
  });
}

}  // namespace qwen35::gguf_cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // QWEN35_CPU_GGUF_BLOCKS_INL_H_
