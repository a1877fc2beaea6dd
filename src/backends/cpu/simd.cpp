// Highway implementations of the primitives in simd.h. This file is compiled
// once per target by foreach_target.h; the part under HWY_ONCE builds the
// dispatch tables and the plain functions the kernels call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/simd.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
#include "cpu/float_loads-inl.h"
#include "cpu/mlx_scales-inl.h"
#include "cpu/nibbles-inl.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu/simd.h"
#include "qwen35/dtype.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

using cpu::HWY_NAMESPACE::load_f32;
using cpu::HWY_NAMESPACE::to_f32;

HWY_INLINE float sum(DF df, VF v) { return hn::GetLane(hn::SumOfLanes(df, v)); }

// `bytes` past p, for prefetching: the address may lie past the matrix (its last
// rows), which a prefetch tolerates, so it is formed as an integer.
HWY_INLINE const void* ahead(const void* p, size_t bytes) {
  return reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(p) + bytes);
}

// Prefetches the lines of the 2n elements at p, `bytes` on (nothing when 0).
template <typename T>
HWY_INLINE void prefetch_step(const T* p, size_t bytes, size_t n) {
  if (bytes == 0) return;
  for (size_t line = 0; line < 2 * n * sizeof(T); line += 64) hwy::Prefetch(ahead(p, bytes + line));
}

template <typename T>
float dot_t(const T* a, const float* b, size_t count) {
  const DF df;
  const size_t n = hn::Lanes(df);
  VF s0 = hn::Zero(df), s1 = hn::Zero(df), s2 = hn::Zero(df), s3 = hn::Zero(df);
  size_t i = 0;
  for (; i + 4 * n <= count; i += 4 * n) {
    s0 = hn::MulAdd(load_f32(df, a + i), hn::LoadU(df, b + i), s0);
    s1 = hn::MulAdd(load_f32(df, a + i + n), hn::LoadU(df, b + i + n), s1);
    s2 = hn::MulAdd(load_f32(df, a + i + 2 * n), hn::LoadU(df, b + i + 2 * n), s2);
    s3 = hn::MulAdd(load_f32(df, a + i + 3 * n), hn::LoadU(df, b + i + 3 * n), s3);
  }
  for (; i + n <= count; i += n) s0 = hn::MulAdd(load_f32(df, a + i), hn::LoadU(df, b + i), s0);
  float s = sum(df, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3)));
  for (; i < count; ++i) s += to_f32(a[i]) * b[i];
  return s;
}

// A task's rows one after another, each a dot product: the task is then one
// sequential read stream, which the hardware prefetcher serves best. Rows
// walked side by side (bands, or adjacent rows sharing each load of x) make
// several streams, and from DRAM ran 15-25% slower here (docs/performance.md).
template <typename T>
void gemv_rows_t(const T* w, const float* x, const float* base, float* y, size_t row_begin, size_t row_end,
                 size_t cols) {
  for (size_t r = row_begin; r < row_end; ++r) y[r] = (base ? base[r] : 0.0f) + dot_t(w + r * cols, x, cols);
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

// Attention's two inner loops work on a few query heads (those sharing a KV
// head) at once. Each pass takes up to kMany of them, so every K or V vector
// is loaded (and widened) once for all of them.
constexpr size_t kMany = 4;

// Targets whose vectors are whole 128-bit blocks, interleaved per block.
#if (HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR) || HWY_TARGET == HWY_NEON || HWY_TARGET == HWY_EMU128
// A vector's 128-bit blocks added into one block.
template <class D>
HWY_INLINE hn::Vec<hn::Full128<float>> add_blocks(D, hn::Vec<D> v) {
  if constexpr (hn::MaxLanes(D()) > 4) {
    const hn::Half<D> dh;
    return add_blocks(dh, hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  } else {
    return v;
  }
}

// out[j] = the sum of v[j]'s lanes, for four vectors at once: transposing
// within blocks and adding takes about a third of the shuffles of four
// separate reductions (a quarter of attention's scoring went to those).
HWY_INLINE void sum4(const VF* v, float* out) {
  const DF df;
  const hn::Repartition<uint64_t, DF> d64;
  // Per block: s01 = [v0 0+2, v1 0+2, v0 1+3, v1 1+3], and s23 likewise.
  const VF s01 = hn::Add(hn::InterleaveLower(df, v[0], v[1]), hn::InterleaveUpper(df, v[0], v[1]));
  const VF s23 = hn::Add(hn::InterleaveLower(df, v[2], v[3]), hn::InterleaveUpper(df, v[2], v[3]));
  const auto w01 = hn::BitCast(d64, s01), w23 = hn::BitCast(d64, s23);
  const VF sums = hn::Add(hn::BitCast(df, hn::InterleaveLower(d64, w01, w23)),
                          hn::BitCast(df, hn::InterleaveUpper(d64, w01, w23)));  // per block: [v0, v1, v2, v3]
  hn::StoreU(add_blocks(df, sums), hn::Full128<float>(), out);
}
#else
HWY_INLINE void sum4(const VF* v, float* out) {
  for (size_t j = 0; j < 4; ++j) out[j] = sum(DF(), v[j]);
}
#endif

// FP8 E4M3 codes to float32 (exactly dtype.cpp's fp8_e4m3_to_f32), times a
// scale given as scale_256 = 256 * scale. An E4M3 code s.eeee.mmm is, bit for
// bit, the half s.0eeee.mmm0000000 times 2^8 (exponent biases 7 and 15;
// subnormals map to subnormals), so a code becomes a half in three 16-bit
// operations and the half becomes a float in one exact conversion: a third of
// the operations of assembling float bits. Multiplying the half by 256 * scale
// rounds as multiplying 256 times it by scale does (2^8 is exact either way;
// the cache's scales, at most 2^128 / 448, leave room for it). Only the NaN
// codes (s.1111.111; E4M3 has no infinities) need a case of their own.
template <class D>
HWY_INLINE hn::Vec<D> fp8_to_f32(D df, const uint8_t* codes, hn::Vec<D> scale_256) {
  const hn::Rebind<int16_t, D> d16;
  const hn::Rebind<int8_t, D> d8;
  const hn::Rebind<hwy::float16_t, D> dh;
  const auto code = hn::LoadU(d8, reinterpret_cast<const int8_t*>(codes));
  // Sign-extended to 16 bits and shifted by 7: bit 15 is the sign, bit 14
  // (the sign again) is cleared below, bits 13..7 are the code's low seven.
  const auto shifted = hn::ShiftLeft<7>(hn::PromoteTo(d16, code));
  const auto half = hn::And(shifted, hn::Set(d16, static_cast<int16_t>(0xBF80)));
  const auto nan = hn::Set(df, std::numeric_limits<float>::quiet_NaN());
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (hn::MaxLanes(df) == 16) {
    // NaN codes are those whose low seven bits are all ones, tested on the
    // 16-bit lanes and applied by the multiply's mask (two operations fewer
    // than testing the floats, on the ports the multiply-adds need).
    const __mmask16 not_nan =
        _mm256_cmpneq_epi16_mask(_mm256_or_si256(shifted.raw, _mm256_set1_epi16(static_cast<int16_t>(0xC000))),
                                 _mm256_set1_epi16(static_cast<int16_t>(0xFF80)));
    return hn::Vec<D>{_mm512_mask_mul_ps(nan.raw, not_nan, _mm512_cvtph_ps(half.raw), scale_256.raw)};
  }
#endif
  // Elsewhere on the float: theirs are the only halves of magnitude 1.875
  // (emulated half conversions, on targets without F16C, do not carry NaN).
  const auto unscaled = hn::PromoteTo(df, hn::BitCast(dh, half));
  return hn::IfThenElse(hn::Eq(hn::Abs(unscaled), hn::Set(df, 1.875f)), nan, hn::Mul(unscaled, scale_256));
}

// The BF16 value at p (fp8 rows keep their scales at any even address).
HWY_INLINE float bf16_at(const uint16_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  return bf16_to_f32(bits);
}

// One KV head's slice of a cached row as the attention kernels read it:
// Lanes(df) values at i (a multiple of Lanes) as floats, one value, and the
// lines of the 2n values at i, `bytes` on, prefetched.
template <typename T>
struct PlainSlice {
  const T* p;
  VF load(DF df, size_t i) const { return load_f32(df, p + i); }
  float at(size_t i) const { return to_f32(p[i]); }
  void prefetch(size_t i, size_t bytes, size_t n) const { prefetch_step(p + i, bytes, n); }
};

// An fp8 slice, decoded in registers as it is read: its codes, and
// scales[k], the BF16 scale of codes [16k, 16k + 16).
struct Fp8Slice {
  const uint8_t* codes;
  const uint16_t* scales;
  VF load(DF df, size_t i) const {
    if constexpr (hn::MaxLanes(DF()) <= 16) {  // within one scale's 16 codes
      return fp8_to_f32(df, codes + i, hn::Set(df, bf16_at(scales + i / 16) * 256.0f));
    } else {  // wider vectors (SVE): a scale per lane
      HWY_ALIGN float values[hn::MaxLanes(DF())];
      for (size_t l = 0; l < hn::Lanes(df); ++l) values[l] = at(i + l);
      return hn::Load(df, values);
    }
  }
  float at(size_t i) const { return fp8_e4m3_to_f32(codes[i]) * bf16_at(scales + i / 16); }
  void prefetch(size_t i, size_t bytes, size_t n) const {
    prefetch_step(codes + i, bytes, n);
    hwy::Prefetch(ahead(scales + i / 16, bytes));
  }
};

// A KvBlock's rows: slice(b, g) is row b's slice of KV head g.
template <typename T>
struct PlainRows {
  const T* rows;
  size_t stride, head_dim;
  PlainSlice<T> slice(size_t b, size_t g) const { return {rows + b * stride + g * head_dim}; }
  size_t row_bytes() const { return stride * sizeof(T); }
};

struct Fp8Rows {
  const uint8_t* rows;
  size_t stride, head_dim, codes_per_row;  // stride in bytes; each row's scales follow its codes
  Fp8Slice slice(size_t b, size_t g) const {
    const uint8_t* row = rows + b * stride;
    return {row + g * head_dim, reinterpret_cast<const uint16_t*>(row + codes_per_row) + g * head_dim / 16};
  }
  size_t row_bytes() const { return stride; }
};

// s[j] += the elements [i, count) of row . queries[j] (count not a whole
// number of vectors). Out of line: inlined, its address arithmetic for all M
// queries was set up on every row whether or not it ran.
template <size_t M, typename Slice>
HWY_NOINLINE void add_tail(const Slice& row, const float* qs, size_t stride, size_t i, size_t count, float* s) {
  for (size_t j = 0; j < M; ++j) {
    for (size_t t = i; t < count; ++t) s[j] += row.at(t) * qs[j * stride + t];
  }
}

// out[j * out_stride] = row . queries[j] for M queries and a row of `count`
// elements, prefetching `prefetch_bytes` on as it goes (nothing when 0). Two
// sets of accumulators (even and odd steps) keep 2M FMA chains in flight.
// One row at a time, so that scoring reads the cache in address order: rows
// side by side (4 rows per pass, sharing each load of a query vector) were
// streams a row apart, which the hardware prefetcher did not follow. Scoring
// alone, 4096 positions of a bf16 cache from DRAM: 370-480 us 4 rows at a
// time, 270-330 us one at a time (from the caches one row at a time is 5-20%
// slower: a load per FMA and a quarter).
template <size_t M, typename Slice>
HWY_INLINE void dot_row(const Slice& row, size_t prefetch_bytes, const float* qs, size_t stride, float* out,
                        size_t out_stride, size_t count) {
  const DF df;
  const size_t n = hn::Lanes(df);
  VF even[M], odd[M];
  for (size_t j = 0; j < M; ++j) even[j] = odd[j] = hn::Zero(df);
  size_t i = 0;
  // Two steps per iteration, the prefetch (2n elements) tested once for both.
  for (; i + 2 * n <= count; i += 2 * n) {
    if (prefetch_bytes != 0) row.prefetch(i, prefetch_bytes, n);
    const VF r0 = row.load(df, i), r1 = row.load(df, i + n);
    for (size_t j = 0; j < M; ++j) {
      even[j] = hn::MulAdd(r0, hn::LoadU(df, qs + j * stride + i), even[j]);
      odd[j] = hn::MulAdd(r1, hn::LoadU(df, qs + j * stride + i + n), odd[j]);
    }
  }
  for (; i + n <= count; i += n) {
    const VF r = row.load(df, i);
    for (size_t j = 0; j < M; ++j) even[j] = hn::MulAdd(r, hn::LoadU(df, qs + j * stride + i), even[j]);
  }
  VF acc[M];
  for (size_t j = 0; j < M; ++j) acc[j] = hn::Add(even[j], odd[j]);
  float s[M];
  if constexpr (M == 4) {
    sum4(acc, s);
  } else {
    for (size_t j = 0; j < M; ++j) s[j] = sum(df, acc[j]);
  }
  if (HWY_UNLIKELY(i < count)) add_tail<M>(row, qs, stride, i, count, s);
  for (size_t j = 0; j < M; ++j) out[j * out_stride] = s[j];
}

// Vectors of columns per value pass: each row's M weights, broadcast once,
// serve V vectors of it. 4 on 32-register targets (4M accumulators), 2 on
// the others (16 registers); each pass prefetches its 2n-element steps of the row.
constexpr size_t kValueVectors =
    (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3 || HWY_TARGET == HWY_EMU128 ||
     HWY_TARGET == HWY_SCALAR)
        ? 2
        : 4;

// accs[j * stride + i] += sum over rows r of weights[j * weight_stride + r] *
// rows[r * row_stride + i], for M queries j and i < count. The accumulators
// stay in registers across the rows of a chunk of V vectors of columns.
template <size_t M, typename Rows>
HWY_INLINE void axpy_pass(const Rows& rows, size_t g, size_t n_rows, size_t prefetch_bytes, const float* weights,
                          size_t weight_stride, float* accs, size_t stride, size_t count) {
  const DF df;
  const size_t n = hn::Lanes(df);
  const auto chunk = [&](auto vectors, size_t i) HWY_ATTR {
    constexpr size_t V = decltype(vectors)::value;
    VF a[M][V];
    for (size_t j = 0; j < M; ++j) {
      for (size_t v = 0; v < V; ++v) a[j][v] = hn::LoadU(df, accs + j * stride + i + v * n);
    }
    for (size_t r = 0; r < n_rows; ++r) {
      const auto row = rows.slice(r, g);
      if (prefetch_bytes != 0) {
        for (size_t v = 0; v + 2 <= V; v += 2) row.prefetch(i + v * n, prefetch_bytes, n);
      }
      VF x[V];
      for (size_t v = 0; v < V; ++v) x[v] = row.load(df, i + v * n);
      for (size_t j = 0; j < M; ++j) {
        const VF w = hn::Set(df, weights[j * weight_stride + r]);
        for (size_t v = 0; v < V; ++v) a[j][v] = hn::MulAdd(x[v], w, a[j][v]);
      }
    }
    for (size_t j = 0; j < M; ++j) {
      for (size_t v = 0; v < V; ++v) hn::StoreU(a[j][v], df, accs + j * stride + i + v * n);
    }
  };
  size_t i = 0;
  for (; i + kValueVectors * n <= count; i += kValueVectors * n) chunk(std::integral_constant<size_t, kValueVectors>{}, i);
  for (; i + n <= count; i += n) chunk(std::integral_constant<size_t, 1>{}, i);
  for (; i < count; ++i) {
    for (size_t j = 0; j < M; ++j) {
      float acc = accs[j * stride + i];
      for (size_t r = 0; r < n_rows; ++r) acc += weights[j * weight_stride + r] * rows.slice(r, g).at(i);
      accs[j * stride + i] = acc;
    }
  }
}

// Runs pass<M>(q0) over the queries in groups of kMany, then the 1-3 left over.
template <typename Pass>
HWY_INLINE void for_query_groups(size_t n_queries, const Pass& pass) {
  size_t q0 = 0;
  for (; q0 + kMany <= n_queries; q0 += kMany) pass(std::integral_constant<size_t, kMany>{}, q0);
  switch (n_queries - q0) {
    case 3: pass(std::integral_constant<size_t, 3>{}, q0); break;
    case 2: pass(std::integral_constant<size_t, 2>{}, q0); break;
    case 1: pass(std::integral_constant<size_t, 1>{}, q0); break;
    default: break;
  }
}

// Rows are read once, in order, one at a time and all heads' slices in turn:
// one sequential stream, each row also prefetching its companion row, if any.
// The first query group of each head prefetches (later ones find the slice
// cached).
template <typename Rows>
void attention_scores_t(const Rows& rows, const KvBlock& k, const float* queries, float* scores,
                        size_t score_stride) {
  const size_t prefetch_bytes = k.prefetch_rows * rows.row_bytes();
  for (size_t b = 0; b < k.n_rows; ++b) {
    for (size_t g = 0; g < k.n_heads; ++g) {
      const auto slice = rows.slice(b, g);
      const size_t j0 = g * k.group;
      for_query_groups(k.group, [&](auto m, size_t q0) {
        dot_row<decltype(m)::value>(slice, q0 == 0 ? prefetch_bytes : 0, queries + (j0 + q0) * k.head_dim,
                                    k.head_dim, scores + (j0 + q0) * score_stride + b, score_stride, k.head_dim);
      });
    }
    if (k.companion_rows != nullptr) {
      // The companion block may run past the cache's end: its addresses are formed as integers (ahead).
      const size_t row_bytes = rows.row_bytes();
      for (size_t line = 0; line < row_bytes; line += 64) {
        hwy::Prefetch(ahead(k.companion_rows, b * row_bytes + line));
      }
    }
  }
}

// The accumulators are loaded and stored once per block; the rows are walked
// side by side, each head's slice in turn. (Passes of 4 rows, whose order is
// closer to a sequential read, were no faster.)
template <typename Rows>
void attention_values_t(const Rows& rows, const KvBlock& v, const float* weights, size_t weight_stride, float* accs,
                        size_t acc_stride) {
  const size_t prefetch_bytes = v.prefetch_rows * rows.row_bytes();
  for (size_t g = 0; g < v.n_heads; ++g) {
    const size_t j0 = g * v.group;
    for_query_groups(v.group, [&](auto m, size_t q0) {
      axpy_pass<decltype(m)::value>(rows, g, v.n_rows, q0 == 0 ? prefetch_bytes : 0,
                                    weights + (j0 + q0) * weight_stride, weight_stride, accs + (j0 + q0) * acc_stride,
                                    acc_stride, v.head_dim);
    });
  }
}

// Calls f(rows) with the KvBlock's rows as their element type reads them.
template <typename F>
HWY_INLINE void with_rows(const KvBlock& b, const F& f) {
  if (b.fp8) {
    return f(Fp8Rows{static_cast<const uint8_t*>(b.rows), b.row_stride, b.head_dim, b.n_heads * b.head_dim});
  }
  switch (b.type) {
    case WeightType::kF32: return f(PlainRows<float>{static_cast<const float*>(b.rows), b.row_stride, b.head_dim});
    case WeightType::kBF16:
      return f(PlainRows<hwy::bfloat16_t>{static_cast<const hwy::bfloat16_t*>(b.rows), b.row_stride, b.head_dim});
    case WeightType::kF16:
      return f(PlainRows<hwy::float16_t>{static_cast<const hwy::float16_t*>(b.rows), b.row_stride, b.head_dim});
  }
}

void AttentionScores(const KvBlock& k, const float* queries, float* scores, size_t score_stride) {
  with_rows(k, [&](const auto& rows) { attention_scores_t(rows, k, queries, scores, score_stride); });
}
void AttentionValues(const KvBlock& v, const float* weights, size_t weight_stride, float* accs, size_t acc_stride) {
  with_rows(v, [&](const auto& rows) { attention_values_t(rows, v, weights, weight_stride, accs, acc_stride); });
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

// The width-4 causal conv of Gated DeltaNet for channels [begin, end): weights
// [C, 4] de-interleaved into four vectors, the three history rows of `state`
// ([3, C]) and u, then SiLU, and the history shifted by one row.
void Conv4Silu(const float* u, float* state, const float* w, float* out, size_t begin, size_t end, size_t conv_dim) {
  const DF df;
  const size_t n = hn::Lanes(df);
  float* s0 = state;
  float* s1 = state + conv_dim;
  float* s2 = state + 2 * conv_dim;
  size_t c = begin;
  for (; c + n <= end; c += n) {
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
      if (prefetch_floats) hwy::Prefetch(p + s * part + i + prefetch_floats);
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

using cpu::HWY_NAMESPACE::for_each_mlx_row;
using cpu::HWY_NAMESPACE::nibble_table;
using cpu::HWY_NAMESPACE::nibble_values;

// MLX affine rows: codes widened u8 -> u32 -> f32 in registers (4-bit codes
// split by a shift and read by nibble_values, matched by x in code order), two
// vector accumulators per group (even and odd vectors, or low and high
// nibbles: two FMA chains) scaled once at the group's end, and the bias term
// from the precomputed group sums of x. At most 16 lanes, so that a vector
// never straddles the 16 bytes of a 4-bit block of 32 codes. Rows are walked
// one after another, one read stream per task, as the dense gemv's. A row's
// scales are converted to floats and its bias term summed before its codes
// are read (mlx_scales-inl.h).
template <unsigned Bits>
HWY_INLINE float mlx_dot_row(const MlxRows& w, size_t row, const float* xc, const float* scale) {
  const hn::CappedTag<float, 16> df;
  const hn::Rebind<uint32_t, decltype(df)> du;
  const hn::Rebind<int32_t, decltype(df)> di;
  const hn::Rebind<uint8_t, decltype(df)> d8;
  const size_t n = hn::Lanes(df);
  const size_t groups = w.cols / w.group_size;
  const auto widen = [&](auto codes) { return hn::ConvertTo(df, hn::BitCast(di, codes)); };
  const uint8_t* q = reinterpret_cast<const uint8_t*>(w.codes) + row * (w.cols * Bits / 8);
  auto total = hn::Zero(df);
  for (size_t g = 0; g < groups; ++g) {
    const size_t begin = g * w.group_size, end = begin + w.group_size;
    auto even = hn::Zero(df), odd = hn::Zero(df);
    if constexpr (Bits == 8) {
      // Group sizes (32, 64, 128) are multiples of 2n: n is at most 16.
      for (size_t i = begin; i < end; i += 2 * n) {
        even = hn::MulAdd(widen(hn::PromoteTo(du, hn::LoadU(d8, q + i))), hn::LoadU(df, xc + i), even);
        odd = hn::MulAdd(widen(hn::PromoteTo(du, hn::LoadU(d8, q + i + n))), hn::LoadU(df, xc + i + n), odd);
      }
    } else {
      const auto table = nibble_table<0>();
      for (size_t block = begin; block < end; block += 32) {
        for (size_t j = 0; j < 16; j += n) {
          const auto codes = hn::PromoteTo(du, hn::LoadU(d8, q + block / 2 + j));
          even = hn::MulAdd(nibble_values<0>(codes, table), hn::LoadU(df, xc + block + j), even);
          odd = hn::MulAdd(nibble_values<0>(hn::ShiftRight<4>(codes), table), hn::LoadU(df, xc + block + 16 + j), odd);
        }
      }
    }
    total = hn::MulAdd(hn::Add(even, odd), hn::Set(df, scale[g]), total);
  }
  return hn::GetLane(hn::SumOfLanes(df, total));
}

template <unsigned Bits, typename T>
void mlx_rows_t(const MlxRows& w, const float* xc, const float* x_sums, const float* base, float* y, size_t row_begin,
                size_t row_end) {
  for_each_mlx_row(hn::CappedTag<float, 16>(), static_cast<const T*>(w.scales), static_cast<const T*>(w.biases), x_sums,
                   w.cols / w.group_size, row_begin, row_end, [&](size_t r, const float* scales, float bias_term) {
                     y[r] = (base ? base[r] : 0.0f) + mlx_dot_row<Bits>(w, r, xc, scales) + bias_term;
                   });
}

template <unsigned Bits>
void mlx_rows_for(const MlxRows& w, const float* xc, const float* xs, const float* base, float* y, size_t r0,
                  size_t r1) {
  switch (w.scale_type) {
    case WeightType::kF32: return mlx_rows_t<Bits, float>(w, xc, xs, base, y, r0, r1);
    case WeightType::kBF16: return mlx_rows_t<Bits, hwy::bfloat16_t>(w, xc, xs, base, y, r0, r1);
    case WeightType::kF16: return mlx_rows_t<Bits, hwy::float16_t>(w, xc, xs, base, y, r0, r1);
  }
}

void MlxGemvRows4(const MlxRows& w, const float* xc, const float* xs, const float* base, float* y, size_t r0,
                  size_t r1) {
  mlx_rows_for<4>(w, xc, xs, base, y, r0, r1);
}
void MlxGemvRows8(const MlxRows& w, const float* xc, const float* xs, const float* base, float* y, size_t r0,
                  size_t r1) {
  mlx_rows_for<8>(w, xc, xs, base, y, r0, r1);
}

int64_t Target() { return HWY_TARGET; }

}  // namespace qwen35::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qwen35::simd {

HWY_EXPORT(GemvRowsF32);
HWY_EXPORT(GemvRowsBF16);
HWY_EXPORT(GemvRowsF16);
HWY_EXPORT(DotF32);
HWY_EXPORT(DotBF16);
HWY_EXPORT(DotF16);
HWY_EXPORT(ScaleAddF32);
HWY_EXPORT(ScaleAddBF16);
HWY_EXPORT(ScaleAddF16);
HWY_EXPORT(AttentionScores);
HWY_EXPORT(AttentionValues);
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

void gemv_rows(WeightType type, const void* w, const float* x, const float* base, float* y, size_t row_begin,
               size_t row_end, size_t cols) {
  switch (type) {
    case WeightType::kF32: return HWY_DYNAMIC_DISPATCH(GemvRowsF32)(w, x, base, y, row_begin, row_end, cols);
    case WeightType::kBF16: return HWY_DYNAMIC_DISPATCH(GemvRowsBF16)(w, x, base, y, row_begin, row_end, cols);
    case WeightType::kF16: return HWY_DYNAMIC_DISPATCH(GemvRowsF16)(w, x, base, y, row_begin, row_end, cols);
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

void attention_scores(const KvBlock& k, const float* queries, float* scores, size_t score_stride) {
  HWY_DYNAMIC_DISPATCH(AttentionScores)(k, queries, scores, score_stride);
}
void attention_values(const KvBlock& v, const float* weights, size_t weight_stride, float* accs, size_t acc_stride) {
  HWY_DYNAMIC_DISPATCH(AttentionValues)(v, weights, weight_stride, accs, acc_stride);
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
