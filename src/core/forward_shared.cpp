// SwiGLU MLP (spec 3.3) with the residual: out = residual + W_down(silu(W_gate h) * W_up h).
// Uses the weights' fused operations where they exist; the composition is the
// explicit choice made through QuantWeights::supports, never a silent default.
#include "forward_shared.h"

namespace qwen35::detail {

void gemv_silu_gate_or_compose(GpuBackend& gpu, const Qwen35Kernels& kernels, const QuantWeights& w, DevicePtr gate,
                               DevicePtr up, DevicePtr scratch, DevicePtr y, Stream stream) {
  if (w.supports(FusedOp::kSiluGate)) {
    w.gemv_silu_gate(gpu, gate, up, y, stream);
    return;
  }
  launch(gpu, kernels.silu_mul, SiluMulArgs{.gate = gate, .up = up, .y = scratch, .n = w.in_features()}, stream);
  w.gemv(gpu, scratch, y, stream);
}

void forward_mlp(GpuBackend& gpu, const Qwen35ForwardConfig& cfg, const Qwen35Kernels& kernels,
                 const QuantWeights& gate_proj, const QuantWeights& up_proj, const QuantWeights& down_proj,
                 const MlpBuffers& b, Stream stream) {
  gate_proj.gemv_gate_up_with(up_proj, gpu, b.x_norm, b.gate_act, b.up_act, stream);
  if (down_proj.supports(FusedOp::kSiluGateResidual)) {
    down_proj.gemv_silu_gate_resid(gpu, b.gate_act, b.up_act, b.residual, b.out, stream);
    return;
  }
  QWEN35_ASSERT(b.out != b.residual);  // the composed path writes out before adding residual
  launch(gpu, kernels.silu_mul, SiluMulArgs{.gate = b.gate_act, .up = b.up_act, .y = b.mlp_act, .n = cfg.intermediate},
         stream);
  down_proj.gemv(gpu, b.mlp_act, b.out, stream);
  launch(gpu, kernels.add, AddArgs{.a = b.out, .b = b.residual, .y = b.out, .n = cfg.hidden}, stream);
}

}  // namespace qwen35::detail
