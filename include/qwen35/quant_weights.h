// QuantWeights: a linear layer's weight [out, in] that knows how to multiply
// itself on a backend, whatever its storage format. gemv is required. The fused
// operations are advisory: gemv_gate_up_with composes two gemvs by default, and
// the silu-gate variants fail loudly unless a format provides them, so a caller
// never silently gets a slow path; supports() lets it choose composition instead.
#pragma once

#include <cstdint>
#include <string>

#include "qwen35/backend.h"

namespace qwen35 {

enum class FusedOp : uint8_t {
  kGateUp,           // gemv_gate_up_with: two weights, one read of x
  kSiluGate,         // gemv_silu_gate
  kSiluGateResidual  // gemv_silu_gate_resid
};

class QuantWeights {
 public:
  virtual ~QuantWeights() = default;

  virtual uint32_t out_features() const = 0;
  virtual uint32_t in_features() const = 0;
  // "bf16", "f32", ...: for logs and error messages.
  virtual std::string format_name() const = 0;
  // Bytes read by one gemv (for bandwidth accounting).
  virtual size_t weight_bytes() const = 0;

  // y[out] = W x[in].
  virtual void gemv(GpuBackend& gpu, DevicePtr x, DevicePtr y, Stream stream) const = 0;

  // gate_y = this x, up_y = other x. Default: two gemvs (correct, reads x twice).
  virtual void gemv_gate_up_with(const QuantWeights& other, GpuBackend& gpu, DevicePtr x, DevicePtr gate_y,
                                 DevicePtr up_y, Stream stream) const;

  // y = W (silu(gate) * up). gate and up are left unchanged. Default: throws Error.
  virtual void gemv_silu_gate(GpuBackend& gpu, DevicePtr gate, DevicePtr up, DevicePtr y, Stream stream) const;

  // y = residual + W (silu(gate) * up). y may alias residual. Default: throws Error.
  virtual void gemv_silu_gate_resid(GpuBackend& gpu, DevicePtr gate, DevicePtr up, DevicePtr residual, DevicePtr y,
                                    Stream stream) const;

  // True when the fused operation runs as one fused kernel on this backend.
  // For kGateUp, `other` is the second weight.
  virtual bool supports(FusedOp op, const QuantWeights* other = nullptr) const;

  // y[in] = row `row` of W as float32 (embedding lookup).
  virtual void dequantize_row(GpuBackend& gpu, uint32_t row, DevicePtr y, Stream stream) const = 0;
};

}  // namespace qwen35
