// The CPU backend's vector primitives, compiled by Highway for every target
// this build supports (scalar, SSE4, AVX2, AVX-512, NEON, ...) and chosen at run
// time for the CPU present, as the operating system enables it (Highway checks
// XCR0, so a CPUID flag alone never selects an instruction set).
// Each has a plain scalar twin in the reference backend that its tests use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cpu/row_bands.h"

namespace qwen35::simd {

enum class WeightType : uint8_t { kF32, kBF16, kF16 };

// y[r] = base[r] + W[r, :] . x for r in [row_begin, row_end); W rows of `cols`
// elements of `type`. base may be null (then 0); y may alias base.
// One row at a time: the reference whose bits gemv_bands must give.
void gemv_rows(WeightType type, const void* w, const float* x, const float* base, float* y, size_t row_begin,
               size_t row_end, size_t cols);

// gemv_rows for the rows of passes p of 2 or 4 bands (cpu/row_bands.h): a row
// of each band at a time sharing x's loads, each band one read stream,
// prefetched ahead. Every row's result is gemv_rows' to the bit.
void gemv_bands(WeightType type, const void* w, const float* x, const float* base, float* y,
                const cpu::RowPasses& passes, size_t cols);

// The rows of one MLX affine matrix (layout in qwen35/mlx_affine.h).
struct MlxRows {
  const uint32_t* codes;  // [rows, cols * bits / 32]
  const void* scales;     // [rows, cols / group_size] of scale_type
  const void* biases;     // [rows, cols / group_size] of scale_type
  WeightType scale_type;
  unsigned bits;  // 4 or 8
  size_t cols, group_size;  // group_size 32, 64 or 128
};

// x in the order the codes decode (8 bits: unchanged; 4 bits: each block of 32
// becomes its 16 even elements, the low nibbles, then its 16 odd ones), and
// x_sums[g] = sum of group g of x. Done once per gemv, shared by all rows.
void mlx_prepare_x(unsigned bits, const float* x, size_t cols, size_t group_size, float* x_coded, float* x_sums);

// y[r] = base[r] + sum over groups g of scale[r, g] * (q[r, g] . x_g) + bias[r, g] * x_sums[g]
// for r in [row_begin, row_end); base may be null (then 0); y may alias base.
void mlx_gemv_rows(const MlxRows& w, const float* x_coded, const float* x_sums, const float* base, float* y,
                   size_t row_begin, size_t row_end);
// mlx_gemv_rows for the rows of passes p of 2 or 4 bands (cpu/row_bands.h): a
// row of each band at a time sharing x's loads. Every row's result is
// mlx_gemv_rows' to the bit.
void mlx_gemv_bands(const MlxRows& w, const float* x_coded, const float* x_sums, const float* base, float* y,
                    const cpu::RowPasses& passes);

// a . b over n floats; and the same with `a` stored as `type`.
float dot(WeightType type, const void* a, const float* b, size_t n);
float sum_squares(const float* x, size_t n);
// y[i] = x[i] * scale * w[i].
void scale_mul(const float* x, float scale, const float* w, float* y, size_t n);
// y[i] = y[i] * keep + p * x[i], x stored as `type` (the online-softmax update).
void scale_add(WeightType type, const void* x, float keep, float p, float* y, size_t n);
// A block of cached K or V rows for decode attention: n_rows rows,
// row_stride elements apart, each holding n_heads slices of head_dim elements
// (stored as `type`); query head j reads the slice of KV head j / group. The
// kernels read each row once, in order, for all query heads, and also ask for
// the rows prefetch_rows on (0: none) as they go, into L2 (prefetch.h's
// prefetch_past_to_l2) or, if prefetch_to_l1, into L1.
struct KvBlock {
  const void* rows;
  WeightType type;
  size_t row_stride, n_rows, n_heads, head_dim, group;
  size_t prefetch_rows;
  bool prefetch_to_l1 = false;
  // True for rows in the fp8 KV-cache format (`type` unused): n_heads *
  // head_dim E4M3 codes, then a BF16 scale per 16 of them; row_stride counts
  // bytes, and head_dim is a multiple of 16. Decoded in registers as read.
  bool fp8 = false;
};
// scores[j * score_stride + b] = slice(b, j / group) . queries[j], for the
// n_heads * group query heads; queries are rows of head_dim floats.
void attention_scores(const KvBlock& k, const float* queries, float* scores, size_t score_stride);
// accs[j * acc_stride + i] += sum_b weights[j * weight_stride + b] * slice(b, j / group)[i].
void attention_values(const KvBlock& v, const float* weights, size_t weight_stride, float* accs, size_t acc_stride);
// x[i] = exp(x[i] * scale - shift) for i < n; returns the sum of the new x.
float exp_shifted(float* x, size_t n, float scale, float shift);
// The largest of x[0..n), n >= 1.
float max_value(const float* x, size_t n);
// y[i] = silu(gate[i]) * up[i].
void silu_mul(const float* gate, const float* up, float* y, size_t n);
// y[i] = x[i] * sigmoid(gate[i]).
void sigmoid_mul(const float* x, const float* gate, float* y, size_t n);
// Channels [begin, end) of Gated DeltaNet's width-4 causal conv: out = silu(w . [history
// rows of state, u]), then the history ([3, conv_dim]) shifted to end with u. w is [C, 4].
void conv4_silu(const float* u, float* state, const float* w, float* out, size_t begin, size_t end, size_t conv_dim);
// One Gated DeltaNet head, state stored as S^T [dv, dk] (see GdnRecurrentArgs).
void gdn_head(float* state, const float* q, const float* k, const float* v, float decay, float beta, float* out,
              size_t dk, size_t dv);

// Sum of n floats read as `streams` (1..8) equal consecutive parts walked
// side by side, optionally prefetching `prefetch_bytes` ahead in each: the
// read-bandwidth probe's access patterns.
float read_streams(const float* p, size_t n, size_t streams, size_t prefetch_bytes);

// The target the dispatcher picks now ("AVX3", "AVX2", "NEON", "SCALAR", ...).
std::string current_target();
// For tests: every target compiled in and supported here, as Highway bit masks,
// and forcing one of them (0 restores normal dispatch).
std::vector<int64_t> available_targets();
std::string target_name(int64_t target);
void force_target(int64_t target);

}  // namespace qwen35::simd
