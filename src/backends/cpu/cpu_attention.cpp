// KV-cache append and decode attention on the CPU. Attention splits each KV
// head's positions into chunks (more chunks for longer contexts, at most a few
// per thread); a task handles all query heads sharing that KV head, so every
// K and V row is read once, and runs a blockwise online softmax (running max,
// sum, weighted V); the chunks are merged at the end. Scratch grows with the
// thread count, never with the context length. FP8 caches are dequantised a
// block of positions at a time into per-thread float tiles, so the same SIMD
// kernels score and accumulate every cache dtype.
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_math.h"
#include "host/kv_rows.h"
#include "qwen35/kernels.h"

namespace qwen35 {
namespace {

// Positions per chunk below which splitting a head further does not pay.
constexpr uint32_t kMinChunk = 256;

// One KV head's rows for a block of positions, as the SIMD kernels take them:
// straight from the cache, or (fp8) dequantised into a per-thread float tile,
// asking for the codes of the rows `prefetch` positions on as it goes (the
// SIMD kernels prefetch plain rows themselves).
struct KvRows {
  const uint8_t* first;
  size_t stride_bytes, stride_elements;
  simd::WeightType type;
  const void* row(uint32_t b) const { return first + b * stride_bytes; }
};

template <typename E>
KvRows kv_rows(DevicePtr cache, uint32_t kv_dim, uint32_t offset, uint32_t head_dim, uint32_t t0, uint32_t n,
               uint32_t prefetch, std::vector<float>& tile) {
  if constexpr (is_fp8_kv<E>) {
    tile.resize(size_t{n} * head_dim);
    const size_t row_bytes = kv_row_bytes(KvDtype::kFP8, kv_dim);
    const auto* base = host_ptr<const uint8_t>(cache);
    for (uint32_t b = 0; b < n; ++b) {
      const uint8_t* row = base + (t0 + b) * row_bytes;
      if (prefetch) {
        const uint8_t* next = row + prefetch * row_bytes;
        for (uint32_t line = 0; line < head_dim; line += 64) __builtin_prefetch(next + offset + line);
        __builtin_prefetch(fp8_kv_scales(next, kv_dim) + offset / kKvFp8Block);
      }
      simd::fp8_blocks_to_f32(row + offset, fp8_kv_scales(row, kv_dim) + offset / kKvFp8Block, head_dim,
                              tile.data() + size_t{b} * head_dim);
    }
    return {reinterpret_cast<const uint8_t*>(tile.data()), head_dim * sizeof(float), head_dim,
            simd::WeightType::kF32};
  } else {
    using S = typename E::Storage;
    const auto* rows = host_ptr<const S>(cache) + size_t{t0} * kv_dim + offset;
    return {reinterpret_cast<const uint8_t*>(rows), kv_dim * sizeof(S), kv_dim, cpu::weight_type<E>()};
  }
}

// Positions scored together before one softmax rescale.
constexpr uint32_t kBlock = 32;

// One task: the query heads of KV head `g` over positions [t_begin, t_end).
// Each K and V row is read once for all of its query heads. Writes, per head,
// the unnormalised output (head_dim floats), then the running max and sum.
template <typename E>
void attend_chunk(const AttentionDecodeArgs& a, uint32_t g, uint32_t t_begin, uint32_t t_end, float* slot) {
  const uint32_t group = a.n_heads_q / a.n_heads_kv, hd = a.head_dim;
  const uint32_t kv_dim = a.n_heads_kv * hd;
  const uint32_t kv_offset = g * hd;
  const float* q = host_ptr<const float>(a.q) + size_t{g} * group * hd;
  const size_t stride = hd + 2;  // per head: acc[hd], max, sum
  for (uint32_t j = 0; j < group; ++j) {
    std::fill(slot + j * stride, slot + j * stride + hd, 0.0f);
    slot[j * stride + hd] = -INFINITY;
    slot[j * stride + hd + 1] = 0.0f;
  }
  thread_local std::vector<float> scores;  // [group, kBlock]: one contiguous row per query head
  thread_local std::vector<float> k_tile, v_tile;  // fp8 only: [kBlock, hd]
  scores.resize(size_t{kBlock} * group);
  for (uint32_t t0 = t_begin; t0 < t_end; t0 += kBlock) {
    const uint32_t n = std::min(kBlock, t_end - t0);
    // Each block asks for the next block's rows as it reads its own: a head's
    // slice is a fraction of each cached row, too short a run for the hardware
    // prefetcher to ramp up on. Spread over the block, not issued at once: a
    // burst of 32 KB of prefetches filled the miss queue and stalled on it.
    const uint32_t prefetch = t0 + kBlock < t_end ? kBlock : 0;
    const uint32_t simd_prefetch = is_fp8_kv<E> ? 0 : prefetch;  // an fp8 tile is not the cache
    const KvRows keys = kv_rows<E>(a.k_cache, kv_dim, kv_offset, hd, t0, n, prefetch, k_tile);
    simd::dot_block(keys.type, keys.first, keys.stride_elements, n, q, hd, group, scores.data(), kBlock, hd,
                    simd_prefetch);
    for (uint32_t j = 0; j < group; ++j) {
      float* acc = slot + j * stride;
      float& max = acc[hd];
      float& sum = acc[hd + 1];
      float* s = &scores[size_t{j} * kBlock];
      const float block_max = simd::max_value(s, n) * a.scale;  // scale > 0 keeps the largest score largest
      if (block_max > max) {
        const float keep = std::exp(max - block_max);  // 0 on the first block
        sum *= keep;
        simd::scale_add(simd::WeightType::kF32, acc, keep, 0.0f, acc, hd);
        max = block_max;
      }
      sum += simd::exp_shifted(s, n, a.scale, max);
    }
    const KvRows values = kv_rows<E>(a.v_cache, kv_dim, kv_offset, hd, t0, n, prefetch, v_tile);
    simd::axpy_block(values.type, values.first, values.stride_elements, n, scores.data(), kBlock, group, slot, stride,
                     hd, simd_prefetch);
  }
}

template <typename E>
void attention_decode(CpuBackend& cpu, const AttentionDecodeArgs& a) {
  const uint32_t seq_len = host_ptr<const DecodeStepParams>(a.step)->seq_len;
  const uint32_t threads = cpu.pool().size();
  const uint32_t group = a.n_heads_q / a.n_heads_kv;
  // Enough chunks to give every thread two tasks even with few KV heads.
  const uint32_t wanted = std::max<uint32_t>(1, (2 * threads + a.n_heads_kv - 1) / a.n_heads_kv);
  const uint32_t n_chunks = std::clamp<uint32_t>(seq_len / kMinChunk, 1, wanted);
  const uint32_t chunk_len = (seq_len + n_chunks - 1) / n_chunks;
  const size_t stride = a.head_dim + 2;  // acc, then max and sum
  const size_t task_floats = size_t{group} * stride;
  float* scratch = cpu.launch_scratch(size_t{a.n_heads_kv} * n_chunks * task_floats);

  cpu.pool().parallel_for(size_t{a.n_heads_kv} * n_chunks, 1, [&](size_t begin, size_t end) {
    for (size_t task = begin; task < end; ++task) {
      const auto g = static_cast<uint32_t>(task / n_chunks);
      const auto c = static_cast<uint32_t>(task % n_chunks);
      const uint32_t t_begin = c * chunk_len;
      const uint32_t t_end = std::min(seq_len, t_begin + chunk_len);
      attend_chunk<E>(a, g, t_begin, std::max(t_begin, t_end), scratch + task * task_floats);
    }
  });

  // Merge: rescale each chunk to the global max (empty chunks have sum 0).
  for (uint32_t h = 0; h < a.n_heads_q; ++h) {
    const uint32_t g = h / group, j = h % group;
    auto slot = [&](uint32_t c) { return scratch + (size_t{g} * n_chunks + c) * task_floats + j * stride; };
    float max = -INFINITY;
    for (uint32_t c = 0; c < n_chunks; ++c) max = std::max(max, slot(c)[a.head_dim]);
    float* out = host_ptr<float>(a.out) + size_t{h} * a.head_dim;
    std::fill(out, out + a.head_dim, 0.0f);
    float total = 0;
    for (uint32_t c = 0; c < n_chunks; ++c) {
      const float* part = slot(c);
      if (part[a.head_dim + 1] == 0.0f) continue;
      const float w = std::exp(part[a.head_dim] - max);
      total += w * part[a.head_dim + 1];
      simd::scale_add(simd::WeightType::kF32, part, 1.0f, w, out, a.head_dim);
    }
    const float inv = 1.0f / total;
    for (uint32_t i = 0; i < a.head_dim; ++i) out[i] *= inv;
  }
}

template <typename E>
void register_for(CpuBackend& cpu) {
  const std::string s(E::kSuffix);
  cpu.register_kernel<KvAppendArgs>("kv_append_" + s, append_kv_rows<E>);
  cpu.register_kernel<AttentionDecodeArgs>("attention_decode_" + s,
                                           [&cpu](const AttentionDecodeArgs& a) { attention_decode<E>(cpu, a); });
}

}  // namespace

void register_cpu_attention_kernels(CpuBackend& cpu) {
  register_for<F32Element>(cpu);
  register_for<BF16Element>(cpu);
  register_for<F16Element>(cpu);
  register_for<Fp8KvElement>(cpu);
}

}  // namespace qwen35
