// Elementwise kernels: the attention output gate, SiLU-times-up (used only to
// compose a fused op a weight lacks) and the residual add.
#include "cuda_common.cuh"
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "qwen35/kernels.h"

namespace qwen35::cuda {
namespace {

constexpr unsigned kThreads = 256;

// y[h, i] = x[h, i] * sigmoid(gate[h * gate_head_stride + i])
__global__ void sigmoid_gate_kernel(const float* x, const float* gate, float* y, uint32_t n_heads, uint32_t head_dim,
                                    uint32_t gate_head_stride) {
  start_after_previous_kernel();
  const size_t n = size_t{n_heads} * head_dim;
  for (size_t j = blockIdx.x * size_t{blockDim.x} + threadIdx.x; j < n; j += size_t{gridDim.x} * blockDim.x) {
    const size_t h = j / head_dim, i = j % head_dim;
    y[j] = x[j] * sigmoidf(gate[h * gate_head_stride + i]);
  }
}

void sigmoid_gate(const SigmoidGateArgs& a, const LaunchContext& ctx) {
  launch_kernel(ctx, sigmoid_gate_kernel, blocks_for(size_t{a.n_heads} * a.head_dim, kThreads), kThreads,
      as<const float>(a.x), as<const float>(a.gate), as<float>(a.y), a.n_heads, a.head_dim, a.gate_head_stride);
}

__global__ void silu_mul_kernel(const float* gate, const float* up, float* y, uint32_t n) {
  start_after_previous_kernel();
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    y[i] = siluf(gate[i]) * up[i];
  }
}

void silu_mul(const SiluMulArgs& a, const LaunchContext& ctx) {
  launch_silu_mul(as<const float>(a.gate), as<const float>(a.up), as<float>(a.y), a.n, ctx);
}

__global__ void add_kernel(const float* a, const float* b, float* y, uint32_t n) {
  start_after_previous_kernel();
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = a[i] + b[i];
}

void add(const AddArgs& a, const LaunchContext& ctx) {
  launch_kernel(ctx, add_kernel, blocks_for(a.n, kThreads), kThreads, as<const float>(a.a), as<const float>(a.b),
                as<float>(a.y), a.n);
}

}  // namespace

void launch_silu_mul(const float* gate, const float* up, float* y, uint32_t n, const LaunchContext& ctx) {
  launch_kernel(ctx, silu_mul_kernel, blocks_for(n, kThreads), kThreads, gate, up, y, n);
}

void add_elementwise_kernels(std::vector<KernelSpec>& specs) {
  specs.push_back(kernel_spec<SigmoidGateArgs, sigmoid_gate>("sigmoid_gate"));
  specs.push_back(kernel_spec<SiluMulArgs, silu_mul>("silu_mul"));
  specs.push_back(kernel_spec<AddArgs, add>("add"));
}

}  // namespace qwen35::cuda
