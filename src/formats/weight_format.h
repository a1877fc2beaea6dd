// The weight-format seam: the model builder asks make_matrix for the weights of
// one linear or embedding module ("...mlp.gate_proj"), and the first registered
// format that claims the module's tensors checks and places them. A new format
// is one new file here plus one line in weight_format.cpp's registry.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qwen35/backend.h"
#include "qwen35/checkpoint.h"
#include "qwen35/quant_weights.h"

namespace qwen35 {

struct MatrixRequest {
  const TensorSource& tensors;
  std::string module;  // tensors are module + ".weight", ".scales", ...
  uint32_t rows, cols;
  const QuantizationConfig& quantization;
};

struct PlacedMatrix {
  std::unique_ptr<QuantWeights> weights;
  std::vector<const TensorView*> tensors;  // what was read (for progress accounting)
};

class WeightFormat {
 public:
  virtual ~WeightFormat() = default;
  virtual std::string_view name() const = 0;
  // True when the module's tensors are stored in this format.
  virtual bool claims(const MatrixRequest& request) const = 0;
  // Checks dtypes and shapes (throwing Error naming tensor, file, expected and
  // actual) and places the weights on `gpu`.
  virtual PlacedMatrix make(GpuBackend& gpu, const MatrixRequest& request, Stream stream) const = 0;
};

// The registered formats, most specific first; dense (F32/F16/BF16) claims everything left.
const std::vector<const WeightFormat*>& weight_formats();
PlacedMatrix make_matrix(GpuBackend& gpu, const MatrixRequest& request, Stream stream);

// A tensor that must exist with a float dtype (F32, F16, BF16) and this exact shape.
const TensorView& require_float_tensor(const TensorSource& tensors, const std::string& name,
                                       const std::vector<int64_t>& shape);

// Host bytes on the device: aliased where the backend computes in host memory,
// uploaded (and owned by `storage`) otherwise.
DevicePtr place_bytes(GpuBackend& gpu, const void* host, size_t bytes, DeviceBuffer& storage, Stream stream);

// The formats (one function per file).
const WeightFormat& dense_format();
const WeightFormat& mlx_affine_format();
const WeightFormat& gguf_block_format();

}  // namespace qwen35
