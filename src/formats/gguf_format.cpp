// The GGUF block format: a module whose `.weight` holds one of ggml's block
// types (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K) becomes DenseWeights of that type (rows of
// whole blocks, multiplied by "gemv_q4_k" and friends); its F32, F16 and BF16
// tensors are left to the dense format, so each tensor is read as the file holds it.
#include <fmt/format.h>

#include "formats/weight_format.h"
#include "qwen35/dense_weights.h"
#include "qwen35/gguf_quants.h"

namespace qwen35 {
namespace {

class GgufBlockFormat final : public WeightFormat {
 public:
  std::string_view name() const override { return "gguf-block"; }

  bool claims(const MatrixRequest& r) const override {
    const TensorView* weight = r.tensors.find(r.module + ".weight");
    return weight != nullptr && is_block_dtype(weight->dtype);
  }

  PlacedMatrix make(GpuBackend& gpu, const MatrixRequest& r, Stream stream) const override {
    const TensorView& t = *r.tensors.find(r.module + ".weight");
    const std::vector<int64_t> expected = {r.rows, r.cols};
    if (t.shape != expected) {
      fail("{}: tensor '{}' ({}) has shape {}; expected [{}, {}] from the config", t.file, t.name,
           dtype_name(t.dtype), t.shape_string(), r.rows, r.cols);
    }
    return PlacedMatrix{make_dense_weights(gpu, t.dtype, r.rows, r.cols, t.data, stream), {&t}};
  }
};

}  // namespace

const WeightFormat& gguf_block_format() {
  static const GgufBlockFormat format;
  return format;
}

}  // namespace qwen35
