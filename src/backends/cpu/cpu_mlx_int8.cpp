// MLX affine rows against x in 8 bits (cpu/mlx_int8.h). Each vector of a
// row's code bytes meets x's codes in dot4 (int8_dot-inl.h), four byte
// products per int32 lane: 4-bit codes as their low nibbles against x's even
// elements and their high nibbles against its odd ones, into the same lanes;
// 8-bit codes as they are on VNNI, and elsewhere as two nibbles (vpmaddubsw's
// pair sums stay inside int16 only for codes below 128). Each lane's sum is
// converted once and scaled by x's block scale for the lane times its group's
// scale: a broadcast, or, where a vector spans several groups (4-bit codes in
// 64-byte vectors), a lane permute of the row's scales; 4-bit codes on
// AVX-512 first add each block of x's four lanes, four vectors at a time
// (block_sums), and convert those. Rows of up to 4 KB
// are walked a row from each of four bands (4-bit codes) or two (8-bit) at a
// time (a read stream per band, x's loads shared), longer ones one after
// another (cpu_mlx.cpp), each stream prefetched ahead of its reads.
#ifndef HWY_WANT_AVX3_DL
#define HWY_WANT_AVX3_DL 1  // Ice Lake and later: the VNNI instructions
#endif
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/cpu_mlx_int8.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "cpu/int8_dot-inl.h"
#include "cpu/mlx_scales-inl.h"

#include <type_traits>
#include <vector>

#include "cpu/mlx_int8.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// The int32 lane sums of a vector of 4-bit codes against x's codes for their
// low nibbles (even) and high ones (odd).
template <class DB, class VS>
HWY_INLINE hn::Vec<hn::Repartition<int32_t, DB>> nibble_sums(DB db, hn::Vec<DB> codes, VS even, VS odd) {
  const hn::Repartition<int32_t, DB> dq;
  return dot4(dot4(hn::Zero(dq), hn::And(codes, hn::Set(db, uint8_t{0x0F})), even), hn::ShiftRight<4>(codes), odd);
}

// The int32 lane sums of the row's code bytes [o, o + Lanes(db)) against x.
template <unsigned Bits, class DB>
HWY_INLINE hn::Vec<hn::Repartition<int32_t, DB>> lane_sums(DB db, const uint8_t* codes, const int8_t* xc,
                                                          size_t half_cols, size_t o) {
  const hn::Repartition<int8_t, DB> ds;
  const hn::Repartition<int32_t, DB> dq;
  const auto v = hn::LoadU(db, codes + o);
  const auto low = [&] { return hn::And(v, hn::Set(db, uint8_t{0x0F})); };
  if constexpr (Bits == 4) {
    return nibble_sums(db, v, hn::LoadU(ds, xc + o), hn::LoadU(ds, xc + half_cols + o));
  } else if constexpr (HWY_TARGET == HWY_AVX3_DL) {
    return dot4(hn::Zero(dq), v, hn::LoadU(ds, xc + o));
  } else {
    const auto xv = hn::LoadU(ds, xc + o);
    return dot4(hn::ShiftLeft<4>(dot4(hn::Zero(dq), hn::ShiftRight<4>(v), xv)), low(), xv);
  }
}

// Where each lane of a vector of db finds its group's scale among the scales
// loaded from the vector's first group on: lane L holds 4 code bytes, so it
// is in group 4 L / group_bytes of them (all lanes in the first when a
// group's bytes fill the vector).
template <class DB>
HWY_INLINE auto group_of_lanes(DB, size_t group_bytes) {
  const hn::Repartition<float, DB> df;
  HWY_ALIGN int32_t group_of_lane[hn::MaxLanes(df)];
  for (size_t lane = 0; lane < hn::Lanes(df); ++lane) {
    group_of_lane[lane] = static_cast<int32_t>(4 * lane / group_bytes);
  }
  return hn::SetTableIndices(df, group_of_lane);
}

// Keeps v in a register for all its uses. GCC folds a vector's load into
// each use instead (a row's codes were loaded twice, x's codes once per row),
// and the quads (below) then took 32.0-33.7 us against 24.2-28.5 for 3584 x
// 1024 on 2 threads from the caches: no faster than single vectors.
template <class V>
HWY_INLINE V in_register(V v) {
#if HWY_ARCH_X86
  asm("" : "+v"(v.raw));
#endif
  return v;
}

// The int32 sums per block of x (16 code bytes: 4 lanes) of four vectors of
// 4-bit lane sums, in one vector: lane 4 c + v holds vector v's block c (its
// 128-bit quarter c), summed in two rounds of interleaves within quarters.
template <class DQ>
HWY_INLINE hn::Vec<DQ> block_sums(DQ dq, hn::Vec<DQ> s0, hn::Vec<DQ> s1, hn::Vec<DQ> s2, hn::Vec<DQ> s3) {
  const hn::Repartition<int64_t, DQ> d64;
  // Per quarter [s0 0 + s0 2, s1 0 + s1 2, s0 1 + s0 3, s1 1 + s1 3], and for s2, s3 alike.
  const auto a = hn::BitCast(d64, hn::Add(hn::InterleaveLower(dq, s0, s1), hn::InterleaveUpper(dq, s0, s1)));
  const auto b = hn::BitCast(d64, hn::Add(hn::InterleaveLower(dq, s2, s3), hn::InterleaveUpper(dq, s2, s3)));
  return hn::Add(hn::BitCast(dq, hn::InterleaveLower(d64, a, b)), hn::BitCast(dq, hn::InterleaveUpper(d64, a, b)));
}

// The same for the lanes of a quad's block sums (block_sums), relative to the
// quad's first group: lane 4 c + v sums the bytes from 64 v + 16 c on.
template <class DB>
HWY_INLINE auto group_of_quad_lanes(DB, size_t group_bytes) {
  const hn::Repartition<float, DB> df;
  HWY_ALIGN int32_t group_of_lane[hn::MaxLanes(df)];
  for (size_t lane = 0; lane < hn::Lanes(df); ++lane) {
    group_of_lane[lane] = static_cast<int32_t>((64 * (lane % 4) + 16 * (lane / 4)) / group_bytes);
  }
  return hn::SetTableIndices(df, group_of_lane);
}

// Quads on x86's 64-byte vectors alone: block_sums counts on interleaves
// within 128-bit blocks (SVE's interleave whole halves), and quad_scales is
// in the order of four 128-bit blocks per vector.
constexpr bool kQuads = HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3;

// The code parts of K rows, for each the sum over lanes of lane sum * x's
// block scale * group scale, over the rows' code bytes [begin, end) in vectors
// of db; the rows share x's loads, and each row is summed as one alone is.
// group_shift is log2 of a group's bytes. Where a vector lies in one group its
// scale is a broadcast: a vector load of the scales, a group (4 bytes) further
// on each time, straddled two cache lines 15 times in 16 (int8 mlx8 from
// cache: 35-51 -> 46-66 GB/s).
//
// 4-bit codes in 64-byte vectors go four at a time from begin up to quad_end
// (a "quad", 256 bytes): the four int32 lanes of each block of x are added as
// integers first (block_sums), so a quad takes one conversion and one
// multiply-add where four vectors took four of each, and one lane permute for
// its group scales where they took four (quad_spread: a lane's group, from the
// quad's first). 3584 x 1024 mlx4 on 2 threads, the variants alternated call
// by call in one process: 32.4 -> 24.5 us from the caches, 34.7 -> 34.1 from
// DRAM (the decode is compute-bound only in this host's faster windows).
template <unsigned Bits, size_t K, class DB, class Indices>
HWY_INLINE void code_parts(DB db, const uint8_t* const (&codes)[K], const MlxInt8Activations& x, size_t cols,
                           size_t group_shift, Indices spread, Indices quad_spread, const float* const* scales,
                           size_t begin, size_t quad_end, size_t end, float* out) {
  const hn::Repartition<float, DB> df;
  const hn::Repartition<int32_t, DB> dq;
  const size_t n = hn::Lanes(db);
  hn::Vec<decltype(df)> total[K];
  for (size_t k = 0; k < K; ++k) total[k] = hn::Zero(df);
  const auto sums = [&](size_t k, size_t o) { return lane_sums<Bits>(db, codes[k], x.codes, cols / 2, o); };
  for (size_t o = begin; o < quad_end; o += 4 * n) {
    const hn::Repartition<int8_t, DB> ds;
    hn::Vec<decltype(ds)> even[4], odd[4];
    for (size_t v = 0; v < 4; ++v) {
      even[v] = in_register(hn::LoadU(ds, x.codes + o + v * n));
      odd[v] = in_register(hn::LoadU(ds, x.codes + cols / 2 + o + v * n));
    }
    const auto block_scales = hn::LoadU(df, x.quad_scales + o / 16);
    for (size_t k = 0; k < K; ++k) {
      for (size_t l = 0; l < 256; l += 64) prefetch_past(codes[k] + o + l, kMlxCodePrefetchBytes);
      const auto group_scales = hn::TableLookupLanes(hn::LoadU(df, scales[k] + (o >> group_shift)), quad_spread);
      hn::Vec<decltype(dq)> s[4];
      for (size_t v = 0; v < 4; ++v) {
        s[v] = nibble_sums(db, in_register(hn::LoadU(db, codes[k] + o + v * n)), even[v], odd[v]);
      }
      const auto blocks = block_sums(dq, s[0], s[1], s[2], s[3]);
      total[k] = hn::MulAdd(hn::ConvertTo(df, blocks), hn::Mul(group_scales, block_scales), total[k]);
    }
  }
  begin = quad_end;
  const auto step = [&](size_t k, size_t o, auto group_scales) {
    if (o % 64 == 0) prefetch_past(codes[k] + o, kMlxCodePrefetchBytes);
    const auto factors = hn::Mul(group_scales, hn::LoadU(df, x.lane_scales + o / 4));
    total[k] = hn::MulAdd(hn::ConvertTo(df, sums(k, o)), factors, total[k]);
  };
  if (n <= (size_t{1} << group_shift)) {  // one group per vector: a broadcast
    for (size_t o = begin; o < end; o += n) {
      for (size_t k = 0; k < K; ++k) step(k, o, hn::Set(df, scales[k][o >> group_shift]));
    }
  } else {
    for (size_t o = begin; o < end; o += n) {
      for (size_t k = 0; k < K; ++k) {
        step(k, o, hn::TableLookupLanes(hn::LoadU(df, scales[k] + (o >> group_shift)), spread));
      }
    }
  }
  for (size_t k = 0; k < K; ++k) out[k] = hn::GetLane(hn::SumOfLanes(df, total[k]));
}

// The rows of one matrix, K at a time: in 64-byte vectors, then 16-byte ones
// for what is left of a row past its last full vector (a multiple of a
// group's bytes, of which there are at least 16).
template <unsigned Bits>
class RowDots {
 public:
  explicit RowDots(const simd::MlxRows& w)
      : codes_(reinterpret_cast<const uint8_t*>(w.codes)),
        cols_(w.cols),
        row_bytes_(w.cols * Bits / 8),
        full_(row_bytes_ / hn::Lanes(DB()) * hn::Lanes(DB())),
        quads_(Bits == 4 && kQuads ? row_bytes_ / 256 * 256 : 0),
        group_shift_(static_cast<size_t>(hwy::FloorLog2(w.group_size * Bits / 8))),
        spread_(group_of_lanes(DB(), size_t{1} << group_shift_)),
        quad_spread_(group_of_quad_lanes(DB(), size_t{1} << group_shift_)),
        spread16_(group_of_lanes(DB16(), size_t{1} << group_shift_)) {}

  // y[rows[k]] = base (0 if null) + row . x for K rows, given each one's scales and bias term.
  template <size_t K>
  void run(const size_t* rows, const float* const* scales, const float* bias_terms, const MlxInt8Activations& x,
           const float* base, float* y) const {
    const uint8_t* codes[K];
    for (size_t k = 0; k < K; ++k) codes[k] = codes_ + rows[k] * row_bytes_;
    float dot[K];
    code_parts<Bits, K>(DB(), codes, x, cols_, group_shift_, spread_, quad_spread_, scales, 0, quads_, full_, dot);
    if (full_ < row_bytes_) {
      float rest[K];
      code_parts<Bits, K>(DB16(), codes, x, cols_, group_shift_, spread16_, spread16_, scales, full_, full_,
                          row_bytes_, rest);
      for (size_t k = 0; k < K; ++k) dot[k] += rest[k];
    }
    for (size_t k = 0; k < K; ++k) y[rows[k]] = (base ? base[rows[k]] : 0.0f) + dot[k] + bias_terms[k];
  }

 private:
  using DB = hn::CappedTag<uint8_t, 64>;
  using DB16 = hn::CappedTag<uint8_t, 16>;
  const uint8_t* codes_;
  size_t cols_, row_bytes_, full_, quads_, group_shift_;  // quads_: the bytes walked in quads
  decltype(group_of_lanes(DB(), 1)) spread_, quad_spread_;
  decltype(group_of_lanes(DB16(), 1)) spread16_;
};

template <unsigned Bits, typename T>
void rows_t(const simd::MlxRows& w, const MlxInt8Activations& x, const float* base, float* y, size_t r0,
            size_t r1) {
  const RowDots<Bits> dots(w);
  for_each_mlx_row(hn::CappedTag<float, 16>(), static_cast<const T*>(w.scales), static_cast<const T*>(w.biases),
                   x.group_sums, w.cols / w.group_size, r0, r1,
                   [&](size_t r, const float* scales, float bias_term) {
                     dots.template run<1>(&r, &scales, &bias_term, x, base, y);
                   });
}

template <unsigned Bits, typename T, size_t M>
void bands_t(const simd::MlxRows& w, const MlxInt8Activations& x, const float* base, float* y,
             const RowPasses& p) {
  const RowDots<Bits> dots(w);
  for_each_mlx_pass<M>(hn::CappedTag<float, 16>(), static_cast<const T*>(w.scales), static_cast<const T*>(w.biases),
                       x.group_sums, w.cols / w.group_size, p,
                       [&](size_t count, const size_t* rows, const float* const* scales, const float* bias_terms) {
                         if (count == M) return dots.template run<M>(rows, scales, bias_terms, x, base, y);
                         dots.template run<1>(rows, scales, bias_terms, x, base, y);
                       });
}

// Calls f(bits, scale) with the matrix's code width as an integral constant
// and a value of its scale type, to instantiate the kernels for both.
template <typename F>
void with_layout(const simd::MlxRows& w, const F& f) {
  const auto with_scale = [&](auto bits) { with_mlx_scale_type(w.scale_type, [&](auto scale) { f(bits, scale); }); };
  if (w.bits == 4) return with_scale(std::integral_constant<unsigned, 4>());
  with_scale(std::integral_constant<unsigned, 8>());
}

void MlxInt8Rows(const simd::MlxRows& w, const MlxInt8Activations& x, const float* base, float* y, size_t r0,
                 size_t r1) {
  with_layout(w, [&](auto bits, auto scale) {
    rows_t<decltype(bits)::value, decltype(scale)>(w, x, base, y, r0, r1);
  });
}

void MlxInt8Bands(const simd::MlxRows& w, const MlxInt8Activations& x, const float* base, float* y,
                  const RowPasses& p) {
  with_layout(w, [&](auto bits, auto scale) {
    if (p.bands == 4) return bands_t<decltype(bits)::value, decltype(scale), 4>(w, x, base, y, p);
    bands_t<decltype(bits)::value, decltype(scale), 2>(w, x, base, y, p);
  });
}

#else  // HWY_TARGET == HWY_SCALAR: the scalar twin.

void MlxInt8Rows(const simd::MlxRows& w, const MlxInt8Activations& x, const float* base, float* y, size_t r0,
                 size_t r1) {
  for (size_t r = r0; r < r1; ++r) {
    y[r] = (base ? base[r] : 0.0f) + static_cast<float>(mlx_int8_row_dot(w, r, x));
  }
}

void MlxInt8Bands(const simd::MlxRows& w, const MlxInt8Activations& x, const float* base, float* y,
                  const RowPasses& p) {
  for_each_row(p, [&](size_t r) { y[r] = (base ? base[r] : 0.0f) + static_cast<float>(mlx_int8_row_dot(w, r, x)); });
}
#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace qwen35::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qwen35::cpu {

HWY_EXPORT(MlxInt8Rows);
HWY_EXPORT(MlxInt8Bands);

void mlx_int8_rows(const simd::MlxRows& w, const MlxInt8Activations& x, const float* base, float* y, size_t r0,
                   size_t r1) {
  HWY_DYNAMIC_DISPATCH(MlxInt8Rows)(w, x, base, y, r0, r1);
}

void mlx_int8_bands(const simd::MlxRows& w, const MlxInt8Activations& x, const float* base, float* y,
                    const RowPasses& passes) {
  HWY_DYNAMIC_DISPATCH(MlxInt8Bands)(w, x, base, y, passes);
}

}  // namespace qwen35::cpu
#endif  // HWY_ONCE
