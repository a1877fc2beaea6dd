// Element types of tensors in checkpoints and on devices, and the exact scalar
// conversions between them (these are the specification the kernels follow).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace qwen35 {

// kQ8_0 to kQ6_K are ggml's block-quantized types (GGUF files only; layouts in
// qwen35/gguf_quants.h): their elements come in blocks of dtype_block_size.
// kQ4_0x16, kQ8_0x16, kQ4_Kx16, kQ5_Kx16 and kQ6_Kx16 are Q4_0, Q8_0, Q4_K,
// Q5_K and Q6_K regrouped 16 rows at a time,
// layouts backends choose at load time (GpuBackend::weight_layout), never
// ones a file holds.
enum class DType : uint8_t {
  kF32, kF16, kBF16, kF64, kI64, kI32, kI16, kI8, kU8, kU32, kBool, kF8E4M3,
  kQ8_0, kQ4_0, kQ4_K, kQ5_K, kQ6_K, kQ4_0x16, kQ8_0x16, kQ4_Kx16, kQ5_Kx16, kQ6_Kx16
};

// Bytes per element; for the block types, bytes per block of dtype_block_size elements.
size_t dtype_size(DType dtype);
// Elements per block: 1 for element types, 32 or 256 for ggml block types.
size_t dtype_block_size(DType dtype);
inline bool is_block_dtype(DType dtype) { return dtype_block_size(dtype) > 1; }
// Bytes of `n` consecutive elements (n a multiple of dtype_block_size).
inline size_t dtype_bytes(DType dtype, size_t n) { return n / dtype_block_size(dtype) * dtype_size(dtype); }
// The safetensors spelling ("F32", "BF16", ...), or ggml's for block types ("Q4_K").
std::string_view dtype_name(DType dtype);
// Parses the safetensors spelling; nullopt for an unknown string (and for the
// block types, which safetensors files cannot hold).
std::optional<DType> parse_dtype(std::string_view name);
// The lower-case spelling ("bf16"), as kernel names and format names use it.
std::string dtype_lower_name(DType dtype);
// F32, F16 or BF16: the float types weights and activations may be stored in.
inline bool is_float_dtype(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

inline float bf16_to_f32(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

// Round to nearest even; NaN stays NaN (quiet).
inline uint16_t f32_to_bf16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float f16_to_f32(uint16_t bits);
uint16_t f32_to_f16(float value);

// FP8 E4M3 (the OCP "fn" variant: no infinities, 0x7f/0xff are NaN, largest
// finite 448). Rounds to nearest even and saturates to +-448; NaN maps to NaN.
float fp8_e4m3_to_f32(uint8_t bits);
uint8_t f32_to_fp8_e4m3(float value);

}  // namespace qwen35
