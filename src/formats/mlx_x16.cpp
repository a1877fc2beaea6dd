// MLX affine rows regrouped 16 at a time (layout in qwen35/mlx_affine.h): the
// conversion at load, for every backend that keeps them so.
#include <cstring>

#include "qwen35/error.h"
#include "qwen35/mlx_affine.h"

namespace qwen35 {

void mlx_regroup_rows(MlxAffineParams params, size_t scale_bytes, uint32_t rows, uint32_t cols, const void* codes,
                      const void* scales, const void* biases, void* out) {
  QWEN35_ASSERT(mlx_regroupable(params.bits, rows, cols));
  const MlxRegroupedLayout layout(params, scale_bytes, cols);
  const size_t row_bytes = size_t{cols} * params.bits / 8, groups = cols / params.group_size;
  const auto* in = static_cast<const std::byte*>(codes);
  auto* grouped = static_cast<std::byte*>(out);
  for (uint32_t r = 0; r < rows; ++r) {
    for (size_t byte = 0; byte < row_bytes; byte += 4) {  // a run's four bytes stay together
      std::memcpy(grouped + layout.code_byte(r, byte), in + r * row_bytes + byte, 4);
    }
    for (size_t g = 0; g < groups; ++g) {
      const size_t from = (r * groups + g) * scale_bytes;
      std::memcpy(grouped + layout.scale_byte(r, g), static_cast<const std::byte*>(scales) + from, scale_bytes);
      std::memcpy(grouped + layout.bias_byte(r, g), static_cast<const std::byte*>(biases) + from, scale_bytes);
    }
  }
}

}  // namespace qwen35
