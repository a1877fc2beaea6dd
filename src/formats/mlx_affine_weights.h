// MlxAffineWeights: an MLX affine-quantized matrix (layout in qwen35/mlx_affine.h)
// multiplied by the backend's "gemv_mlx{bits}_{scale dtype}" kernel family,
// resolved once at construction; the fused kernels are used where present.
#pragma once

#include <memory>
#include <vector>

#include "qwen35/mlx_affine.h"
#include "qwen35/quant_weights.h"

namespace qwen35 {

class MlxAffineWeights final : public QuantWeights {
 public:
  // `w` is already on the device, regrouped 16 rows at a time if `regrouped`
  // (mlx_regroup_rows); `storage` (may be empty) keeps uploaded copies alive.
  MlxAffineWeights(GpuBackend& gpu, MlxAffineParams params, DType scale_dtype, uint32_t rows, uint32_t cols,
                   MlxMatrixRef w, std::vector<DeviceBuffer> storage, bool regrouped = false);

  uint32_t out_features() const override { return rows_; }
  uint32_t in_features() const override { return cols_; }
  std::string format_name() const override;
  size_t weight_bytes() const override;

  void gemv(GpuBackend& gpu, DevicePtr x, DevicePtr y, Stream stream) const override;
  void gemv_gate_up_with(const QuantWeights& other, GpuBackend& gpu, DevicePtr x, DevicePtr gate_y, DevicePtr up_y,
                         Stream stream) const override;
  void gemv_silu_gate(GpuBackend& gpu, DevicePtr gate, DevicePtr up, DevicePtr y, Stream stream) const override;
  void gemv_silu_gate_resid(GpuBackend& gpu, DevicePtr gate, DevicePtr up, DevicePtr residual, DevicePtr y,
                            Stream stream) const override;
  bool supports(FusedOp op, const QuantWeights* other = nullptr) const override;
  void dequantize_row(GpuBackend& gpu, uint32_t row, DevicePtr y, Stream stream) const override;

 private:
  const MlxAffineWeights* pair_partner(const QuantWeights& other) const;

  MlxAffineParams params_;
  DType scale_dtype_;
  bool regrouped_;
  uint32_t rows_, cols_;
  MlxMatrixRef w_;
  std::vector<DeviceBuffer> storage_;
  Kernel<MlxGemvArgs> gemv_;
  Kernel<MlxRowToF32Args> row_to_f32_;
  Kernel<MlxGemvPairArgs> gemv_pair_;
  Kernel<MlxGemvSiluGateArgs> gemv_silu_gate_;
};

// Host arrays (codes [rows, cols * bits / 32], scales and biases [rows, cols / gs])
// placed on the device as MlxAffineWeights, regrouped first where the backend
// keeps them so (GpuBackend::regroups_mlx_rows).
std::unique_ptr<MlxAffineWeights> make_mlx_affine_weights(GpuBackend& gpu, MlxAffineParams params, DType scale_dtype,
                                                          uint32_t rows, uint32_t cols, const void* codes,
                                                          const void* scales, const void* biases, Stream stream);

}  // namespace qwen35
