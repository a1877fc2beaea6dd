// Storage element types of host-memory kernels: how each dtype loads to and
// stores from float32. One template parameter per dtype keeps the kernels
// written once (the single place a run-time dtype becomes a compile-time one
// is the kernel registration).
#pragma once

#include <cstdint>
#include <string_view>

#include "qwen35/dtype.h"

namespace qwen35 {

struct F32Element {
  using Storage = float;
  static constexpr std::string_view kSuffix = "f32";
  static float load(float v) { return v; }
  static float store(float v) { return v; }
};

struct BF16Element {
  using Storage = uint16_t;
  static constexpr std::string_view kSuffix = "bf16";
  static float load(uint16_t v) { return bf16_to_f32(v); }
  static uint16_t store(float v) { return f32_to_bf16(v); }
};

struct F16Element {
  using Storage = uint16_t;
  static constexpr std::string_view kSuffix = "f16";
  static float load(uint16_t v) { return f16_to_f32(v); }
  static uint16_t store(float v) { return f32_to_f16(v); }
};

}  // namespace qwen35
