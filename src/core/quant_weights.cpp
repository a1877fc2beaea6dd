// Default implementations of the advisory fused QuantWeights operations.
#include "qwen35/quant_weights.h"

namespace qwen35 {

void QuantWeights::gemv_gate_up_with(const QuantWeights& other, GpuBackend& gpu, DevicePtr x, DevicePtr gate_y,
                                     DevicePtr up_y, Stream stream) const {
  gemv(gpu, x, gate_y, stream);
  other.gemv(gpu, x, up_y, stream);
}

void QuantWeights::gemv_silu_gate(GpuBackend& gpu, DevicePtr, DevicePtr, DevicePtr, Stream) const {
  fail("gemv_silu_gate is not implemented for {} weights on backend '{}': check supports(FusedOp::kSiluGate) "
       "and compose silu_mul + gemv instead",
       format_name(), gpu.name());
}

void QuantWeights::gemv_silu_gate_resid(GpuBackend& gpu, DevicePtr, DevicePtr, DevicePtr, DevicePtr, Stream) const {
  fail("gemv_silu_gate_resid is not implemented for {} weights on backend '{}': check "
       "supports(FusedOp::kSiluGateResidual) and compose silu_mul + gemv + add instead",
       format_name(), gpu.name());
}

bool QuantWeights::supports(FusedOp, const QuantWeights*) const { return false; }

}  // namespace qwen35
