// Pieces shared by both layer forwards: the SwiGLU MLP tail, a one-vector
// RMSNorm launch, and the debug-hook helper.
#pragma once

#include "qwen35/forward.h"

namespace qwen35::detail {

struct MlpBuffers {
  DevicePtr x_norm;    // [H] input
  DevicePtr residual;  // [H]
  DevicePtr gate_act, up_act, mlp_act;  // [I]
  DevicePtr out;       // [H] = residual + down(silu(gate) * up); may alias residual
};

void forward_mlp(GpuBackend& gpu, const Qwen35ForwardConfig& cfg, const Qwen35Kernels& kernels,
                 const QuantWeights& gate_proj, const QuantWeights& up_proj, const QuantWeights& down_proj,
                 const MlpBuffers& buffers, Stream stream);

// y = W (silu(gate) * up): fused when the weight supports it, else composed.
void gemv_silu_gate_or_compose(GpuBackend& gpu, const Qwen35Kernels& kernels, const QuantWeights& w, DevicePtr gate,
                               DevicePtr up, DevicePtr scratch, DevicePtr y, Stream stream);

// y = rms_norm(x) * weight over one vector of n floats.
inline void rms_norm_vector(GpuBackend& gpu, const Qwen35Kernels& kernels, DevicePtr x, DevicePtr weight, DevicePtr y,
                            uint32_t n, float eps, Stream stream) {
  launch(gpu, kernels.rms_norm,
         RmsNormArgs{.x = x, .weight = weight, .y = y, .n_rows = 1, .row_len = n, .x_row_stride = n,
                     .y_row_stride = n, .eps = eps},
         stream);
}

// Calls the hook (if any) after draining the stream.
inline void show(GpuBackend& gpu, Stream stream, const DebugHook* hook, std::string_view name, DevicePtr buffer,
                 size_t count) {
  if (hook == nullptr || !*hook) return;
  gpu.synchronize(stream);
  (*hook)(name, buffer, count);
}

}  // namespace qwen35::detail
