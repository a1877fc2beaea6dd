// GGUF block-weight kernels on the CPU (layouts in qwen35/gguf_quants.h):
// gemv, the gate/up pair and the SwiGLU-down with residual, rows split across
// the thread pool. Highway (compiled per target, chosen at run time): four rows
// (from four bands of the task's rows) walk side by side so each load of x
// serves four; codes are widened
// u8/i8 -> i32 -> f32 in registers (Q8_0, Q4_0, Q4_K) or first assembled on
// whole byte vectors into a small per-block buffer (Q5_K, Q6_K), then one
// accumulator per (sub-)block is scaled once at its end; the K-quant mins use
// sums of x per 32 computed once per launch. The K-quants' per-block scales
// are decoded and converted on vectors too: done a scalar at a time they took
// a third of the Q4_K gemv and half of the Q6_K one. Row dequantization
// (embedding lookup) is the scalar specification, bit-identical to the reference.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/cpu_gguf.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "cpu/nibbles-inl.h"

#include <algorithm>
#include <cstring>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_math.h"
#include "cpu/row_bands.h"
#include "cpu/simd.h"
#include "qwen35/dense_weights.h"
#include "qwen35/gguf_quants.h"

#ifndef QWEN35_CPU_GGUF_ONCE
#define QWEN35_CPU_GGUF_ONCE
namespace qwen35::gguf_cpu {

// The rows of one matrix for one launch: row r starts at w + r * row_bytes.
// x_sums[i] is the sum of x[32 i, 32 i + 32) (Q4_K and Q5_K only).
struct Rows {
  const std::byte* w;
  size_t row_bytes, cols;
  const float* x;
  const float* x_sums;
};

}  // namespace qwen35::gguf_cpu
#endif

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

// Each block also prefetches the same block of the next row of its band (see
// rows_t), as the dense gemv does: the DRAM-bound Q8_0 gemv read at 11 GB/s
// without prefetching, against 26 GB/s with its matrix in cache. The address
// may lie past the matrix (the last rows): a prefetch never faults.
template <size_t R, typename Block>
HWY_INLINE void prefetch_next_rows(const Block* const* b, size_t blocks, size_t i) {
  for (size_t r = 0; r < R; ++r) {
    const uintptr_t next = reinterpret_cast<uintptr_t>(b[r] + i) + blocks * sizeof(Block);
    for (size_t offset = 0; offset < sizeof(Block); offset += 64) {
      hwy::Prefetch(reinterpret_cast<const char*>(next + offset));
    }
  }
}

// Each kernel walks R rows side by side, so that every load of x serves R
// rows and R independent accumulator chains are in flight; out[r] = row r . x.
template <size_t R>
void rows_q8_0(const GgufBlockQ8_0* const* b, const float* x, size_t blocks, float* out) {
  const DF df;
  const size_t n = hn::Lanes(df);
  hn::Vec<DF> total[R];
  for (size_t r = 0; r < R; ++r) total[r] = hn::Zero(df);
  for (size_t i = 0; i < blocks; ++i, x += 32) {
    prefetch_next_rows<R>(b, blocks, i);
    hn::Vec<DF> acc[R];
    for (size_t r = 0; r < R; ++r) acc[r] = hn::Zero(df);
    for (size_t k = 0; k < 32; k += n) {
      const auto xv = hn::LoadU(df, x + k);
      for (size_t r = 0; r < R; ++r) {
        acc[r] = hn::MulAdd(hn::ConvertTo(df, hn::PromoteTo(DI(), hn::LoadU(DI8(), b[r][i].qs + k))), xv, acc[r]);
      }
    }
    HWY_ALIGN float d[4];
    block_scales<R>(b, i, d);
    for (size_t r = 0; r < R; ++r) total[r] = hn::MulAdd(acc[r], hn::Set(df, d[r]), total[r]);
  }
  for (size_t r = 0; r < R; ++r) out[r] = hn::GetLane(hn::SumOfLanes(df, total[r]));
}

template <size_t R>
void rows_q4_0(const GgufBlockQ4_0* const* b, const float* x, size_t blocks, float* out) {
  const DF df;
  const size_t n = hn::Lanes(df);
  const auto table = nibble_table<-8>();
  hn::Vec<DF> total[R];
  for (size_t r = 0; r < R; ++r) total[r] = hn::Zero(df);
  for (size_t i = 0; i < blocks; ++i, x += 32) {
    prefetch_next_rows<R>(b, blocks, i);
    hn::Vec<DF> acc[R];
    for (size_t r = 0; r < R; ++r) acc[r] = hn::Zero(df);
    for (size_t k = 0; k < 16; k += n) {
      const auto x_lo = hn::LoadU(df, x + k);
      const auto x_hi = hn::LoadU(df, x + 16 + k);
      for (size_t r = 0; r < R; ++r) {
        const auto codes = bytes_at(b[r][i].qs + k);
        acc[r] = hn::MulAdd(nibble_values<-8>(codes, table), x_lo, acc[r]);
        acc[r] = hn::MulAdd(nibble_values<-8>(hn::ShiftRight<4>(codes), table), x_hi, acc[r]);
      }
    }
    HWY_ALIGN float d[4];
    block_scales<R>(b, i, d);
    for (size_t r = 0; r < R; ++r) total[r] = hn::MulAdd(acc[r], hn::Set(df, d[r]), total[r]);
  }
  for (size_t r = 0; r < R; ++r) out[r] = hn::GetLane(hn::SumOfLanes(df, total[r]));
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
// The same 16 bytes from the 12 packed ones on one 128-bit vector: each output
// byte gathers its low-bits and its high-bits source byte, then masks and
// shifts, with no round trip through memory. Reads 16 bytes at `packed` (the
// codes follow the scales in every K-quant block).
HWY_INLINE void unpack_k4_scales_simd(const uint8_t* packed, uint8_t* out) {
  const hn::Full128<uint8_t> d;
  HWY_ALIGN static constexpr uint8_t kLowSource[16] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11};
  HWY_ALIGN static constexpr uint8_t kHighSource[16] = {0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7};
  HWY_ALIGN static constexpr uint8_t kLowMask[16] = {63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15};
  HWY_ALIGN static constexpr uint8_t kHighMask[16] = {0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30,
                                                      0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30};
  const auto v = hn::LoadU(d, packed);
  const auto low = hn::TableLookupBytes(v, hn::Load(d, kLowSource));
  const auto high = hn::TableLookupBytes(v, hn::Load(d, kHighSource));
  // mins 4..7 take the upper nibble of their low-bits source, the others its low bits.
  const auto low_bits = hn::And(hn::IfThenElse(hn::FirstN(d, 12), low, hn::ShiftRight<4>(low)), hn::Load(d, kLowMask));
  hn::StoreU(hn::Or(low_bits, hn::And(hn::ShiftRight<2>(high), hn::Load(d, kHighMask))), d, out);
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

template <size_t R>
void rows_q4_k(const GgufBlockQ4K* const* b, const float* x, const float* x_sums, size_t blocks, float* out) {
  const DF df;
  const size_t n = hn::Lanes(df);
  const auto table = nibble_table<0>();
  const D8F d8;
  hn::Vec<DF> total[R];
  hn::Vec<D8F> mins[R];
  for (size_t r = 0; r < R; ++r) {
    total[r] = hn::Zero(df);
    mins[r] = hn::Zero(d8);
  }
  for (size_t i = 0; i < blocks; ++i, x += 256, x_sums += 8) {
    prefetch_next_rows<R>(b, blocks, i);
    // Per row, the eight sub-block scales d * sc and the block's min term, once per block.
    HWY_ALIGN float scale[R][16];  // d * sc, then dmin * m
    for (size_t r = 0; r < R; ++r) {
      mins[r] = k4_scales_and_mins(b[r][i], x_sums, scale[r], mins[r]);
    }
    for (int c = 0; c < 4; ++c) {
      hn::Vec<DF> acc_lo[R], acc_hi[R];
      for (size_t r = 0; r < R; ++r) acc_lo[r] = acc_hi[r] = hn::Zero(df);
      for (size_t l = 0; l < 32; l += n) {
        const auto x_lo = hn::LoadU(df, x + 64 * c + l);
        const auto x_hi = hn::LoadU(df, x + 64 * c + 32 + l);
        for (size_t r = 0; r < R; ++r) {
          const auto codes = bytes_at(b[r][i].qs + 32 * c + l);
          acc_lo[r] = hn::MulAdd(nibble_values<0>(codes, table), x_lo, acc_lo[r]);
          acc_hi[r] = hn::MulAdd(nibble_values<0>(hn::ShiftRight<4>(codes), table), x_hi, acc_hi[r]);
        }
      }
      for (size_t r = 0; r < R; ++r) {
        total[r] = hn::MulAdd(acc_lo[r], hn::Set(df, scale[r][2 * c]), total[r]);
        total[r] = hn::MulAdd(acc_hi[r], hn::Set(df, scale[r][2 * c + 1]), total[r]);
      }
    }
  }
  for (size_t r = 0; r < R; ++r) {
    out[r] = hn::GetLane(hn::SumOfLanes(df, total[r])) - hn::GetLane(hn::SumOfLanes(d8, mins[r]));
  }
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

// Q5_K in two steps per block: the 256 five-bit codes assembled on whole byte
// vectors, then the Q4_K-style product with sub-block scales and mins.
template <size_t R>
void rows_q5_k(const GgufBlockQ5K* const* b, const float* x, const float* x_sums, size_t blocks, float* out) {
  const DF df;
  const size_t n = hn::Lanes(df);
  const D8F d8;
  hn::Vec<DF> total[R];
  hn::Vec<D8F> mins[R];
  for (size_t r = 0; r < R; ++r) {
    total[r] = hn::Zero(df);
    mins[r] = hn::Zero(d8);
  }
  HWY_ALIGN uint8_t q[R][256];
  for (size_t i = 0; i < blocks; ++i, x += 256, x_sums += 8) {
    prefetch_next_rows<R>(b, blocks, i);
    HWY_ALIGN float scale[R][16];  // d * sc, then dmin * m
    for (size_t r = 0; r < R; ++r) {
      decode_q5_k_chunk<0>(b[r][i], q[r]);
      decode_q5_k_chunk<1>(b[r][i], q[r]);
      decode_q5_k_chunk<2>(b[r][i], q[r]);
      decode_q5_k_chunk<3>(b[r][i], q[r]);
      mins[r] = k4_scales_and_mins(b[r][i], x_sums, scale[r], mins[r]);
    }
    for (size_t j = 0; j < 8; ++j) {
      hn::Vec<DF> acc[R];
      for (size_t r = 0; r < R; ++r) acc[r] = hn::Zero(df);
      for (size_t l = 32 * j; l < 32 * j + 32; l += n) {
        const auto xv = hn::LoadU(df, x + l);
        for (size_t r = 0; r < R; ++r) acc[r] = hn::MulAdd(to_float(bytes_at(q[r] + l)), xv, acc[r]);
      }
      for (size_t r = 0; r < R; ++r) total[r] = hn::MulAdd(acc[r], hn::Set(df, scale[r][j]), total[r]);
    }
  }
  for (size_t r = 0; r < R; ++r) {
    out[r] = hn::GetLane(hn::SumOfLanes(df, total[r])) - hn::GetLane(hn::SumOfLanes(d8, mins[r]));
  }
}

// Q6_K in two steps per block: the 256 codes assembled on whole byte vectors
// (16 or 32 at a time) into q - 32 as int8, then an int8 dot product as for
// Q8_0, one accumulator per 16-element group scaled by d * scales[g].
HWY_INLINE void decode_q6_k(const GgufBlockQ6K& b, int8_t* q) {
  const hn::CappedTag<uint8_t, 32> d8;
  const size_t n8 = hn::Lanes(d8);
  const auto low4 = hn::Set(d8, 0x0F), bits45 = hn::Set(d8, 0x30), offset = hn::Set(d8, 32);
  auto* out = reinterpret_cast<uint8_t*>(q);
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

template <size_t R>
void rows_q6_k(const GgufBlockQ6K* const* b, const float* x, size_t blocks, float* out) {
  const DF df;
  const size_t n = hn::Lanes(df);
  hn::Vec<DF> total[R];
  for (size_t r = 0; r < R; ++r) total[r] = hn::Zero(df);
  HWY_ALIGN int8_t q[R][256];
  for (size_t i = 0; i < blocks; ++i, x += 256) {
    prefetch_next_rows<R>(b, blocks, i);
    HWY_ALIGN float scale[R][16];  // d * scales[g], once per block
    HWY_ALIGN float d[4];
    block_scales<R>(b, i, d);
    for (size_t r = 0; r < R; ++r) {
      decode_q6_k(b[r][i], q[r]);
      for (size_t g = 0; g < 16; g += n) {
        const auto scales = hn::PromoteTo(DI(), hn::LoadU(DI8(), b[r][i].scales + g));
        hn::StoreU(hn::Mul(hn::Set(df, d[r]), hn::ConvertTo(df, scales)), df, scale[r] + g);
      }
    }
    for (size_t g = 0; g < 16; ++g) {
      hn::Vec<DF> acc[R];
      for (size_t r = 0; r < R; ++r) acc[r] = hn::Zero(df);
      for (size_t l = 16 * g; l < 16 * g + 16; l += n) {
        const auto xv = hn::LoadU(df, x + l);
        for (size_t r = 0; r < R; ++r) {
          acc[r] = hn::MulAdd(hn::ConvertTo(df, hn::PromoteTo(DI(), hn::LoadU(DI8(), q[r] + l))), xv, acc[r]);
        }
      }
      for (size_t r = 0; r < R; ++r) total[r] = hn::MulAdd(acc[r], hn::Set(df, scale[r][g]), total[r]);
    }
  }
  for (size_t r = 0; r < R; ++r) out[r] = hn::GetLane(hn::SumOfLanes(df, total[r]));
}

// y[r] = base[r] + row r . x for r in [r0, r1), the rows as R bands (row_bands.h).
template <typename Block, size_t R, typename Kernel>
void rows_t(const Rows& m, const float* base, float* y, size_t r0, size_t r1, Kernel kernel) {
  cpu::for_row_bands<R>(r0, r1, base, y, [&](auto rows_n, const size_t* index, float* out) {
    const Block* rows[decltype(rows_n)::value];
    for (size_t k = 0; k < rows_n; ++k) rows[k] = reinterpret_cast<const Block*>(m.w + index[k] * m.row_bytes);
    kernel(rows_n, rows, out);
  });
}

void RowsQ8_0(const Rows& m, const float* base, float* y, size_t r0, size_t r1) {
  rows_t<GgufBlockQ8_0, 4>(m, base, y, r0, r1, [&](auto rows_n, const GgufBlockQ8_0* const* b, float* out) {
    rows_q8_0<decltype(rows_n)::value>(b, m.x, m.cols / 32, out);
  });
}
void RowsQ4_0(const Rows& m, const float* base, float* y, size_t r0, size_t r1) {
  rows_t<GgufBlockQ4_0, 4>(m, base, y, r0, r1, [&](auto rows_n, const GgufBlockQ4_0* const* b, float* out) {
    rows_q4_0<decltype(rows_n)::value>(b, m.x, m.cols / 32, out);
  });
}
void RowsQ4K(const Rows& m, const float* base, float* y, size_t r0, size_t r1) {
  rows_t<GgufBlockQ4K, 4>(m, base, y, r0, r1, [&](auto rows_n, const GgufBlockQ4K* const* b, float* out) {
    rows_q4_k<decltype(rows_n)::value>(b, m.x, m.x_sums, m.cols / 256, out);
  });
}
void RowsQ5K(const Rows& m, const float* base, float* y, size_t r0, size_t r1) {
  rows_t<GgufBlockQ5K, 4>(m, base, y, r0, r1, [&](auto rows_n, const GgufBlockQ5K* const* b, float* out) {
    rows_q5_k<decltype(rows_n)::value>(b, m.x, m.x_sums, m.cols / 256, out);
  });
}
void RowsQ6K(const Rows& m, const float* base, float* y, size_t r0, size_t r1) {
  rows_t<GgufBlockQ6K, 4>(m, base, y, r0, r1, [&](auto rows_n, const GgufBlockQ6K* const* b, float* out) {
    rows_q6_k<decltype(rows_n)::value>(b, m.x, m.cols / 256, out);
  });
}

}  // namespace qwen35::gguf_cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qwen35 {
namespace gguf_cpu {

HWY_EXPORT(RowsQ8_0);
HWY_EXPORT(RowsQ4_0);
HWY_EXPORT(RowsQ4K);
HWY_EXPORT(RowsQ5K);
HWY_EXPORT(RowsQ6K);

namespace {

// y[r] = base[r] + W[r, :] . m.x for r in [r0, r1), by the target's kernel for `type`.
void run_rows(DType type, const Rows& m, const float* base, float* y, size_t r0, size_t r1) {
  switch (type) {
    case DType::kQ8_0: return HWY_DYNAMIC_DISPATCH(RowsQ8_0)(m, base, y, r0, r1);
    case DType::kQ4_0: return HWY_DYNAMIC_DISPATCH(RowsQ4_0)(m, base, y, r0, r1);
    case DType::kQ4_K: return HWY_DYNAMIC_DISPATCH(RowsQ4K)(m, base, y, r0, r1);
    case DType::kQ5_K: return HWY_DYNAMIC_DISPATCH(RowsQ5K)(m, base, y, r0, r1);
    default: return HWY_DYNAMIC_DISPATCH(RowsQ6K)(m, base, y, r0, r1);
  }
}

bool needs_sums(DType type) { return type == DType::kQ4_K || type == DType::kQ5_K; }

size_t row_grain(CpuBackend& cpu, DType type, uint32_t cols, size_t rows) {
  return cpu::gemv_row_grain(dtype_bytes(type, cols), rows, cpu.pool().size());
}

// x's sums per 32 elements, in `sums` (cols / 32 floats), when the type uses them.
const float* prepare_sums(DType type, const float* x, uint32_t cols, float* sums) {
  if (!needs_sums(type)) return nullptr;
  for (uint32_t g = 0; g < cols / 32; ++g) {
    float s = 0;
    for (uint32_t k = 0; k < 32; ++k) s += x[32 * g + k];
    sums[g] = s;
  }
  return sums;
}

Rows rows_of(DType type, DevicePtr w, uint32_t cols, const float* x, const float* sums) {
  return Rows{.w = host_ptr<const std::byte>(w), .row_bytes = dtype_bytes(type, cols), .cols = cols, .x = x,
              .x_sums = sums};
}

void gemv(CpuBackend& cpu, DType type, const GemvArgs& a) {
  const float* x = host_ptr<const float>(a.x);
  const Rows m = rows_of(type, a.w, a.cols, x, prepare_sums(type, x, a.cols, cpu.launch_scratch(a.cols / 32)));
  float* y = host_ptr<float>(a.y);
  cpu.pool().parallel_for(a.rows, row_grain(cpu, type, a.cols, a.rows),
                          [&](size_t begin, size_t end) { run_rows(type, m, nullptr, y, begin, end); });
}

void gemv_pair(CpuBackend& cpu, DType type, const GemvPairArgs& a) {
  const float* x = host_ptr<const float>(a.x);
  const float* sums = prepare_sums(type, x, a.cols, cpu.launch_scratch(a.cols / 32));
  const Rows m0 = rows_of(type, a.w0, a.cols, x, sums);
  const Rows m1 = rows_of(type, a.w1, a.cols, x, sums);
  float* y0 = host_ptr<float>(a.y0);
  float* y1 = host_ptr<float>(a.y1);
  // One index space over both matrices, so both are split across all threads.
  const size_t rows = size_t{a.rows0} + a.rows1;
  cpu.pool().parallel_for(rows, row_grain(cpu, type, a.cols, rows), [&](size_t begin, size_t end) {
    if (begin < a.rows0) run_rows(type, m0, nullptr, y0, begin, std::min<size_t>(end, a.rows0));
    if (end > a.rows0) run_rows(type, m1, nullptr, y1, std::max<size_t>(begin, a.rows0) - a.rows0, end - a.rows0);
  });
}

void gemv_silu_gate(CpuBackend& cpu, DType type, const GemvSiluGateArgs& a) {
  float* act = cpu.launch_scratch(size_t{a.cols} + a.cols / 32);
  simd::silu_mul(host_ptr<const float>(a.gate), host_ptr<const float>(a.up), act, a.cols);
  const Rows m = rows_of(type, a.w, a.cols, act, prepare_sums(type, act, a.cols, act + a.cols));
  const float* residual = a.residual.is_null() ? nullptr : host_ptr<const float>(a.residual);
  float* y = host_ptr<float>(a.y);
  cpu.pool().parallel_for(a.rows, row_grain(cpu, type, a.cols, a.rows),
                          [&](size_t begin, size_t end) { run_rows(type, m, residual, y, begin, end); });
}

}  // namespace
}  // namespace gguf_cpu

void register_cpu_gguf_kernels(CpuBackend& cpu) {
  for (DType type : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K}) {
    const std::string s = dtype_lower_name(type);
    cpu.register_kernel<GemvArgs>("gemv_" + s, [&cpu, type](const GemvArgs& a) { gguf_cpu::gemv(cpu, type, a); });
    cpu.register_kernel<GemvPairArgs>("gemv_pair_" + s,
                                      [&cpu, type](const GemvPairArgs& a) { gguf_cpu::gemv_pair(cpu, type, a); });
    cpu.register_kernel<GemvSiluGateArgs>(
        "gemv_silu_gate_" + s, [&cpu, type](const GemvSiluGateArgs& a) { gguf_cpu::gemv_silu_gate(cpu, type, a); });
    cpu.register_kernel<RowToF32Args>("row_to_f32_" + s, [type](const RowToF32Args& a) {
      gguf_dequantize_row(type, host_ptr<const std::byte>(a.w) + size_t{a.row} * dtype_bytes(type, a.cols),
                          host_ptr<float>(a.y), a.cols);
    });
  }
}

}  // namespace qwen35
#endif  // HWY_ONCE
