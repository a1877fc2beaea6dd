// The dense format: `module.weight` alone, [rows, cols] of F32, F16 or BF16,
// multiplied by DenseWeights (src/core/dense_weights.cpp).
#include "formats/weight_format.h"
#include "qwen35/dense_weights.h"

namespace qwen35 {
namespace {

class DenseFormat final : public WeightFormat {
 public:
  std::string_view name() const override { return "dense"; }
  bool claims(const MatrixRequest&) const override { return true; }
  PlacedMatrix make(GpuBackend& gpu, const MatrixRequest& r, Stream stream) const override {
    const TensorView& t = require_float_tensor(r.tensors, r.module + ".weight", {r.rows, r.cols});
    return PlacedMatrix{make_dense_weights(gpu, t.dtype, r.rows, r.cols, t.data, stream), {&t}};
  }
};

}  // namespace

const WeightFormat& dense_format() {
  static const DenseFormat format;
  return format;
}

}  // namespace qwen35
