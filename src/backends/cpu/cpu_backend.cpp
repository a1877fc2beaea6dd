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
  if (launch_scratch_.size() < count) launch_scratch_.resize(count);
  return launch_scratch_.data();
}

}  // namespace qwen35
