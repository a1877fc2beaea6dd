// Dense gemv family for F32, BF16 and F16 weights (GemvArgs and friends in
// qwen35/dense_weights.h): 16-byte loads of 8 weights per lane when the rows
// and activations allow it, one element per lane otherwise; f32 accumulation.
#include "cuda_common.cuh"
#include "cuda_gemv_rows.cuh"
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "qwen35/dense_weights.h"

namespace qwen35::cuda {
namespace {

// A [rows, cols] matrix of E; kVector: rows and activations 16-byte aligned and cols % 8 == 0.
template <typename E, bool kVector>
struct DenseMatrix {
  using S = typename E::Storage;
  struct Row {
    const S* w;
    __device__ const void* weights() const { return w; }
  };
  static constexpr uint32_t kColsPerThread = kVector ? 8 : 1;
  const S* w;
  uint32_t cols;

  __device__ size_t row_bytes() const { return size_t{cols} * sizeof(S); }

  __device__ Row row(uint32_t r) const { return Row{w + size_t{r} * cols}; }

  // Rows are always valid (the kernel repeats a real row past the end), so the
  // loop body has no branches and the compiler issues a batch's loads together.
  template <uint32_t kRows, typename Activation>
  __device__ static void dot_rows(const DenseMatrix& m, const Row (&rows)[kRows], const Activation& act,
                                  uint32_t index, uint32_t count, float (&acc)[kRows]) {
#pragma unroll
    for (uint32_t r = 0; r < kRows; ++r) acc[r] = 0.0f;
    if constexpr (kVector) {
      const auto step8 = [&](uint32_t c) {
        float a[8], w[kRows][8];
#pragma unroll
        for (uint32_t r = 0; r < kRows; ++r) E::template load8<true>(rows[r].w + c, w[r]);
        act.at8(c, a);
#pragma unroll
        for (uint32_t r = 0; r < kRows; ++r) {
#pragma unroll
          for (int k = 0; k < 8; ++k) acc[r] = fmaf(w[r][k], a[k], acc[r]);
        }
      };
      batched_columns<kGemvBatch>(index * 8, count * 8, m.cols, step8);
    } else {
      for (uint32_t c = index; c < m.cols; c += count) {
        const float a = act.at(c);
#pragma unroll
        for (uint32_t r = 0; r < kRows; ++r) acc[r] = fmaf(E::load(rows[r].w[c]), a, acc[r]);
      }
    }
  }
};

// Runs `body(matrix_tag)` with the vector or scalar DenseMatrix type.
template <typename E, typename Body>
void with_dense(bool vector_path, Body body) {
  with_matrix<DenseMatrix<E, true>, DenseMatrix<E, false>>(vector_path, body);
}

template <typename E>
void gemv(const GemvArgs& a, const LaunchContext& ctx) {
  using S = typename E::Storage;
  const S* w = as<const S>(a.w);
  const float* x = as<const float>(a.x);
  with_dense<E>(a.cols % 8 == 0 && aligned16(w) && aligned16(x), [&](auto tag) {
    using M = decltype(tag);
    launch_gemv_rows(GemvTarget<M>{.m0 = M{w, a.cols}, .m1 = M{nullptr, a.cols}, .y0 = as<float>(a.y), .y1 = nullptr,
                                   .residual = nullptr, .rows0 = a.rows, .rows1 = 0},
                     PlainActivation{x}, ctx);
  });
}

template <typename E>
void gemv_pair(const GemvPairArgs& a, const LaunchContext& ctx) {
  using S = typename E::Storage;
  const S* w0 = as<const S>(a.w0);
  const S* w1 = as<const S>(a.w1);
  const float* x = as<const float>(a.x);
  with_dense<E>(a.cols % 8 == 0 && aligned16(w0) && aligned16(w1) && aligned16(x), [&](auto tag) {
    using M = decltype(tag);
    launch_gemv_rows(GemvTarget<M>{.m0 = M{w0, a.cols}, .m1 = M{w1, a.cols}, .y0 = as<float>(a.y0),
                                   .y1 = as<float>(a.y1), .residual = nullptr, .rows0 = a.rows0, .rows1 = a.rows1},
                     PlainActivation{x}, ctx);
  });
}

template <typename E>
void gemv_silu_gate(const GemvSiluGateArgs& a, const LaunchContext& ctx) {
  using S = typename E::Storage;
  const S* w = as<const S>(a.w);
  const PlainActivation act = silu_gate_activation(as<const float>(a.gate), as<const float>(a.up), a.cols, ctx);
  with_dense<E>(a.cols % 8 == 0 && aligned16(w) && aligned16(act.x), [&](auto tag) {
    using M = decltype(tag);
    launch_gemv_rows(GemvTarget<M>{.m0 = M{w, a.cols}, .m1 = M{nullptr, a.cols}, .y0 = as<float>(a.y), .y1 = nullptr,
                                   .residual = as<const float>(a.residual), .rows0 = a.rows, .rows1 = 0},
                     act, ctx.after_kernel());
  });
}

template <typename E>
__global__ void row_to_f32_kernel(const typename E::Storage* row, float* y, uint32_t cols) {
  start_after_previous_kernel();
  for (uint32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += gridDim.x * blockDim.x) y[c] = E::load(row[c]);
}

template <typename E>
void row_to_f32(const RowToF32Args& a, const LaunchContext& ctx) {
  using S = typename E::Storage;
  launch_kernel(ctx, row_to_f32_kernel<E>, blocks_for(a.cols, 256), 256, as<const S>(a.w) + size_t{a.row} * a.cols,
                as<float>(a.y), a.cols);
}

template <typename E>
void add_for(std::vector<KernelSpec>& specs, const std::string& dtype) {
  specs.push_back(kernel_spec<GemvArgs, gemv<E>>("gemv_" + dtype));
  specs.push_back(kernel_spec<GemvPairArgs, gemv_pair<E>>("gemv_pair_" + dtype));
  specs.push_back(kernel_spec<GemvSiluGateArgs, gemv_silu_gate<E>>("gemv_silu_gate_" + dtype));
  specs.push_back(kernel_spec<RowToF32Args, row_to_f32<E>>("row_to_f32_" + dtype));
}

}  // namespace

void add_gemv_kernels(std::vector<KernelSpec>& specs) {
  add_for<F32Elem>(specs, "f32");
  add_for<BF16Elem>(specs, "bf16");
  add_for<F16Elem>(specs, "f16");
}

}  // namespace qwen35::cuda
