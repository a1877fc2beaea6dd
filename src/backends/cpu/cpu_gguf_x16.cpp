// The integer gemvs of Q4_0, Q8_0, Q4_K, Q5_K and Q6_K regrouped 16 rows at
// a time (Q4_0x16, Q8_0x16, Q4_Kx16, Q5_Kx16, Q6_Kx16; qwen35/gguf_quants.h)
// against x in 8 or 24 bits (cpu/int8_activations.h).
// Each int32 lane of a vector holds one row's four codes, so the dot products
// of 16 rows accumulate side by side, x's four codes broadcast to every lane:
// per block of 32 columns and 16 rows, eight dot-product instructions on
// AVX-512 (Q4_0: two per run of 64 code bytes, its low and high nibbles;
// Q8_0: one per run), then one conversion and one multiply-add for all 16
// rows (Q4_K: per sub-block of 32 columns, with its 6-bit scales and mins
// unpacked for 16 rows at once). The row-major kernels (cpu_gguf_int8.cpp)
// convert, scale and reduce each row's sums on their own, which made Q4_0
// and Q8_0 the slowest integer GGUF gemvs per byte, and unpack Q4_K's scales
// row by row.
#ifndef HWY_WANT_AVX3_DL
#define HWY_WANT_AVX3_DL 1  // Ice Lake and later: the VNNI instructions
#endif
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/cpu_gguf_x16.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "cpu/int8_dot-inl.h"

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "cpu/forced_setting.h"
#include "cpu/gguf_x16.h"
#include "cpu/prefetch.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::gguf_cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// Whether a layout's blocks are the K-quants' super-blocks of 256 columns.
template <typename Grouped>
constexpr bool kSuperBlocks = std::is_same_v<Grouped, GgufBlockQ4Kx16> || std::is_same_v<Grouped, GgufBlockQ5Kx16> ||
                              std::is_same_v<Grouped, GgufBlockQ6Kx16>;

// Q8_0's codes are signed, where the dot-product step wants unsigned weights.
// On VNNI they go in as w + 128 (w ^ 0x80) and 128 times x's code sum comes
// off at the end, as Q4_0's offset 8 does. With AVX2's instructions, whose
// pair sums would overflow int16 for weights up to 255, they go in as |w|
// against x with w's sign, 32 bytes at a time (AVX-512 has no byte sign
// instruction); the targets of widening multiplies take them as they are.
#if HWY_TARGET == HWY_AVX3_DL
constexpr float kQ8_0Offset = 128;
using DQ8_0 = hn::CappedTag<int32_t, 16>;
#elif HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
constexpr float kQ8_0Offset = 0;
using DQ8_0 = hn::CappedTag<int32_t, 8>;
#else
constexpr float kQ8_0Offset = 0;
using DQ8_0 = hn::CappedTag<int32_t, 16>;
#endif

// Per layout: the block, the int32 lanes per vector (up to 16 rows: one
// vector per group on AVX-512), the runs of 64 code bytes per block, and the
// offset subtracted from the codes (times x's code sum).
template <typename Grouped>
struct Layout;
template <>
struct Layout<GgufBlockQ4_0x16> {
  using DQ = hn::CappedTag<int32_t, 16>;
  static constexpr size_t kRuns = 4;
  static constexpr float kOffset = 8;
};
template <>
struct Layout<GgufBlockQ8_0x16> {
  using DQ = DQ8_0;
  static constexpr size_t kRuns = 8;
  static constexpr float kOffset = kQ8_0Offset;
};

// acc[k][d] plus the dot products of run v's codes of group k (codes[k];
// lane r: row r's four codes) with digit d's quads (quad(d, q): x's codes 4 q
// to 4 q + 3 of the block, broadcast), each quad taken once for all G
// groups: Q4_0's low nibbles meet quad v, its high ones quad 4 + v; Q8_0's
// bytes quad v.
template <typename Grouped, size_t G, size_t D, class VQ, class Quad>
HWY_INLINE void run_dots(const uint8_t* const* codes, size_t v, const Quad& quad, VQ (*acc)[D][2]) {
  using DQ = hn::DFromV<VQ>;
  const hn::Repartition<uint8_t, DQ> d8;
  hn::Vec<decltype(d8)> bytes[G];
  for (size_t k = 0; k < G; ++k) bytes[k] = hn::LoadU(d8, codes[k]);
  if constexpr (std::is_same_v<Grouped, GgufBlockQ4_0x16>) {
    hn::Vec<decltype(d8)> low[G], high[G];
    for (size_t k = 0; k < G; ++k) {
      low[k] = hn::And(bytes[k], hn::Set(d8, 0x0F));
      high[k] = hn::ShiftRight<4>(bytes[k]);
    }
    for (size_t d = 0; d < D; ++d) {
      const auto quad_low = quad(d, v), quad_high = quad(d, 4 + v);
      for (size_t k = 0; k < G; ++k) {
        acc[k][d][0] = cpu::HWY_NAMESPACE::dot4(acc[k][d][0], low[k], quad_low);
        acc[k][d][1] = cpu::HWY_NAMESPACE::dot4(acc[k][d][1], high[k], quad_high);
      }
    }
  } else {
    for (size_t d = 0; d < D; ++d) {
      const auto quad_v = quad(d, v);
      for (size_t k = 0; k < G; ++k) {
#if HWY_TARGET == HWY_AVX3_DL
        const auto offset = hn::Xor(bytes[k], hn::Set(d8, 0x80));
        acc[k][d][v % 2] = cpu::HWY_NAMESPACE::dot4(acc[k][d][v % 2], offset, quad_v);
#elif HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
        static_assert(sizeof(bytes[k].raw) == 32);
        const hn::Vec<decltype(d8)> magnitude{_mm256_abs_epi8(bytes[k].raw)};
        acc[k][d][v % 2] = cpu::HWY_NAMESPACE::dot4(acc[k][d][v % 2], magnitude,
                                                   decltype(quad_v){_mm256_sign_epi8(quad_v.raw, bytes[k].raw)});
#else
        const auto codes_signed = hn::BitCast(hn::Repartition<int8_t, DQ>(), bytes[k]);
        acc[k][d][v % 2] = cpu::HWY_NAMESPACE::dot4(acc[k][d][v % 2], codes_signed, quad_v);
#endif
      }
    }
  }
}

// Whether group_dots walks the G groups side by side, a run of each at a
// time, each run's quads broadcast where they are used, rather than a whole
// block of one group after another against the block's quads broadcast
// first: on VNNI with x in 24 bits, whose block takes 24 quads (34 vectors
// live with the accumulators and sums, more than AVX-512's 32 registers).
// One thread, 3584 x 1024, in one process (QWEN35_BENCH_AB, medians of 3,
// Zen 5), the run-major walk against the block-major one: Q4_0x16 from the
// caches 1.21-1.26 times as fast, from DRAM 1.01-1.12, Q8_0x16 1.04-1.11
// and 1.0; q4_0 decode 1.03, 1.05, 1.07 and 1.08 (`qwen35 bench --ab`, medians
// of 5). With x in 8 bits (8 quads) it measured 0.92-0.99 there, and on the
// AVX2 and AVX3 targets (16 registers, or no VNNI) 0.64-0.9 from the caches.
template <size_t D>
constexpr bool kRunMajor = D > 1 && HWY_TARGET == HWY_AVX3_DL;

// out[16 k + r] = row r of group k (< G; each `blocks` consecutive blocks
// from g[k]) . x, whose D digits each meet the codes in dot products of their own.
template <typename Grouped, size_t G, size_t D, bool kPrefetch>
HWY_INLINE void group_dots(const Grouped* const* g, const cpu::Int8Activations& x, size_t blocks, float* out,
                           size_t ahead) {
  using L = Layout<Grouped>;
  using DQ = typename L::DQ;
  using VQ = hn::Vec<DQ>;
  const DQ dq;
  const hn::Repartition<float, DQ> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const size_t n = hn::Lanes(dq);
  constexpr size_t kParts = 16 / hn::MaxLanes(DQ());
  hn::Vec<decltype(df)> total[G][kParts], offset[G][kParts];
  for (size_t k = 0; k < G; ++k) {
    for (size_t p = 0; p < kParts; ++p) {
      total[k][p] = hn::Zero(df);
      offset[k][p] = hn::Zero(df);
    }
  }
  for (size_t i = 0; i < blocks; ++i) {
    const auto x_scale = hn::Set(df, x.scale[i]);
    const auto code_sum = hn::Set(df, x.code_sums[2 * i] + x.code_sums[2 * i + 1]);
    const auto codes_of = [&](size_t k, size_t p, size_t v) {
      return reinterpret_cast<const uint8_t*>(g[k][i].qs) + 64 * v + 4 * n * p;
    };
    // Group k's sums of part p into its total (and offset).
    const auto finish = [&](size_t k, size_t p, const VQ (*acc)[2]) {
      VQ digits[D];
      for (size_t d = 0; d < D; ++d) digits[d] = hn::Add(acc[d][0], acc[d][1]);
      const auto d = hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(g[k][i].d) + n * p));
      const auto factor = hn::Mul(d, x_scale);
      total[k][p] = hn::MulAdd(cpu::HWY_NAMESPACE::digit_sum<D>(df, digits), factor, total[k][p]);
      if constexpr (L::kOffset != 0) offset[k][p] = hn::MulAdd(factor, code_sum, offset[k][p]);
    };
    const int8_t* xq = x.q + 32 * i;
    if constexpr (kRunMajor<D>) {
      if constexpr (kPrefetch) {
        for (size_t k = 0; k < G; ++k) {
          for (size_t line = 0; line < sizeof(Grouped); line += 64) cpu::prefetch_past(&g[k][i], ahead + line);
        }
      }
      const auto quad = [&](size_t d, size_t q) { return cpu::HWY_NAMESPACE::x_quad_at(dq, xq + d * x.cols + 4 * q); };
      for (size_t p = 0; p < kParts; ++p) {
        VQ acc[G][D][2];  // two chains of dot products per group and digit
        for (size_t k = 0; k < G; ++k) {
          for (size_t d = 0; d < D; ++d) acc[k][d][0] = acc[k][d][1] = hn::Zero(dq);
        }
        for (size_t v = 0; v < L::kRuns; ++v) {
          const uint8_t* codes[G];
          for (size_t k = 0; k < G; ++k) codes[k] = codes_of(k, p, v);
          run_dots<Grouped, G, D>(codes, v, quad, acc);
        }
        for (size_t k = 0; k < G; ++k) finish(k, p, acc[k]);
      }
    } else {
      hn::Vec<hn::Repartition<int8_t, DQ>> quads[D][8];
      for (size_t d = 0; d < D; ++d) {
        for (size_t q = 0; q < 8; ++q) quads[d][q] = cpu::HWY_NAMESPACE::x_quad_at(dq, xq + d * x.cols + 4 * q);
      }
      const auto quad = [&](size_t d, size_t q) { return quads[d][q]; };
      for (size_t k = 0; k < G; ++k) {
        // Each group's lines asked for just before its block, as before the
        // run-major walk: asked for all at the block's start, this walk read
        // 1.03-1.11 times as slowly with x in 8 bits (from the caches, one
        // thread, in one process). Written out here, not in a lambda shared
        // with the walk above: cpu/prefetch.h.
        if constexpr (kPrefetch) {
          for (size_t line = 0; line < sizeof(Grouped); line += 64) cpu::prefetch_past(&g[k][i], ahead + line);
        }
        for (size_t p = 0; p < kParts; ++p) {
          VQ acc[1][D][2];  // two chains of dot products per digit
          for (size_t d = 0; d < D; ++d) acc[0][d][0] = acc[0][d][1] = hn::Zero(dq);
          for (size_t v = 0; v < L::kRuns; ++v) {
            const uint8_t* codes = codes_of(k, p, v);
            run_dots<Grouped, 1, D>(&codes, v, quad, acc);
          }
          finish(k, p, acc[0]);
        }
      }
    }
  }
  for (size_t k = 0; k < G; ++k) {
    for (size_t p = 0; p < kParts; ++p) {
      hn::StoreU(hn::MulAdd(hn::Set(df, -L::kOffset), offset[k][p], total[k][p]), df, out + 16 * k + n * p);
    }
  }
}

// The 6-bit scales and mins of a Q4_Kx16/Q5_Kx16 block's sub-block j (< 8)
// for rows n p .. n p + n - 1, a scale and a min per int32 lane, assembled
// in registers from the block's bytes where they are needed. Unpacked for
// all 16 rows and eight sub-blocks into a stack array at the start of each
// block, as until the thirty-second session, one thread read the matrices
// from DRAM as if the reads and the arithmetic took turns (28672 x 1024 Q4_Kx16,
// x in 24 bits, Zen 5: 21-22 GB/s against 31-35 so, 50 from the caches;
// qwen35 bench q4_k on one thread 48.5-49.9 -> 68.7-73.6 tok/s), although
// the array cost fewer operations (Q5_Kx16 from the caches: 7-15% faster).
// Q5_Kx16 kept the array until its fifth bits moved next to its codes (the
// thirty-third session), when the registers took its DRAM rate from 21-22
// to 27 GB/s (3584 x 1024, x in 24 bits, one thread).
template <typename Grouped, class DQ>
HWY_INLINE void sub_block_scale_min(DQ dq, const Grouped& b, size_t j, size_t p, hn::Vec<DQ>& scale,
                                    hn::Vec<DQ>& min) {
  const hn::Rebind<uint8_t, DQ> d8_lanes;  // a byte per int32 lane
  const size_t n = hn::Lanes(dq);
  const auto lo = hn::PromoteTo(dq, hn::LoadU(d8_lanes, b.scales_lo + 16 * j + n * p));
  const auto hi = hn::PromoteTo(dq, hn::LoadU(d8_lanes, b.scales_hi + 16 * (j % 4) + n * p));
  const auto low4 = hn::Set(dq, 0x0F), high2 = hn::Set(dq, 0x30);
  // The top two bits of the scale are bits 0-1 of hi for j < 4, bits 4-5 for
  // j + 4; of the min, bits 2-3 and 6-7.
  const auto scale_top = j < 4 ? hn::ShiftLeft<4>(hi) : hi;
  const auto min_top = j < 4 ? hn::ShiftLeft<2>(hi) : hn::ShiftRight<2>(hi);
  scale = hn::Or(hn::And(lo, low4), hn::And(scale_top, high2));
  min = hn::Or(hn::ShiftRight<4>(lo), hn::And(min_top, high2));
}

// On VNNI (no int16 step to saturate) Q4_K's high nibbles stay in place, 16
// times their codes, and x's scale for them is divided by 16 (exactly: a
// power of two), which saves a shift per 64 codes.
template <typename Grouped>
constexpr bool kHighInPlace = HWY_TARGET == HWY_AVX3_DL && std::is_same_v<Grouped, GgufBlockQ4Kx16>;

// Q4_Kx16 and Q5_Kx16: run v of chunk c meets x's quads at 64 c + 4 v (low
// nibbles, sub-block 2c) and 64 c + 32 + 4 v (high, 2c + 1), Q5_K's fifth
// bits (bits 2u and 2u + 1 of its span 2c + v / 4's qh, u = v % 4) put in
// as 16 each. Walking the runs of each chunk in turn keeps the reads in
// address order: run by run across the chunks (one load of qh per run) made
// Q4_Kx16 3584 x 1024 from DRAM 1.5 to 1.8 times slower. Each sub-block's
// sums for 16 rows are converted once and scaled by their 6-bit scales
// (sub_block_scale_min) times x's block scale; their mins meet x's block
// sums. d and dmin apply once per block.
// The G groups (a pass's bands) advance side by side, kK4RunsPerStep runs of
// each at a time, as the Q4_0x16 and Q8_0x16 kernels advance a block (4.5 or
// 8.5 lines) of each. A whole 2.3 KB block of one band before the next, as
// until the twenty-fifth session, read DRAM as if the arithmetic and the
// reads took turns: 3584 x 1024 on the Xeon host, alternating in one
// process, Q4_Kx16 96-114 us against 82-93 now, Q5_Kx16 133-144 against
// 113-120, while a loop that only loaded the same lines took 85; from the
// caches the G groups' independent chains make Q4_Kx16 faster too (30-37 us
// against 26-31). One run per step measured as two.
constexpr size_t kK4RunsPerStep = 2;
// Each run's line is asked for `ahead` bytes on in its own band (gguf_x16.h's
// kX16PrefetchBytes), one prefetch per line read, where the thirty-second
// session's (a share of each block's lines per step) had made decode slower.
// Q4_Kx16 asks for its block's four lines of scales (d, dmin, scales_lo,
// scales_hi) too, at the block's start. Without them those lines were never
// asked for: the runs' prefetches, 4096 bytes on from the codes, land on 32 of
// every 36 lines of the stream, and the 4 they skip (a block's codes 1536-1791
// as it happens) waited on DRAM. Asked for, decode of q4_k went 1.08 and 1.08
// times as fast (medians of eight alternating pairs in one process, Zen 5, the
// probe at 64-75 GB/s). Q5_Kx16's fifth bits and scales asked for alike
// measured 0.97-1.00 and its scales alone 0.94-1.02: it is the kernel with the
// most arithmetic per byte, and there the prefetches' cost weighs as much.
// On Zen 4 it asks for them (every_line: gguf_x16.h's
// x16_q5_prefetch_lines), a line of fifth bits with the first run of its span.
template <typename Grouped>
constexpr bool kPrefetchHeaders = std::is_same_v<Grouped, GgufBlockQ4Kx16>;
constexpr size_t kK4HeaderLines = offsetof(GgufBlockQ4Kx16, qs) / 64;
static_assert(offsetof(GgufBlockQ4Kx16, qs) % 64 == 0 && sizeof(GgufBlockQ4Kx16) % 64 == 0);
static_assert(offsetof(GgufBlockQ5Kx16, spans) == 64 * kK4HeaderLines && sizeof(GgufBlockQ5Kx16::Span) % 64 == 0);
static_assert(sizeof(GgufBlockQ5Kx16) / 64 == kQ5KBlockLines);

template <typename Grouped, size_t G, size_t D, bool kPrefetch>
HWY_INLINE void k4_group_dots(const Grouped* const* g, const cpu::Int8Activations& x, size_t blocks, float* out,
                              size_t ahead, bool every_line) {
  constexpr bool kFifthBits = std::is_same_v<Grouped, GgufBlockQ5Kx16>;
  using DQ = hn::CappedTag<int32_t, 16>;
  const DQ dq;
  const hn::Repartition<uint8_t, DQ> d8;
  const hn::Repartition<uint16_t, DQ> d16;
  const hn::Repartition<float, DQ> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const size_t n = hn::Lanes(dq);
  constexpr size_t kParts = 16 / hn::MaxLanes(DQ());
  const auto low4 = hn::Set(d8, 0x0F);
  const auto bit4 = hn::Set(d8, 0x10);
  hn::Vec<decltype(df)> total[G][kParts], mins[G][kParts];
  for (size_t k = 0; k < G; ++k) {
    for (size_t p = 0; p < kParts; ++p) {
      total[k][p] = hn::Zero(df);
      mins[k][p] = hn::Zero(df);
    }
  }
  const size_t plane = x.cols;  // x's digit planes
  for (size_t i = 0; i < blocks; ++i) {
    const int8_t* xq = x.q + 256 * i;
    for (size_t p = 0; p < kParts; ++p) {
      hn::Vec<decltype(df)> sums[G], min_sums[G];
      for (size_t k = 0; k < G; ++k) {
        sums[k] = hn::Zero(df);
        min_sums[k] = hn::Zero(df);
      }
      if constexpr (kPrefetch) {
        if (p == 0 && (kPrefetchHeaders<Grouped> || every_line)) {
          for (size_t k = 0; k < G; ++k) {
            for (size_t line = 0; line < kK4HeaderLines; ++line) cpu::prefetch_past(&g[k][i], ahead + 64 * line);
          }
        }
      }
      for (size_t c = 0; c < 4; ++c) {
        hn::Vec<DQ> acc[G][2][D];  // each group's sub-blocks 2c and 2c + 1, per digit of x
        for (size_t k = 0; k < G; ++k) {
          for (size_t d = 0; d < D; ++d) acc[k][0][d] = acc[k][1][d] = hn::Zero(dq);
        }
        // Unrolled, so that every load's offset and Q5_K's shifts are
        // constants: left rolled for Q5_Kx16, one thread read it from DRAM at
        // 15.5-18.9 GB/s against 21.4-22.8 (3584 x 1024, x in 24 bits).
#pragma GCC unroll 8
        for (size_t v0 = 0; v0 < 8; v0 += kK4RunsPerStep) {
          for (size_t k = 0; k < G; ++k) {
            const Grouped& b = g[k][i];
            for (size_t v = v0; v < v0 + kK4RunsPerStep; ++v) {
              if constexpr (kPrefetch) cpu::prefetch_past(gguf_x16_k4_run(b, c, v), ahead);
              if constexpr (kPrefetch && kFifthBits) {
                if (every_line && v % 4 == 0) cpu::prefetch_past(b.spans[2 * c + v / 4].qh, ahead);
              }
              const auto bytes = hn::LoadU(d8, gguf_x16_k4_run(b, c, v) + 4 * n * p);
              auto low = hn::And(bytes, low4);
              auto high = kHighInPlace<Grouped> ? hn::AndNot(low4, bytes) : hn::ShiftRight<4>(bytes);
              if constexpr (kFifthBits) {
                // Bits 2u and 2u + 1 of each byte (u = v % 4) to bit 4: 16-bit
                // shifts move no bit across bytes into the bits kept.
                const auto span_bits = hn::BitCast(d16, hn::LoadU(d8, b.spans[2 * c + v / 4].qh + 4 * n * p));
                const auto bits = hn::ShiftRightSame(span_bits, static_cast<int>(2 * (v % 4)));
                low = hn::Or(low, hn::And(hn::BitCast(d8, hn::ShiftLeft<4>(bits)), bit4));
                high = hn::Or(high, hn::And(hn::BitCast(d8, hn::ShiftLeft<3>(bits)), bit4));
              }
              for (size_t d = 0; d < D; ++d) {
                const int8_t* quads = xq + d * plane + 64 * c + 4 * v;
                acc[k][0][d] = cpu::HWY_NAMESPACE::dot4(acc[k][0][d], low, cpu::HWY_NAMESPACE::x_quad_at(dq, quads));
                acc[k][1][d] =
                    cpu::HWY_NAMESPACE::dot4(acc[k][1][d], high, cpu::HWY_NAMESPACE::x_quad_at(dq, quads + 32));
              }
            }
          }
        }
        for (size_t half = 0; half < 2; ++half) {
          const size_t j = 2 * c + half;
          const float x_scale = x.scale[8 * i + j] * (kHighInPlace<Grouped> && half == 1 ? 0.0625f : 1.0f);
          const auto x_sum = hn::Set(df, x.sums[8 * i + j]);
          for (size_t k = 0; k < G; ++k) {
            hn::Vec<DQ> scale, min;
            sub_block_scale_min(dq, g[k][i], j, p, scale, min);
            const auto factor = hn::Mul(hn::ConvertTo(df, scale), hn::Set(df, x_scale));
            sums[k] = hn::MulAdd(cpu::HWY_NAMESPACE::digit_sum<D>(df, acc[k][half]), factor, sums[k]);
            min_sums[k] = hn::MulAdd(hn::ConvertTo(df, min), x_sum, min_sums[k]);
          }
        }
      }
      for (size_t k = 0; k < G; ++k) {
        const auto* d = reinterpret_cast<const hwy::float16_t*>(g[k][i].d) + n * p;
        const auto* dmin = reinterpret_cast<const hwy::float16_t*>(g[k][i].dmin) + n * p;
        total[k][p] = hn::MulAdd(hn::PromoteTo(df, hn::LoadU(dh, d)), sums[k], total[k][p]);
        mins[k][p] = hn::MulAdd(hn::PromoteTo(df, hn::LoadU(dh, dmin)), min_sums[k], mins[k][p]);
      }
    }
  }
  for (size_t k = 0; k < G; ++k) {
    for (size_t p = 0; p < kParts; ++p) hn::StoreU(hn::Sub(total[k][p], mins[k][p]), df, out + 16 * k + n * p);
  }
}

// Q6_Kx16: span j of a block (its sub-block of 16 columns) holds the 16
// rows' scales and their four runs of codes, run v meeting x's quad at 16 j
// + 4 v. Runs 0 and 1 are their bytes' low six bits; runs 2 and 3 join a
// nibble of q[2] and the top two bits of q[0] or q[1] (gguf_quants.h). The
// 16 rows' sums per sub-block are converted once, the offset -32 taken off
// with x's code sum there, and scaled by the rows' scales times x's; d
// applies once per block. Row-major (cpu_gguf_int8.cpp), the codes of a row
// are assembled alike, but each 64 of them meet x on their own, converted and
// scaled per vector: 3584 x 1024, x in 24 bits, one thread (Zen 5), from the
// caches 24.8-25.3 GB/s against 52-58 so, from DRAM 21.5-23.1 against
// 28-33. Four bands instead of two measured no faster here, from DRAM or in
// decode; a prefetch of each span's code lines 4 KB ahead did, in one
// process (gguf_x16.h).
// Prefetched line by line, not span by span: a block (3360 bytes, 52.5 lines,
// so every other block starts mid-line) is asked for as lines 3j to 3j + 2
// at span j, `ahead` on, and its last lines at its start. Asking for each
// span's three runs of codes instead left about one line in thirteen (where
// the spans' 16 bytes of scales add up to a line) and the block's d to DRAM:
// decode of q6_k 1.15 and 1.20 times as fast as that (medians of eight
// alternating pairs in one process, Zen 5, the probe at 69-71 GB/s).
// Into L2 only (cpu::prefetch_past_to_l2), as attention's rows, at every
// distance: 8 KB ahead (one band), each prefetch into L1 held one of its few
// miss buffers until its line came. On Zen 4 (forty-sixth session,
// alternating binaries, one run each) q6_k decode read 0.878-0.882 of the
// probe against 0.775-0.785 in three pairs, 0.85-0.87 against 0.81 at 4096
// positions; with x in 8 bits 0.838 against 0.845 (the other pair too noisy
// to tell); unmeasured on Zen 5. Every gemv's prefetches into L2 did not pay
// (q5_k 0.59 times as fast); nor one kernel's at a time (forty-seventh
// session, BM_Gemv from DRAM: 0.60-0.99, bf16 1.04 within the noise).
// Lines asked for per block, 64 bytes apart from its first byte: they reach
// its last byte wherever in a line it starts.
constexpr size_t kQ6BlockLines = (sizeof(GgufBlockQ6Kx16) + 63) / 64;
template <size_t G, size_t D, bool kPrefetch>
HWY_INLINE void q6_group_dots(const GgufBlockQ6Kx16* const* g, const cpu::Int8Activations& x, size_t blocks,
                              float* out, size_t ahead) {
  using DQ = hn::CappedTag<int32_t, 16>;
  const DQ dq;
  const hn::Repartition<uint8_t, DQ> d8;
  const hn::Repartition<uint16_t, DQ> d16;
  const hn::Rebind<int8_t, DQ> d8_lanes;  // a byte per int32 lane
  const hn::Repartition<float, DQ> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const size_t n = hn::Lanes(dq);
  constexpr size_t kParts = 16 / hn::MaxLanes(DQ());
  const auto six = hn::Set(d8, 0x3F), low4 = hn::Set(d8, 0x0F), top2 = hn::Set(d8, 0x30);
  // Bits 6-7 of each byte to bits 4-5: a 16-bit shift moves no bit across bytes into the bits kept.
  const auto top_bits = [&](auto q) { return hn::BitCast(d8, hn::ShiftRight<2>(hn::BitCast(d16, q))); };
  hn::Vec<decltype(df)> total[G][kParts];
  for (size_t k = 0; k < G; ++k) {
    for (size_t p = 0; p < kParts; ++p) total[k][p] = hn::Zero(df);
  }
  for (size_t i = 0; i < blocks; ++i) {
    for (size_t p = 0; p < kParts; ++p) {
      hn::Vec<decltype(df)> sums[G];
      for (size_t k = 0; k < G; ++k) sums[k] = hn::Zero(df);
      if constexpr (kPrefetch) {
        if (p == 0) {
          for (size_t k = 0; k < G; ++k) {
            for (size_t line = 3 * 16; line < kQ6BlockLines; ++line) {
              cpu::prefetch_past_to_l2(&g[k][i], ahead + 64 * line);
            }
          }
        }
      }
      for (size_t j = 0; j < 16; ++j) {
        const size_t group = 16 * i + j;  // x's group of 16 columns
        hn::Vec<decltype(d8)> runs[G][4];
        for (size_t k = 0; k < G; ++k) {
          const GgufBlockQ6Kx16::Span& span = g[k][i].spans[j];
          if constexpr (kPrefetch) {
            if (p == 0) {
              for (size_t line = 3 * j; line < 3 * j + 3; ++line) {
                cpu::prefetch_past_to_l2(&g[k][i], ahead + 64 * line);
              }
            }
          }
          const auto q0 = hn::LoadU(d8, span.q[0] + 4 * n * p), q1 = hn::LoadU(d8, span.q[1] + 4 * n * p),
                     q2 = hn::LoadU(d8, span.q[2] + 4 * n * p);
          runs[k][0] = hn::And(q0, six);
          runs[k][1] = hn::And(q1, six);
          runs[k][2] = hn::OrAnd(hn::And(q2, low4), top_bits(q0), top2);
          runs[k][3] = hn::OrAnd(hn::And(hn::BitCast(d8, hn::ShiftRight<4>(hn::BitCast(d16, q2))), low4),
                                 top_bits(q1), top2);
        }
        hn::Vec<DQ> acc[G][D];
        for (size_t k = 0; k < G; ++k) {
          for (size_t d = 0; d < D; ++d) acc[k][d] = hn::Zero(dq);
        }
        for (size_t v = 0; v < 4; ++v) {
          for (size_t d = 0; d < D; ++d) {
            const auto quad = cpu::HWY_NAMESPACE::x_quad_at(dq, x.q + d * x.cols + 16 * group + 4 * v);
            for (size_t k = 0; k < G; ++k) acc[k][d] = cpu::HWY_NAMESPACE::dot4(acc[k][d], runs[k][v], quad);
          }
        }
        const auto x_scale = hn::Set(df, x.group_scale[group]);
        const auto offset = hn::Set(df, -32.0f * x.code_sums[group]);
        for (size_t k = 0; k < G; ++k) {
          const auto scale = hn::ConvertTo(df, hn::PromoteTo(dq, hn::LoadU(d8_lanes, g[k][i].spans[j].scales + n * p)));
          const auto codes = hn::Add(cpu::HWY_NAMESPACE::digit_sum<D>(df, acc[k]), offset);
          sums[k] = hn::MulAdd(codes, hn::Mul(scale, x_scale), sums[k]);
        }
      }
      for (size_t k = 0; k < G; ++k) {
        const auto* d = reinterpret_cast<const hwy::float16_t*>(g[k][i].d) + n * p;
        total[k][p] = hn::MulAdd(hn::PromoteTo(df, hn::LoadU(dh, d)), sums[k], total[k][p]);
      }
    }
  }
  for (size_t k = 0; k < G; ++k) {
    for (size_t p = 0; p < kParts; ++p) hn::StoreU(total[k][p], df, out + 16 * k + n * p);
  }
}

// The groups of passes p (cpu/row_bands.h, a group per row) in their bands
// (x16_bands), x in D digits.
template <typename Grouped, size_t D>
void groups(const Grouped* w, const cpu::Int8Activations& x, size_t cols, const float* base, float* y,
            const cpu::RowPasses& p) {
  const size_t blocks = cols / (kSuperBlocks<Grouped> ? 256 : 32);
  const size_t ahead = x16_prefetch_bytes(*gguf_regrouped_layout(Grouped::kSourceType), D);
  const bool every_line = std::is_same_v<Grouped, GgufBlockQ5Kx16> && x16_q5_prefetch_lines() == kQ5KBlockLines;
  const auto dots = [&](auto groups_n, size_t first, size_t stride, float* out) {
    constexpr size_t G = decltype(groups_n)::value;
    const Grouped* g[G];
    for (size_t k = 0; k < G; ++k) g[k] = w + (first + k * stride) * blocks;
    const auto kernel = [&](auto prefetch) {
      constexpr bool kPrefetch = decltype(prefetch)::value;
      if constexpr (std::is_same_v<Grouped, GgufBlockQ6Kx16>) {
        q6_group_dots<G, D, kPrefetch>(g, x, blocks, out, ahead);
      } else if constexpr (kSuperBlocks<Grouped>) {
        k4_group_dots<Grouped, G, D, kPrefetch>(g, x, blocks, out, ahead, every_line);
      } else {
        group_dots<Grouped, G, D, kPrefetch>(g, x, blocks, out, ahead);
      }
    };
    if (ahead >= cpu::kMinPrefetchBytes) return kernel(std::true_type());
    kernel(std::false_type());
  };
  cpu::for_any_row_bands<16>(p, base, y, dots);
}

template <typename Grouped>
void groups(const Grouped* w, const cpu::Int8Activations& x, size_t cols, const float* base, float* y,
            const cpu::RowPasses& p) {
  if (x.digits == 1) return groups<Grouped, 1>(w, x, cols, base, y, p);
  groups<Grouped, cpu::kInt24Digits>(w, x, cols, base, y, p);
}

#else  // HWY_TARGET == HWY_SCALAR: the scalar twin, each row gathered back into its blocks.

template <typename Grouped>
void groups(const Grouped* w, const cpu::Int8Activations& x, size_t cols, const float* base, float* y,
            const cpu::RowPasses& p) {
  using Block = typename Grouped::Source;
  const size_t blocks = cols / dtype_block_size(Grouped::kSourceType);
  std::vector<Block> row(blocks);
  cpu::for_each_row(p, [&](size_t g) {
    for (size_t lane = 0; lane < 16; ++lane) {
      for (size_t i = 0; i < blocks; ++i) row[i] = x16_row_block<Block>(w[g * blocks + i], lane);
      const double dot =
          cpu::int8_row_dot(Grouped::kSourceType, reinterpret_cast<const std::byte*>(row.data()), x, cols);
      const size_t r = 16 * g + lane;
      y[r] = (base ? base[r] : 0.0f) + static_cast<float>(dot);
    }
  });
}

#endif  // HWY_TARGET != HWY_SCALAR

void X16Groups(DType layout, const std::byte* w, const cpu::Int8Activations& x, size_t cols, const float* base,
               float* y, const cpu::RowPasses& p) {
  switch (layout) {
    case DType::kQ4_0x16: return groups(reinterpret_cast<const GgufBlockQ4_0x16*>(w), x, cols, base, y, p);
    case DType::kQ8_0x16: return groups(reinterpret_cast<const GgufBlockQ8_0x16*>(w), x, cols, base, y, p);
    case DType::kQ4_Kx16: return groups(reinterpret_cast<const GgufBlockQ4Kx16*>(w), x, cols, base, y, p);
    case DType::kQ5_Kx16: return groups(reinterpret_cast<const GgufBlockQ5Kx16*>(w), x, cols, base, y, p);
    default: return groups(reinterpret_cast<const GgufBlockQ6Kx16*>(w), x, cols, base, y, p);
  }
}

}  // namespace qwen35::gguf_cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qwen35::gguf_cpu {

HWY_EXPORT(X16Groups);

namespace {
cpu::ForcedSetting forced_bands, forced_prefetch_bytes, forced_q5_prefetch_lines;

// The bands of a regrouped `layout` for x in `digits` 8-bit digits on this
// host, unforced (gguf_x16.h).
size_t default_x16_bands(DType layout, size_t digits) {
  const cpu::BandHost host = cpu::band_host();
  if (host == cpu::BandHost::kAmdZen4) return kZen4X16Bands;
  if (digits == 1 && (layout == DType::kQ8_0x16 || host == cpu::BandHost::kOther)) return kX16Bands;
  const bool heavy = layout == DType::kQ5_Kx16 || layout == DType::kQ6_Kx16;
  return heavy ? kHeavyInt24Bands : kX16Int24Bands;
}
}  // namespace

size_t x16_prefetch_bytes(DType layout, size_t digits) {
  const bool q6_k_one_band = layout == DType::kQ6_Kx16 && default_x16_bands(layout, digits) == 1;
  return forced_prefetch_bytes.or_default(q6_k_one_band ? kQ6KOneBandPrefetchBytes : kX16PrefetchBytes);
}

void set_x16_prefetch_bytes(size_t bytes) {
  forced_prefetch_bytes.force_at_most(bytes, "regrouped GGUF gemv prefetch distance in bytes", cpu::kMaxPrefetchBytes);
}

size_t x16_q5_prefetch_lines() {
  return forced_q5_prefetch_lines.or_default(default_x16_q5_prefetch_lines(cpu::band_host()));
}

void set_x16_q5_prefetch_lines(size_t lines) {
  forced_q5_prefetch_lines.force_one_of(lines, "Q5_Kx16 lines asked for per block", {kQ5KCodeLines, kQ5KBlockLines});
}

size_t x16_bands(DType layout, size_t digits) { return forced_bands.or_default(default_x16_bands(layout, digits)); }

void set_x16_bands(size_t bands) { forced_bands.force_one_of(bands, "regrouped GGUF gemv bands", {1, 2, 4}); }

void run_x16_groups(DType layout, const std::byte* w, const cpu::Int8Activations& x, size_t cols, const float* base,
                    float* y, const cpu::RowPasses& p) {
  HWY_DYNAMIC_DISPATCH(X16Groups)(layout, w, x, cols, base, y, p);
}

}  // namespace qwen35::gguf_cpu
#endif  // HWY_ONCE
