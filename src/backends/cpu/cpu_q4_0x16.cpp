// The integer gemv of Q4_0 regrouped 16 rows at a time (Q4_0x16,
// qwen35/gguf_quants.h) against x in 8 bits (cpu/int8_activations.h). Each
// int32 lane of a vector holds one row's four codes, so the dot products of
// 16 rows accumulate side by side, x's four codes broadcast to every lane:
// per block of 32 columns and 16 rows, eight dot-product instructions on
// AVX-512 (two per run, low and high nibbles), one conversion and one
// multiply-add for all 16 rows. Row-major Q4_0 (cpu_gguf_int8.cpp) converts,
// scales and reduces each row's sums on its own, which made it the slowest
// integer GGUF gemv per byte read.
#ifndef HWY_WANT_AVX3_DL
#define HWY_WANT_AVX3_DL 1  // Ice Lake and later: the VNNI instructions
#endif
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/cpu_q4_0x16.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "cpu/int8_dot-inl.h"

#include <cstring>
#include <vector>

#include <algorithm>

#include "cpu/prefetch.h"
#include "cpu/row_bands.h"
#include "cpu/q4_0x16.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::gguf_cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// Up to 16 rows (int32 lanes) per vector: one vector per group on AVX-512,
// two on AVX2, four on 128-bit targets.
using DQ = hn::CappedTag<int32_t, 16>;
using D8 = hn::Repartition<uint8_t, DQ>;
using DS8 = hn::Repartition<int8_t, DQ>;
using DF = hn::Repartition<float, DQ>;
using DH = hn::Rebind<hwy::float16_t, DF>;
constexpr size_t kParts = 16 / hn::MaxLanes(DQ());

// x's codes [4k, 4k + 4) of block i broadcast as one int32 to every lane.
HWY_INLINE hn::Vec<DS8> x_quad(const cpu::Int8Activations& x, size_t i, size_t k) {
  int32_t four;
  std::memcpy(&four, x.q + 32 * i + 4 * k, 4);
  return hn::BitCast(DS8(), hn::Set(DQ(), four));
}

// out[16 k + r] = row r of group k (< G; each `blocks` consecutive Q4_0x16
// blocks from g[k]) . x.
template <size_t G>
HWY_INLINE void group_dots(const GgufBlockQ4_0x16* const* g, const cpu::Int8Activations& x, size_t blocks,
                           float* out) {
  const DQ dq;
  const D8 d8;
  const DF df;
  const size_t n = hn::Lanes(dq);
  const auto low4 = hn::Set(d8, 0x0F);
  hn::Vec<DF> total[G][kParts], offset[G][kParts];
  for (size_t k = 0; k < G; ++k) {
    for (size_t p = 0; p < kParts; ++p) {
      total[k][p] = hn::Zero(df);
      offset[k][p] = hn::Zero(df);
    }
  }
  for (size_t i = 0; i < blocks; ++i) {
    // Runs v hold codes 4v .. 4v + 3 (low nibbles) and 16 + 4v .. (high).
    hn::Vec<DS8> x_low[4], x_high[4];
    for (size_t v = 0; v < 4; ++v) {
      x_low[v] = x_quad(x, i, v);
      x_high[v] = x_quad(x, i, 4 + v);
    }
    const auto x_scale = hn::Set(df, x.scale[i]);
    const auto code_sum = hn::Set(df, x.code_sums[2 * i] + x.code_sums[2 * i + 1]);
    for (size_t k = 0; k < G; ++k) {
      const GgufBlockQ4_0x16& b = g[k][i];
      for (size_t line = 0; line < sizeof(b); line += 64) cpu::prefetch_past(&b, kQ4_0x16PrefetchBytes + line);
      for (size_t p = 0; p < kParts; ++p) {
        auto low = hn::Zero(dq), high = hn::Zero(dq);
        for (size_t v = 0; v < 4; ++v) {
          const auto codes = hn::LoadU(d8, b.qs + 64 * v + 4 * n * p);
          low = cpu::HWY_NAMESPACE::dot4(low, hn::And(codes, low4), x_low[v]);
          high = cpu::HWY_NAMESPACE::dot4(high, hn::ShiftRight<4>(codes), x_high[v]);
        }
        const auto d = hn::PromoteTo(df, hn::LoadU(DH(), reinterpret_cast<const hwy::float16_t*>(b.d) + n * p));
        const auto factor = hn::Mul(d, x_scale);
        total[k][p] = hn::MulAdd(hn::ConvertTo(df, hn::Add(low, high)), factor, total[k][p]);
        // The codes' offset -8, through x's code sum.
        offset[k][p] = hn::MulAdd(factor, code_sum, offset[k][p]);
      }
    }
  }
  for (size_t k = 0; k < G; ++k) {
    for (size_t p = 0; p < kParts; ++p) {
      hn::StoreU(hn::MulAdd(hn::Set(df, -8.0f), offset[k][p], total[k][p]), df, out + 16 * k + n * p);
    }
  }
}

// The groups of passes p (cpu/row_bands.h, a group per row) in kQ4_0x16Bands bands.
void Q4_0x16Groups(const GgufBlockQ4_0x16* w, const cpu::Int8Activations& x, size_t cols, const float* base,
                   float* y, const cpu::RowPasses& p) {
  const size_t blocks = cols / 32;
  const auto store = [&](size_t group, const float* out) {
    for (size_t r = 0; r < 16; ++r) y[16 * group + r] = (base ? base[16 * group + r] : 0.0f) + out[r];
  };
  constexpr size_t M = kQ4_0x16Bands;
  const size_t band = (p.end - p.begin) / M;
  for (size_t j = p.first; j < std::min(p.last, band); ++j) {
    const GgufBlockQ4_0x16* g[M];
    for (size_t k = 0; k < M; ++k) g[k] = w + (p.begin + k * band + j) * blocks;
    HWY_ALIGN float out[16 * M];
    group_dots<M>(g, x, blocks, out);
    for (size_t k = 0; k < M; ++k) store(p.begin + k * band + j, out + 16 * k);
  }
  for (size_t j = std::max(p.first, band); j < p.last; ++j) {
    const size_t group = p.begin + M * band + (j - band);
    const GgufBlockQ4_0x16* g = w + group * blocks;
    HWY_ALIGN float out[16];
    group_dots<1>(&g, x, blocks, out);
    store(group, out);
  }
}

#else  // HWY_TARGET == HWY_SCALAR: the scalar twin, each row gathered back into Q4_0.

void Q4_0x16Groups(const GgufBlockQ4_0x16* w, const cpu::Int8Activations& x, size_t cols, const float* base,
                   float* y, const cpu::RowPasses& p) {
  const size_t blocks = cols / 32;
  std::vector<GgufBlockQ4_0> row(blocks);
  cpu::for_each_row(p, [&](size_t g) {
    for (size_t lane = 0; lane < 16; ++lane) {
      for (size_t i = 0; i < blocks; ++i) row[i] = q4_0x16_row_block(w[g * blocks + i], lane);
      const double dot = cpu::int8_row_dot(DType::kQ4_0, reinterpret_cast<const std::byte*>(row.data()), x, cols);
      const size_t r = 16 * g + lane;
      y[r] = (base ? base[r] : 0.0f) + static_cast<float>(dot);
    }
  });
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace qwen35::gguf_cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qwen35::gguf_cpu {

HWY_EXPORT(Q4_0x16Groups);

void run_q4_0x16_groups(const GgufBlockQ4_0x16* w, const cpu::Int8Activations& x, size_t cols, const float* base,
                        float* y, const cpu::RowPasses& p) {
  HWY_DYNAMIC_DISPATCH(Q4_0x16Groups)(w, x, cols, base, y, p);
}

}  // namespace qwen35::gguf_cpu
#endif  // HWY_ONCE
