// Reference kernels for GGUF block weights (qwen35/gguf_quants.h): each row
// dequantized by the scalar specification, then the dense formulas in double.
#include <string>
#include <vector>

#include "qwen35/dense_weights.h"
#include "qwen35/gguf_quants.h"
#include "reference/reference_backend.h"

namespace qwen35 {
namespace {

const void* row_blocks(DevicePtr w, DType type, uint32_t cols, uint32_t row) {
  return host_ptr<const std::byte>(w) + size_t{row} * dtype_bytes(type, cols);
}

void gemv(DType type, const GemvArgs& a) {
  std::vector<float> w(a.cols);
  const float* x = host_ptr<const float>(a.x);
  for (uint32_t r = 0; r < a.rows; ++r) {
    gguf_dequantize_row(type, row_blocks(a.w, type, a.cols, r), w.data(), a.cols);
    double acc = 0;
    for (uint32_t c = 0; c < a.cols; ++c) acc += double{w[c]} * x[c];
    host_ptr<float>(a.y)[r] = static_cast<float>(acc);
  }
}

void row_to_f32(DType type, const RowToF32Args& a) {
  gguf_dequantize_row(type, row_blocks(a.w, type, a.cols, a.row), host_ptr<float>(a.y), a.cols);
}

}  // namespace

void register_reference_gguf_kernels(HostBackend& backend) {
  for (DType type : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K}) {
    const std::string suffix = dtype_lower_name(type);
    backend.register_kernel<GemvArgs>("gemv_" + suffix, [type](const GemvArgs& a) { gemv(type, a); });
    backend.register_kernel<RowToF32Args>("row_to_f32_" + suffix, [type](const RowToF32Args& a) { row_to_f32(type, a); });
  }
}

}  // namespace qwen35
