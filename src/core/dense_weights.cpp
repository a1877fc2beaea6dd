// DenseWeights: row-major matrices in one dtype (F32/F16/BF16, or a ggml block
// type such as Q4_K) multiplied by the backend's gemv kernels for that dtype
// ("gemv_bf16", "gemv_pair_bf16", "gemv_silu_gate_bf16", "row_to_f32_bf16").
#include "qwen35/dense_weights.h"

#include <vector>

#include "qwen35/gguf_quants.h"

namespace qwen35 {

DenseWeights::DenseWeights(GpuBackend& gpu, DType dtype, uint32_t rows, uint32_t cols, DevicePtr data,
                           DeviceBuffer storage)
    : dtype_(dtype), rows_(rows), cols_(cols), data_(data), storage_(std::move(storage)) {
  if (!is_float_dtype(dtype) && !is_block_dtype(dtype)) {
    fail("dense weights must be F32, F16, BF16 or a ggml block type, got {}", dtype_name(dtype));
  }
  if (cols % dtype_block_size(dtype) != 0) {
    fail("dense weights: row length {} is not a multiple of the {} block size {}", cols, dtype_name(dtype),
         dtype_block_size(dtype));
  }
  const std::string suffix = dtype_lower_name(dtype);
  const std::optional<KernelHandle> gemv = gpu.find_kernel("gemv_" + suffix, GemvArgs::kTypeName);
  const std::optional<KernelHandle> row = gpu.find_kernel("row_to_f32_" + suffix, RowToF32Args::kTypeName);
  if (!gemv || !row) {
    fail("backend '{}' has no kernels for {} weights (gemv_{}, row_to_f32_{})", gpu.name(), dtype_name(dtype), suffix,
         suffix);
  }
  gemv_ = Kernel<GemvArgs>(*gemv);
  row_to_f32_ = Kernel<RowToF32Args>(*row);
  gemv_pair_ = try_resolve_kernel<GemvPairArgs>(gpu, "gemv_pair_" + suffix);
  gemv_silu_gate_ = try_resolve_kernel<GemvSiluGateArgs>(gpu, "gemv_silu_gate_" + suffix);
}

std::string DenseWeights::format_name() const { return dtype_lower_name(dtype_); }

size_t DenseWeights::weight_bytes() const { return size_t{rows_} * dtype_bytes(dtype_, cols_); }

void DenseWeights::gemv(GpuBackend& gpu, DevicePtr x, DevicePtr y, Stream stream) const {
  launch(gpu, gemv_, GemvArgs{.w = data_, .x = x, .y = y, .rows = rows_, .cols = cols_}, stream);
}

const DenseWeights* DenseWeights::pair_partner(const QuantWeights& other) const {
  const auto* dense = dynamic_cast<const DenseWeights*>(&other);
  if (dense == nullptr || dense->dtype_ != dtype_ || dense->cols_ != cols_ || !gemv_pair_.valid()) return nullptr;
  return dense;
}

void DenseWeights::gemv_gate_up_with(const QuantWeights& other, GpuBackend& gpu, DevicePtr x, DevicePtr gate_y,
                                     DevicePtr up_y, Stream stream) const {
  const DenseWeights* partner = pair_partner(other);
  if (partner == nullptr) {
    QuantWeights::gemv_gate_up_with(other, gpu, x, gate_y, up_y, stream);
    return;
  }
  launch(gpu, gemv_pair_,
         GemvPairArgs{.w0 = data_, .w1 = partner->data_, .x = x, .y0 = gate_y, .y1 = up_y, .rows0 = rows_,
                      .rows1 = partner->rows_, .cols = cols_},
         stream);
}

void DenseWeights::gemv_silu_gate(GpuBackend& gpu, DevicePtr gate, DevicePtr up, DevicePtr y, Stream stream) const {
  if (!gemv_silu_gate_.valid()) {
    QuantWeights::gemv_silu_gate(gpu, gate, up, y, stream);
    return;
  }
  launch(gpu, gemv_silu_gate_,
         GemvSiluGateArgs{.w = data_, .gate = gate, .up = up, .residual = {}, .y = y, .rows = rows_, .cols = cols_},
         stream);
}

void DenseWeights::gemv_silu_gate_resid(GpuBackend& gpu, DevicePtr gate, DevicePtr up, DevicePtr residual,
                                        DevicePtr y, Stream stream) const {
  if (!gemv_silu_gate_.valid()) {
    QuantWeights::gemv_silu_gate_resid(gpu, gate, up, residual, y, stream);
    return;
  }
  launch(gpu, gemv_silu_gate_,
         GemvSiluGateArgs{
             .w = data_, .gate = gate, .up = up, .residual = residual, .y = y, .rows = rows_, .cols = cols_},
         stream);
}

bool DenseWeights::supports(FusedOp op, const QuantWeights* other) const {
  switch (op) {
    case FusedOp::kGateUp:
      return other != nullptr && pair_partner(*other) != nullptr;
    case FusedOp::kSiluGate:
    case FusedOp::kSiluGateResidual:
      return gemv_silu_gate_.valid();
  }
  return false;
}

void DenseWeights::dequantize_row(GpuBackend& gpu, uint32_t row, DevicePtr y, Stream stream) const {
  QWEN35_ASSERT(row < rows_);
  launch(gpu, row_to_f32_, RowToF32Args{.w = data_, .y = y, .row = row, .cols = cols_}, stream);
}

std::unique_ptr<DenseWeights> make_dense_weights(GpuBackend& gpu, DType dtype, uint32_t rows, uint32_t cols,
                                                 const void* host_data, Stream stream) {
  const size_t bytes = size_t{rows} * dtype_bytes(dtype, cols);
  if (const DType layout = gpu.weight_layout(dtype, rows, cols); layout != dtype) {
    QWEN35_ASSERT(gguf_regrouped_layout(dtype) == layout && rows % 16 == 0);
    std::vector<std::byte> regrouped(bytes);
    gguf_regroup_rows(dtype, host_data, rows, cols / dtype_block_size(dtype), regrouped.data());
    DeviceBuffer storage(gpu, bytes);
    gpu.upload(storage.ptr(), regrouped.data(), bytes, stream);
    gpu.synchronize(stream);  // before `regrouped` goes
    const DevicePtr data = storage.ptr();
    return std::make_unique<DenseWeights>(gpu, layout, rows, cols, data, std::move(storage));
  }
  if (std::optional<DevicePtr> mapped = gpu.map_host(host_data, bytes)) {
    return std::make_unique<DenseWeights>(gpu, dtype, rows, cols, *mapped, DeviceBuffer());
  }
  DeviceBuffer storage(gpu, bytes);
  gpu.upload(storage.ptr(), host_data, bytes, stream);
  const DevicePtr data = storage.ptr();
  return std::make_unique<DenseWeights>(gpu, dtype, rows, cols, data, std::move(storage));
}

}  // namespace qwen35
