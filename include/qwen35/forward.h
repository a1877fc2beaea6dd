// The heart of qwen35: one decoder layer for one token, end to end (norm,
// projections, attention or Gated DeltaNet, residual + post-norm, SwiGLU MLP,
// residual), over any GpuBackend and any QuantWeights format.
//
// Norm weights on the device are float32 multipliers: zero-centred checkpoint
// weights arrive here already as (1 + w), so every norm kernel is plain.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "qwen35/backend.h"
#include "qwen35/config.h"
#include "qwen35/kernels.h"
#include "qwen35/quant_weights.h"

namespace qwen35 {

// Sees named intermediate buffers inside a layer (float32, `count` values). The
// forward synchronizes the stream before each call, so the hook may download.
using DebugHook = std::function<void(std::string_view name, DevicePtr buffer, size_t count)>;

struct FullAttentionLayer {
  DevicePtr input_norm;  // [H] f32 multiplier
  DevicePtr q_norm;      // [head_dim] f32 multiplier, shared by all heads
  DevicePtr k_norm;      // [head_dim]
  DevicePtr post_norm;   // [H]
  const QuantWeights* q_proj;  // [2 * n_heads_q * head_dim, H]: per head, query rows then gate rows
  const QuantWeights* k_proj;  // [kv_dim, H]
  const QuantWeights* v_proj;  // [kv_dim, H]
  const QuantWeights* o_proj;  // [H, q_dim]
  const QuantWeights* gate_proj;  // [I, H]
  const QuantWeights* up_proj;    // [I, H]
  const QuantWeights* down_proj;  // [H, I]
};

struct LinearAttentionLayer {
  DevicePtr input_norm;   // [H] f32 multiplier
  DevicePtr a_log;        // [n_heads_v_lin] f32
  DevicePtr dt_bias;      // [n_heads_v_lin] f32
  DevicePtr conv_weight;  // [conv_dim, conv_kernel] f32
  DevicePtr norm_weight;  // [head_dim_v_lin] f32, plain (not zero-centred)
  DevicePtr post_norm;    // [H]
  const QuantWeights* in_proj_qkv;  // [conv_dim, H]
  const QuantWeights* in_proj_z;    // [value_dim, H]
  const QuantWeights* in_proj_a;    // [n_heads_v_lin, H]
  const QuantWeights* in_proj_b;    // [n_heads_v_lin, H]
  const QuantWeights* out_proj;     // [H, value_dim]
  const QuantWeights* gate_proj;    // [I, H]
  const QuantWeights* up_proj;      // [I, H]
  const QuantWeights* down_proj;    // [H, I]
};

// Buffers a full-attention forward writes; allocate once and share by all layers.
struct FullAttentionScratch {
  DeviceBuffer inv_freq;  // [rotary_dim / 2] RoPE frequencies, filled at allocation
  DeviceBuffer x_norm;    // [H]
  DeviceBuffer q_full;    // [n_heads_q, 2 * head_dim]: query | gate per head
  DeviceBuffer q;         // [n_heads_q, head_dim] normed + rotated
  DeviceBuffer k_raw;     // [kv_dim]
  DeviceBuffer k;         // [kv_dim] normed + rotated
  DeviceBuffer v;         // [kv_dim]
  DeviceBuffer attn;      // [q_dim]
  DeviceBuffer gated;     // [q_dim]
  DeviceBuffer o;         // [H]
  DeviceBuffer x_resid;   // [H]
  DeviceBuffer x_norm2;   // [H]
  DeviceBuffer gate_act;  // [I]
  DeviceBuffer up_act;    // [I]
  DeviceBuffer mlp_act;   // [I] only used when down_proj lacks the fused op
  DeviceBuffer x_out;     // [H] the layer's output

  static FullAttentionScratch allocate(GpuBackend& gpu, const Qwen35ForwardConfig& cfg, Stream stream);
};

struct LinearAttentionScratch {
  DeviceBuffer x_norm;     // [H]
  DeviceBuffer qkv;        // [conv_dim] raw projection
  DeviceBuffer qkv_conv;   // [conv_dim] after conv, SiLU, L2 norm
  DeviceBuffer z;          // [value_dim]
  DeviceBuffer a;          // [n_heads_v_lin]
  DeviceBuffer b;          // [n_heads_v_lin]
  DeviceBuffer decay;      // [n_heads_v_lin]
  DeviceBuffer beta;       // [n_heads_v_lin]
  DeviceBuffer core;       // [n_heads_v_lin, head_dim_v_lin] recurrent output
  DeviceBuffer core_norm;  // [n_heads_v_lin, head_dim_v_lin]
  DeviceBuffer gated;      // [value_dim] only used when out_proj lacks the fused op
  DeviceBuffer out;        // [H]
  DeviceBuffer x_resid;    // [H]
  DeviceBuffer x_norm2;    // [H]
  DeviceBuffer gate_act;   // [I]
  DeviceBuffer up_act;     // [I]
  DeviceBuffer mlp_act;    // [I] only used when down_proj lacks the fused op

  static LinearAttentionScratch allocate(GpuBackend& gpu, const Qwen35ForwardConfig& cfg, Stream stream);
};

// One layer's recurrent state: float32, zero at the start of a sequence.
struct LinearAttentionState {
  DeviceBuffer conv;       // [conv_kernel - 1, conv_dim] raw inputs of the previous tokens
  DeviceBuffer recurrent;  // [n_heads_v_lin, head_dim_v_lin, head_dim_k_lin] (S transposed, see GdnRecurrentArgs)

  static LinearAttentionState allocate(GpuBackend& gpu, const Qwen35ForwardConfig& cfg, Stream stream);
  void reset(GpuBackend& gpu, Stream stream);
};

// One full-attention layer's KV cache: [capacity, n_heads_kv, head_dim] each.
struct LayerKvCache {
  DeviceBuffer k;
  DeviceBuffer v;
  uint32_t capacity = 0;
  KvDtype dtype = KvDtype::kBF16;

  static LayerKvCache allocate(GpuBackend& gpu, const Qwen35ForwardConfig& cfg, uint32_t capacity, KvDtype dtype);
};

// The per-token values of one decode step: cache_pos on the host (for checks),
// and the same values in a device buffer holding DecodeStepParams.
struct DecodeStep {
  uint32_t position = 0;
  uint32_t cache_pos = 0;
  DevicePtr params;
};

// Writes position and cache_pos into `params` (a device DecodeStepParams).
DecodeStep upload_decode_step(GpuBackend& gpu, DevicePtr params, uint32_t position, uint32_t cache_pos,
                              Stream stream);

// Appends this token's K/V at step.cache_pos and attends over cache_pos + 1
// positions. Returns scratch.x_out, which holds the layer output.
// Throws Error if cache_pos is not below kv.capacity (nothing is written then).
DevicePtr forward_full_attention(GpuBackend& gpu, const Qwen35ForwardConfig& cfg, const Qwen35Kernels& kernels,
                                 const FullAttentionLayer& layer, FullAttentionScratch& scratch, LayerKvCache& kv,
                                 const DecodeStep& step, DevicePtr x_in, Stream stream,
                                 const DebugHook* hook = nullptr);

// Updates state.conv and state.recurrent in place and writes the layer output
// into x_buf (which may be x_in, the caller's residual stream). Returns x_buf.
DevicePtr forward_linear_attention(GpuBackend& gpu, const Qwen35ForwardConfig& cfg, const Qwen35Kernels& kernels,
                                   const LinearAttentionLayer& layer, LinearAttentionState& state,
                                   LinearAttentionScratch& scratch, DevicePtr x_in, DevicePtr x_buf, Stream stream,
                                   const DebugHook* hook = nullptr);

}  // namespace qwen35
