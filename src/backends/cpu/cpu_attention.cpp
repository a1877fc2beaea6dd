// KV-cache append and decode attention on the CPU. Attention runs one query head
// per task with an online softmax (running max and sum), so it needs no buffer
// proportional to the context length.
#include <cmath>
#include <vector>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_math.h"
#include "host/element_types.h"
#include "qwen35/kernels.h"

namespace qwen35 {
namespace {

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

template <typename E>
void attention_head(const AttentionDecodeArgs& a, uint32_t seq_len, uint32_t h, std::vector<float>& acc) {
  const auto* k_cache = host_ptr<const typename E::Storage>(a.k_cache);
  const auto* v_cache = host_ptr<const typename E::Storage>(a.v_cache);
  const size_t kv_dim = size_t{a.n_heads_kv} * a.head_dim;
  const size_t kv_offset = size_t{h / (a.n_heads_q / a.n_heads_kv)} * a.head_dim;
  const float* q = host_ptr<const float>(a.q) + size_t{h} * a.head_dim;
  acc.assign(a.head_dim, 0.0f);
  float running_max = -INFINITY;
  float running_sum = 0.0f;
  for (uint32_t t = 0; t < seq_len; ++t) {
    const float score = cpu::dot<E>(k_cache + t * kv_dim + kv_offset, q, a.head_dim) * a.scale;
    if (score > running_max) {
      const float rescale = std::exp(running_max - score);  // 0 on the first position
      running_sum *= rescale;
      for (float& value : acc) value *= rescale;
      running_max = score;
    }
    const float p = std::exp(score - running_max);
    running_sum += p;
    const auto* v = v_cache + t * kv_dim + kv_offset;
    for (uint32_t i = 0; i < a.head_dim; ++i) acc[i] += p * E::load(v[i]);
  }
  float* out = host_ptr<float>(a.out) + size_t{h} * a.head_dim;
  for (uint32_t i = 0; i < a.head_dim; ++i) out[i] = acc[i] / running_sum;
}

template <typename E>
void attention_decode(ThreadPool& pool, const AttentionDecodeArgs& a) {
  const auto& step = *host_ptr<const DecodeStepParams>(a.step);
  pool.parallel_for(a.n_heads_q, 1, [&](size_t begin, size_t end) {
    std::vector<float> acc;
    for (size_t h = begin; h < end; ++h) attention_head<E>(a, step.seq_len, static_cast<uint32_t>(h), acc);
  });
}

template <typename E>
void register_for(CpuBackend& cpu) {
  const std::string s(E::kSuffix);
  ThreadPool& pool = cpu.pool();
  cpu.register_kernel<KvAppendArgs>("kv_append_" + s, kv_append<E>);
  cpu.register_kernel<AttentionDecodeArgs>("attention_decode_" + s,
                                           [&pool](const AttentionDecodeArgs& a) { attention_decode<E>(pool, a); });
}

}  // namespace

void register_cpu_attention_kernels(CpuBackend& cpu) {
  register_for<F32Element>(cpu);
  register_for<BF16Element>(cpu);
}

}  // namespace qwen35
