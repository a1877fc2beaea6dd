// Dense matrix-vector kernels on the CPU, rows split across the thread pool:
// gemv, the two-weight pass (gate/up), the SwiGLU-down with residual, and row
// extraction for embeddings. One template per kernel, instantiated per dtype.
#include <algorithm>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_math.h"
#include "host/element_types.h"
#include "qwen35/dense_weights.h"

namespace qwen35 {
namespace {

// Rows per task: enough work (~32k weights) to amortise the hand-off.
size_t row_grain(uint32_t cols) { return std::max<size_t>(1, 32768 / std::max<uint32_t>(cols, 1)); }

template <typename E>
void gemv(ThreadPool& pool, const GemvArgs& a) {
  const auto* w = host_ptr<const typename E::Storage>(a.w);
  const float* x = host_ptr<const float>(a.x);
  float* y = host_ptr<float>(a.y);
  pool.parallel_for(a.rows, row_grain(a.cols), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) y[r] = cpu::dot<E>(w + r * a.cols, x, a.cols);
  });
}

template <typename E>
void gemv_pair(ThreadPool& pool, const GemvPairArgs& a) {
  const auto* w0 = host_ptr<const typename E::Storage>(a.w0);
  const auto* w1 = host_ptr<const typename E::Storage>(a.w1);
  const float* x = host_ptr<const float>(a.x);
  float* y0 = host_ptr<float>(a.y0);
  float* y1 = host_ptr<float>(a.y1);
  pool.parallel_for(size_t{a.rows0} + a.rows1, row_grain(a.cols), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      if (r < a.rows0) {
        y0[r] = cpu::dot<E>(w0 + r * a.cols, x, a.cols);
      } else {
        y1[r - a.rows0] = cpu::dot<E>(w1 + (r - a.rows0) * a.cols, x, a.cols);
      }
    }
  });
}

template <typename E>
void gemv_silu_gate(CpuBackend& cpu, const GemvSiluGateArgs& a) {
  const float* gate = host_ptr<const float>(a.gate);
  const float* up = host_ptr<const float>(a.up);
  float* act = cpu.launch_scratch(a.cols);
  for (uint32_t c = 0; c < a.cols; ++c) act[c] = cpu::silu(gate[c]) * up[c];
  const auto* w = host_ptr<const typename E::Storage>(a.w);
  const float* residual = a.residual.is_null() ? nullptr : host_ptr<const float>(a.residual);
  float* y = host_ptr<float>(a.y);
  cpu.pool().parallel_for(a.rows, row_grain(a.cols), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      const float base = residual ? residual[r] : 0.0f;  // read before write: y may alias residual
      y[r] = base + cpu::dot<E>(w + r * a.cols, act, a.cols);
    }
  });
}

template <typename E>
void row_to_f32(const RowToF32Args& a) {
  const auto* w = host_ptr<const typename E::Storage>(a.w) + size_t{a.row} * a.cols;
  float* y = host_ptr<float>(a.y);
  for (uint32_t c = 0; c < a.cols; ++c) y[c] = E::load(w[c]);
}

template <typename E>
void register_for(CpuBackend& cpu) {
  const std::string s(E::kSuffix);
  ThreadPool& pool = cpu.pool();
  cpu.register_kernel<GemvArgs>("gemv_" + s, [&pool](const GemvArgs& a) { gemv<E>(pool, a); });
  cpu.register_kernel<GemvPairArgs>("gemv_pair_" + s, [&pool](const GemvPairArgs& a) { gemv_pair<E>(pool, a); });
  cpu.register_kernel<GemvSiluGateArgs>("gemv_silu_gate_" + s,
                                        [&cpu](const GemvSiluGateArgs& a) { gemv_silu_gate<E>(cpu, a); });
  cpu.register_kernel<RowToF32Args>("row_to_f32_" + s, row_to_f32<E>);
}

}  // namespace

void register_cpu_gemv_kernels(CpuBackend& cpu) {
  register_for<F32Element>(cpu);
  register_for<BF16Element>(cpu);
  register_for<F16Element>(cpu);
}

}  // namespace qwen35
