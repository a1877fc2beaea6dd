// TensorView's small helpers (declared in qwen35/checkpoint.h).
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join moved here in fmt 11

#include <cstring>

#include "qwen35/checkpoint.h"
#include "qwen35/error.h"

namespace qwen35 {

int64_t TensorView::numel() const {
  int64_t count = 1;  // a scalar (empty shape) holds one element
  for (int64_t dim : shape) count *= dim;
  return count;
}

std::string TensorView::shape_string() const { return fmt::format("[{}]", fmt::join(shape, ", ")); }

float TensorView::float_at(size_t i) const {
  QWEN35_ASSERT(is_float_dtype(dtype));
  if (dtype == DType::kF32) {
    float v;
    std::memcpy(&v, data + 4 * i, 4);
    return v;
  }
  uint16_t v;
  std::memcpy(&v, data + 2 * i, 2);
  return dtype == DType::kBF16 ? bf16_to_f32(v) : f16_to_f32(v);
}

std::vector<float> TensorView::to_floats() const {
  if (!is_float_dtype(dtype)) fail("{}: tensor '{}' has dtype {}; expected F32, F16 or BF16", file, name, dtype_name(dtype));
  std::vector<float> out(static_cast<size_t>(numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = float_at(i);
  return out;
}

}  // namespace qwen35
