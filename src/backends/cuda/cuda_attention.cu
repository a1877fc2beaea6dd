// The KV cache append and decode attention (spec 3.1 step 6) for f32, bf16,
// f16 and fp8 caches (rows as KvDtype in kernels.h describes; fp8 byte-identical
// to src/backends/host/kv_rows.cpp). Attention is split over positions: block (h, s) runs an online
// softmax over its slice of [0, seq_len), each warp over every fourth position
// of it, one whole K and V row per warp step (each lane holds head_dim / 32
// dims of q, the accumulator and the rows), and writes (acc, max, sum) to the
// backend's scratch; a second kernel merges the slices. The split count comes
// from the head count and the device, never from seq_len, which is read from
// device memory so that a captured graph replays for any position.
#include <cmath>
#include <type_traits>

#include "cuda_common.cuh"
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "qwen35/kernels.h"

namespace qwen35::cuda {
namespace {

constexpr unsigned kAppendThreads = 256;

template <typename E>
__global__ void kv_append_kernel(const float* k, const float* v, typename E::Storage* k_cache,
                                 typename E::Storage* v_cache, const DecodeStepParams* step, uint32_t kv_dim) {
  start_after_previous_kernel();
  const size_t slot = size_t{step->cache_pos} * kv_dim;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < kv_dim; i += gridDim.x * blockDim.x) {
    k_cache[slot + i] = E::store(k[i]);
    v_cache[slot + i] = E::store(v[i]);
  }
}

template <typename E>
void kv_append(const KvAppendArgs& a, const LaunchContext& ctx) {
  using S = typename E::Storage;
  launch_kernel(ctx, kv_append_kernel<E>, blocks_for(a.kv_dim, kAppendThreads), kAppendThreads,
      as<const float>(a.k), as<const float>(a.v), as<S>(a.k_cache), as<S>(a.v_cache),
      as<const DecodeStepParams>(a.step), a.kv_dim);
}

// The fp8 cache: a row is kv_dim E4M3 codes, then one BF16 power-of-two scale
// per kKvFp8Block values.
struct Fp8Kv {};
template <typename E>
constexpr bool kIsFp8 = std::is_same_v<E, Fp8Kv>;

template <typename E>
size_t row_bytes_of(uint32_t kv_dim) {
  if constexpr (kIsFp8<E>) {
    return size_t{kv_dim} + size_t{kv_dim} / kKvFp8Block * 2;
  } else {
    return size_t{kv_dim} * sizeof(typename E::Storage);
  }
}

// dtype.cpp fp8_e4m3_to_f32: (8 + m) 2^(e - 10), subnormals m 2^-9, 0x7f NaN.
__device__ inline float fp8_e4m3_to_f32(uint32_t bits) {
  const uint32_t exponent = (bits >> 3) & 0xfu, mantissa = bits & 0x7u;
  float magnitude;
  if (exponent == 0xfu && mantissa == 0x7u) {
    magnitude = __uint_as_float(0x7fc00000u);
  } else if (exponent == 0) {
    magnitude = static_cast<float>(mantissa) * 0x1p-9f;
  } else {
    magnitude = __uint_as_float(((exponent + 120u) << 23) | (mantissa << 20));
  }
  return (bits & 0x80u) ? -magnitude : magnitude;
}

// dtype.cpp f32_to_fp8_e4m3, step for step: ties to even, saturating at 448, NaN to 0x7f.
__device__ inline uint8_t f32_to_fp8_e4m3(float value) {
  const uint32_t sign = (__float_as_uint(value) >> 24) & 0x80u;
  const float magnitude = fabsf(value);
  if (isnan(value)) return static_cast<uint8_t>(sign | 0x7fu);
  if (magnitude >= 448.0f) return static_cast<uint8_t>(sign | 0x7eu);
  if (magnitude < 0.015625f) return static_cast<uint8_t>(sign | static_cast<uint32_t>(rintf(magnitude * 512.0f)));
  int exponent = 0;
  const float fraction = frexpf(magnitude, &exponent);
  uint32_t steps = static_cast<uint32_t>(rintf(fraction * 16.0f));
  int biased = exponent - 1 + 7;
  if (steps == 16) {
    steps = 8;
    ++biased;
  }
  if (biased > 15 || (biased == 15 && steps - 8 == 7)) return static_cast<uint8_t>(sign | 0x7eu);
  return static_cast<uint8_t>(sign | (static_cast<uint32_t>(biased) << 3) | (steps - 8));
}

// kv_rows.cpp fp8_block_scale: the smallest power of two s with 448 s >= max_abs; 0 for tiny or NaN.
__device__ inline float fp8_block_scale(float max_abs) {
  if (!(max_abs >= 0x1p-100f)) return 0.0f;
  int exponent = 0;
  const float fraction = frexpf(max_abs, &exponent);
  return ldexpf(1.0f, fraction <= 0.875f ? exponent - 9 : exponent - 8);
}

// One thread per block of kKvFp8Block values of K or V: its scale, then its codes.
__global__ void kv_append_fp8_kernel(const float* k, const float* v, uint8_t* k_cache, uint8_t* v_cache,
                                     const DecodeStepParams* step, uint32_t kv_dim) {
  start_after_previous_kernel();
  const uint32_t n_blocks = kv_dim / kKvFp8Block;
  const size_t row_bytes = size_t{kv_dim} + size_t{n_blocks} * 2;
  for (uint32_t item = blockIdx.x * blockDim.x + threadIdx.x; item < 2 * n_blocks; item += gridDim.x * blockDim.x) {
    const bool is_v = item >= n_blocks;
    const uint32_t b = item % n_blocks;
    const float* x = (is_v ? v : k) + size_t{b} * kKvFp8Block;
    uint8_t* row = (is_v ? v_cache : k_cache) + size_t{step->cache_pos} * row_bytes;
    float max_abs = 0.0f;
    for (uint32_t i = 0; i < kKvFp8Block; ++i) max_abs = fmaxf(max_abs, fabsf(x[i]));
    const float scale = fp8_block_scale(max_abs);
    const float inverse = scale > 0.0f ? 1.0f / scale : 0.0f;  // exact: a power of two
    reinterpret_cast<uint16_t*>(row + kv_dim)[b] = BF16Elem::store(scale);
    for (uint32_t i = 0; i < kKvFp8Block; ++i) row[size_t{b} * kKvFp8Block + i] = f32_to_fp8_e4m3(x[i] * inverse);
  }
}

void kv_append_fp8(const KvAppendArgs& a, const LaunchContext& ctx) {
  QWEN35_ASSERT(a.kv_dim % kKvFp8Block == 0);
  launch_kernel(ctx, kv_append_fp8_kernel, blocks_for(2 * (a.kv_dim / kKvFp8Block), 64), 64,
      as<const float>(a.k), as<const float>(a.v), as<uint8_t>(a.k_cache), as<uint8_t>(a.v_cache),
      as<const DecodeStepParams>(a.step), a.kv_dim);
}

constexpr unsigned kAttnWarps = 4;
constexpr uint32_t kMaxHeadDim = 512;
constexpr uint32_t kMaxPerLane = kMaxHeadDim / kWarp;  // 16 dims per lane
constexpr uint32_t kMaxSplits = 128;  // the combine kernel has a thread per split

// Lane `lane`'s dims of a head row: chunks c = lane + 32 j of kChunk contiguous
// elements (kChunk 8: one 16-byte load of 16-bit elements); zeros past head_dim.
template <typename E, uint32_t kChunk, typename T>
__device__ void load_lane_dims(const T* row, uint32_t head_dim, uint32_t lane, float out[kMaxPerLane]) {
#pragma unroll
  for (uint32_t j = 0; j < kMaxPerLane / kChunk; ++j) {
    const uint32_t first = (lane + kWarp * j) * kChunk;
    if (first < head_dim) {
      if constexpr (kChunk == 8) {
        E::load8(row + first, out + j * kChunk);
      } else {
        out[j] = E::load(row[first]);
      }
    } else {
#pragma unroll
      for (uint32_t e = 0; e < kChunk; ++e) out[j * kChunk + e] = 0.0f;
    }
  }
}

// Dim of lane-local slot `i` (slot i = j * kChunk + e).
template <uint32_t kChunk>
__device__ uint32_t lane_dim(uint32_t lane, uint32_t i) {
  return (lane + kWarp * (i / kChunk)) * kChunk + i % kChunk;
}

// Lane `lane`'s dims of one head of a cached row (`row` its first byte,
// `kv_offset` the head's first value), as load_lane_dims lays them out.
template <typename E, uint32_t kChunk>
__device__ void load_lane_kv(const uint8_t* row, uint32_t kv_dim, uint32_t kv_offset, uint32_t head_dim,
                             uint32_t lane, float out[kMaxPerLane]) {
  if constexpr (kIsFp8<E>) {
    const uint8_t* codes = row + kv_offset;
    const uint16_t* scales = reinterpret_cast<const uint16_t*>(row + kv_dim);
#pragma unroll
    for (uint32_t j = 0; j < kMaxPerLane / kChunk; ++j) {
      const uint32_t first = (lane + kWarp * j) * kChunk;
      if (first < head_dim) {
        // A chunk of 8 starts at a multiple of 8, so it lies in one block of 16.
        const float scale = BF16Elem::load(scales[(kv_offset + first) / kKvFp8Block]);
        if constexpr (kChunk == 8) {
          const uint2 packed = *reinterpret_cast<const uint2*>(codes + first);
#pragma unroll
          for (uint32_t e = 0; e < 4; ++e) {
            out[j * 8 + e] = fp8_e4m3_to_f32((packed.x >> (8 * e)) & 0xffu) * scale;
            out[j * 8 + 4 + e] = fp8_e4m3_to_f32((packed.y >> (8 * e)) & 0xffu) * scale;
          }
        } else {
          out[j] = fp8_e4m3_to_f32(codes[first]) * scale;
        }
      } else {
#pragma unroll
        for (uint32_t e = 0; e < kChunk; ++e) out[j * kChunk + e] = 0.0f;
      }
    }
  } else {
    load_lane_dims<E, kChunk>(reinterpret_cast<const typename E::Storage*>(row) + kv_offset, head_dim, lane, out);
  }
}

// partials: [n_heads_q, n_splits, head_dim + 2] = (acc, max, sum) per slice;
// with one split the block writes `out` directly.
template <typename E, uint32_t kChunk>
__global__ void __launch_bounds__(kAttnWarps * kWarp)
    attention_split_kernel(const float* q, const uint8_t* __restrict__ k_cache, const uint8_t* __restrict__ v_cache,
                           size_t row_bytes, const DecodeStepParams* step, float* partials, float* out,
                           uint32_t n_heads_q, uint32_t n_heads_kv, uint32_t head_dim, float scale) {
  start_after_previous_kernel();
  __shared__ float warp_acc[kAttnWarps][kMaxHeadDim];
  __shared__ float warp_max_score[kAttnWarps], warp_total[kAttnWarps];
  const uint32_t h = blockIdx.x, split = blockIdx.y, n_splits = gridDim.y;
  const uint32_t lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const uint32_t seq_len = step->seq_len;
  const uint32_t kv_dim = n_heads_kv * head_dim;
  const uint32_t kv_offset = h / (n_heads_q / n_heads_kv) * head_dim;
  const uint32_t per_split = (seq_len + n_splits - 1) / n_splits;
  const uint32_t begin = min(seq_len, split * per_split), end = min(seq_len, begin + per_split);

  float q_lane[kMaxPerLane];
  load_lane_dims<F32Elem, kChunk>(q + size_t{h} * head_dim, head_dim, lane, q_lane);
  float running_max = -INFINITY, total = 0.0f, acc[kMaxPerLane];
#pragma unroll
  for (uint32_t i = 0; i < kMaxPerLane; ++i) acc[i] = 0.0f;

#pragma unroll 2  // two positions' K and V loads in flight per warp
  for (uint32_t t = begin + warp; t < end; t += kAttnWarps) {
    float k_lane[kMaxPerLane], v_lane[kMaxPerLane];
    load_lane_kv<E, kChunk>(k_cache + t * row_bytes, kv_dim, kv_offset, head_dim, lane, k_lane);
    load_lane_kv<E, kChunk>(v_cache + t * row_bytes, kv_dim, kv_offset, head_dim, lane, v_lane);
    float dot = 0.0f;
#pragma unroll
    for (uint32_t i = 0; i < kMaxPerLane; ++i) dot += q_lane[i] * k_lane[i];
    const float score = warp_sum(dot) * scale;
    const float new_max = fmaxf(running_max, score);
    const float rescale = expf(running_max - new_max);  // 0 at the first position (max was -inf)
    const float p = expf(score - new_max);
    total = total * rescale + p;
#pragma unroll
    for (uint32_t i = 0; i < kMaxPerLane; ++i) acc[i] = acc[i] * rescale + p * v_lane[i];
    running_max = new_max;
  }

  // Merge the warps: weights exp(max_w - max), zero for warps that saw no position.
#pragma unroll
  for (uint32_t i = 0; i < kMaxPerLane; ++i) {
    const uint32_t d = lane_dim<kChunk>(lane, i);
    if (d < head_dim) warp_acc[warp][d] = acc[i];
  }
  if (lane == 0) {
    warp_max_score[warp] = running_max;
    warp_total[warp] = total;
  }
  __syncthreads();
  float block_max = -INFINITY;
  for (uint32_t w = 0; w < kAttnWarps; ++w) {
    if (warp_total[w] > 0.0f) block_max = fmaxf(block_max, warp_max_score[w]);
  }
  float weight[kAttnWarps], block_total = 0.0f;
  for (uint32_t w = 0; w < kAttnWarps; ++w) {
    weight[w] = warp_total[w] > 0.0f ? expf(warp_max_score[w] - block_max) : 0.0f;
    block_total += weight[w] * warp_total[w];
  }
  float* slice = partials + (size_t{h} * n_splits + split) * (head_dim + 2);
  for (uint32_t d = threadIdx.x; d < head_dim; d += blockDim.x) {
    float value = 0.0f;
    for (uint32_t w = 0; w < kAttnWarps; ++w) value += weight[w] * warp_acc[w][d];
    if (n_splits == 1) {
      out[size_t{h} * head_dim + d] = value / block_total;
    } else {
      slice[d] = value;
    }
  }
  if (n_splits > 1 && threadIdx.x == 0) {
    slice[head_dim] = block_max;
    slice[head_dim + 1] = block_total;
  }
}

// out[h] = sum_s acc_s exp(max_s - max) / sum_s total_s exp(max_s - max) over non-empty slices.
// Thread s reads slice s's max and total, so the slices' loads overlap instead of
// following each other; then thread d adds dimension d over the slices.
__global__ void __launch_bounds__(kMaxSplits)
    attention_combine_kernel(const float* partials, float* out, uint32_t head_dim, uint32_t n_splits) {
  start_after_previous_kernel();
  __shared__ float weight[kMaxSplits];
  const uint32_t h = blockIdx.x, s = threadIdx.x;
  const float* slices = partials + size_t{h} * n_splits * (head_dim + 2);
  const bool used = s < n_splits && slices[size_t{s} * (head_dim + 2) + head_dim + 1] > 0.0f;
  const float slice_max = used ? slices[size_t{s} * (head_dim + 2) + head_dim] : -INFINITY;
  const float max_score = block_max(slice_max);
  const float w = used ? expf(slice_max - max_score) : 0.0f;
  const float total = block_sum(used ? w * slices[size_t{s} * (head_dim + 2) + head_dim + 1] : 0.0f);
  weight[s] = w;
  __syncthreads();
  for (uint32_t d = threadIdx.x; d < head_dim; d += blockDim.x) {
    float value = 0.0f;
    for (uint32_t i = 0; i < n_splits; ++i) {
      if (weight[i] > 0.0f) value += weight[i] * slices[size_t{i} * (head_dim + 2) + d];
    }
    out[size_t{h} * head_dim + d] = value / total;
  }
}

template <typename E>
void attention_decode(const AttentionDecodeArgs& a, const LaunchContext& ctx) {
  QWEN35_ASSERT(a.head_dim > 0 && a.head_dim <= kMaxHeadDim);
  QWEN35_ASSERT(a.n_heads_kv > 0 && a.n_heads_q % a.n_heads_kv == 0 && a.n_heads_q <= 65535);
  const uint32_t kv_dim = a.n_heads_kv * a.head_dim;
  const size_t row_bytes = row_bytes_of<E>(kv_dim);
  const uint8_t* k_cache = as<const uint8_t>(a.k_cache);
  const uint8_t* v_cache = as<const uint8_t>(a.v_cache);
  // About eight blocks per multiprocessor, as far as the scratch holds the slices: a
  // block's warps walk their positions one after another, so it takes many blocks
  // to keep enough K/V loads in flight. Past the sequence length a block just exits.
  const size_t slice_bytes = size_t{a.n_heads_q} * (a.head_dim + 2) * sizeof(float);
  const uint32_t by_device = static_cast<uint32_t>(std::max(1, 8 * ctx.multiprocessors) / a.n_heads_q);
  const uint32_t by_scratch = static_cast<uint32_t>(ctx.scratch_bytes / slice_bytes);
  const uint32_t n_splits = std::clamp<uint32_t>(std::min(by_device, by_scratch), 1, kMaxSplits);
  QWEN35_ASSERT(n_splits == 1 || size_t{n_splits} * slice_bytes <= ctx.scratch_bytes);
  float* partials = static_cast<float*>(ctx.scratch);
  const dim3 grid(a.n_heads_q, n_splits);
  // Chunks of 8 values per lane: 16-byte loads (f32: two), or 8 fp8 codes (8-byte loads, rows a multiple of 8 bytes).
  bool vector_path = a.head_dim % 8 == 0 && aligned16(as<float>(a.q));
  if constexpr (kIsFp8<E>) {
    QWEN35_ASSERT(kv_dim % kKvFp8Block == 0);
    const auto aligned8 = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 7u) == 0; };
    vector_path = vector_path && row_bytes % 8 == 0 && aligned8(k_cache) && aligned8(v_cache);
  } else {
    vector_path = vector_path && aligned16(k_cache) && aligned16(v_cache);
  }
  const auto run = [&](auto kernel) {
    launch_kernel(ctx, kernel, grid, kAttnWarps * kWarp, as<const float>(a.q), k_cache, v_cache, row_bytes,
                  as<const DecodeStepParams>(a.step), partials, as<float>(a.out), a.n_heads_q, a.n_heads_kv,
                  a.head_dim, a.scale);
  };
  if (vector_path) {
    run(attention_split_kernel<E, 8>);
  } else {
    run(attention_split_kernel<E, 1>);
  }
  if (n_splits > 1) {
    launch_kernel(ctx.after_kernel(), attention_combine_kernel, a.n_heads_q, kMaxSplits, partials, as<float>(a.out),
                  a.head_dim, n_splits);
  }
}

template <typename E>
void add_for(std::vector<KernelSpec>& specs, const std::string& kv) {
  specs.push_back(kernel_spec<KvAppendArgs, kv_append<E>>("kv_append_" + kv));
  specs.push_back(kernel_spec<AttentionDecodeArgs, attention_decode<E>>("attention_decode_" + kv));
}

}  // namespace

void add_attention_kernels(std::vector<KernelSpec>& specs) {
  add_for<F32Elem>(specs, "f32");
  add_for<BF16Elem>(specs, "bf16");
  add_for<F16Elem>(specs, "f16");
  specs.push_back(kernel_spec<KvAppendArgs, kv_append_fp8>("kv_append_fp8"));
  specs.push_back(kernel_spec<AttentionDecodeArgs, attention_decode<Fp8Kv>>("attention_decode_fp8"));
}

}  // namespace qwen35::cuda
