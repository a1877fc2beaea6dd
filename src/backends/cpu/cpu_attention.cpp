// KV-cache append and decode attention on the CPU. Attention splits each query
// head's positions into chunks (more chunks for longer contexts, at most a few
// per thread), runs an online softmax (running max, sum, weighted V) over each
// chunk in parallel, then merges the chunks. Scratch grows with the thread
// count, never with the context length.
#include <algorithm>
#include <cmath>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_math.h"
#include "qwen35/kernels.h"

namespace qwen35 {
namespace {

// Positions per chunk below which splitting a head further does not pay.
constexpr uint32_t kMinChunk = 256;

template <typename E>
void kv_append(const KvAppendArgs& a) {
  const auto& step = *host_ptr<const DecodeStepParams>(a.step);
  auto* k_cache = host_ptr<typename E::Storage>(a.k_cache) + size_t{step.cache_pos} * a.kv_dim;
  auto* v_cache = host_ptr<typename E::Storage>(a.v_cache) + size_t{step.cache_pos} * a.kv_dim;
  const float* k = host_ptr<const float>(a.k);
  const float* v = host_ptr<const float>(a.v);
  for (uint32_t i = 0; i < a.kv_dim; ++i) {
    k_cache[i] = E::store(k[i]);
    v_cache[i] = E::store(v[i]);
  }
}

// A chunk's partial result: max score, sum of exp(score - max), and the
// exp-weighted sum of V rows [head_dim].
struct Partial {
  float max;
  float sum;
  float* acc;
};

template <typename E>
void attend_chunk(const AttentionDecodeArgs& a, uint32_t h, uint32_t t_begin, uint32_t t_end, Partial& out) {
  constexpr simd::WeightType type = cpu::weight_type<E>();
  const auto* k_cache = host_ptr<const typename E::Storage>(a.k_cache);
  const auto* v_cache = host_ptr<const typename E::Storage>(a.v_cache);
  const size_t kv_dim = size_t{a.n_heads_kv} * a.head_dim;
  const size_t kv_offset = size_t{h / (a.n_heads_q / a.n_heads_kv)} * a.head_dim;
  const float* q = host_ptr<const float>(a.q) + size_t{h} * a.head_dim;
  std::fill(out.acc, out.acc + a.head_dim, 0.0f);
  out.max = -INFINITY;
  out.sum = 0.0f;
  for (uint32_t t = t_begin; t < t_end; ++t) {
    const size_t row = t * kv_dim + kv_offset;
    const float score = simd::dot(type, k_cache + row, q, a.head_dim) * a.scale;
    float keep = 1.0f;
    if (score > out.max) {
      keep = std::exp(out.max - score);  // 0 on the first position
      out.sum *= keep;
      out.max = score;
    }
    const float p = std::exp(score - out.max);
    out.sum += p;
    simd::scale_add(type, v_cache + row, keep, p, out.acc, a.head_dim);
  }
}

template <typename E>
void attention_decode(CpuBackend& cpu, const AttentionDecodeArgs& a) {
  const uint32_t seq_len = host_ptr<const DecodeStepParams>(a.step)->seq_len;
  const uint32_t threads = cpu.pool().size();
  // Enough chunks to give every thread work even with few heads.
  const uint32_t wanted = std::max<uint32_t>(1, (2 * threads + a.n_heads_q - 1) / a.n_heads_q);
  const uint32_t n_chunks = std::clamp<uint32_t>(seq_len / kMinChunk, 1, wanted);
  const uint32_t chunk_len = (seq_len + n_chunks - 1) / n_chunks;
  const size_t stride = a.head_dim + 2;  // acc, then max and sum
  float* scratch = cpu.launch_scratch(size_t{a.n_heads_q} * n_chunks * stride);

  cpu.pool().parallel_for(size_t{a.n_heads_q} * n_chunks, 1, [&](size_t begin, size_t end) {
    for (size_t task = begin; task < end; ++task) {
      const auto h = static_cast<uint32_t>(task / n_chunks);
      const auto c = static_cast<uint32_t>(task % n_chunks);
      const uint32_t t_begin = c * chunk_len;
      const uint32_t t_end = std::min(seq_len, t_begin + chunk_len);
      float* slot = scratch + task * stride;
      Partial partial{.max = -INFINITY, .sum = 0, .acc = slot};
      if (t_begin < t_end) attend_chunk<E>(a, h, t_begin, t_end, partial);
      slot[a.head_dim] = partial.max;
      slot[a.head_dim + 1] = partial.sum;
    }
  });

  // Merge: rescale each chunk to the global max (empty chunks have sum 0).
  for (uint32_t h = 0; h < a.n_heads_q; ++h) {
    const float* slots = scratch + size_t{h} * n_chunks * stride;
    float max = -INFINITY;
    for (uint32_t c = 0; c < n_chunks; ++c) max = std::max(max, slots[c * stride + a.head_dim]);
    float* out = host_ptr<float>(a.out) + size_t{h} * a.head_dim;
    std::fill(out, out + a.head_dim, 0.0f);
    float total = 0;
    for (uint32_t c = 0; c < n_chunks; ++c) {
      const float* slot = slots + c * stride;
      if (slot[a.head_dim + 1] == 0.0f) continue;
      const float w = std::exp(slot[a.head_dim] - max);
      total += w * slot[a.head_dim + 1];
      simd::scale_add(simd::WeightType::kF32, slot, 1.0f, w, out, a.head_dim);
    }
    const float inv = 1.0f / total;
    for (uint32_t i = 0; i < a.head_dim; ++i) out[i] *= inv;
  }
}

template <typename E>
void register_for(CpuBackend& cpu) {
  const std::string s(E::kSuffix);
  cpu.register_kernel<KvAppendArgs>("kv_append_" + s, kv_append<E>);
  cpu.register_kernel<AttentionDecodeArgs>("attention_decode_" + s,
                                           [&cpu](const AttentionDecodeArgs& a) { attention_decode<E>(cpu, a); });
}

}  // namespace

void register_cpu_attention_kernels(CpuBackend& cpu) {
  register_for<F32Element>(cpu);
  register_for<BF16Element>(cpu);
}

}  // namespace qwen35
