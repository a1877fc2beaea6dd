// Test helpers for GGUF: random ggml blocks with finite scales, float vectors
// to and from a backend, and x for the int8-activation tests (GGUF and MLX). (The golden -> GGUF converter the tests use
// is the library's, formats/gguf_converter.h.)
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "qwen35/backend.h"
#include "qwen35/dtype.h"
#include "qwen35/quant_weights.h"

namespace qwen35::testing {

// `blocks` random blocks of `type` with random codes and finite fp16 scales.
std::vector<std::byte> random_blocks(DType type, size_t blocks, uint32_t seed);

// n random floats in blocks of 32 of very different magnitudes (and, from 96
// on, one block of zeros): x for the int8-activation tests, where each block's
// own scale matters.
std::vector<float> varied_floats(size_t n, uint32_t seed);

// Float buffers on a backend, kept until it goes out of scope.
struct Device {
  GpuBackend& gpu;
  std::vector<DeviceBuffer> buffers;
  DevicePtr put(const std::vector<float>& v) {
    buffers.emplace_back(gpu, v.size() * sizeof(float));
    gpu.upload(buffers.back().ptr(), v.data(), v.size() * sizeof(float), gpu.default_stream());
    return buffers.back().ptr();
  }
  std::vector<float> get(DevicePtr p, size_t n) {
    std::vector<float> out(n);
    gpu.synchronize(gpu.default_stream());
    gpu.download(out.data(), p, n * sizeof(float), gpu.default_stream());
    gpu.synchronize(gpu.default_stream());
    return out;
  }
  // y = w x, y starting as NaNs so that a row the gemv leaves unwritten shows.
  std::vector<float> gemv(const QuantWeights& w, DevicePtr x, size_t rows) {
    const DevicePtr y = put(std::vector<float>(rows, std::nanf("")));
    w.gemv(gpu, x, y, gpu.default_stream());
    return get(y, rows);
  }
};

}  // namespace qwen35::testing
