// Normalisation and elementwise kernels on the CPU: RMSNorm (rows), add +
// RMSNorm, per-head RMSNorm + partial RoPE, the sigmoid gate, SiLU-multiply, add.
// These touch kilobytes per token, so they run on the calling thread unless a
// launch has many rows.
#include <cmath>
#include <vector>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_math.h"
#include "qwen35/kernels.h"

namespace qwen35 {
namespace {

void rms_norm_row(const float* x, const float* w, float* y, uint32_t n, float eps) {
  const float inv = 1.0f / std::sqrt(simd::sum_squares(x, n) / static_cast<float>(n) + eps);
  simd::scale_mul(x, inv, w, y, n);
}

void rms_norm(ThreadPool& pool, const RmsNormArgs& a) {
  const float* x = host_ptr<const float>(a.x);
  const float* w = host_ptr<const float>(a.weight);
  float* y = host_ptr<float>(a.y);
  pool.parallel_for(a.n_rows, std::max<size_t>(1, 4096 / std::max<uint32_t>(a.row_len, 1)),
                    [&](size_t begin, size_t end) {
                      for (size_t r = begin; r < end; ++r) {
                        rms_norm_row(x + r * a.x_row_stride, w, y + r * a.y_row_stride, a.row_len, a.eps);
                      }
                    });
}

void add_rms_norm(const AddRmsNormArgs& a) {
  const float* x = host_ptr<const float>(a.a);
  const float* o = host_ptr<const float>(a.b);
  float* sum = host_ptr<float>(a.sum);
  for (uint32_t i = 0; i < a.n; ++i) sum[i] = x[i] + o[i];
  rms_norm_row(sum, host_ptr<const float>(a.weight), host_ptr<float>(a.norm), a.n, a.eps);
}

void head_norm_rope(const HeadNormRopeArgs& a) {
  const auto& step = *host_ptr<const DecodeStepParams>(a.step);
  const float* inv_freq = host_ptr<const float>(a.inv_freq);
  const uint32_t half = a.rotary_dim / 2;
  // One position for every head: the rotation once per launch. The angle in
  // double: position * inv_freq loses digits in float at long contexts.
  thread_local std::vector<float> cos_sin;  // [half] cosines, then [half] sines
  cos_sin.resize(2 * size_t{half});
  for (uint32_t i = 0; i < half; ++i) {
    const double angle = static_cast<double>(step.position) * inv_freq[i];
    cos_sin[i] = static_cast<float>(std::cos(angle));
    cos_sin[half + i] = static_cast<float>(std::sin(angle));
  }
  for (uint32_t h = 0; h < a.n_heads; ++h) {
    float* y = host_ptr<float>(a.y) + size_t{h} * a.head_dim;
    rms_norm_row(host_ptr<const float>(a.x) + size_t{h} * a.x_head_stride, host_ptr<const float>(a.weight), y,
                 a.head_dim, a.eps);
    for (uint32_t i = 0; i < half; ++i) {
      const float c = cos_sin[i], s = cos_sin[half + i];
      const float x0 = y[i], x1 = y[i + half];
      y[i] = x0 * c - x1 * s;
      y[i + half] = x1 * c + x0 * s;
    }
  }
}

void sigmoid_gate(const SigmoidGateArgs& a) {
  for (uint32_t h = 0; h < a.n_heads; ++h) {
    const size_t offset = size_t{h} * a.head_dim;
    simd::sigmoid_mul(host_ptr<const float>(a.x) + offset,
                      host_ptr<const float>(a.gate) + size_t{h} * a.gate_head_stride, host_ptr<float>(a.y) + offset,
                      a.head_dim);
  }
}

void silu_mul(const SiluMulArgs& a) {
  simd::silu_mul(host_ptr<const float>(a.gate), host_ptr<const float>(a.up), host_ptr<float>(a.y), a.n);
}

void add(const AddArgs& a) {
  const float* x = host_ptr<const float>(a.a);
  const float* b = host_ptr<const float>(a.b);
  float* y = host_ptr<float>(a.y);
  for (uint32_t i = 0; i < a.n; ++i) y[i] = x[i] + b[i];
}

}  // namespace

void register_cpu_norm_kernels(CpuBackend& cpu) {
  ThreadPool& pool = cpu.pool();
  cpu.register_kernel<RmsNormArgs>("rms_norm", [&pool](const RmsNormArgs& a) { rms_norm(pool, a); });
  cpu.register_kernel<AddRmsNormArgs>("add_rms_norm", add_rms_norm);
  cpu.register_kernel<HeadNormRopeArgs>("head_norm_rope", head_norm_rope);
  cpu.register_kernel<SigmoidGateArgs>("sigmoid_gate", sigmoid_gate);
  cpu.register_kernel<SiluMulArgs>("silu_mul", silu_mul);
  cpu.register_kernel<AddArgs>("add", add);
}

}  // namespace qwen35
