// Runs one kernel on a backend under test and on the scalar reference backend
// with the same random inputs, then compares named outputs. Every buffer has
// guard bytes after it, and outputs start as NaN, so an out-of-bounds write or
// an element never written fails the comparison.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "qwen35/backend.h"
#include "qwen35/dtype.h"
#include "support/test_support.h"

namespace qwen35::testing {

// Named host inputs (raw bytes) shared by both runs.
class KernelInputs {
 public:
  void f32(const std::string& name, const std::vector<float>& values) { raw(name, values.data(), values.size() * 4); }
  void bf16(const std::string& name, const std::vector<float>& values) {
    std::vector<uint16_t> bits(values.size());
    for (size_t i = 0; i < values.size(); ++i) bits[i] = f32_to_bf16(values[i]);
    raw(name, bits.data(), bits.size() * 2);
  }
  void f16(const std::string& name, const std::vector<float>& values) {
    std::vector<uint16_t> bits(values.size());
    for (size_t i = 0; i < values.size(); ++i) bits[i] = f32_to_f16(values[i]);
    raw(name, bits.data(), bits.size() * 2);
  }
  // An output of `count` floats, poisoned with NaN.
  void output(const std::string& name, size_t count) {
    f32(name, std::vector<float>(count, std::nanf("")));
  }
  void raw(const std::string& name, const void* data, size_t bytes) {
    auto& dst = arrays_[name];
    dst.resize(bytes);
    if (bytes) std::memcpy(dst.data(), data, bytes);
  }
  const std::map<std::string, std::vector<std::byte>>& arrays() const { return arrays_; }

 private:
  std::map<std::string, std::vector<std::byte>> arrays_;
};

// The inputs uploaded to one backend, each followed by guard bytes.
class DeviceArrays {
 public:
  static constexpr size_t kGuardBytes = 64;
  static constexpr uint8_t kGuardValue = 0xA5;

  DeviceArrays(GpuBackend& gpu, const KernelInputs& inputs) : gpu_(gpu) {
    for (const auto& [name, bytes] : inputs.arrays()) {
      DeviceBuffer buffer(gpu, bytes.size() + kGuardBytes);
      gpu.upload(buffer.ptr(), bytes.data(), bytes.size(), gpu.default_stream());
      gpu.fill(buffer.ptr().offset(bytes.size()), kGuardValue, kGuardBytes, gpu.default_stream());
      sizes_[name] = bytes.size();
      buffers_.emplace(name, std::move(buffer));
    }
    gpu.synchronize(gpu.default_stream());
  }
  DevicePtr operator[](const std::string& name) const { return buffers_.at(name).ptr(); }

  std::vector<float> floats(const std::string& name) {
    std::vector<float> out(sizes_.at(name) / sizeof(float));
    gpu_.download(out.data(), buffers_.at(name).ptr(), out.size() * sizeof(float), gpu_.default_stream());
    gpu_.synchronize(gpu_.default_stream());
    return out;
  }
  std::vector<uint8_t> bytes(const std::string& name) {
    std::vector<uint8_t> out(sizes_.at(name));
    gpu_.download(out.data(), buffers_.at(name).ptr(), out.size(), gpu_.default_stream());
    gpu_.synchronize(gpu_.default_stream());
    return out;
  }
  // True when every guard region is untouched.
  void expect_guards_intact() {
    for (const auto& [name, buffer] : buffers_) {
      std::vector<uint8_t> guard(kGuardBytes);
      gpu_.download(guard.data(), buffer.ptr().offset(sizes_.at(name)), kGuardBytes, gpu_.default_stream());
      gpu_.synchronize(gpu_.default_stream());
      for (uint8_t b : guard) {
        if (b != kGuardValue) {
          ADD_FAILURE() << "write past the end of buffer '" << name << "'";
          break;
        }
      }
    }
  }

 private:
  GpuBackend& gpu_;
  std::map<std::string, DeviceBuffer> buffers_;
  std::map<std::string, size_t> sizes_;
};

// Launches kernel `name` built by make_args on `gpu` and `reference`, then
// compares each output: max |actual - expected| <= tolerance * max(1, max |expected|).
template <typename Args>
void compare_with_reference(GpuBackend& gpu, GpuBackend& reference, const std::string& name,
                            const KernelInputs& inputs, const std::function<Args(const DeviceArrays&)>& make_args,
                            const std::vector<std::string>& outputs, double tolerance) {
  DeviceArrays actual(gpu, inputs);
  DeviceArrays expected(reference, inputs);
  const Kernel<Args> kernel = resolve_kernel<Args>(gpu, name);
  const Kernel<Args> reference_kernel = resolve_kernel<Args>(reference, name);
  launch(gpu, kernel, make_args(actual), gpu.default_stream());
  launch(reference, reference_kernel, make_args(expected), reference.default_stream());
  gpu.synchronize(gpu.default_stream());
  for (const std::string& output : outputs) {
    const std::vector<float> a = actual.floats(output);
    const std::vector<float> e = expected.floats(output);
    const Deviation d = deviation(a.data(), e.data(), a.size());
    EXPECT_FALSE(d.has_nan) << name << ": NaN in output '" << output << "' (unwritten element?)";
    EXPECT_LE(d.max_abs_error, tolerance * std::max(1.0, d.max_abs_reference))
        << name << ": output '" << output << "' differs at index " << d.worst_index << ": " << a[d.worst_index]
        << " vs reference " << e[d.worst_index];
  }
  actual.expect_guards_intact();
}

}  // namespace qwen35::testing
