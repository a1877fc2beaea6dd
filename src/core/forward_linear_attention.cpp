// forward_linear_attention: one Gated DeltaNet decoder layer for one token
// (spec 3.2), updating the layer's conv and recurrent state in place.
#include <cmath>

#include "forward_shared.h"
#include "qwen35/forward.h"

namespace qwen35 {

DevicePtr forward_linear_attention(GpuBackend& gpu, const Qwen35ForwardConfig& cfg, const Qwen35Kernels& kernels,
                                   const LinearAttentionLayer& layer, LinearAttentionState& state,
                                   LinearAttentionScratch& s, DevicePtr x_in, DevicePtr x_buf, Stream stream,
                                   const DebugHook* hook) {
  using detail::show;
  const uint32_t nv = cfg.n_heads_v_lin;
  const uint32_t dv = cfg.head_dim_v_lin;

  // h = rms(x) * (1 + input_layernorm)                                         [H]
  detail::rms_norm_vector(gpu, kernels, x_in, layer.input_norm, s.x_norm.ptr(), cfg.hidden, cfg.rms_eps, stream);
  show(gpu, stream, hook, "x_norm", s.x_norm.ptr(), cfg.hidden);

  // u = W_qkv h [conv_dim]; z = W_z h [nv * dv]; a = W_a h, b = W_b h [nv].
  // qkv and z go as one pair where the weights allow (one launch, h prepared
  // once; otherwise two gemvs), like a and b.
  layer.in_proj_qkv->gemv_gate_up_with(*layer.in_proj_z, gpu, s.x_norm.ptr(), s.qkv.ptr(), s.z.ptr(), stream);
  layer.in_proj_a->gemv_gate_up_with(*layer.in_proj_b, gpu, s.x_norm.ptr(), s.a.ptr(), s.b.ptr(), stream);
  show(gpu, stream, hook, "qkv", s.qkv.ptr(), cfg.conv_dim_lin());
  show(gpu, stream, hook, "z", s.z.ptr(), cfg.value_dim_lin());

  // Causal conv + SiLU, then L2-normalised q, k heads with q scaled by 1/sqrt(dk).
  launch(gpu, kernels.conv_silu_l2norm,
         ConvSiluL2NormArgs{.u = s.qkv.ptr(), .state = state.conv.ptr(), .weight = layer.conv_weight,
                            .out = s.qkv_conv.ptr(), .conv_dim = cfg.conv_dim_lin(), .conv_kernel = cfg.conv_kernel,
                            .n_heads_k = cfg.n_heads_k_lin, .head_dim_k = cfg.head_dim_k_lin,
                            .q_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(cfg.head_dim_k_lin)))},
         stream);
  show(gpu, stream, hook, "qkv_conv", s.qkv_conv.ptr(), cfg.conv_dim_lin());

  // decay = exp(g), g = -exp(A_log) softplus(a + dt_bias); beta = sigmoid(b)   [nv]
  launch(gpu, kernels.gdn_gate_beta,
         GdnGateBetaArgs{.a = s.a.ptr(), .b = s.b.ptr(), .a_log = layer.a_log, .dt_bias = layer.dt_bias,
                         .decay = s.decay.ptr(), .beta = s.beta.ptr(), .n_heads_v = nv},
         stream);
  launch(gpu, kernels.gdn_recurrent,
         GdnRecurrentArgs{.qkv = s.qkv_conv.ptr(), .decay = s.decay.ptr(), .beta = s.beta.ptr(),
                          .state = state.recurrent.ptr(), .out = s.core.ptr(), .n_heads_k = cfg.n_heads_k_lin,
                          .n_heads_v = nv, .head_dim_k = cfg.head_dim_k_lin, .head_dim_v = dv,
                          .tiled_value_heads = cfg.value_head_map == ValueHeadMap::kTiled ? 1u : 0u},
         stream);
  show(gpu, stream, hook, "core", s.core.ptr(), cfg.value_dim_lin());

  // y_j = rms(core_j) * norm_weight (plain), then out = W_out (silu(z) * y)    [H]
  launch(gpu, kernels.rms_norm,
         RmsNormArgs{.x = s.core.ptr(), .weight = layer.norm_weight, .y = s.core_norm.ptr(), .n_rows = nv,
                     .row_len = dv, .x_row_stride = dv, .y_row_stride = dv, .eps = cfg.rms_eps},
         stream);
  detail::gemv_silu_gate_or_compose(gpu, kernels, *layer.out_proj, s.z.ptr(), s.core_norm.ptr(), s.gated.ptr(),
                                    s.out.ptr(), stream);
  show(gpu, stream, hook, "out", s.out.ptr(), cfg.hidden);

  launch(gpu, kernels.add_rms_norm,
         AddRmsNormArgs{.a = x_in, .b = s.out.ptr(), .weight = layer.post_norm, .sum = s.x_resid.ptr(),
                        .norm = s.x_norm2.ptr(), .n = cfg.hidden, .eps = cfg.rms_eps},
         stream);
  // x_in is no longer read past this point, so the MLP may write straight into x_buf.
  detail::forward_mlp(gpu, cfg, kernels, *layer.gate_proj, *layer.up_proj, *layer.down_proj,
                      {.x_norm = s.x_norm2.ptr(), .residual = s.x_resid.ptr(), .gate_act = s.gate_act.ptr(),
                       .up_act = s.up_act.ptr(), .mlp_act = s.mlp_act.ptr(), .out = x_buf},
                      stream);
  show(gpu, stream, hook, "x_out", x_buf, cfg.hidden);
  return x_buf;
}

}  // namespace qwen35
