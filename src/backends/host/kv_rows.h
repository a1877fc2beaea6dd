// How host-memory kernels write and read one cached KV position (see KvDtype
// in kernels.h). Plain dtypes are an element array; an fp8 row is kv_dim codes
// followed by one BF16 scale per kKvFp8Block values. The reference and CPU
// backends share this so their caches are byte-identical.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "host/element_types.h"
#include "host/host_backend.h"
#include "qwen35/kernels.h"

namespace qwen35 {

// The fp8 cache "element": not a plain Storage type, so kernels branch on it
// with `if constexpr (is_fp8_kv<E>)`.
struct Fp8KvElement {
  static constexpr std::string_view kSuffix = "fp8";
};

template <typename E>
inline constexpr bool is_fp8_kv = std::is_same_v<E, Fp8KvElement>;

// Quantises x[0..n) (n a multiple of kKvFp8Block) into codes[n] and scales[n / kKvFp8Block].
void quantize_fp8_kv(const float* x, uint32_t n, uint8_t* codes, uint16_t* scales);

// out[i] = value i of the fp8 row slice starting at `first` (a multiple of
// kKvFp8Block) of a row holding kv_dim values.
void dequantize_fp8_kv(const uint8_t* row, uint32_t kv_dim, uint32_t first, uint32_t n, float* out);

// One fp8 row's bytes: the scales start at row + kv_dim.
inline const uint16_t* fp8_kv_scales(const uint8_t* row, uint32_t kv_dim) {
  return reinterpret_cast<const uint16_t*>(row + kv_dim);
}

// Position t's row of an fp8 cache of kv_dim values per row.
inline uint8_t* fp8_kv_row(DevicePtr cache, uint32_t kv_dim, uint32_t t) {
  return host_ptr<uint8_t>(cache) + size_t{t} * kv_row_bytes(KvDtype::kFP8, kv_dim);
}

// A quantizer with quantize_fp8_kv's signature and results.
using Fp8KvQuantizer = void (*)(const float* x, uint32_t n, uint8_t* codes, uint16_t* scales);

// kv_append_<dtype> for host memory (reference and CPU alike): one row written
// into K and V at step.cache_pos. An fp8 row goes through `quantize`: the CPU
// backend passes its vector twin.
template <typename E, Fp8KvQuantizer quantize = quantize_fp8_kv>
void append_kv_rows(const KvAppendArgs& a) {
  const auto& step = *host_ptr<const DecodeStepParams>(a.step);
  const float* k = host_ptr<const float>(a.k);
  const float* v = host_ptr<const float>(a.v);
  if constexpr (is_fp8_kv<E>) {
    for (auto [x, cache] : {std::pair{k, a.k_cache}, std::pair{v, a.v_cache}}) {
      uint8_t* row = fp8_kv_row(cache, a.kv_dim, step.cache_pos);
      quantize(x, a.kv_dim, row, reinterpret_cast<uint16_t*>(row + a.kv_dim));
    }
  } else {
    auto* k_cache = host_ptr<typename E::Storage>(a.k_cache) + size_t{step.cache_pos} * a.kv_dim;
    auto* v_cache = host_ptr<typename E::Storage>(a.v_cache) + size_t{step.cache_pos} * a.kv_dim;
    for (uint32_t i = 0; i < a.kv_dim; ++i) {
      k_cache[i] = E::store(k[i]);
      v_cache[i] = E::store(v[i]);
    }
  }
}

}  // namespace qwen35
