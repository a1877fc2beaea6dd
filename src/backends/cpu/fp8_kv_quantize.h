// The fp8 KV cache's quantizer on vectors: quantize_fp8_kv (host/kv_rows.h)
// to the bit, so that the CPU and reference backends' caches stay
// byte-identical. Done a scalar at a time (frexp, ldexp and nearbyint per
// value), appending one 1024-value row to K and V took 15 us, longer than a
// 100-position attention launch.
#pragma once

#include <cstdint>

namespace qwen35::cpu {

// As quantize_fp8_kv: x[0..n) (n a multiple of kKvFp8Block) into codes[n] and
// scales[n / kKvFp8Block], on the best target the CPU runs.
void quantize_fp8_kv(const float* x, uint32_t n, uint8_t* codes, uint16_t* scales);

}  // namespace qwen35::cpu
