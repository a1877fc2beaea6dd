// The core of every gemv kernel (dense and MLX): warps own kRowsPerWarp rows
// at a time and their lanes stride over the columns, so one read of the
// activation serves both rows; lanes sum by shuffles, no shared memory. The
// rows a launch covers are either one matrix or two stacked (the fused pair),
// and the result optionally adds a residual (the fused down projection).
#pragma once

#include "cuda_common.cuh"

namespace qwen35::cuda {

constexpr unsigned kGemvWarps = 4;
constexpr uint32_t kRowsPerWarp = 2;
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

// Activations: x itself, or silu(gate) * up computed on the fly.
struct PlainActivation {
  const float* x;
  __device__ float at(uint32_t c) const { return x[c]; }
  __device__ void at8(uint32_t c, float a[8]) const { F32Elem::load8(x + c, a); }
};

struct SiluGateActivation {
  const float* gate;
  const float* up;
  __device__ float at(uint32_t c) const { return siluf(gate[c]) * up[c]; }
  __device__ void at8(uint32_t c, float a[8]) const {
    float g[8], u[8];
    F32Elem::load8(gate + c, g);
    F32Elem::load8(up + c, u);
#pragma unroll
    for (int i = 0; i < 8; ++i) a[i] = siluf(g[i]) * u[i];
  }
};

// Matrix provides: `Row row(uint32_t r) const` and `static float dot(Row, Activation,
// lane, acc)`-style members; see DenseMatrix (cuda_gemv.cu) and MlxMatrix (cuda_mlx.cu).
template <typename Matrix, typename Activation>
__global__ void __launch_bounds__(kGemvThreads) gemv_rows_kernel(GemvTarget<Matrix> t, Activation act) {
  const uint32_t lane = threadIdx.x % kWarp;
  const uint32_t rows = t.rows0 + t.rows1;
  const size_t stride = size_t{gridDim.x} * kGemvWarps * kRowsPerWarp;
  for (size_t first = (size_t{blockIdx.x} * kGemvWarps + threadIdx.x / kWarp) * kRowsPerWarp; first < rows;
       first += stride) {
    typename Matrix::Row row[kRowsPerWarp];
#pragma unroll
    for (uint32_t r = 0; r < kRowsPerWarp; ++r) {
      const size_t i = first + r;
      row[r] = i >= rows ? typename Matrix::Row{} : i < t.rows0 ? t.m0.row(static_cast<uint32_t>(i))
                                                                 : t.m1.row(static_cast<uint32_t>(i - t.rows0));
    }
    float acc[kRowsPerWarp];
    Matrix::template dot_rows<kRowsPerWarp>(t.m0, row, act, lane, acc);
#pragma unroll
    for (uint32_t r = 0; r < kRowsPerWarp; ++r) {
      const float sum = warp_sum(acc[r]);
      const size_t i = first + r;
      if (lane == 0 && i < rows) {
        if (i < t.rows0) {
          t.y0[i] = t.residual != nullptr ? t.residual[i] + sum : sum;
        } else {
          t.y1[i - t.rows0] = sum;
        }
      }
    }
  }
}

template <typename Matrix, typename Activation>
void launch_gemv_rows(const GemvTarget<Matrix>& t, const Activation& act, cudaStream_t stream) {
  const size_t warps = (size_t{t.rows0} + t.rows1 + kRowsPerWarp - 1) / kRowsPerWarp;
  gemv_rows_kernel<<<blocks_for(warps, kGemvWarps, 1u << 30), kGemvThreads, 0, stream>>>(t, act);
}

}  // namespace qwen35::cuda
