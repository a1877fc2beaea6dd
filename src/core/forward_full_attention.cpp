// forward_full_attention: one gated full-attention decoder layer for one token
// (spec 3.1), launch by launch. Shapes in comments are per token.
#include <cmath>

#include "forward_shared.h"
#include "qwen35/forward.h"

namespace qwen35 {

DevicePtr forward_full_attention(GpuBackend& gpu, const Qwen35ForwardConfig& cfg, const Qwen35Kernels& kernels,
                                 const FullAttentionLayer& layer, FullAttentionScratch& s, LayerKvCache& kv,
                                 const DecodeStep& step, DevicePtr x_in, Stream stream, const DebugHook* hook) {
  if (step.cache_pos >= kv.capacity) {
    fail("context is full: cache_pos {} is not below the KV cache capacity of {} tokens", step.cache_pos,
         kv.capacity);
  }
  if (kv.dtype != kernels.kv_dtype) {
    fail("KV cache is {} but the kernels were resolved for {}", kv_dtype_name(kv.dtype),
         kv_dtype_name(kernels.kv_dtype));
  }
  using detail::show;
  const uint32_t hd = cfg.head_dim;

  // h = rms(x) * (1 + input_layernorm)                                         [H]
  detail::rms_norm_vector(gpu, kernels, x_in, layer.input_norm, s.x_norm.ptr(), cfg.hidden, cfg.rms_eps, stream);
  show(gpu, stream, hook, "x_norm", s.x_norm.ptr(), cfg.hidden);

  // q_full [n_heads_q, 2 * hd] (query | gate per head); k, v [n_heads_kv, hd]
  layer.q_proj->gemv(gpu, s.x_norm.ptr(), s.q_full.ptr(), stream);
  layer.k_proj->gemv_gate_up_with(*layer.v_proj, gpu, s.x_norm.ptr(), s.k_raw.ptr(), s.v.ptr(), stream);

  // Per-head RMSNorm then partial RoPE, reading the query half of each q_full row.
  launch(gpu, kernels.head_norm_rope,
         HeadNormRopeArgs{.x = s.q_full.ptr(), .weight = layer.q_norm, .inv_freq = s.inv_freq.ptr(),
                          .step = step.params, .y = s.q.ptr(), .n_heads = cfg.n_heads_q, .head_dim = hd,
                          .x_head_stride = 2 * hd, .rotary_dim = cfg.rotary_dim, .eps = cfg.rms_eps},
         stream);
  launch(gpu, kernels.head_norm_rope,
         HeadNormRopeArgs{.x = s.k_raw.ptr(), .weight = layer.k_norm, .inv_freq = s.inv_freq.ptr(),
                          .step = step.params, .y = s.k.ptr(), .n_heads = cfg.n_heads_kv, .head_dim = hd,
                          .x_head_stride = hd, .rotary_dim = cfg.rotary_dim, .eps = cfg.rms_eps},
         stream);
  show(gpu, stream, hook, "q", s.q.ptr(), cfg.q_dim());
  show(gpu, stream, hook, "k", s.k.ptr(), cfg.kv_dim());
  show(gpu, stream, hook, "v", s.v.ptr(), cfg.kv_dim());

  launch(gpu, kernels.kv_append,
         KvAppendArgs{.k = s.k.ptr(), .v = s.v.ptr(), .k_cache = kv.k.ptr(), .v_cache = kv.v.ptr(),
                      .step = step.params, .kv_dim = cfg.kv_dim()},
         stream);
  // attn[h] = softmax(q_h K^T / sqrt(hd)) V over cache_pos + 1 positions    [n_heads_q, hd]
  launch(gpu, kernels.attention_decode,
         AttentionDecodeArgs{.q = s.q.ptr(), .k_cache = kv.k.ptr(), .v_cache = kv.v.ptr(), .step = step.params,
                             .out = s.attn.ptr(), .n_heads_q = cfg.n_heads_q, .n_heads_kv = cfg.n_heads_kv,
                             .head_dim = hd, .scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)))},
         stream);
  show(gpu, stream, hook, "attn", s.attn.ptr(), cfg.q_dim());

  // gated = attn * sigmoid(gate), the gate being the second half of each q_full row.
  launch(gpu, kernels.sigmoid_gate,
         SigmoidGateArgs{.x = s.attn.ptr(), .gate = s.q_full.ptr().at<float>(hd), .y = s.gated.ptr(),
                         .n_heads = cfg.n_heads_q, .head_dim = hd, .gate_head_stride = 2 * hd},
         stream);
  layer.o_proj->gemv(gpu, s.gated.ptr(), s.o.ptr(), stream);  // [H]
  show(gpu, stream, hook, "o", s.o.ptr(), cfg.hidden);

  // x_resid = x + o; x_norm2 = rms(x_resid) * (1 + post_attention_layernorm)
  launch(gpu, kernels.add_rms_norm,
         AddRmsNormArgs{.a = x_in, .b = s.o.ptr(), .weight = layer.post_norm, .sum = s.x_resid.ptr(),
                        .norm = s.x_norm2.ptr(), .n = cfg.hidden, .eps = cfg.rms_eps},
         stream);
  detail::forward_mlp(gpu, cfg, kernels, *layer.gate_proj, *layer.up_proj, *layer.down_proj,
                      {.x_norm = s.x_norm2.ptr(), .residual = s.x_resid.ptr(), .gate_act = s.gate_act.ptr(),
                       .up_act = s.up_act.ptr(), .mlp_act = s.mlp_act.ptr(), .out = s.x_out.ptr()},
                      stream);
  show(gpu, stream, hook, "x_out", s.x_out.ptr(), cfg.hidden);
  return s.x_out.ptr();
}

}  // namespace qwen35
