// CpuBackend construction: the pool and every op family's kernels.
#include "cpu/cpu_backend.h"

#include <fmt/format.h>

namespace qwen35 {

CpuBackend::CpuBackend(const BackendOptions& options)
    : pool_(options.threads), int8_activations_(options.int8_activations) {
  register_cpu_gemv_kernels(*this);
  register_cpu_norm_kernels(*this);
  register_cpu_attention_kernels(*this);
  register_cpu_gdn_kernels(*this);
  register_cpu_mlx_kernels(*this);
  register_cpu_gguf_kernels(*this);
}

std::string CpuBackend::device_description() const {
  return fmt::format("CPU, {} threads{}", pool_.size(),
                     int8_activations_ ? ", int8 activations for GGUF and MLX weights" : "");
}

float* CpuBackend::launch_scratch(size_t count) {
  // Aligned to a cache line: the kernels read x from here in vectors of up to
  // 64 bytes, which cost two loads each where they cross a line.
  constexpr size_t kLineFloats = 16;
  if (launch_scratch_.size() < count + kLineFloats) launch_scratch_.resize(count + kLineFloats);
  const auto address = reinterpret_cast<uintptr_t>(launch_scratch_.data());
  return launch_scratch_.data() + (-address / sizeof(float)) % kLineFloats;
}

}  // namespace qwen35
