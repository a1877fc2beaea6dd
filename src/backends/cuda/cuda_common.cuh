// Device-side helpers shared by the kernel files: typed views of DevicePtr,
// the storage element types (exact bit conversions of include/qwen35/dtype.h,
// so KV caches hold the same bytes as on the host backends), warp and block
// reductions, and grid sizing.
#pragma once

#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "qwen35/backend.h"

namespace qwen35::cuda {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr uint32_t kWarp = 32;

template <typename T>
T* as(DevicePtr p) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(p.address));
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Blocks for `items` work items at `per_block` each, at least one; kernels
// loop over any remainder, so the cap only costs speed.
inline unsigned blocks_for(size_t items, size_t per_block, size_t cap = 1u << 30) {
  return static_cast<unsigned>(std::clamp<size_t>((items + per_block - 1) / per_block, 1, cap));
}

// A 16-byte load; kStream marks data read once (cache-streaming, __ldcs).
template <bool kStream, typename T>
__device__ inline T load16(const T* p) {
  if constexpr (kStream) {
    return __ldcs(p);
  } else {
    return *p;
  }
}

struct F32Elem {
  using Storage = float;
  __device__ static float load(float v) { return v; }
  __device__ static float store(float v) { return v; }
  // Elements 0..7 at p (16-byte aligned). kStream: read once (weights), so the
  // loads bypass L1 and leave it to the activations every warp re-reads.
  template <bool kStream = false>
  __device__ static void load8(const float* p, float out[8]) {
    const float4 a = load16<kStream>(reinterpret_cast<const float4*>(p));
    const float4 b = load16<kStream>(reinterpret_cast<const float4*>(p) + 1);
    out[0] = a.x, out[1] = a.y, out[2] = a.z, out[3] = a.w;
    out[4] = b.x, out[5] = b.y, out[6] = b.z, out[7] = b.w;
  }
};

// Eight 16-bit elements from one 16-byte load, widened by W.
template <typename W, bool kStream>
__device__ void load8_halves(const uint16_t* p, float out[8]) {
  const uint4 w = load16<kStream>(reinterpret_cast<const uint4*>(p));
  const uint32_t words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[2 * i] = W::load(static_cast<uint16_t>(words[i] & 0xffffu));
    out[2 * i + 1] = W::load(static_cast<uint16_t>(words[i] >> 16));
  }
}

struct BF16Elem {
  using Storage = uint16_t;
  __device__ static float load(uint16_t v) { return __uint_as_float(static_cast<uint32_t>(v) << 16); }
  // Round to nearest even; NaN stays a quiet NaN (dtype.h f32_to_bf16).
  __device__ static uint16_t store(float value) {
    uint32_t bits = __float_as_uint(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return static_cast<uint16_t>(bits >> 16);
  }
  template <bool kStream = false>
  __device__ static void load8(const uint16_t* p, float out[8]) {
    load8_halves<BF16Elem, kStream>(p, out);
  }
};

struct F16Elem {
  using Storage = uint16_t;
  // The hardware conversion is exact for every binary16 value, subnormals included.
  __device__ static float load(uint16_t v) { return __half2float(__ushort_as_half(v)); }
  // dtype.cpp f32_to_f16, step for step (NaN -> 0x7e00, overflow -> infinity, ties to even).
  __device__ static uint16_t store(float value) {
    const uint32_t bits = __float_as_uint(value);
    const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
    const uint32_t abs_bits = bits & 0x7fffffffu;
    if (abs_bits > 0x7f800000u) return sign | 0x7e00u;
    if (abs_bits >= 0x477ff000u) return sign | 0x7c00u;
    if (abs_bits < 0x38800000u) {
      return sign | static_cast<uint16_t>(rintf(__uint_as_float(abs_bits) * 16777216.0f));
    }
    const uint32_t rounded = abs_bits + 0xfffu + ((abs_bits >> 13) & 1u);
    return sign | static_cast<uint16_t>((rounded - (112u << 23)) >> 13);
  }
  template <bool kStream = false>
  __device__ static void load8(const uint16_t* p, float out[8]) {
    load8_halves<F16Elem, kStream>(p, out);
  }
};

__device__ inline float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

__device__ inline float warp_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
  return v;
}

// Sum over the block, returned to every thread. Every thread must call it;
// blockDim.x a multiple of 32. Partials are added in warp order (deterministic).
__device__ inline float block_sum(float v) {
  __shared__ float partials[32];
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  v = warp_sum(v);
  __syncthreads();  // partials may still be read by a previous call
  if (lane == 0) partials[warp] = v;
  __syncthreads();
  float total = 0;
  for (unsigned w = 0; w < warps; ++w) total += partials[w];
  return total;
}

// Maximum over the block, returned to every thread; the same rules as block_sum.
__device__ inline float block_max(float v) {
  __shared__ float partials[32];
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) partials[warp] = v;
  __syncthreads();
  float result = -INFINITY;
  for (unsigned w = 0; w < warps; ++w) result = fmaxf(result, partials[w]);
  return result;
}

__device__ inline float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ inline float siluf(float x) { return x / (1.0f + expf(-x)); }

}  // namespace qwen35::cuda
