// The format registry and the checks every format shares.
#include "formats/weight_format.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace qwen35 {

const std::vector<const WeightFormat*>& weight_formats() {
  static const std::vector<const WeightFormat*> formats = {
      &mlx_affine_format(),
      &gguf_block_format(),
      &dense_format(),  // last: claims whatever no other format recognises
  };
  return formats;
}

PlacedMatrix make_matrix(GpuBackend& gpu, const MatrixRequest& request, Stream stream) {
  for (const WeightFormat* format : weight_formats()) {
    if (format->claims(request)) return format->make(gpu, request, stream);
  }
  fail("{}: no weight format recognises module '{}'", request.tensors.origin(), request.module);
}

const TensorView& require_float_tensor(const TensorSource& tensors, const std::string& name,
                                       const std::vector<int64_t>& shape) {
  const std::string expected = fmt::format("[{}]", fmt::join(shape, ", "));
  const TensorView* t = tensors.find(name);
  if (t == nullptr) fail("{}: missing tensor '{}' (expected shape {})", tensors.origin(), name, expected);
  if (!is_float_dtype(t->dtype)) {
    fail("{}: tensor '{}' has dtype {}; expected F32, F16 or BF16", t->file, name, dtype_name(t->dtype));
  }
  if (t->shape != shape) {
    fail("{}: tensor '{}' has shape {}; expected {} from the config", t->file, name, t->shape_string(), expected);
  }
  return *t;
}

DevicePtr place_bytes(GpuBackend& gpu, const void* host, size_t bytes, DeviceBuffer& storage, Stream stream) {
  if (std::optional<DevicePtr> mapped = gpu.map_host(host, bytes)) return *mapped;
  storage = DeviceBuffer(gpu, bytes);
  gpu.upload(storage.ptr(), host, bytes, stream);
  return storage.ptr();
}

}  // namespace qwen35
