// Highway implementations of simd.h's attention kernels: scoring a block of
// cached K rows against the query heads that share each KV head, and adding
// a block of V rows weighted by the scores into the heads' accumulators, for
// float, BF16, F16 and fp8 caches (the last decoded in registers as read).
// Compiled once per target by foreach_target.h, like simd.cpp.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/attention_simd.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "cpu/simd_common-inl.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu/prefetch.h"
#include "cpu/simd.h"
#include "qwen35/dtype.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::simd::HWY_NAMESPACE {
// hn, DF, VF, load_f32, to_f32 and sum: simd_common-inl.h.

// Prefetches the line `bytes` past p into L1 or, unless to_l1, L2 (KvBlock).
HWY_INLINE void prefetch_line(const void* p, size_t bytes, bool to_l1) {
  if (to_l1) {
    cpu::prefetch_past(p, bytes);
  } else {
    cpu::prefetch_past_to_l2(p, bytes);
  }
}

// Prefetches the lines of the 2n elements at p, `bytes` on (nothing when 0).
template <typename T>
HWY_INLINE void prefetch_step(const T* p, size_t bytes, size_t n, bool to_l1) {
  if (bytes == 0) return;
  for (size_t line = 0; line < 2 * n * sizeof(T); line += 64) prefetch_line(p, bytes + line, to_l1);
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
// scale given as *scale_256 = 256 * scale. An E4M3 code s.eeee.mmm is, bit for
// bit, the half s.0eeee.mmm0000000 times 2^8 (exponent biases 7 and 15;
// subnormals map to subnormals), so a code becomes a half in three 16-bit
// operations and the half becomes a float in one exact conversion: a third of
// the operations of assembling float bits. Multiplying the half by 256 * scale
// rounds as multiplying 256 times it by scale does (2^8 is exact either way;
// the cache's scales, at most 2^128 / 448, leave room for it). Only the NaN
// codes (s.1111.111; E4M3 has no infinities) need a case of their own, and
// only in blocks that hold one (kMayHoldNaN).
template <bool kMayHoldNaN, class D>
HWY_INLINE hn::Vec<D> fp8_to_f32(D df, const uint8_t* codes, const float* scale_256) {
  const hn::Rebind<int16_t, D> d16;
  const hn::Rebind<int8_t, D> d8;
  const hn::Rebind<hwy::float16_t, D> dh;
  const auto code = hn::LoadU(d8, reinterpret_cast<const int8_t*>(codes));
  // Sign-extended to 16 bits and shifted by 7: bit 15 is the sign, bit 14
  // (the sign again) is cleared below, bits 13..7 are the code's low seven.
  const auto shifted = hn::ShiftLeft<7>(hn::PromoteTo(d16, code));
  const auto half = hn::And(shifted, hn::Set(d16, static_cast<int16_t>(0xBF80)));
  // A broadcast from memory: no shuffle on the ports the multiply-adds need.
  const auto scale = hn::Set(df, *scale_256);
  if constexpr (!kMayHoldNaN) {
    return hn::Mul(hn::PromoteTo(df, hn::BitCast(dh, half)), scale);
  } else {
    const auto nan = hn::Set(df, std::numeric_limits<float>::quiet_NaN());
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    if constexpr (hn::MaxLanes(df) == 16) {
      // NaN codes are those whose low seven bits are all ones, tested on the
      // 16-bit lanes and applied by the multiply's mask (two operations fewer
      // than testing the floats, on the ports the multiply-adds need).
      const __mmask16 not_nan =
          _mm256_cmpneq_epi16_mask(_mm256_or_si256(shifted.raw, _mm256_set1_epi16(static_cast<int16_t>(0xC000))),
                                   _mm256_set1_epi16(static_cast<int16_t>(0xFF80)));
      return hn::Vec<D>{_mm512_mask_mul_ps(nan.raw, not_nan, _mm512_cvtph_ps(half.raw), scale.raw)};
    }
#endif
    // Elsewhere on the float: theirs are the only halves of magnitude 1.875
    // (emulated half conversions, on targets without F16C, do not carry NaN).
    const auto unscaled = hn::PromoteTo(df, hn::BitCast(dh, half));
    return hn::IfThenElse(hn::Eq(hn::Abs(unscaled), hn::Set(df, 1.875f)), nan, hn::Mul(unscaled, scale));
  }
}

// Whether any of the n codes at p is NaN (low seven bits all ones): a pass
// over a block's codes, 64 at a time on AVX-512, lets the blocks without one
// (all of them, unless the model made a NaN) skip the test per vector.
// Doubled (shifted out of the sign), NaN codes are the only ones to reach 0xFE.
HWY_INLINE bool any_nan_code(const uint8_t* p, size_t n) {
  const hn::ScalableTag<uint8_t> d8;
  const size_t lanes = hn::Lanes(d8);
  auto largest = hn::Zero(d8);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto code = hn::LoadU(d8, p + i);
    largest = hn::Max(largest, hn::Add(code, code));
  }
  bool any = !hn::AllFalse(d8, hn::Eq(largest, hn::Set(d8, uint8_t{0xFE})));
  for (; i < n; ++i) any |= (p[i] & 0x7F) == 0x7F;
  return any;
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
  void prefetch(size_t i, size_t bytes, size_t n, bool to_l1) const { prefetch_step(p + i, bytes, n, to_l1); }
};

// An fp8 slice, decoded in registers as it is read: its codes, and for the
// codes [16k, 16k + 16), scales[k] (their BF16 scale, which prefetches ask
// for) and scales_256[k] (the same as a float times 256, decoded once per block).
template <bool kMayHoldNaN>
struct Fp8Slice {
  const uint8_t* codes;
  const uint16_t* scales;
  const float* scales_256;
  VF load(DF df, size_t i) const {
    if constexpr (hn::MaxLanes(DF()) <= 16) {  // within one scale's 16 codes
      return fp8_to_f32<kMayHoldNaN>(df, codes + i, scales_256 + i / 16);
    } else {  // wider vectors (SVE): a scale per lane
      HWY_ALIGN float values[hn::MaxLanes(DF())];
      for (size_t l = 0; l < hn::Lanes(df); ++l) values[l] = at(i + l);
      return hn::Load(df, values);
    }
  }
  float at(size_t i) const { return fp8_e4m3_to_f32(codes[i]) * bf16_at(scales + i / 16); }
  void prefetch(size_t i, size_t bytes, size_t n, bool to_l1) const {
    prefetch_step(codes + i, bytes, n, to_l1);
    prefetch_line(scales + i / 16, bytes, to_l1);
  }
};

// A KvBlock's rows: slice(b, g) is row b's slice of KV head g.
template <typename T>
struct PlainRows {
  const T* rows;
  size_t stride, head_dim;
  PlainSlice<T> slice(size_t b, size_t g) const { return {rows + b * stride + g * head_dim}; }
  size_t row_bytes() const { return stride * sizeof(T); }
  const void* row_address(size_t b) const { return rows + b * stride; }
};

// scales_256 holds each row's codes_per_row / 16 scales as floats times 256.
template <bool kMayHoldNaN>
struct Fp8Rows {
  const uint8_t* rows;
  size_t stride, head_dim, codes_per_row;  // stride in bytes; each row's scales follow its codes
  const float* scales_256;
  Fp8Slice<kMayHoldNaN> slice(size_t b, size_t g) const {
    const uint8_t* row = rows + b * stride;
    const size_t k0 = g * head_dim / 16;
    return {row + g * head_dim, reinterpret_cast<const uint16_t*>(row + codes_per_row) + k0,
            scales_256 + b * (codes_per_row / 16) + k0};
  }
  size_t row_bytes() const { return stride; }
  const void* row_address(size_t b) const { return rows + b * stride; }
};

// out[k] = 256 * the BF16 scale at scales[k], for k < n.
HWY_INLINE void decode_scales(const uint16_t* scales, size_t n, float* out) {
  const DF df;
  const size_t lanes = hn::Lanes(df);
  const VF times_256 = hn::Set(df, 256.0f);
  size_t k = 0;
  for (; k + lanes <= n; k += lanes) {
    hn::StoreU(hn::Mul(load_f32(df, reinterpret_cast<const hwy::bfloat16_t*>(scales) + k), times_256), df, out + k);
  }
  for (; k < n; ++k) out[k] = bf16_at(scales + k) * 256.0f;
}

// s[j] += the elements [i, count) of row . queries[j] (count not a whole
// number of vectors). Out of line: inlined, its address arithmetic for all M
// queries was set up on every row whether or not it ran.
template <size_t M, typename Slice>
HWY_NOINLINE void add_tail(const Slice& row, const float* qs, size_t stride, size_t i, size_t count, float* s) {
  for (size_t j = 0; j < M; ++j) {
    for (size_t t = i; t < count; ++t) s[j] += row.at(t) * qs[j * stride + t];
  }
}

// Targets with 32 vector registers (AVX-512, NEON, SVE) rather than 16.
constexpr bool kManyRegisters = !(HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3 ||
                                  HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR);

// Rows scored together, sharing each load of a query vector: 4 where 16
// accumulators (4 rows, 4 queries) fit in registers with room to spare, 1
// elsewhere. One row at a time loaded a query vector per FMA: one thread,
// a block of 32 positions in L1 (BM_AttentionBlock), 4 rows at a time scored
// it in 800-890 ns against 1165-1870 (bf16) and 1265-1300 against 1550-2250
// (fp8). Their reads go out in address order all the same (OrderedPrefetch).
constexpr size_t kScoreRows = kManyRegisters ? 4 : 1;

// Asks for `lines` lines from `offset` bytes past `rows`, in address order,
// per_step at each call. (The same lines asked for row by row across a pass
// of 4 rows took 20-40% longer from DRAM.) Offsets rather than pointers: the
// rows asked for may lie past the cache's end.
struct OrderedPrefetch {
  const void* rows;
  size_t offset, lines, per_step;
  bool to_l1;
  size_t next = 0;  // the next line
  void operator()() {
    const size_t end = std::min(lines, next + per_step);
    for (; next < end; ++next) prefetch_line(rows, offset + 64 * next, to_l1);
  }
};

// out[r + j * out_stride] = rows[r] . queries[j] for R adjacent rows, M
// queries and rows of `count` elements, calling prefetch() once per two
// vectors of each row if `prefetching`. One row alone keeps two sets of
// accumulators (even and odd steps) for 2M FMA chains in flight; R > 1 rows
// have R M chains in one set.
template <size_t R, size_t M, typename Slice>
HWY_INLINE void dot_rows(const Slice* rows, bool prefetching, OrderedPrefetch& prefetch, const float* qs,
                         size_t stride, float* out, size_t out_stride, size_t count) {
  const DF df;
  const size_t n = hn::Lanes(df);
  constexpr size_t kSets = R == 1 ? 2 : 1;
  VF acc[kSets][R][M];
  for (size_t e = 0; e < kSets; ++e) {
    for (size_t r = 0; r < R; ++r) {
      for (size_t j = 0; j < M; ++j) acc[e][r][j] = hn::Zero(df);
    }
  }
  size_t i = 0;
  // Two steps per iteration, the prefetch (2n elements) tested once for both.
  for (; i + 2 * n <= count; i += 2 * n) {
    if (prefetching) prefetch();
    VF x0[R], x1[R];
    for (size_t r = 0; r < R; ++r) {
      x0[r] = rows[r].load(df, i);
      x1[r] = rows[r].load(df, i + n);
    }
    for (size_t j = 0; j < M; ++j) {
      const VF q0 = hn::LoadU(df, qs + j * stride + i), q1 = hn::LoadU(df, qs + j * stride + i + n);
      for (size_t r = 0; r < R; ++r) {
        acc[0][r][j] = hn::MulAdd(x0[r], q0, acc[0][r][j]);
        acc[kSets - 1][r][j] = hn::MulAdd(x1[r], q1, acc[kSets - 1][r][j]);
      }
    }
  }
  for (; i + n <= count; i += n) {
    for (size_t r = 0; r < R; ++r) {
      const VF x = rows[r].load(df, i);
      for (size_t j = 0; j < M; ++j) acc[0][r][j] = hn::MulAdd(x, hn::LoadU(df, qs + j * stride + i), acc[0][r][j]);
    }
  }
  for (size_t r = 0; r < R; ++r) {
    VF total[M];
    for (size_t j = 0; j < M; ++j) total[j] = kSets == 2 ? hn::Add(acc[0][r][j], acc[kSets - 1][r][j]) : acc[0][r][j];
    float s[M];
    if constexpr (M == 4) {
      sum4(total, s);
    } else {
      for (size_t j = 0; j < M; ++j) s[j] = sum(df, total[j]);
    }
    if (HWY_UNLIKELY(i < count)) add_tail<M>(rows[r], qs, stride, i, count, s);
    for (size_t j = 0; j < M; ++j) out[r + j * out_stride] = s[j];
  }
}

// Vectors of columns per value pass: each row's M weights, broadcast once,
// serve V vectors of it. 4 on 32-register targets (4M accumulators), 2 on
// the others (16 registers); each pass prefetches its 2n-element steps of the row.
constexpr size_t kValueVectors = kManyRegisters ? 4 : 2;

// accs[j * stride + i] += sum over rows r of weights[j * weight_stride + r] *
// rows[r * row_stride + i], for M queries j and i < count. The accumulators
// stay in registers across the rows of a chunk of V vectors of columns.
template <size_t M, typename Rows>
HWY_INLINE void axpy_pass(const Rows& rows, size_t g, size_t n_rows, size_t prefetch_bytes, bool to_l1,
                          const float* weights, size_t weight_stride, float* accs, size_t stride, size_t count) {
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
        for (size_t v = 0; v + 2 <= V; v += 2) row.prefetch(i + v * n, prefetch_bytes, n, to_l1);
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
  for (; i + kValueVectors * n <= count; i += kValueVectors * n) {
    chunk(std::integral_constant<size_t, kValueVectors>{}, i);
  }
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

// Rows are read kScoreRows at a time, all heads' slices in turn (so the
// reads stay within a few rows of one another). The first query group of
// each head prefetches (later ones find the slices cached).
template <size_t R, typename Rows>
HWY_INLINE void score_rows(const Rows& rows, const KvBlock& k, size_t b, size_t prefetch_bytes, const float* queries,
                           float* scores, size_t score_stride) {
  const size_t row_bytes = rows.row_bytes();
  const size_t lines = (R * row_bytes + 63) / 64;
  // Prefetching calls: one per two vectors of a slice, for each head's slices.
  const size_t steps = k.n_heads * std::max<size_t>(1, k.head_dim / (2 * hn::Lanes(DF())));
  OrderedPrefetch prefetch{.rows = rows.row_address(b), .offset = prefetch_bytes, .lines = lines,
                           .per_step = (lines + steps - 1) / steps, .to_l1 = k.prefetch_to_l1};
  for (size_t g = 0; g < k.n_heads; ++g) {
    decltype(rows.slice(0, 0)) slices[R];
    for (size_t r = 0; r < R; ++r) slices[r] = rows.slice(b + r, g);
    const size_t j0 = g * k.group;
    for_query_groups(k.group, [&](auto m, size_t q0) {
      dot_rows<R, decltype(m)::value>(slices, q0 == 0 && prefetch_bytes != 0, prefetch,
                                      queries + (j0 + q0) * k.head_dim, k.head_dim,
                                      scores + (j0 + q0) * score_stride + b, score_stride, k.head_dim);
    });
  }
  if (prefetch_bytes != 0) {
    prefetch.per_step = lines;  // whatever the steps left
    prefetch();
  }
}

template <typename Rows>
void attention_scores_t(const Rows& rows, const KvBlock& k, const float* queries, float* scores,
                        size_t score_stride) {
  const size_t prefetch_bytes = k.prefetch_rows * rows.row_bytes();
  size_t b = 0;
  for (; b + kScoreRows <= k.n_rows; b += kScoreRows) {
    score_rows<kScoreRows>(rows, k, b, prefetch_bytes, queries, scores, score_stride);
  }
  for (; b < k.n_rows; ++b) score_rows<1>(rows, k, b, prefetch_bytes, queries, scores, score_stride);
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
      axpy_pass<decltype(m)::value>(rows, g, v.n_rows, q0 == 0 ? prefetch_bytes : 0, v.prefetch_to_l1,
                                    weights + (j0 + q0) * weight_stride, weight_stride, accs + (j0 + q0) * acc_stride,
                                    acc_stride, v.head_dim);
    });
  }
}

// Calls f(rows) with the KvBlock's rows as their element type reads them.
template <typename F>
HWY_INLINE void with_rows(const KvBlock& b, const F& f) {
  if (b.fp8) {
    const auto* rows = static_cast<const uint8_t*>(b.rows);
    const size_t codes_per_row = b.n_heads * b.head_dim, scales_per_row = codes_per_row / 16;
    // The block's scales as floats: sized by its rows, so not on the stack;
    // per thread, as both threads decode blocks at once.
    thread_local std::vector<float> scales_256;
    scales_256.resize(b.n_rows * scales_per_row);
    bool any_nan = false;
    for (size_t r = 0; r < b.n_rows; ++r) {
      const uint8_t* row = rows + r * b.row_stride;
      decode_scales(reinterpret_cast<const uint16_t*>(row + codes_per_row), scales_per_row,
                    scales_256.data() + r * scales_per_row);
      any_nan |= any_nan_code(row, codes_per_row);
    }
    if (any_nan) return f(Fp8Rows<true>{rows, b.row_stride, b.head_dim, codes_per_row, scales_256.data()});
    return f(Fp8Rows<false>{rows, b.row_stride, b.head_dim, codes_per_row, scales_256.data()});
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

}  // namespace qwen35::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qwen35::simd {

HWY_EXPORT(AttentionScores);
HWY_EXPORT(AttentionValues);

void attention_scores(const KvBlock& k, const float* queries, float* scores, size_t score_stride) {
  HWY_DYNAMIC_DISPATCH(AttentionScores)(k, queries, scores, score_stride);
}
void attention_values(const KvBlock& v, const float* weights, size_t weight_stride, float* accs, size_t acc_stride) {
  HWY_DYNAMIC_DISPATCH(AttentionValues)(v, weights, weight_stride, accs, acc_stride);
}

}  // namespace qwen35::simd
#endif  // HWY_ONCE
