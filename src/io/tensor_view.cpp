// TensorView's small helpers (declared in qwen35/checkpoint.h).
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join moved here in fmt 11

#include "qwen35/checkpoint.h"

namespace qwen35 {

int64_t TensorView::numel() const {
  int64_t count = 1;  // a scalar (empty shape) holds one element
  for (int64_t dim : shape) count *= dim;
  return count;
}

std::string TensorView::shape_string() const { return fmt::format("[{}]", fmt::join(shape, ", ")); }

}  // namespace qwen35
