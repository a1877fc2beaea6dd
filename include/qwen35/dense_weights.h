// Row-major weights in one dtype, on any backend that provides the gemv kernels
// for that dtype: F32, F16 or BF16, or one of ggml's block types (Q8_0, Q4_K,
// ...; each row a whole number of self-contained blocks, layouts in
// qwen35/gguf_quants.h). The kernels are resolved once at construction.
#pragma once

#include <memory>

#include "qwen35/dtype.h"
#include "qwen35/quant_weights.h"

namespace qwen35 {

// y[rows] = W[rows, cols] x[cols]; W in the dtype named by the kernel ("gemv_bf16").
struct GemvArgs {
  static constexpr std::string_view kTypeName = "GemvArgs";
  DevicePtr w, x, y;
  uint32_t rows, cols;
};

// y0 = W0 x, y1 = W1 x with one pass over x (both weights share cols and dtype).
struct GemvPairArgs {
  static constexpr std::string_view kTypeName = "GemvPairArgs";
  DevicePtr w0, w1, x, y0, y1;
  uint32_t rows0, rows1, cols;
};

// y = residual + W (silu(gate) * up); residual may be null (then y = W (...)).
struct GemvSiluGateArgs {
  static constexpr std::string_view kTypeName = "GemvSiluGateArgs";
  DevicePtr w, gate, up, residual, y;
  uint32_t rows, cols;
};

// y[cols] = W[row, :] as float32.
struct RowToF32Args {
  static constexpr std::string_view kTypeName = "RowToF32Args";
  DevicePtr w, y;
  uint32_t row, cols;
};

class DenseWeights final : public QuantWeights {
 public:
  // `data` is [rows, cols] of `dtype` already on the device (uploaded or mapped);
  // `storage` (may be empty) keeps an uploaded copy alive. Throws Error when the
  // block size does not divide cols or the backend lacks the dtype's kernels.
  DenseWeights(GpuBackend& gpu, DType dtype, uint32_t rows, uint32_t cols, DevicePtr data, DeviceBuffer storage);

  uint32_t out_features() const override { return rows_; }
  uint32_t in_features() const override { return cols_; }
  std::string format_name() const override;
  size_t weight_bytes() const override;
  DType dtype() const { return dtype_; }

  void gemv(GpuBackend& gpu, DevicePtr x, DevicePtr y, Stream stream) const override;
  void gemv_gate_up_with(const QuantWeights& other, GpuBackend& gpu, DevicePtr x, DevicePtr gate_y, DevicePtr up_y,
                         Stream stream) const override;
  void gemv_silu_gate(GpuBackend& gpu, DevicePtr gate, DevicePtr up, DevicePtr y, Stream stream) const override;
  void gemv_silu_gate_resid(GpuBackend& gpu, DevicePtr gate, DevicePtr up, DevicePtr residual, DevicePtr y,
                            Stream stream) const override;
  bool supports(FusedOp op, const QuantWeights* other = nullptr) const override;
  void dequantize_row(GpuBackend& gpu, uint32_t row, DevicePtr y, Stream stream) const override;

 private:
  const DenseWeights* pair_partner(const QuantWeights& other) const;

  DType dtype_;
  uint32_t rows_, cols_;
  DevicePtr data_;
  DeviceBuffer storage_;
  Kernel<GemvArgs> gemv_;
  Kernel<GemvPairArgs> gemv_pair_;
  Kernel<GemvSiluGateArgs> gemv_silu_gate_;
  Kernel<RowToF32Args> row_to_f32_;
};

// Puts a host tensor on the device as DenseWeights: aliased where the backend
// computes in host memory, uploaded otherwise.
std::unique_ptr<DenseWeights> make_dense_weights(GpuBackend& gpu, DType dtype, uint32_t rows, uint32_t cols,
                                                 const void* host_data, Stream stream);

}  // namespace qwen35
