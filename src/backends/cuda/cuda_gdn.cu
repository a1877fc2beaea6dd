// Gated DeltaNet (spec 3.2): the causal conv with SiLU and q/k L2 norms, the
// per-head decay and beta, and the recurrent step on the FP32 state stored as
// S^T [n_heads_v, head_dim_v, head_dim_k]: one warp per (value head, value
// channel) holds that channel's dk-long column in registers (coalesced loads
// and stores), so the step reads and writes the state exactly once.
#include "cuda_common.cuh"
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "qwen35/kernels.h"

namespace qwen35::cuda {
namespace {

constexpr unsigned kConvThreads = 128;

// silu(conv) of channel c over [state rows, u]; shifts u into the channel's state.
__device__ float conv_channel(const float* u, float* state, const float* weight, uint32_t conv_dim,
                              uint32_t conv_kernel, uint32_t c) {
  const uint32_t history = conv_kernel - 1;
  const float* w = weight + size_t{c} * conv_kernel;
  const float uc = u[c];
  float acc = 0.0f;
  for (uint32_t j = 0; j < history; ++j) acc += w[j] * state[size_t{j} * conv_dim + c];
  acc += w[history] * uc;
  for (uint32_t j = 0; j + 1 < history; ++j) state[size_t{j} * conv_dim + c] = state[size_t{j + 1} * conv_dim + c];
  if (history > 0) state[size_t{history - 1} * conv_dim + c] = uc;
  return siluf(acc);
}

// Blocks 0 .. 2 n_heads_k - 1 own one q or k head each (they need its norm);
// the rest own kConvThreads value channels each.
__global__ void __launch_bounds__(kConvThreads)
    conv_silu_l2norm_kernel(const float* u, float* state, const float* __restrict__ weight, float* out,
                            uint32_t conv_dim, uint32_t conv_kernel, uint32_t n_heads_k, uint32_t head_dim_k,
                            float q_scale) {
  start_after_previous_kernel();
  const uint32_t n_normed = 2 * n_heads_k;
  const uint32_t value_begin = n_normed * head_dim_k;
  const uint32_t n_groups = n_normed + (conv_dim - value_begin + kConvThreads - 1) / kConvThreads;
  for (uint32_t g = blockIdx.x; g < n_groups; g += gridDim.x) {
    if (g < n_normed) {
      const uint32_t base = g * head_dim_k;
      float sum_sq = 0.0f;
      for (uint32_t i = threadIdx.x; i < head_dim_k; i += blockDim.x) {
        const float value = conv_channel(u, state, weight, conv_dim, conv_kernel, base + i);
        out[base + i] = value;
        sum_sq += value * value;
      }
      // x / sqrt(sum x^2 + 1e-6), q additionally times q_scale; each thread rescales what it wrote.
      const float scale = (g < n_heads_k ? q_scale : 1.0f) / sqrtf(block_sum(sum_sq) + 1e-6f);
      for (uint32_t i = threadIdx.x; i < head_dim_k; i += blockDim.x) out[base + i] *= scale;
    } else {
      const uint32_t c = value_begin + (g - n_normed) * kConvThreads + threadIdx.x;
      if (c < conv_dim) out[c] = conv_channel(u, state, weight, conv_dim, conv_kernel, c);
    }
  }
}

void conv_silu_l2norm(const ConvSiluL2NormArgs& a, const LaunchContext& ctx) {
  QWEN35_ASSERT(a.conv_kernel >= 1 && a.conv_dim >= 2 * a.n_heads_k * a.head_dim_k);
  const size_t n_normed = 2 * size_t{a.n_heads_k};
  const size_t groups = n_normed + (a.conv_dim - n_normed * a.head_dim_k + kConvThreads - 1) / kConvThreads;
  launch_kernel(ctx, conv_silu_l2norm_kernel, blocks_for(groups, 1, 65535), kConvThreads,
      as<const float>(a.u), as<float>(a.state), as<const float>(a.weight), as<float>(a.out), a.conv_dim,
      a.conv_kernel, a.n_heads_k, a.head_dim_k, a.q_scale);
}

// decay = exp(-exp(a_log) softplus(a + dt_bias)); beta = sigmoid(b). In double, as the reference.
__global__ void gdn_gate_beta_kernel(const float* a, const float* b, const float* a_log, const float* dt_bias,
                                     float* decay, float* beta, uint32_t n) {
  start_after_previous_kernel();
  for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x) {
    const double x = static_cast<double>(a[j]) + dt_bias[j];
    const double softplus = x > 20.0 ? x : log1p(exp(x));
    decay[j] = static_cast<float>(exp(-exp(static_cast<double>(a_log[j])) * softplus));
    beta[j] = static_cast<float>(1.0 / (1.0 + exp(-static_cast<double>(b[j]))));
  }
}

void gdn_gate_beta(const GdnGateBetaArgs& a, const LaunchContext& ctx) {
  launch_kernel(ctx, gdn_gate_beta_kernel, blocks_for(a.n_heads_v, 64), 64,
      as<const float>(a.a), as<const float>(a.b), as<const float>(a.a_log), as<const float>(a.dt_bias),
      as<float>(a.decay), as<float>(a.beta), a.n_heads_v);
}

constexpr unsigned kGdnWarps = 8;
constexpr uint32_t kMaxDk = 256;
constexpr uint32_t kPerLane = kMaxDk / kWarp;

// Spec 3.2 step 7 for channel c of value head j, S the head's [dk, dv] state:
// S = decay S; m = S^T k; delta = beta (v - m); S += k delta^T; out = S^T q.
__global__ void __launch_bounds__(kGdnWarps * kWarp)
    gdn_recurrent_kernel(const float* qkv, const float* decay, const float* beta, float* state, float* out,
                         uint32_t n_heads_k, uint32_t n_heads_v, uint32_t dk, uint32_t dv, uint32_t tiled) {
  start_after_previous_kernel();
  const uint32_t lane = threadIdx.x % kWarp;
  const size_t channels = size_t{n_heads_v} * dv;
  for (size_t item = size_t{blockIdx.x} * kGdnWarps + threadIdx.x / kWarp; item < channels;
       item += size_t{gridDim.x} * kGdnWarps) {
    const uint32_t j = static_cast<uint32_t>(item / dv);
    const uint32_t kj = tiled != 0 ? j % n_heads_k : j / (n_heads_v / n_heads_k);
    const float* q = qkv + size_t{kj} * dk;
    const float* k = qkv + size_t{n_heads_k + kj} * dk;
    const float v = qkv[size_t{2} * n_heads_k * dk + item];
    float* column = state + item * dk;  // S[:, c], contiguous in S^T
    const float head_decay = decay[j], head_beta = beta[j];

    float s[kPerLane], k_lane[kPerLane];
    float m = 0.0f;
#pragma unroll
    for (uint32_t i = 0; i < kPerLane; ++i) {
      const uint32_t r = lane + kWarp * i;
      s[i] = r < dk ? column[r] * head_decay : 0.0f;
      k_lane[i] = r < dk ? k[r] : 0.0f;
      m += s[i] * k_lane[i];
    }
    const float delta = head_beta * (v - warp_sum(m));
    float o = 0.0f;
#pragma unroll
    for (uint32_t i = 0; i < kPerLane; ++i) {
      const uint32_t r = lane + kWarp * i;
      if (r < dk) {
        s[i] += k_lane[i] * delta;
        column[r] = s[i];
        o += s[i] * q[r];
      }
    }
    o = warp_sum(o);
    if (lane == 0) out[item] = o;
  }
}

void gdn_recurrent(const GdnRecurrentArgs& a, const LaunchContext& ctx) {
  QWEN35_ASSERT(a.head_dim_k <= kMaxDk);
  QWEN35_ASSERT(a.n_heads_k > 0 && a.n_heads_v % a.n_heads_k == 0);
  const size_t channels = size_t{a.n_heads_v} * a.head_dim_v;
  launch_kernel(ctx, gdn_recurrent_kernel, blocks_for(channels, kGdnWarps), kGdnWarps * kWarp,
      as<const float>(a.qkv), as<const float>(a.decay), as<const float>(a.beta), as<float>(a.state),
      as<float>(a.out), a.n_heads_k, a.n_heads_v, a.head_dim_k, a.head_dim_v, a.tiled_value_heads);
}

}  // namespace

void add_gdn_kernels(std::vector<KernelSpec>& specs) {
  specs.push_back(kernel_spec<ConvSiluL2NormArgs, conv_silu_l2norm>("conv_silu_l2norm"));
  specs.push_back(kernel_spec<GdnGateBetaArgs, gdn_gate_beta>("gdn_gate_beta"));
  specs.push_back(kernel_spec<GdnRecurrentArgs, gdn_recurrent>("gdn_recurrent"));
}

}  // namespace qwen35::cuda
