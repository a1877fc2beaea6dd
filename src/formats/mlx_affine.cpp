// The MLX affine format (layout drawn in qwen35/mlx_affine.h): the scalar
// quantizer, MlxAffineWeights over any backend with the gemv_mlx kernels, and
// the format's checks of `module`.weight (U32 codes), .scales and .biases.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "formats/mlx_affine_weights.h"
#include "formats/weight_format.h"

namespace qwen35 {
namespace {

// Rounds to `dtype` and back, and stores the rounded value as element i of `out`.
float store_as(DType dtype, float v, void* out, size_t i) {
  switch (dtype) {
    case DType::kBF16: {
      const uint16_t bits = f32_to_bf16(v);
      static_cast<uint16_t*>(out)[i] = bits;
      return bf16_to_f32(bits);
    }
    case DType::kF16: {
      const uint16_t bits = f32_to_f16(v);
      static_cast<uint16_t*>(out)[i] = bits;
      return f16_to_f32(bits);
    }
    default:
      static_cast<float*>(out)[i] = v;
      return v;
  }
}

// What every MLX matrix must be, checked before anything reads its arrays.
void check_params(MlxAffineParams params, DType scale_dtype, uint32_t cols) {
  if (params.bits != 4 && params.bits != 8) fail("MLX affine weights: unsupported bits {} (supported: 4, 8)", params.bits);
  if (params.group_size != 32 && params.group_size != 64 && params.group_size != 128) {
    fail("MLX affine weights: unsupported group size {} (supported: 32, 64, 128)", params.group_size);
  }
  if (cols % params.group_size != 0) {
    fail("MLX affine weights: group size {} does not divide the row length {}", params.group_size, cols);
  }
  if (!is_float_dtype(scale_dtype)) {
    fail("MLX affine weights: scales must be F32, F16 or BF16, got {}", dtype_name(scale_dtype));
  }
}

}  // namespace

void mlx_quantize_row(const float* w, uint32_t cols, MlxAffineParams p, DType scale_dtype, uint32_t* codes,
                      void* scales, void* biases) {
  const uint32_t max_code = (1u << p.bits) - 1u;
  const uint32_t per_word = 32 / p.bits;
  std::fill(codes, codes + cols / per_word, 0u);
  for (uint32_t g = 0; g < cols / p.group_size; ++g) {
    const float* group = w + size_t{g} * p.group_size;
    const auto [lo, hi] = std::minmax_element(group, group + p.group_size);
    const float scale = store_as(scale_dtype, (*hi - *lo) / static_cast<float>(max_code), scales, g);
    const float bias = store_as(scale_dtype, *lo, biases, g);
    for (uint32_t k = 0; k < p.group_size; ++k) {
      const float q = scale > 0 ? std::nearbyint((group[k] - bias) / scale) : 0.0f;
      const uint32_t code = static_cast<uint32_t>(std::clamp(q, 0.0f, static_cast<float>(max_code)));
      const uint32_t i = g * p.group_size + k;
      codes[i / per_word] |= code << ((i % per_word) * p.bits);
    }
  }
}

MlxAffineWeights::MlxAffineWeights(GpuBackend& gpu, MlxAffineParams params, DType scale_dtype, uint32_t rows,
                                   uint32_t cols, MlxMatrixRef w, std::vector<DeviceBuffer> storage, bool regrouped)
    : params_(params),
      scale_dtype_(scale_dtype),
      regrouped_(regrouped),
      rows_(rows),
      cols_(cols),
      w_(w),
      storage_(std::move(storage)) {
  check_params(params, scale_dtype, cols);
  if (regrouped && !mlx_regroupable(params.bits, rows, cols)) {
    fail("MLX affine weights: a [{}, {}] matrix of {}-bit codes cannot be regrouped 16 rows at a time", rows, cols,
         params.bits);
  }
  const std::string suffix =
      fmt::format("mlx{}{}_{}", params.bits, regrouped ? "x16" : "", dtype_lower_name(scale_dtype));
  gemv_ = resolve_kernel<MlxGemvArgs>(gpu, "gemv_" + suffix);
  row_to_f32_ = resolve_kernel<MlxRowToF32Args>(gpu, "row_to_f32_" + suffix);
  gemv_pair_ = try_resolve_kernel<MlxGemvPairArgs>(gpu, "gemv_pair_" + suffix);
  gemv_silu_gate_ = try_resolve_kernel<MlxGemvSiluGateArgs>(gpu, "gemv_silu_gate_" + suffix);
}

std::string MlxAffineWeights::format_name() const {
  return fmt::format("mlx{}{}-g{}-{}", params_.bits, regrouped_ ? "x16" : "", params_.group_size,
                     dtype_lower_name(scale_dtype_));
}

size_t MlxAffineWeights::weight_bytes() const {
  const size_t groups = size_t{rows_} * (cols_ / params_.group_size);
  return size_t{rows_} * cols_ * params_.bits / 8 + 2 * groups * dtype_size(scale_dtype_);
}

void MlxAffineWeights::gemv(GpuBackend& gpu, DevicePtr x, DevicePtr y, Stream stream) const {
  launch(gpu, gemv_,
         MlxGemvArgs{.w = w_, .x = x, .y = y, .rows = rows_, .cols = cols_, .group_size = params_.group_size}, stream);
}

const MlxAffineWeights* MlxAffineWeights::pair_partner(const QuantWeights& other) const {
  const auto* mlx = dynamic_cast<const MlxAffineWeights*>(&other);
  if (mlx == nullptr || !gemv_pair_.valid() || mlx->params_.bits != params_.bits ||
      mlx->params_.group_size != params_.group_size || mlx->scale_dtype_ != scale_dtype_ || mlx->cols_ != cols_) {
    return nullptr;
  }
  return mlx;
}

void MlxAffineWeights::gemv_gate_up_with(const QuantWeights& other, GpuBackend& gpu, DevicePtr x, DevicePtr gate_y,
                                         DevicePtr up_y, Stream stream) const {
  const MlxAffineWeights* partner = pair_partner(other);
  if (partner == nullptr) {
    QuantWeights::gemv_gate_up_with(other, gpu, x, gate_y, up_y, stream);
    return;
  }
  launch(gpu, gemv_pair_,
         MlxGemvPairArgs{.w0 = w_, .w1 = partner->w_, .x = x, .y0 = gate_y, .y1 = up_y, .rows0 = rows_,
                         .rows1 = partner->rows_, .cols = cols_, .group_size = params_.group_size},
         stream);
}

void MlxAffineWeights::gemv_silu_gate(GpuBackend& gpu, DevicePtr gate, DevicePtr up, DevicePtr y,
                                      Stream stream) const {
  gemv_silu_gate_resid(gpu, gate, up, DevicePtr{}, y, stream);
}

void MlxAffineWeights::gemv_silu_gate_resid(GpuBackend& gpu, DevicePtr gate, DevicePtr up, DevicePtr residual,
                                            DevicePtr y, Stream stream) const {
  if (!gemv_silu_gate_.valid()) {
    if (residual.is_null()) return QuantWeights::gemv_silu_gate(gpu, gate, up, y, stream);
    return QuantWeights::gemv_silu_gate_resid(gpu, gate, up, residual, y, stream);
  }
  launch(gpu, gemv_silu_gate_,
         MlxGemvSiluGateArgs{.w = w_, .gate = gate, .up = up, .residual = residual, .y = y, .rows = rows_,
                             .cols = cols_, .group_size = params_.group_size},
         stream);
}

bool MlxAffineWeights::supports(FusedOp op, const QuantWeights* other) const {
  switch (op) {
    case FusedOp::kGateUp:
      return other != nullptr && pair_partner(*other) != nullptr;
    case FusedOp::kSiluGate:
    case FusedOp::kSiluGateResidual:
      return gemv_silu_gate_.valid();
  }
  return false;
}

void MlxAffineWeights::dequantize_row(GpuBackend& gpu, uint32_t row, DevicePtr y, Stream stream) const {
  QWEN35_ASSERT(row < rows_);
  launch(gpu, row_to_f32_,
         MlxRowToF32Args{.w = w_, .y = y, .row = row, .cols = cols_, .group_size = params_.group_size}, stream);
}

std::unique_ptr<MlxAffineWeights> make_mlx_affine_weights(GpuBackend& gpu, MlxAffineParams params, DType scale_dtype,
                                                          uint32_t rows, uint32_t cols, const void* codes,
                                                          const void* scales, const void* biases, Stream stream) {
  const size_t code_bytes = size_t{rows} * cols * params.bits / 8;
  const size_t scale_bytes = size_t{rows} * (cols / params.group_size) * dtype_size(scale_dtype);
  std::vector<DeviceBuffer> storage(3);
  check_params(params, scale_dtype, cols);
  if (gpu.regroups_mlx_rows(params.bits, rows, cols)) {
    std::vector<std::byte> grouped(code_bytes + 2 * scale_bytes);
    mlx_regroup_rows(params, dtype_size(scale_dtype), rows, cols, codes, scales, biases, grouped.data());
    storage.resize(1);
    storage[0] = DeviceBuffer(gpu, grouped.size());
    gpu.upload(storage[0].ptr(), grouped.data(), grouped.size(), stream);
    gpu.synchronize(stream);  // before `grouped` goes
    const MlxMatrixRef w{.codes = storage[0].ptr()};
    return std::make_unique<MlxAffineWeights>(gpu, params, scale_dtype, rows, cols, w, std::move(storage), true);
  }
  const MlxMatrixRef w{.codes = place_bytes(gpu, codes, code_bytes, storage[0], stream),
                       .scales = place_bytes(gpu, scales, scale_bytes, storage[1], stream),
                       .biases = place_bytes(gpu, biases, scale_bytes, storage[2], stream)};
  gpu.synchronize(stream);
  return std::make_unique<MlxAffineWeights>(gpu, params, scale_dtype, rows, cols, w, std::move(storage));
}

namespace {

// `module`.weight U32 [rows, cols * bits / 32] with .scales and .biases [rows, cols / gs].
class MlxAffineFormat final : public WeightFormat {
 public:
  std::string_view name() const override { return "mlx-affine"; }

  bool claims(const MatrixRequest& r) const override {
    const TensorView* weight = r.tensors.find(r.module + ".weight");
    return r.tensors.find(r.module + ".scales") != nullptr || (weight != nullptr && weight->dtype == DType::kU32);
  }

  PlacedMatrix make(GpuBackend& gpu, const MatrixRequest& r, Stream stream) const override {
    const std::string where = r.tensors.origin();
    const std::optional<QuantizationConfig::Params> config = r.quantization.for_module(r.module);
    if (!config) {
      fail("{}: module '{}' holds quantized tensors, but config.json has no \"quantization\" entry for it", where,
           r.module);
    }
    const MlxAffineParams p{.bits = config->bits, .group_size = config->group_size};
    if (p.bits != 4 && p.bits != 8) fail("{}: module '{}': unsupported bits {} (supported: 4, 8)", where, r.module, p.bits);
    if (r.cols % p.group_size != 0) {
      fail("{}: module '{}': group size {} does not divide the row length {}", where, r.module, p.group_size, r.cols);
    }
    const TensorView& codes = require(r, ".weight", {r.rows, r.cols * p.bits / 32});
    if (codes.dtype != DType::kU32) {
      fail("{}: tensor '{}.weight' has dtype {}; expected U32 packed {}-bit codes", codes.file, r.module,
           dtype_name(codes.dtype), p.bits);
    }
    const std::vector<int64_t> group_shape = {r.rows, r.cols / p.group_size};
    const TensorView& scales = require_float_tensor(r.tensors, r.module + ".scales", group_shape);
    const TensorView& biases = require_float_tensor(r.tensors, r.module + ".biases", group_shape);
    if (biases.dtype != scales.dtype) {
      fail("{}: '{}.biases' is {} but '{}.scales' is {}; they must match", biases.file, r.module,
           dtype_name(biases.dtype), r.module, dtype_name(scales.dtype));
    }
    return PlacedMatrix{make_mlx_affine_weights(gpu, p, scales.dtype, r.rows, r.cols, codes.data, scales.data,
                                                biases.data, stream),
                        {&codes, &scales, &biases}};
  }

 private:
  // Presence and shape (dtype checked by the caller).
  static const TensorView& require(const MatrixRequest& r, const std::string& suffix, std::vector<int64_t> shape) {
    const std::string name = r.module + suffix;
    const TensorView* t = r.tensors.find(name);
    if (t == nullptr) fail("{}: missing tensor '{}' (MLX affine module '{}')", r.tensors.origin(), name, r.module);
    if (t->shape != shape) {
      fail("{}: tensor '{}' has shape {}; expected [{}, {}] (packed: cols * bits / 32) from the config and "
           "the quantization block",
           t->file, name, t->shape_string(), shape[0], shape[1]);
    }
    return *t;
  }
};

}  // namespace

const WeightFormat& mlx_affine_format() {
  static const MlxAffineFormat format;
  return format;
}

}  // namespace qwen35
