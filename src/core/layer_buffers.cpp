// Allocation of the per-layer scratch, recurrent state and KV cache, and the
// per-token DecodeStep upload.
#include <cmath>
#include <vector>

#include "qwen35/forward.h"

namespace qwen35 {
namespace {

DeviceBuffer floats(GpuBackend& gpu, size_t count) { return DeviceBuffer(gpu, count * sizeof(float)); }

}  // namespace

FullAttentionScratch FullAttentionScratch::allocate(GpuBackend& gpu, const Qwen35ForwardConfig& cfg, Stream stream) {
  FullAttentionScratch s;
  // inv_freq[i] = theta^(-2i / rotary_dim), computed in double once (spec 3.1 step 4).
  std::vector<float> inv_freq(std::max<uint32_t>(cfg.rotary_dim / 2, 1));
  for (uint32_t i = 0; i < cfg.rotary_dim / 2; ++i) {
    inv_freq[i] = static_cast<float>(std::pow(cfg.rope_theta, -2.0 * i / cfg.rotary_dim));
  }
  s.inv_freq = floats(gpu, inv_freq.size());
  gpu.upload(s.inv_freq.ptr(), inv_freq.data(), inv_freq.size() * sizeof(float), stream);
  gpu.synchronize(stream);  // inv_freq is a local
  s.x_norm = floats(gpu, cfg.hidden);
  s.q_full = floats(gpu, cfg.q_proj_dim());
  s.q = floats(gpu, cfg.q_dim());
  s.k_raw = floats(gpu, cfg.kv_dim());
  s.k = floats(gpu, cfg.kv_dim());
  s.v = floats(gpu, cfg.kv_dim());
  s.attn = floats(gpu, cfg.q_dim());
  s.gated = floats(gpu, cfg.q_dim());
  s.o = floats(gpu, cfg.hidden);
  s.x_resid = floats(gpu, cfg.hidden);
  s.x_norm2 = floats(gpu, cfg.hidden);
  s.gate_act = floats(gpu, cfg.intermediate);
  s.up_act = floats(gpu, cfg.intermediate);
  s.mlp_act = floats(gpu, cfg.intermediate);
  s.x_out = floats(gpu, cfg.hidden);
  return s;
}

LinearAttentionScratch LinearAttentionScratch::allocate(GpuBackend& gpu, const Qwen35ForwardConfig& cfg,
                                                        Stream /*stream*/) {
  LinearAttentionScratch s;
  s.x_norm = floats(gpu, cfg.hidden);
  s.qkv = floats(gpu, cfg.conv_dim_lin());
  s.qkv_conv = floats(gpu, cfg.conv_dim_lin());
  s.z = floats(gpu, cfg.value_dim_lin());
  s.a = floats(gpu, cfg.n_heads_v_lin);
  s.b = floats(gpu, cfg.n_heads_v_lin);
  s.decay = floats(gpu, cfg.n_heads_v_lin);
  s.beta = floats(gpu, cfg.n_heads_v_lin);
  s.core = floats(gpu, cfg.value_dim_lin());
  s.core_norm = floats(gpu, cfg.value_dim_lin());
  s.gated = floats(gpu, cfg.value_dim_lin());
  s.out = floats(gpu, cfg.hidden);
  s.x_resid = floats(gpu, cfg.hidden);
  s.x_norm2 = floats(gpu, cfg.hidden);
  s.gate_act = floats(gpu, cfg.intermediate);
  s.up_act = floats(gpu, cfg.intermediate);
  s.mlp_act = floats(gpu, cfg.intermediate);
  return s;
}

LinearAttentionState LinearAttentionState::allocate(GpuBackend& gpu, const Qwen35ForwardConfig& cfg, Stream stream) {
  LinearAttentionState state;
  state.conv = floats(gpu, size_t{cfg.conv_kernel - 1} * cfg.conv_dim_lin());
  state.recurrent = floats(gpu, size_t{cfg.n_heads_v_lin} * cfg.head_dim_k_lin * cfg.head_dim_v_lin);
  state.reset(gpu, stream);
  return state;
}

void LinearAttentionState::reset(GpuBackend& gpu, Stream stream) {
  if (conv.bytes() > 0) gpu.fill(conv.ptr(), 0, conv.bytes(), stream);
  gpu.fill(recurrent.ptr(), 0, recurrent.bytes(), stream);
}

LayerKvCache LayerKvCache::allocate(GpuBackend& gpu, const Qwen35ForwardConfig& cfg, uint32_t capacity,
                                    KvDtype dtype) {
  if (capacity == 0) fail("KV cache capacity must be at least 1 token");
  if (dtype == KvDtype::kFP8 && cfg.head_dim % kKvFp8Block != 0) {
    fail("KV dtype fp8 needs head_dim divisible by {} (one scale per {} values), got head_dim {}", kKvFp8Block,
         kKvFp8Block, cfg.head_dim);
  }
  LayerKvCache kv;
  const size_t bytes = size_t{capacity} * kv_row_bytes(dtype, cfg.kv_dim());
  kv.k = DeviceBuffer(gpu, bytes);
  kv.v = DeviceBuffer(gpu, bytes);
  kv.capacity = capacity;
  kv.dtype = dtype;
  return kv;
}

DecodeStep upload_decode_step(GpuBackend& gpu, DevicePtr params, uint32_t position, uint32_t cache_pos,
                              Stream stream) {
  const DecodeStepParams host{.position = position, .cache_pos = cache_pos, .seq_len = cache_pos + 1, .reserved = 0};
  gpu.upload(params, &host, sizeof(host), stream);
  gpu.synchronize(stream);  // `host` is a local
  return DecodeStep{.position = position, .cache_pos = cache_pos, .params = params};
}

}  // namespace qwen35
