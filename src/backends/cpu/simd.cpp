// Highway implementations of the primitives in simd.h, but for attention's
// (attention_simd.cpp). This file is compiled once per target by
// foreach_target.h; the part under HWY_ONCE builds the dispatch tables and the
// plain functions the kernels call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/simd.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
#include "cpu/simd_common-inl.h"
#include "cpu/mlx_scales-inl.h"
#include "cpu/nibbles-inl.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu/prefetch.h"
#include "cpu/row_bands.h"
#include "cpu/simd.h"
#include "qwen35/dtype.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::simd::HWY_NAMESPACE {
// hn, DF, VF, load_f32, to_f32 and sum: simd_common-inl.h.

// Rows a[0, K) dotted with b, sharing each load of b, each row's line
// prefetch_bytes ahead prefetched (none if 0). Each row is summed as one
// alone is (four accumulators, the same order), so a row's result does not
// depend on how many rows were computed with it, nor on how threads split a
// matrix into bands.
template <size_t K, typename T>
void dot_rows_t(const T* const (&a)[K], const float* b, size_t count, float* out, size_t prefetch_bytes = 0) {
  const DF df;
  const size_t n = hn::Lanes(df);
  VF s[K][4];
  for (auto& row : s) {
    for (VF& v : row) v = hn::Zero(df);
  }
  const size_t step_bytes = 4 * n * sizeof(T);
  size_t i = 0;
  for (; i + 4 * n <= count; i += 4 * n) {
    // A prefetch per 64 bytes of each row: on 128-bit targets a step of
    // 16-bit weights is 32 bytes, and only every other step asks.
    if (prefetch_bytes != 0 && (i * sizeof(T)) % 64 < step_bytes) {
      for (size_t k = 0; k < K; ++k) {
        for (size_t line = 0; line < step_bytes; line += 64) cpu::prefetch_past(a[k] + i, prefetch_bytes + line);
      }
    }
    for (size_t j = 0; j < 4; ++j) {
      const VF bj = hn::LoadU(df, b + i + j * n);
      for (size_t k = 0; k < K; ++k) s[k][j] = hn::MulAdd(load_f32(df, a[k] + i + j * n), bj, s[k][j]);
    }
  }
  for (; i + n <= count; i += n) {
    const VF bi = hn::LoadU(df, b + i);
    for (size_t k = 0; k < K; ++k) s[k][0] = hn::MulAdd(load_f32(df, a[k] + i), bi, s[k][0]);
  }
  for (size_t k = 0; k < K; ++k) {
    float total = sum(df, hn::Add(hn::Add(s[k][0], s[k][1]), hn::Add(s[k][2], s[k][3])));
    for (size_t j = i; j < count; ++j) total += to_f32(a[k][j]) * b[j];
    out[k] = total;
  }
}

template <typename T>
float dot_t(const T* a, const float* b, size_t count) {
  const T* const rows[1] = {a};
  float out;
  dot_rows_t<1>(rows, b, count, &out);
  return out;
}

// Rows one after another, each a dot product alone: the bits gemv_bands_t
// must give every row, however the rows are banded.
template <typename T>
void gemv_rows_t(const T* w, const float* x, const float* base, float* y, size_t row_begin, size_t row_end,
                 size_t cols) {
  for (size_t r = row_begin; r < row_end; ++r) y[r] = (base ? base[r] : 0.0f) + dot_t(w + r * cols, x, cols);
}

// The rows of passes p in 1, 2 or 4 bands (cpu/row_bands.h: dense_gemv_bands),
// K rows side by side sharing x's loads, each band one read stream prefetched
// dense_gemv_prefetch_bytes() ahead. A row's result is gemv_rows_t's to the bit.
template <typename T>
void gemv_bands_t(const T* w, const float* x, const float* base, float* y, const cpu::RowPasses& p, size_t cols) {
  const size_t prefetch_bytes = cpu::dense_gemv_prefetch_bytes();
  const auto dot = [&](auto rows_constant, size_t first, size_t stride, float* out) {
    constexpr size_t K = decltype(rows_constant)::value;
    const T* rows[K];
    for (size_t k = 0; k < K; ++k) rows[k] = w + (first + k * stride) * cols;
    dot_rows_t<K>(rows, x, cols, out, prefetch_bytes);
  };
  cpu::for_any_row_bands(p, base, y, dot);
}

template <typename T>
void scale_add_t(const T* x, float keep, float p, float* y, size_t count) {
  const DF df;
  const size_t n = hn::Lanes(df);
  const VF vk = hn::Set(df, keep), vp = hn::Set(df, p);
  size_t i = 0;
  for (; i + n <= count; i += n) {
    hn::StoreU(hn::MulAdd(load_f32(df, x + i), vp, hn::Mul(hn::LoadU(df, y + i), vk)), df, y + i);
  }
  for (; i < count; ++i) y[i] = y[i] * keep + p * to_f32(x[i]);
}


float MaxValue(const float* x, size_t count) {
  const DF df;
  const size_t n = hn::Lanes(df);
  float m = -std::numeric_limits<float>::infinity();
  size_t i = 0;
  if (count >= n) {
    VF v = hn::LoadU(df, x);
    for (i = n; i + n <= count; i += n) v = hn::Max(v, hn::LoadU(df, x + i));
    m = hn::GetLane(hn::MaxOfLanes(df, v));
  }
  for (; i < count; ++i) m = std::max(m, x[i]);
  return m;
}

float ExpShifted(float* x, size_t count, float scale, float shift) {
  const DF df;
  const size_t n = hn::Lanes(df);
  const VF vscale = hn::Set(df, scale), vshift = hn::Set(df, shift);
  VF total = hn::Zero(df);
  size_t i = 0;
  for (; i + n <= count; i += n) {
    const VF e = hn::Exp(df, hn::MulSub(hn::LoadU(df, x + i), vscale, vshift));
    hn::StoreU(e, df, x + i);
    total = hn::Add(total, e);
  }
  float s = sum(df, total);
  for (; i < count; ++i) s += x[i] = std::exp(std::fma(x[i], scale, -shift));
  return s;
}

void GemvRowsF32(const void* w, const float* x, const float* base, float* y, size_t r0, size_t r1, size_t cols) {
  gemv_rows_t(static_cast<const float*>(w), x, base, y, r0, r1, cols);
}
void GemvRowsBF16(const void* w, const float* x, const float* base, float* y, size_t r0, size_t r1, size_t cols) {
  gemv_rows_t(static_cast<const hwy::bfloat16_t*>(w), x, base, y, r0, r1, cols);
}
void GemvRowsF16(const void* w, const float* x, const float* base, float* y, size_t r0, size_t r1, size_t cols) {
  gemv_rows_t(static_cast<const hwy::float16_t*>(w), x, base, y, r0, r1, cols);
}
void GemvBandsF32(const void* w, const float* x, const float* base, float* y, const cpu::RowPasses& p,
                  size_t cols) {
  gemv_bands_t(static_cast<const float*>(w), x, base, y, p, cols);
}
void GemvBandsBF16(const void* w, const float* x, const float* base, float* y, const cpu::RowPasses& p,
                   size_t cols) {
  gemv_bands_t(static_cast<const hwy::bfloat16_t*>(w), x, base, y, p, cols);
}
void GemvBandsF16(const void* w, const float* x, const float* base, float* y, const cpu::RowPasses& p,
                  size_t cols) {
  gemv_bands_t(static_cast<const hwy::float16_t*>(w), x, base, y, p, cols);
}
float DotF32(const void* a, const float* b, size_t n) { return dot_t(static_cast<const float*>(a), b, n); }
float DotBF16(const void* a, const float* b, size_t n) { return dot_t(static_cast<const hwy::bfloat16_t*>(a), b, n); }
float DotF16(const void* a, const float* b, size_t n) { return dot_t(static_cast<const hwy::float16_t*>(a), b, n); }
void ScaleAddF32(const void* x, float keep, float p, float* y, size_t n) {
  scale_add_t(static_cast<const float*>(x), keep, p, y, n);
}
void ScaleAddBF16(const void* x, float keep, float p, float* y, size_t n) {
  scale_add_t(static_cast<const hwy::bfloat16_t*>(x), keep, p, y, n);
}
void ScaleAddF16(const void* x, float keep, float p, float* y, size_t n) {
  scale_add_t(static_cast<const hwy::float16_t*>(x), keep, p, y, n);
}

float SumSquares(const float* x, size_t count) { return dot_t(x, x, count); }

void ScaleMul(const float* x, float scale, const float* w, float* y, size_t count) {
  const DF df;
  const size_t n = hn::Lanes(df);
  const VF vs = hn::Set(df, scale);
  size_t i = 0;
  for (; i + n <= count; i += n) {
    hn::StoreU(hn::Mul(hn::Mul(hn::LoadU(df, x + i), vs), hn::LoadU(df, w + i)), df, y + i);
  }
  for (; i < count; ++i) y[i] = x[i] * scale * w[i];
}

// 1 + exp(-x): sigmoid(x) = 1 / it, silu(x) = x / it.
HWY_INLINE VF one_plus_exp_neg(DF df, VF x) { return hn::Add(hn::Set(df, 1.0f), hn::Exp(df, hn::Neg(x))); }

void SigmoidMul(const float* x, const float* gate, float* y, size_t count) {
  const DF df;
  const size_t n = hn::Lanes(df);
  const VF one = hn::Set(df, 1.0f);
  size_t i = 0;
  for (; i + n <= count; i += n) {
    const VF sigmoid = hn::Div(one, one_plus_exp_neg(df, hn::LoadU(df, gate + i)));
    hn::StoreU(hn::Mul(hn::LoadU(df, x + i), sigmoid), df, y + i);
  }
  for (; i < count; ++i) y[i] = x[i] * (1.0f / (1.0f + std::exp(-gate[i])));
}

void SiluMul(const float* gate, const float* up, float* y, size_t count) {
  const DF df;
  const size_t n = hn::Lanes(df);
  size_t i = 0;
  for (; i + n <= count; i += n) {
    const VF g = hn::LoadU(df, gate + i);
    const VF silu = hn::Div(g, one_plus_exp_neg(df, g));
    hn::StoreU(hn::Mul(silu, hn::LoadU(df, up + i)), df, y + i);
  }
  for (; i < count; ++i) y[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

// Channels ahead that Conv4Silu asks for in each of its five read streams (the
// weights, 4 KB on; the three history rows and u, 1 KB on). Run on one thread
// (196 KB at the 0.8B shape: a solo launch), the kernel read its layer from
// DRAM at 17 GB/s without them (BM_ConvSiluL2Norm 10.8-10.9 us), 25-28 with
// them (6.9-7.9 us); 128 or 512 channels ahead read slower (384 the same),
// and asking for the first 256 channels of every stream before the loop as
// well took 8.2-9.1 us.
// In decode the launch gained less (about 11 -> 10 us, `qwen35 bench
// --profile`): there u comes from the gemv just before, half of it from the
// other core's cache.
constexpr size_t kConvPrefetchChannels = 256;

// The width-4 causal conv of Gated DeltaNet for channels [begin, end): weights
// [C, 4] de-interleaved into four vectors, the three history rows of `state`
// ([3, C]) and u, then SiLU, and the history shifted by one row.
void Conv4Silu(const float* u, float* state, const float* w, float* out, size_t begin, size_t end, size_t conv_dim) {
  const DF df;
  const size_t n = hn::Lanes(df);
  float* s0 = state;
  float* s1 = state + conv_dim;
  float* s2 = state + 2 * conv_dim;
  constexpr size_t kAhead = kConvPrefetchChannels * sizeof(float);  // bytes, in a row of [C]
  size_t c = begin;
  for (; c + n <= end; c += n) {
    // Lines already asked for (a step narrower than a line) cost a prefetch each, nothing more.
    for (size_t line = 0; line < 4 * n * sizeof(float); line += 64) cpu::prefetch_past(w + 4 * c, 4 * kAhead + line);
    for (const float* row : {static_cast<const float*>(s0), static_cast<const float*>(s1),
                             static_cast<const float*>(s2), u}) {
      cpu::prefetch_past(row + c, kAhead);
    }
    VF w0, w1, w2, w3;
    hn::LoadInterleaved4(df, w + 4 * c, w0, w1, w2, w3);
    const VF h0 = hn::LoadU(df, s0 + c), h1 = hn::LoadU(df, s1 + c), h2 = hn::LoadU(df, s2 + c);
    const VF x = hn::LoadU(df, u + c);
    const VF acc = hn::MulAdd(w2, h2, hn::MulAdd(w1, h1, hn::MulAdd(w0, h0, hn::Mul(w3, x))));
    hn::StoreU(hn::Div(acc, one_plus_exp_neg(df, acc)), df, out + c);
    hn::StoreU(h1, df, s0 + c);
    hn::StoreU(h2, df, s1 + c);
    hn::StoreU(x, df, s2 + c);
  }
  for (; c < end; ++c) {
    const float* wc = w + 4 * c;
    const float acc = wc[3] * u[c] + wc[0] * s0[c] + wc[1] * s1[c] + wc[2] * s2[c];
    out[c] = acc / (1.0f + std::exp(-acc));
    s0[c] = s1[c];
    s1[c] = s2[c];
    s2[c] = u[c];
  }
}

// Per value channel c, its column s (dk floats, in L1 after the first read):
// sk = s.k, sq = s.q; delta = beta (v_c - decay sk); s = decay s + delta k;
// out_c = decay sq + delta (k.q).
void GdnHead(float* state, const float* q, const float* k, const float* v, float decay, float beta, float* out,
             size_t dk, size_t dv) {
  const DF df;
  const size_t n = hn::Lanes(df);
  const float kq = dot_t(k, q, dk);
  const VF vdecay = hn::Set(df, decay);
  for (size_t c = 0; c < dv; ++c) {
    float* s = state + c * dk;
    VF sk = hn::Zero(df), sq = hn::Zero(df);
    size_t i = 0;
    for (; i + n <= dk; i += n) {
      const VF sv = hn::LoadU(df, s + i);
      sk = hn::MulAdd(sv, hn::LoadU(df, k + i), sk);
      sq = hn::MulAdd(sv, hn::LoadU(df, q + i), sq);
    }
    float sk_sum = sum(df, sk), sq_sum = sum(df, sq);
    for (size_t t = i; t < dk; ++t) {
      sk_sum += s[t] * k[t];
      sq_sum += s[t] * q[t];
    }
    const float delta = beta * (v[c] - decay * sk_sum);
    const VF vdelta = hn::Set(df, delta);
    for (i = 0; i + n <= dk; i += n) {
      hn::StoreU(hn::MulAdd(hn::LoadU(df, s + i), vdecay, hn::Mul(vdelta, hn::LoadU(df, k + i))), df, s + i);
    }
    for (; i < dk; ++i) s[i] = decay * s[i] + delta * k[i];
    out[c] = decay * sq_sum + delta * kq;
  }
}

float ReadStreams(const float* p, size_t count, size_t streams, size_t prefetch_floats) {
  const DF df;
  const size_t n = hn::Lanes(df);
  const size_t part = count / streams;
  VF acc[8] = {hn::Zero(df), hn::Zero(df), hn::Zero(df), hn::Zero(df),
               hn::Zero(df), hn::Zero(df), hn::Zero(df), hn::Zero(df)};
  size_t i = 0;
  for (; i + n <= part; i += n) {
    for (size_t s = 0; s < streams; ++s) {
      if (prefetch_floats) cpu::prefetch_past(p + s * part + i, prefetch_floats * sizeof(float));
      acc[s] = hn::Add(acc[s], hn::LoadU(df, p + s * part + i));
    }
  }
  float total = 0;
  for (size_t s = 0; s < streams; ++s) {
    total += sum(df, acc[s]);
    for (size_t t = i; t < part; ++t) total += p[s * part + t];
  }
  return total;
}

using cpu::HWY_NAMESPACE::for_each_mlx_pass;
using cpu::HWY_NAMESPACE::for_each_mlx_row;
using cpu::HWY_NAMESPACE::kMlxCodePrefetchBytes;
using cpu::HWY_NAMESPACE::nibble_table;
using cpu::HWY_NAMESPACE::nibble_values;
using cpu::HWY_NAMESPACE::with_mlx_scale_type;

// MLX affine rows: codes widened u8 -> u32 -> f32 in registers (4-bit codes
// split by a shift and read by nibble_values, matched by x in code order), two
// vector accumulators per group (even and odd vectors, or low and high
// nibbles: two FMA chains) scaled once at the group's end, and the bias term
// from the precomputed group sums of x. At most 16 lanes, so that a vector
// never straddles the 16 bytes of a 4-bit block of 32 codes. K rows at a time,
// a vector of each in turn (K bands of rows: K read streams per task, x's
// loads shared): the kernel is bound by its widening shuffles, which the rows
// do not share, but one row after another read DRAM as if its arithmetic and
// its reads took turns (mlx_gemv_bands). A row's scales are converted to
// floats and its bias term summed before its codes are read (mlx_scales-inl.h),
// and the codes 4 KB on are prefetched.
template <unsigned Bits, size_t K>
HWY_INLINE void mlx_dot_rows(const MlxRows& w, const size_t* rows, const float* xc, const float* const* scale,
                             float* out) {
  const hn::CappedTag<float, 16> df;
  const hn::Rebind<uint32_t, decltype(df)> du;
  const hn::Rebind<int32_t, decltype(df)> di;
  const hn::Rebind<uint8_t, decltype(df)> d8;
  const size_t n = hn::Lanes(df);
  const size_t groups = w.cols / w.group_size, row_bytes = w.cols * Bits / 8;
  const auto widen = [&](auto codes) { return hn::ConvertTo(df, hn::BitCast(di, codes)); };
  const uint8_t* q[K];
  hn::Vec<decltype(df)> total[K];
  for (size_t k = 0; k < K; ++k) {
    q[k] = reinterpret_cast<const uint8_t*>(w.codes) + rows[k] * row_bytes;
    for (size_t line = 0; line < row_bytes; line += 64) cpu::prefetch_past(q[k], kMlxCodePrefetchBytes + line);
    total[k] = hn::Zero(df);
  }
  for (size_t g = 0; g < groups; ++g) {
    const size_t begin = g * w.group_size, end = begin + w.group_size;
    hn::Vec<decltype(df)> even[K], odd[K];
    for (size_t k = 0; k < K; ++k) even[k] = odd[k] = hn::Zero(df);
    if constexpr (Bits == 8) {
      // Group sizes (32, 64, 128) are multiples of 2n: n is at most 16.
      for (size_t i = begin; i < end; i += 2 * n) {
        const auto x_even = hn::LoadU(df, xc + i), x_odd = hn::LoadU(df, xc + i + n);
        for (size_t k = 0; k < K; ++k) {
          even[k] = hn::MulAdd(widen(hn::PromoteTo(du, hn::LoadU(d8, q[k] + i))), x_even, even[k]);
          odd[k] = hn::MulAdd(widen(hn::PromoteTo(du, hn::LoadU(d8, q[k] + i + n))), x_odd, odd[k]);
        }
      }
    } else {
      const auto table = nibble_table<0>();
      for (size_t block = begin; block < end; block += 32) {
        for (size_t j = 0; j < 16; j += n) {
          const auto x_low = hn::LoadU(df, xc + block + j), x_high = hn::LoadU(df, xc + block + 16 + j);
          for (size_t k = 0; k < K; ++k) {
            const auto codes = hn::PromoteTo(du, hn::LoadU(d8, q[k] + block / 2 + j));
            even[k] = hn::MulAdd(nibble_values<0>(codes, table), x_low, even[k]);
            odd[k] = hn::MulAdd(nibble_values<0>(hn::ShiftRight<4>(codes), table), x_high, odd[k]);
          }
        }
      }
    }
    for (size_t k = 0; k < K; ++k) total[k] = hn::MulAdd(hn::Add(even[k], odd[k]), hn::Set(df, scale[k][g]), total[k]);
  }
  for (size_t k = 0; k < K; ++k) out[k] = hn::GetLane(hn::SumOfLanes(df, total[k]));
}

template <unsigned Bits, typename T>
void mlx_rows_t(const MlxRows& w, const float* xc, const float* x_sums, const float* base, float* y, size_t row_begin,
                size_t row_end) {
  for_each_mlx_row(hn::CappedTag<float, 16>(), static_cast<const T*>(w.scales), static_cast<const T*>(w.biases), x_sums,
                   w.cols / w.group_size, row_begin, row_end, [&](size_t r, const float* scales, float bias_term) {
                     float dot;
                     mlx_dot_rows<Bits, 1>(w, &r, xc, &scales, &dot);
                     y[r] = (base ? base[r] : 0.0f) + dot + bias_term;
                   });
}

template <unsigned Bits, typename T, size_t M>
void mlx_bands_t(const MlxRows& w, const float* xc, const float* x_sums, const float* base, float* y,
                 const cpu::RowPasses& p) {
  for_each_mlx_pass<M>(hn::CappedTag<float, 16>(), static_cast<const T*>(w.scales), static_cast<const T*>(w.biases),
                       x_sums, w.cols / w.group_size, p,
                       [&](size_t count, const size_t* rows, const float* const* scales, const float* bias_terms) {
                         float dot[M] = {};  // count < M only with one row (GCC cannot see it)
                         if (count == M) {
                           mlx_dot_rows<Bits, M>(w, rows, xc, scales, dot);
                         } else {
                           mlx_dot_rows<Bits, 1>(w, rows, xc, scales, dot);
                         }
                         for (size_t k = 0; k < count; ++k) {
                           y[rows[k]] = (base ? base[rows[k]] : 0.0f) + dot[k] + bias_terms[k];
                         }
                       });
}

template <unsigned Bits>
void mlx_rows_for(const MlxRows& w, const float* xc, const float* xs, const float* base, float* y, size_t r0,
                  size_t r1) {
  with_mlx_scale_type(w.scale_type, [&](auto scale) { mlx_rows_t<Bits, decltype(scale)>(w, xc, xs, base, y, r0, r1); });
}

template <unsigned Bits>
void mlx_bands_for(const MlxRows& w, const float* xc, const float* xs, const float* base, float* y,
                   const cpu::RowPasses& p) {
  with_mlx_scale_type(w.scale_type, [&](auto scale) {
    if (p.bands == 4) return mlx_bands_t<Bits, decltype(scale), 4>(w, xc, xs, base, y, p);
    mlx_bands_t<Bits, decltype(scale), 2>(w, xc, xs, base, y, p);
  });
}

void MlxGemvRows4(const MlxRows& w, const float* xc, const float* xs, const float* base, float* y, size_t r0,
                  size_t r1) {
  mlx_rows_for<4>(w, xc, xs, base, y, r0, r1);
}
void MlxGemvRows8(const MlxRows& w, const float* xc, const float* xs, const float* base, float* y, size_t r0,
                  size_t r1) {
  mlx_rows_for<8>(w, xc, xs, base, y, r0, r1);
}
void MlxGemvBands4(const MlxRows& w, const float* xc, const float* xs, const float* base, float* y,
                   const cpu::RowPasses& p) {
  mlx_bands_for<4>(w, xc, xs, base, y, p);
}
void MlxGemvBands8(const MlxRows& w, const float* xc, const float* xs, const float* base, float* y,
                   const cpu::RowPasses& p) {
  mlx_bands_for<8>(w, xc, xs, base, y, p);
}

int64_t Target() { return HWY_TARGET; }

}  // namespace qwen35::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qwen35::simd {

HWY_EXPORT(GemvRowsF32);
HWY_EXPORT(GemvRowsBF16);
HWY_EXPORT(GemvRowsF16);
HWY_EXPORT(GemvBandsF32);
HWY_EXPORT(GemvBandsBF16);
HWY_EXPORT(GemvBandsF16);
HWY_EXPORT(DotF32);
HWY_EXPORT(DotBF16);
HWY_EXPORT(DotF16);
HWY_EXPORT(ScaleAddF32);
HWY_EXPORT(ScaleAddBF16);
HWY_EXPORT(ScaleAddF16);
HWY_EXPORT(MaxValue);
HWY_EXPORT(ExpShifted);
HWY_EXPORT(SumSquares);
HWY_EXPORT(ScaleMul);
HWY_EXPORT(SiluMul);
HWY_EXPORT(SigmoidMul);
HWY_EXPORT(Conv4Silu);
HWY_EXPORT(GdnHead);
HWY_EXPORT(ReadStreams);
HWY_EXPORT(MlxGemvRows4);
HWY_EXPORT(MlxGemvRows8);
HWY_EXPORT(MlxGemvBands4);
HWY_EXPORT(MlxGemvBands8);
HWY_EXPORT(Target);

void mlx_prepare_x(unsigned bits, const float* x, size_t cols, size_t group_size, float* x_coded, float* x_sums) {
  for (size_t i = 0; i < cols; ++i) {
    if (bits == 4) {
      const size_t block = i / 32 * 32, k = i % 32;
      x_coded[block + (k % 2) * 16 + k / 2] = x[i];
    } else {
      x_coded[i] = x[i];
    }
  }
  for (size_t g = 0; g < cols / group_size; ++g) {
    float s = 0;
    for (size_t k = 0; k < group_size; ++k) s += x[g * group_size + k];
    x_sums[g] = s;
  }
}

void mlx_gemv_rows(const MlxRows& w, const float* x_coded, const float* x_sums, const float* base, float* y,
                   size_t row_begin, size_t row_end) {
  if (w.bits == 4) return HWY_DYNAMIC_DISPATCH(MlxGemvRows4)(w, x_coded, x_sums, base, y, row_begin, row_end);
  return HWY_DYNAMIC_DISPATCH(MlxGemvRows8)(w, x_coded, x_sums, base, y, row_begin, row_end);
}

void mlx_gemv_bands(const MlxRows& w, const float* x_coded, const float* x_sums, const float* base, float* y,
                    const cpu::RowPasses& passes) {
  if (w.bits == 4) return HWY_DYNAMIC_DISPATCH(MlxGemvBands4)(w, x_coded, x_sums, base, y, passes);
  return HWY_DYNAMIC_DISPATCH(MlxGemvBands8)(w, x_coded, x_sums, base, y, passes);
}

void gemv_rows(WeightType type, const void* w, const float* x, const float* base, float* y, size_t row_begin,
               size_t row_end, size_t cols) {
  switch (type) {
    case WeightType::kF32: return HWY_DYNAMIC_DISPATCH(GemvRowsF32)(w, x, base, y, row_begin, row_end, cols);
    case WeightType::kBF16: return HWY_DYNAMIC_DISPATCH(GemvRowsBF16)(w, x, base, y, row_begin, row_end, cols);
    case WeightType::kF16: return HWY_DYNAMIC_DISPATCH(GemvRowsF16)(w, x, base, y, row_begin, row_end, cols);
  }
}

void gemv_bands(WeightType type, const void* w, const float* x, const float* base, float* y,
                const cpu::RowPasses& passes, size_t cols) {
  switch (type) {
    case WeightType::kF32: return HWY_DYNAMIC_DISPATCH(GemvBandsF32)(w, x, base, y, passes, cols);
    case WeightType::kBF16: return HWY_DYNAMIC_DISPATCH(GemvBandsBF16)(w, x, base, y, passes, cols);
    case WeightType::kF16: return HWY_DYNAMIC_DISPATCH(GemvBandsF16)(w, x, base, y, passes, cols);
  }
}

float dot(WeightType type, const void* a, const float* b, size_t n) {
  switch (type) {
    case WeightType::kF32: return HWY_DYNAMIC_DISPATCH(DotF32)(a, b, n);
    case WeightType::kBF16: return HWY_DYNAMIC_DISPATCH(DotBF16)(a, b, n);
    case WeightType::kF16: return HWY_DYNAMIC_DISPATCH(DotF16)(a, b, n);
  }
  return 0;
}

void scale_add(WeightType type, const void* x, float keep, float p, float* y, size_t n) {
  switch (type) {
    case WeightType::kF32: return HWY_DYNAMIC_DISPATCH(ScaleAddF32)(x, keep, p, y, n);
    case WeightType::kBF16: return HWY_DYNAMIC_DISPATCH(ScaleAddBF16)(x, keep, p, y, n);
    case WeightType::kF16: return HWY_DYNAMIC_DISPATCH(ScaleAddF16)(x, keep, p, y, n);
  }
}

float exp_shifted(float* x, size_t n, float scale, float shift) {
  return HWY_DYNAMIC_DISPATCH(ExpShifted)(x, n, scale, shift);
}
float max_value(const float* x, size_t n) { return HWY_DYNAMIC_DISPATCH(MaxValue)(x, n); }

float sum_squares(const float* x, size_t n) { return HWY_DYNAMIC_DISPATCH(SumSquares)(x, n); }
void scale_mul(const float* x, float scale, const float* w, float* y, size_t n) {
  HWY_DYNAMIC_DISPATCH(ScaleMul)(x, scale, w, y, n);
}
void silu_mul(const float* gate, const float* up, float* y, size_t n) { HWY_DYNAMIC_DISPATCH(SiluMul)(gate, up, y, n); }
void sigmoid_mul(const float* x, const float* gate, float* y, size_t n) {
  HWY_DYNAMIC_DISPATCH(SigmoidMul)(x, gate, y, n);
}
void conv4_silu(const float* u, float* state, const float* w, float* out, size_t begin, size_t end, size_t conv_dim) {
  HWY_DYNAMIC_DISPATCH(Conv4Silu)(u, state, w, out, begin, end, conv_dim);
}
void gdn_head(float* state, const float* q, const float* k, const float* v, float decay, float beta, float* out,
              size_t dk, size_t dv) {
  HWY_DYNAMIC_DISPATCH(GdnHead)(state, q, k, v, decay, beta, out, dk, dv);
}

float read_streams(const float* p, size_t n, size_t streams, size_t prefetch_bytes) {
  return HWY_DYNAMIC_DISPATCH(ReadStreams)(p, n, std::clamp<size_t>(streams, 1, 8), prefetch_bytes / sizeof(float));
}

std::string current_target() { return hwy::TargetName(HWY_DYNAMIC_DISPATCH(Target)()); }
std::string target_name(int64_t target) { return hwy::TargetName(target); }
std::vector<int64_t> available_targets() { return hwy::SupportedAndGeneratedTargets(); }

void force_target(int64_t target) {
  hwy::SetSupportedTargetsForTest(target);
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
}

}  // namespace qwen35::simd
#endif  // HWY_ONCE
