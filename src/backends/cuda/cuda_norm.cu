// RMS norms and the attention heads' norm + RoPE (spec 3.1 steps 3-4), one
// block per row or head. Each thread writes only elements it read itself after
// the block's reduction, so outputs may alias inputs.
#include "cuda_common.cuh"
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "qwen35/kernels.h"

namespace qwen35::cuda {
namespace {

constexpr unsigned kNormThreads = 256;
constexpr unsigned kAddNormThreads = 1024;
constexpr unsigned kHeadThreads = 128;

// 1 / sqrt(mean(x^2) + eps) over x[0, n), returned to every thread of the block.
__device__ float block_inv_rms(const float* x, uint32_t n, float eps) {
  float sum_sq = 0;
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) sum_sq += x[i] * x[i];
  return 1.0f / sqrtf(block_sum(sum_sq) / static_cast<float>(n) + eps);
}

// y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * weight
__global__ void __launch_bounds__(kNormThreads)
    rms_norm_kernel(const float* x, const float* __restrict__ weight, float* y, uint32_t n_rows, uint32_t row_len,
                    uint32_t x_row_stride, uint32_t y_row_stride, float eps) {
  start_after_previous_kernel();
  for (uint32_t r = blockIdx.x; r < n_rows; r += gridDim.x) {
    const float* xr = x + size_t{r} * x_row_stride;
    float* yr = y + size_t{r} * y_row_stride;
    const float inv = block_inv_rms(xr, row_len, eps);
    for (uint32_t i = threadIdx.x; i < row_len; i += blockDim.x) yr[i] = xr[i] * inv * weight[i];
  }
}

void rms_norm(const RmsNormArgs& a, const LaunchContext& ctx) {
  launch_kernel(ctx, rms_norm_kernel, blocks_for(a.n_rows, 1, 65535), kNormThreads,
      as<const float>(a.x), as<const float>(a.weight), as<float>(a.y), a.n_rows, a.row_len, a.x_row_stride,
      a.y_row_stride, a.eps);
}

// sum = a + b; norm = rms_norm(sum) * weight. One block: n is a hidden size.
__global__ void __launch_bounds__(kAddNormThreads)
    add_rms_norm_kernel(const float* a, const float* b, const float* __restrict__ weight, float* sum, float* norm,
                        uint32_t n, float eps) {
  start_after_previous_kernel();
  float sum_sq = 0;
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float s = a[i] + b[i];
    sum[i] = s;
    sum_sq += s * s;
  }
  const float inv = 1.0f / sqrtf(block_sum(sum_sq) / static_cast<float>(n) + eps);
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) norm[i] = sum[i] * inv * weight[i];
}

void add_rms_norm(const AddRmsNormArgs& a, const LaunchContext& ctx) {
  launch_kernel(ctx, add_rms_norm_kernel, 1, kAddNormThreads, as<const float>(a.a), as<const float>(a.b),
                as<const float>(a.weight), as<float>(a.sum), as<float>(a.norm), a.n, a.eps);
}

// Per head: RMSNorm, then rotate-half RoPE on pairs (i, i + rotary_dim/2). The
// angle position * inv_freq is formed and reduced in double precision, as the
// reference does, so long positions keep their digits.
__global__ void __launch_bounds__(kHeadThreads)
    head_norm_rope_kernel(const float* x, const float* __restrict__ weight, const float* __restrict__ inv_freq,
                          const DecodeStepParams* step, float* y, uint32_t n_heads, uint32_t head_dim,
                          uint32_t x_head_stride, uint32_t rotary_dim, float eps) {
  start_after_previous_kernel();
  const double position = static_cast<double>(step->position);
  const uint32_t half = rotary_dim / 2;
  for (uint32_t h = blockIdx.x; h < n_heads; h += gridDim.x) {
    const float* xh = x + size_t{h} * x_head_stride;
    float* yh = y + size_t{h} * head_dim;
    const float inv = block_inv_rms(xh, head_dim, eps);
    for (uint32_t i = threadIdx.x; i < head_dim; i += blockDim.x) {
      if (i < half) {
        const float n0 = xh[i] * inv * weight[i];
        const float n1 = xh[i + half] * inv * weight[i + half];
        double s, c;
        sincos(position * static_cast<double>(inv_freq[i]), &s, &c);
        yh[i] = static_cast<float>(n0 * c - n1 * s);
        yh[i + half] = static_cast<float>(n1 * c + n0 * s);
      } else if (i >= 2 * half) {
        yh[i] = xh[i] * inv * weight[i];
      }
    }
  }
}

void head_norm_rope(const HeadNormRopeArgs& a, const LaunchContext& ctx) {
  launch_kernel(ctx, head_norm_rope_kernel, blocks_for(a.n_heads, 1, 65535), kHeadThreads,
      as<const float>(a.x), as<const float>(a.weight), as<const float>(a.inv_freq),
      as<const DecodeStepParams>(a.step), as<float>(a.y), a.n_heads, a.head_dim, a.x_head_stride, a.rotary_dim,
      a.eps);
}

}  // namespace

void add_norm_kernels(std::vector<KernelSpec>& specs) {
  specs.push_back(kernel_spec<RmsNormArgs, rms_norm>("rms_norm"));
  specs.push_back(kernel_spec<AddRmsNormArgs, add_rms_norm>("add_rms_norm"));
  specs.push_back(kernel_spec<HeadNormRopeArgs, head_norm_rope>("head_norm_rope"));
}

}  // namespace qwen35::cuda
