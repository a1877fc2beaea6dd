// MLX rows regrouped 16 at a time (qwen35/mlx_affine.h) against x in 8 bits,
// or 24 in three 8-bit digits (cpu/mlx_int8.h), each digit as 8 bits are.
// Each int32 lane of a vector holds one row's four code bytes, so the dot
// products of 16 rows accumulate side by side with x's four codes broadcast
// to every lane, as the regrouped GGUF kernels do
// (cpu_gguf_x16.cpp): per unit of 32 code bytes and 16 rows, eight runs of 64
// bytes, each on AVX-512 VNNI two dot-product instructions for 4-bit codes
// (low nibbles against x's even elements, high ones against its odd ones) or
// one for 8-bit codes, then per block of x one conversion and one multiply
// for all 16 rows, and one multiply-add by the 16 rows' group scales. The
// row-major kernels (cpu_mlx_int8.cpp) add each block's lanes across a vector
// and convert and scale each row's sums on their own.
#ifndef HWY_WANT_AVX3_DL
#define HWY_WANT_AVX3_DL 1  // Ice Lake and later: the VNNI instructions
#endif
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/cpu_mlx_x16.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "cpu/float_loads-inl.h"
#include "cpu/int8_dot-inl.h"
#include "cpu/mlx_scales-inl.h"

#include <cstring>
#include <vector>

#include "cpu/forced_setting.h"
#include "cpu/mlx_x16.h"
#include "qwen35/mlx_affine.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// On VNNI (no int16 step to saturate) the high nibbles stay in place, 16
// times their codes, and x's block scale for them is divided by 16 (exactly:
// a power of two), which saves a shift per 64 code bytes.
constexpr bool kHighInPlace = HWY_TARGET == HWY_AVX3_DL;

// The int32 lanes of 16 rows, G groups side by side, in vectors of up to 16
// lanes (kParts per group).
using DQ = hn::CappedTag<int32_t, 16>;
constexpr size_t kParts = 16 / hn::MaxLanes(DQ());
constexpr size_t kUnitBytes = kMlxGroupedRows * kMlxUnitBytes;

using DF = hn::Repartition<float, DQ>;
using D8 = hn::Repartition<uint8_t, DQ>;

// Adds part p (lanes n p, ...) of unit u of G groups of 4-bit codes at
// codes[k] (the unit's 512 bytes), with the scales (of type T) of their
// segment at scales[k], to total. A unit is 64 columns: x's blocks 2 u and
// 2 u + 1, a row's code bytes [16 b, 16 b + 16) meeting block b. x in D
// digits, each with dot products of its own.
template <typename T, size_t G, size_t D, bool kPrefetch>
HWY_INLINE void add_unit4(const uint8_t* const* codes, const T* const* scales, const MlxInt8Activations& x,
                          size_t cols, size_t group_size, size_t u, size_t p, size_t ahead,
                          hn::Vec<DF> (&total)[G][kParts]) {
  const DQ dq;
  const D8 d8;
  const DF df;
  const size_t n = hn::Lanes(dq);
  const auto low4 = hn::Set(d8, uint8_t{0x0F});
  hn::Vec<DQ> acc[G][4][D];  // per group: block 0's low and high nibbles, block 1's; per digit
  for (size_t k = 0; k < G; ++k) {
    for (size_t d = 0; d < D; ++d) acc[k][0][d] = acc[k][1][d] = acc[k][2][d] = acc[k][3][d] = hn::Zero(dq);
  }
  HWY_UNROLL(8)
  for (size_t v = 0; v < 8; ++v) {
    const size_t a = v / 4 * 2;
    for (size_t k = 0; k < G; ++k) {
      const uint8_t* run = codes[k] + 64 * v;
      if constexpr (kPrefetch) {
        if (p == 0) prefetch_past(run, ahead);
      }
      const auto bytes = hn::LoadU(d8, run + 4 * n * p);
      const auto low_nibbles = hn::And(bytes, low4);
      const auto high_nibbles = kHighInPlace ? hn::AndNot(low4, bytes) : hn::ShiftRight<4>(bytes);
      for (size_t d = 0; d < D; ++d) {
        const int8_t* xd = x.codes + d * cols + 32 * u + 4 * v;
        acc[k][a][d] = dot4(acc[k][a][d], low_nibbles, x_quad_at(dq, xd));  // x's even elements
        acc[k][a + 1][d] = dot4(acc[k][a + 1][d], high_nibbles, x_quad_at(dq, xd + cols / 2));
      }
    }
  }
  const float x_scale[2] = {x.lane_scales[8 * u], x.lane_scales[8 * u + 4]};
  const float high = kHighInPlace ? 0.0625f : 1.0f;
  for (size_t k = 0; k < G; ++k) {
    hn::Vec<DF> block[2];
    for (size_t b = 0; b < 2; ++b) {
      block[b] = hn::MulAdd(digit_sum<D>(df, acc[k][2 * b + 1]), hn::Set(df, x_scale[b] * high),
                            hn::Mul(digit_sum<D>(df, acc[k][2 * b]), hn::Set(df, x_scale[b])));
    }
    const T* s = scales[k] + n * p;
    if (group_size == 32) {  // a group per block, two per segment
      total[k][p] = hn::MulAdd(block[0], load_f32(df, s), total[k][p]);
      total[k][p] = hn::MulAdd(block[1], load_f32(df, s + kMlxGroupedRows), total[k][p]);
    } else {
      total[k][p] = hn::MulAdd(hn::Add(block[0], block[1]), load_f32(df, s), total[k][p]);
    }
  }
}

// The same for 8-bit codes: a unit is 32 columns, x's block u. On VNNI the
// codes meet x as they are; elsewhere, whose dot-product step saturates int16
// pair sums for codes past 127, as their low and high nibbles, the high ones'
// sums then 16 times over.
template <typename T, size_t G, size_t D, bool kPrefetch>
HWY_INLINE void add_unit8(const uint8_t* const* codes, const T* const* scales, const MlxInt8Activations& x,
                          size_t cols, size_t u, size_t p, size_t ahead, hn::Vec<DF> (&total)[G][kParts]) {
  const DQ dq;
  const D8 d8;
  const DF df;
  const size_t n = hn::Lanes(dq);
  const auto low4 = hn::Set(d8, uint8_t{0x0F});
  hn::Vec<DQ> acc[G][D][2];  // per digit, VNNI: even and odd runs; elsewhere: low and high nibbles
  for (size_t k = 0; k < G; ++k) {
    for (size_t d = 0; d < D; ++d) acc[k][d][0] = acc[k][d][1] = hn::Zero(dq);
  }
  HWY_UNROLL(8)
  for (size_t v = 0; v < 8; ++v) {
    for (size_t k = 0; k < G; ++k) {
      const uint8_t* run = codes[k] + 64 * v;
      if constexpr (kPrefetch) {
        if (p == 0) prefetch_past(run, ahead);
      }
      const auto bytes = hn::LoadU(d8, run + 4 * n * p);
      for (size_t d = 0; d < D; ++d) {
        const auto quad = x_quad_at(dq, x.codes + d * cols + 32 * u + 4 * v);
        if constexpr (HWY_TARGET == HWY_AVX3_DL) {
          acc[k][d][v % 2] = dot4(acc[k][d][v % 2], bytes, quad);
        } else {
          acc[k][d][0] = dot4(acc[k][d][0], hn::And(bytes, low4), quad);
          acc[k][d][1] = dot4(acc[k][d][1], hn::ShiftRight<4>(bytes), quad);
        }
      }
    }
  }
  const auto x_scale = hn::Set(df, x.lane_scales[8 * u]);
  for (size_t k = 0; k < G; ++k) {
    hn::Vec<DQ> sums[D];
    for (size_t d = 0; d < D; ++d) {
      sums[d] = HWY_TARGET == HWY_AVX3_DL ? hn::Add(acc[k][d][0], acc[k][d][1])
                                          : hn::Add(acc[k][d][0], hn::ShiftLeft<4>(acc[k][d][1]));
    }
    total[k][p] = hn::MulAdd(hn::Mul(digit_sum<D>(df, sums), x_scale), load_f32(df, scales[k] + n * p), total[k][p]);
  }
}

// out[16 k + r] = row r of group k (< G) . x (in D digits), for groups of
// Bits-bit codes whose regrouped bytes (layout L) start at grouped[k]. The
// bias terms (each group's biases times x's sum over it as quantized) are
// read as their segment starts and summed apart from the scaled dot
// products, then added, in the order of the layout that kept them in an
// array of their own: the random-weight goldens' argmaxes move with the
// order of those additions (tied-flat-sharded mlx8 with x in 8 bits: 41 of
// 48 agree with float x so, 39 with the bias terms added into the totals).
template <unsigned Bits, typename T, size_t G, size_t D, bool kPrefetch>
HWY_INLINE void group_dots(const uint8_t* const* grouped, const MlxRegroupedLayout& L, const MlxInt8Activations& x,
                           size_t cols, size_t group_size, size_t ahead, float* out) {
  const DF df;
  const size_t n = hn::Lanes(df);
  hn::Vec<DF> total[G][kParts], bias_total[G][kParts];
  for (size_t k = 0; k < G; ++k) {
    for (size_t p = 0; p < kParts; ++p) total[k][p] = bias_total[k][p] = hn::Zero(df);
  }
  for (size_t u = 0; u < cols * Bits / 8 / kMlxUnitBytes; ++u) {
    const size_t segment = u / L.segment_units, unit = u % L.segment_units;
    const uint8_t* codes[G];
    const T* scales[G];
    for (size_t k = 0; k < G; ++k) {
      const uint8_t* at = grouped[k] + segment * L.segment_bytes;
      scales[k] = reinterpret_cast<const T*>(at);
      codes[k] = at + L.codes_offset() + unit * kUnitBytes;
      if (unit != 0) continue;
      // The code runs prefetch the lines of their own bytes ahead; these,
      // the lines of the segment's scales and biases ahead.
      if constexpr (kPrefetch) {
        for (size_t o = 0; o < L.codes_offset(); o += 64) prefetch_past(at, ahead + o);
      }
      const T* biases = scales[k] + L.segment_groups * kMlxGroupedRows;
      for (size_t j = 0; j < L.segment_groups; ++j) {
        const auto x_sum = hn::Set(df, x.group_sums[segment * L.segment_groups + j]);
        for (size_t p = 0; p < kParts; ++p) {
          bias_total[k][p] = hn::MulAdd(load_f32(df, biases + kMlxGroupedRows * j + n * p), x_sum, bias_total[k][p]);
        }
      }
    }
    for (size_t p = 0; p < kParts; ++p) {
      if constexpr (Bits == 4) {
        add_unit4<T, G, D, kPrefetch>(codes, scales, x, cols, group_size, u, p, ahead, total);
      } else {
        add_unit8<T, G, D, kPrefetch>(codes, scales, x, cols, u, p, ahead, total);
      }
    }
  }
  for (size_t k = 0; k < G; ++k) {
    for (size_t p = 0; p < kParts; ++p) hn::StoreU(hn::Add(total[k][p], bias_total[k][p]), df, out + 16 * k + n * p);
  }
}

// The groups of passes p of Bits-bit rows, x in D digits.
template <typename T, unsigned Bits, size_t D>
void groups_t(const simd::MlxRows& w, const MlxInt8Activations& x, const float* base, float* y,
              const RowPasses& p) {
  const MlxRegroupedLayout layout({.bits = Bits, .group_size = static_cast<uint32_t>(w.group_size)}, sizeof(T),
                                  static_cast<uint32_t>(w.cols));
  const auto* grouped = reinterpret_cast<const uint8_t*>(w.codes);
  const size_t ahead = mlx_x16_prefetch_bytes(Bits, D);
  const auto dots = [&](auto groups_n, size_t first, size_t stride, float* out) {
    constexpr size_t G = decltype(groups_n)::value;
    const uint8_t* g[G];
    for (size_t k = 0; k < G; ++k) g[k] = grouped + (first + k * stride) * layout.group_bytes;
    // Without the prefetch instructions where they ask for nothing ahead.
    if (ahead < kMinPrefetchBytes) return group_dots<Bits, T, G, D, false>(g, layout, x, w.cols, w.group_size, 0, out);
    group_dots<Bits, T, G, D, true>(g, layout, x, w.cols, w.group_size, ahead, out);
  };
  for_any_row_bands<kMlxGroupedRows>(p, base, y, dots);
}

template <typename T>
void groups_t(const simd::MlxRows& w, const MlxInt8Activations& x, const float* base, float* y,
              const RowPasses& p) {
  if (x.digits == 1) {
    if (w.bits == 4) return groups_t<T, 4, 1>(w, x, base, y, p);
    return groups_t<T, 8, 1>(w, x, base, y, p);
  }
  if (w.bits == 4) return groups_t<T, 4, kInt24Digits>(w, x, base, y, p);
  groups_t<T, 8, kInt24Digits>(w, x, base, y, p);
}

void MlxX16Groups(const simd::MlxRows& w, const MlxInt8Activations& x, const float* base, float* y,
                  const RowPasses& p) {
  with_mlx_scale_type(w.scale_type, [&](auto scale) { groups_t<decltype(scale)>(w, x, base, y, p); });
}

#else  // HWY_TARGET == HWY_SCALAR: the scalar twin, each row gathered back into its arrays.

void MlxX16Groups(const simd::MlxRows& w, const MlxInt8Activations& x, const float* base, float* y,
                  const RowPasses& p) {
  const size_t row_bytes = w.cols * w.bits / 8, groups = w.cols / w.group_size;
  const size_t scale_bytes = w.scale_type == simd::WeightType::kF32 ? 4 : 2;
  const MlxRegroupedLayout layout({.bits = w.bits, .group_size = static_cast<uint32_t>(w.group_size)}, scale_bytes,
                                  static_cast<uint32_t>(w.cols));
  std::vector<uint32_t> codes(row_bytes / 4);
  std::vector<std::byte> scales(groups * scale_bytes), biases(groups * scale_bytes);
  const auto* grouped = reinterpret_cast<const std::byte*>(w.codes);
  for_each_row(p, [&](size_t g) {
    for (size_t lane = 0; lane < kMlxGroupedRows; ++lane) {
      const auto r = static_cast<uint32_t>(kMlxGroupedRows * g + lane);
      for (size_t byte = 0; byte < row_bytes; byte += 4) {
        std::memcpy(reinterpret_cast<std::byte*>(codes.data()) + byte, grouped + layout.code_byte(r, byte), 4);
      }
      for (size_t i = 0; i < groups; ++i) {
        std::memcpy(scales.data() + i * scale_bytes, grouped + layout.scale_byte(r, i), scale_bytes);
        std::memcpy(biases.data() + i * scale_bytes, grouped + layout.bias_byte(r, i), scale_bytes);
      }
      simd::MlxRows row = w;
      row.codes = codes.data();
      row.scales = scales.data();
      row.biases = biases.data();
      y[r] = (base ? base[r] : 0.0f) + static_cast<float>(mlx_int8_row_dot(row, 0, x));
    }
  });
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace qwen35::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qwen35::cpu {

HWY_EXPORT(MlxX16Groups);

namespace {
ForcedSetting forced_bands, forced_prefetch_bytes;
}  // namespace

size_t default_mlx_x16_bands() { return band_host() == BandHost::kAmdZen4 ? kZen4MlxX16Bands : kMlxX16Bands; }

size_t mlx_x16_bands() { return forced_bands.or_default(default_mlx_x16_bands()); }

size_t mlx_x16_prefetch_bytes(unsigned bits, size_t digits) {
  return forced_prefetch_bytes.or_default(default_mlx_x16_prefetch_bytes(bits, digits, band_host()));
}

void set_mlx_x16_prefetch_bytes(size_t bytes) {
  forced_prefetch_bytes.force_at_most(bytes, "regrouped MLX gemv prefetch distance in bytes", kMaxPrefetchBytes);
}

void set_mlx_x16_bands(size_t bands) { forced_bands.force_one_of(bands, "regrouped MLX gemv bands", {1, 2, 4}); }

void mlx_x16_groups(const simd::MlxRows& w, const MlxInt8Activations& x, const float* base, float* y,
                    const RowPasses& p) {
  HWY_DYNAMIC_DISPATCH(MlxX16Groups)(w, x, base, y, p);
}

}  // namespace qwen35::cpu
#endif  // HWY_ONCE
