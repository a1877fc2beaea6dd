// Gated DeltaNet kernels on the CPU: conv update + SiLU + L2 norm, decay and
// beta, and the recurrent step. The state is stored transposed ([dv, dk]), so
// the step walks each value channel's column once while it is in L1; the
// output uses out = decay S^T q + delta (k . q), equal to reading q from the
// updated state (spec 3.2 step 7).
#include <algorithm>
#include <cmath>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_math.h"
#include "cpu/gemv_scheduler.h"
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
  // Rows of one key head's width of channels (the last may be short), split
  // by the gemv scheduler, so that each piece also L2-normalises the q and k
  // heads it convolved. Tasks of 1024 channels in turn read the layer's
  // weights and history from DRAM ~17% slower (BM_ConvSiluL2Norm).
  const size_t row_bytes = size_t{hd} * (a.conv_kernel + history + 1) * sizeof(float);  // weights, history, u
  cpu::parallel_gemv_rows(pool, (a.conv_dim + hd - 1) / hd, row_bytes, [&](size_t head_begin, size_t head_end) {
    const size_t begin = head_begin * hd, end = std::min<size_t>(head_end * hd, a.conv_dim);
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

// Value channels [c_begin, c_end) of value head j. Each channel owns one row
// of the transposed state and reads only the head's q and k, so a head split
// into channel ranges computes the same bits as whole.
void gdn_channels(const GdnRecurrentArgs& a, uint32_t j, uint32_t c_begin, uint32_t c_end) {
  const uint32_t dk = a.head_dim_k, dv = a.head_dim_v;
  const float* q_all = host_ptr<const float>(a.qkv);
  const float* k_all = q_all + size_t{a.n_heads_k} * dk;
  const float* v_all = k_all + size_t{a.n_heads_k} * dk;
  const uint32_t kj = a.tiled_value_heads ? j % a.n_heads_k : j / (a.n_heads_v / a.n_heads_k);
  const size_t c0 = size_t{j} * dv + c_begin;  // the first channel over all heads
  simd::gdn_head(host_ptr<float>(a.state) + c0 * dk, q_all + size_t{kj} * dk, k_all + size_t{kj} * dk,
                 v_all + c0, host_ptr<const float>(a.decay)[j], host_ptr<const float>(a.beta)[j],
                 host_ptr<float>(a.out) + c0, dk, c_end - c_begin);
}

// The state's channels (rows of dk floats, over all heads) are split as a
// gemv's rows are: one share per thread, read and written in order, the last
// pieces stolen (gemv_scheduler.h). Whole heads handed out in turn (64 KB of
// state each at the 0.8B shape) left the launching thread waiting 3-20% of the
// kernel's time; quarter heads in turn cut the wait but cut the threads'
// streams short and ran slower.
void gdn_recurrent(ThreadPool& pool, const GdnRecurrentArgs& a) {
  const uint32_t dv = a.head_dim_v;
  cpu::parallel_gemv_rows(pool, size_t{a.n_heads_v} * dv, size_t{a.head_dim_k} * sizeof(float),
                          [&](size_t begin, size_t end) {
                            while (begin < end) {
                              const auto j = static_cast<uint32_t>(begin / dv), c = static_cast<uint32_t>(begin % dv);
                              const auto c_end = static_cast<uint32_t>(std::min<size_t>(dv, c + (end - begin)));
                              gdn_channels(a, j, c, c_end);
                              begin += c_end - c;
                            }
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
