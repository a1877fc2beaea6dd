// Gated DeltaNet kernels on the CPU: conv update + SiLU + L2 norm, decay and
// beta, and the recurrent step. The state is stored transposed ([dv, dk]), so
// the step walks each value channel's column once while it is in L1; the
// output uses out = decay S^T q + delta (k . q), equal to reading q from the
// updated state (spec 3.2 step 7).
#include <algorithm>
#include <cmath>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_math.h"
#include "qwen35/kernels.h"

namespace qwen35 {
namespace {

void conv_silu_l2norm(ThreadPool& pool, const ConvSiluL2NormArgs& a) {
  const float* u = host_ptr<const float>(a.u);
  float* state = host_ptr<float>(a.state);
  const float* w = host_ptr<const float>(a.weight);
  float* out = host_ptr<float>(a.out);
  const uint32_t history = a.conv_kernel - 1;
  const uint32_t hd = a.head_dim_k;
  // Tasks of whole heads, so each task also L2-normalises the q and k heads it convolved.
  const size_t grain = std::max<size_t>(1, 1024 / hd) * hd;
  pool.parallel_for(a.conv_dim, grain, [&](size_t begin, size_t end) {
    if (a.conv_kernel == 4) {  // every Qwen3.5 size: vectorized, SiLU included
      simd::conv4_silu(u, state, w, out, begin, end, a.conv_dim);
    } else {
      for (size_t c = begin; c < end; ++c) {
        const float* wc = w + c * a.conv_kernel;
        float acc = wc[history] * u[c];
        for (uint32_t j = 0; j < history; ++j) acc += wc[j] * state[j * a.conv_dim + c];
        out[c] = cpu::silu(acc);
        for (uint32_t j = 0; j + 1 < history; ++j) state[j * a.conv_dim + c] = state[(j + 1) * a.conv_dim + c];
        if (history > 0) state[size_t{history - 1} * a.conv_dim + c] = u[c];
      }
    }
    for (size_t h = begin / hd; h < std::min<size_t>(end / hd, 2 * a.n_heads_k); ++h) {
      float* x = out + h * hd;
      const float scale = (h < a.n_heads_k ? a.q_scale : 1.0f) / std::sqrt(simd::sum_squares(x, hd) + 1e-6f);
      for (uint32_t i = 0; i < hd; ++i) x[i] *= scale;
    }
  });
}

void gdn_gate_beta(const GdnGateBetaArgs& a) {
  for (uint32_t j = 0; j < a.n_heads_v; ++j) {
    const float x = host_ptr<const float>(a.a)[j] + host_ptr<const float>(a.dt_bias)[j];
    const float softplus = x > 20.0f ? x : std::log1p(std::exp(x));
    host_ptr<float>(a.decay)[j] = std::exp(-std::exp(host_ptr<const float>(a.a_log)[j]) * softplus);
    host_ptr<float>(a.beta)[j] = cpu::sigmoid(host_ptr<const float>(a.b)[j]);
  }
}

void gdn_head(const GdnRecurrentArgs& a, uint32_t j) {
  const uint32_t dk = a.head_dim_k, dv = a.head_dim_v;
  const float* q_all = host_ptr<const float>(a.qkv);
  const float* k_all = q_all + size_t{a.n_heads_k} * dk;
  const float* v_all = k_all + size_t{a.n_heads_k} * dk;
  const uint32_t kj = a.tiled_value_heads ? j % a.n_heads_k : j / (a.n_heads_v / a.n_heads_k);
  simd::gdn_head(host_ptr<float>(a.state) + size_t{j} * dv * dk, q_all + size_t{kj} * dk, k_all + size_t{kj} * dk,
                 v_all + size_t{j} * dv, host_ptr<const float>(a.decay)[j], host_ptr<const float>(a.beta)[j],
                 host_ptr<float>(a.out) + size_t{j} * dv, dk, dv);
}

void gdn_recurrent(ThreadPool& pool, const GdnRecurrentArgs& a) {
  pool.parallel_for(a.n_heads_v, 1, [&](size_t begin, size_t end) {
    for (size_t j = begin; j < end; ++j) gdn_head(a, static_cast<uint32_t>(j));
  });
}

}  // namespace

void register_cpu_gdn_kernels(CpuBackend& cpu) {
  ThreadPool& pool = cpu.pool();
  cpu.register_kernel<ConvSiluL2NormArgs>("conv_silu_l2norm",
                                          [&pool](const ConvSiluL2NormArgs& a) { conv_silu_l2norm(pool, a); });
  cpu.register_kernel<GdnGateBetaArgs>("gdn_gate_beta", gdn_gate_beta);
  cpu.register_kernel<GdnRecurrentArgs>("gdn_recurrent",
                                        [&pool](const GdnRecurrentArgs& a) { gdn_recurrent(pool, a); });
}

}  // namespace qwen35
