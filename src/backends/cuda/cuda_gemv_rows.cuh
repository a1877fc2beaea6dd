// The core of every gemv kernel (dense and MLX): warps own kRowsPerWarp rows
// at a time and their lanes stride over the columns, so one read of the
// activation serves both rows; lanes sum by shuffles. The
// rows a launch covers are either one matrix or two stacked (the fused pair),
// and the result optionally adds a residual (the fused down projection).
#pragma once

#include "cuda_common.cuh"
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "qwen35/error.h"

namespace qwen35::cuda {

constexpr unsigned kGemvWarps = 8;
constexpr uint32_t kRowsPerWarp = 2;
constexpr uint32_t kGemvBatch = 4;  // column steps whose loads a thread issues together
constexpr unsigned kGemvThreads = kGemvWarps * kWarp;

// y = W x or y0 = W0 x, y1 = W1 x (rows rows0 .. rows0 + rows1 - 1 of the
// stacked launch), plus residual[row] where residual is non-null. Matrix is
// the weight's view (a row's data and how to dot it).
template <typename Matrix>
struct GemvTarget {
  Matrix m0, m1;
  float* y0;
  float* y1;
  const float* residual;  // may be null; added to y0 only (the pair has none)
  uint32_t rows0, rows1;
};

// The activation vector, read eight (or four) floats at a time on the vector paths.
struct PlainActivation {
  const float* x;
  __device__ float at(uint32_t c) const { return x[c]; }
  __device__ void at8(uint32_t c, float a[8]) const { F32Elem::load8(x + c, a); }
  __device__ void at4(uint32_t c, float a[4]) const {
    const float4 v = *reinterpret_cast<const float4*>(x + c);
    a[0] = v.x, a[1] = v.y, a[2] = v.z, a[3] = v.w;
  }
};

// gemv_silu_gate's activation silu(gate) * up, computed once into the backend's
// scratch by its own small kernel: inside the gemv every warp would recompute an
// exp and a division per element for each pair of rows it owns, which made the
// down projection compute-bound.
inline PlainActivation silu_gate_activation(const float* gate, const float* up, uint32_t n, const LaunchContext& ctx) {
  QWEN35_ASSERT(size_t{n} * sizeof(float) <= ctx.scratch_bytes);
  float* act = static_cast<float*>(ctx.scratch);
  launch_silu_mul(gate, up, act, n, ctx);
  return PlainActivation{act};
}

// body(Vector{}) or body(Scalar{}): a matrix view whose loads need 16-byte
// aligned data and whole steps, or its element-at-a-time twin.
template <typename Vector, typename Scalar, typename Body>
void with_matrix(bool vector_path, Body body) {
  if (vector_path) {
    body(Vector{});
  } else {
    body(Scalar{});
  }
}

// step(c) for c = first, first + stride, ... below end, kBatch calls at a time with
// no bounds check between them, so that a thread issues their loads together.
template <uint32_t kBatch, typename Step>
__device__ void batched_columns(uint32_t first, uint32_t stride, uint32_t end, Step step) {
  uint32_t c = first;
  for (; c + (kBatch - 1) * stride < end; c += kBatch * stride) {
#pragma unroll
    for (uint32_t b = 0; b < kBatch; ++b) step(c + b * stride);
  }
  for (; c < end; c += stride) step(c);
}

// Matrix provides: `Row row(uint32_t r) const`, `static constexpr uint32_t kColsPerThread`
// (columns one thread takes per step), `size_t row_bytes() const` (the bytes of
// a row's weights, which start at row(r).weights()) and `static dot_rows(m, rows, act, index, count, acc)`,
// which sums the columns of thread `index` of `count` threads sharing the rows; see
// DenseMatrix (cuda_gemv.cu) and MlxMatrix (cuda_mlx.cu).
//
// `split` warps (1, 2, 4 or 8) share each group of kRowsPerWarp rows, each over
// a slice of the columns, and add their sums through shared memory in a fixed
// order. Splitting keeps the chip busy when a matrix has few, long rows (the
// down and output projections), where one warp per row group leaves most
// multiprocessors idle and each warp's loads wait on each other.
//
// Before it waits for the previous kernel, a block asks L2 for the first
// prefetch_row_bytes of each row of its first tile (weights: no kernel writes
// them), so that with programmatic launch those reads overlap the previous
// kernel's tail instead of starting after it.
template <typename Matrix, typename Activation>
__global__ void __launch_bounds__(kGemvThreads)
    gemv_rows_kernel(GemvTarget<Matrix> t, Activation act, uint32_t split, uint32_t prefetch_row_bytes) {
  __shared__ float partials[kGemvWarps][kRowsPerWarp];
  const uint32_t lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const uint32_t groups_per_block = kGemvWarps / split;
  const uint32_t group = warp / split, slice = warp % split;
  const uint32_t rows = t.rows0 + t.rows1;
  const size_t rows_per_block = size_t{groups_per_block} * kRowsPerWarp;
  const size_t tiles = (rows + rows_per_block - 1) / rows_per_block;
  if (prefetch_row_bytes > 0 && threadIdx.x < rows_per_block) {
    const size_t i = blockIdx.x * rows_per_block + threadIdx.x;
    if (i < rows) {
      const Matrix& m = i < t.rows0 ? t.m0 : t.m1;
      const auto row = m.row(static_cast<uint32_t>(i < t.rows0 ? i : i - t.rows0));
      prefetch_l2(row.weights(), m.row_bytes() < prefetch_row_bytes ? m.row_bytes() : prefetch_row_bytes);
    }
  }
  start_after_previous_kernel();
  // Every warp of a block runs the same number of tiles: the barriers below need it.
  for (size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const size_t first = (tile * groups_per_block + group) * kRowsPerWarp;
    typename Matrix::Row row[kRowsPerWarp];
#pragma unroll
    for (uint32_t r = 0; r < kRowsPerWarp; ++r) {
      const size_t i = first + r;
      // Past the last row, a real row again: the dot loops stay branch-free; the result is dropped.
      row[r] = i >= rows ? t.m0.row(0) : i < t.rows0 ? t.m0.row(static_cast<uint32_t>(i))
                                                     : t.m1.row(static_cast<uint32_t>(i - t.rows0));
    }
    float acc[kRowsPerWarp];
    Matrix::template dot_rows<kRowsPerWarp>(t.m0, row, act, slice * kWarp + lane, split * kWarp, acc);
#pragma unroll
    for (uint32_t r = 0; r < kRowsPerWarp; ++r) acc[r] = warp_sum(acc[r]);
    if (split > 1) {
      if (lane == 0) {
#pragma unroll
        for (uint32_t r = 0; r < kRowsPerWarp; ++r) partials[warp][r] = acc[r];
      }
      __syncthreads();
      if (slice == 0 && lane == 0) {
#pragma unroll
        for (uint32_t r = 0; r < kRowsPerWarp; ++r) {
          acc[r] = 0.0f;
          for (uint32_t s = 0; s < split; ++s) acc[r] += partials[warp + s][r];
        }
      }
      __syncthreads();  // partials are rewritten by the next tile
    }
    if (slice == 0 && lane == 0) {
#pragma unroll
      for (uint32_t r = 0; r < kRowsPerWarp; ++r) {
        const size_t i = first + r;
        if (i >= rows) break;
        if (i < t.rows0) {
          t.y0[i] = t.residual != nullptr ? t.residual[i] + acc[r] : acc[r];
        } else {
          t.y1[i - t.rows0] = acc[r];
        }
      }
    }
  }
}

// Warps per row group: up to `wanted` warps in all (LaunchContext::
// gemv_wanted_warps), as long as every warp gets at least one step of columns;
// at most the 8 warps of a block. Splitting helps matrices of few, long rows
// (the 0.8B shape's down and output projections), but each split adds a
// shared-memory reduction and leaves each warp fewer loads in flight: on an H200
// the 9B shape ran fastest at 4096 of 4096..65536 in bf16 and mlx8
// (docs/performance.md). QWEN35_CUDA_GEMV_WARPS sets `wanted` for such sweeps.
inline uint32_t gemv_split(size_t row_groups, uint32_t cols, uint32_t cols_per_thread, size_t wanted) {
  uint32_t split = 1;
  while (split < kGemvWarps && size_t{2} * split * kWarp * cols_per_thread <= cols && row_groups * split < wanted) {
    split *= 2;
  }
  return split;
}

template <typename Matrix, typename Activation>
void launch_gemv_rows(const GemvTarget<Matrix>& t, const Activation& act, const LaunchContext& ctx) {
  const size_t row_groups = (size_t{t.rows0} + t.rows1 + kRowsPerWarp - 1) / kRowsPerWarp;
  const uint32_t split = gemv_split(row_groups, t.m0.cols, Matrix::kColsPerThread, ctx.gemv_wanted_warps);
  const size_t groups_per_block = kGemvWarps / split;
  launch_kernel(ctx, gemv_rows_kernel<Matrix, Activation>, blocks_for(row_groups, groups_per_block, 1u << 30),
                kGemvThreads, t, act, split, ctx.prefetch_row_bytes);
}

}  // namespace qwen35::cuda
