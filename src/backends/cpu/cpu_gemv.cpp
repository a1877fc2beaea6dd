// Dense matrix-vector kernels on the CPU, rows split across the thread pool:
// gemv, the two-weight pass (gate/up), the SwiGLU-down with residual, and row
// extraction for embeddings. One template per kernel, instantiated per dtype.
#include <algorithm>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_math.h"
#include "cpu/gemv_scheduler.h"
#include "host/element_types.h"
#include "qwen35/dense_weights.h"

namespace qwen35 {
namespace {

template <typename E>
size_t row_bytes(uint32_t cols) {
  return size_t{cols} * sizeof(typename E::Storage);
}

template <typename E>
size_t bands_for(uint32_t cols) {
  return cpu::dense_gemv_bands(row_bytes<E>(cols));
}

// y = base + W x for the rows of passes p of W (base may be null).
template <typename E>
void gemv_passes(const void* w, const float* x, const float* base, float* y, const cpu::RowPasses& p,
                 uint32_t cols) {
  simd::gemv_bands(cpu::weight_type<E>(), w, x, base, y, p, cols);
}

template <typename E>
void gemv(ThreadPool& pool, const GemvArgs& a) {
  const void* w = host_ptr<const void>(a.w);
  const float* x = host_ptr<const float>(a.x);
  float* y = host_ptr<float>(a.y);
  const size_t segments[] = {a.rows};
  cpu::parallel_row_passes(pool, segments, bands_for<E>(a.cols), row_bytes<E>(a.cols),
                           [&](size_t, const cpu::RowPasses& p) { gemv_passes<E>(w, x, nullptr, y, p, a.cols); });
}

template <typename E>
void gemv_pair(ThreadPool& pool, const GemvPairArgs& a) {
  const float* x = host_ptr<const float>(a.x);
  // Both matrices split across all threads.
  const size_t segments[] = {a.rows0, a.rows1};
  cpu::parallel_row_passes(pool, segments, bands_for<E>(a.cols), row_bytes<E>(a.cols),
                           [&](size_t segment, const cpu::RowPasses& p) {
    gemv_passes<E>(host_ptr<const void>(segment == 0 ? a.w0 : a.w1), x, nullptr,
                   host_ptr<float>(segment == 0 ? a.y0 : a.y1), p, a.cols);
  });
}

template <typename E>
void gemv_silu_gate(CpuBackend& cpu, const GemvSiluGateArgs& a) {
  const float* gate = host_ptr<const float>(a.gate);
  const float* up = host_ptr<const float>(a.up);
  float* act = cpu.launch_scratch(a.cols);
  simd::silu_mul(gate, up, act, a.cols);
  const void* w = host_ptr<const void>(a.w);
  const float* residual = a.residual.is_null() ? nullptr : host_ptr<const float>(a.residual);
  float* y = host_ptr<float>(a.y);
  const size_t segments[] = {a.rows};
  cpu::parallel_row_passes(cpu.pool(), segments, bands_for<E>(a.cols), row_bytes<E>(a.cols),
                           [&](size_t, const cpu::RowPasses& p) { gemv_passes<E>(w, act, residual, y, p, a.cols); });
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
