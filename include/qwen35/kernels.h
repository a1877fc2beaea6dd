// The kernels a Qwen3.5 layer needs, each with its argument struct, and the
// Qwen35Kernels table that resolves them once per backend. Every backend
// implements each kernel with exactly these semantics; the scalar reference
// backend (src/backends/reference) is their executable specification.
// All activations are float32; pointers are device addresses.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "qwen35/backend.h"

namespace qwen35 {

// How K and V are stored in the cache. One cached position is a row of kv_dim
// values; fp8 rows hold kv_dim FP8 E4M3 codes followed by one BF16 scale per
// kKvFp8Block values (value = code * scale; the scale is the smallest power of
// two that fits the block's max |x| under 448), so a block never straddles two heads.
enum class KvDtype : uint8_t { kF32, kBF16, kF16, kFP8 };
constexpr uint32_t kKvFp8Block = 16;
std::string_view kv_dtype_name(KvDtype dtype);
std::optional<KvDtype> parse_kv_dtype(std::string_view name);
std::string kv_dtype_names();  // "f32, bf16, ..." for messages
// Bytes of one cached position of kv_dim values (K or V).
size_t kv_row_bytes(KvDtype dtype, uint32_t kv_dim);

// Per-token values, read by kernels from device memory so that a recorded
// command stream (CUDA graph, Vulkan command buffer) can be replayed unchanged.
struct DecodeStepParams {
  uint32_t position;   // RoPE position
  uint32_t cache_pos;  // KV slot written this step
  uint32_t seq_len;    // positions attended: cache_pos + 1
  uint32_t reserved;
};

// y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * weight, for n_rows rows of row_len.
struct RmsNormArgs {
  static constexpr std::string_view kTypeName = "RmsNormArgs";
  DevicePtr x, weight, y;  // x: rows at x_row_stride floats, weight: [row_len] f32, y: rows at y_row_stride
  uint32_t n_rows, row_len, x_row_stride, y_row_stride;
  float eps;
};

// sum = a + b; norm = rms_norm(sum) * weight.  [n]
struct AddRmsNormArgs {
  static constexpr std::string_view kTypeName = "AddRmsNormArgs";
  DevicePtr a, b, weight, sum, norm;
  uint32_t n;
  float eps;
};

// Per head h: y[h] = rope(rms_norm(x[h]) * weight, position) with rotate-half
// pairs (i, i + rotary_dim/2) on the first rotary_dim dims (spec 3.1 steps 3-4).
struct HeadNormRopeArgs {
  static constexpr std::string_view kTypeName = "HeadNormRopeArgs";
  DevicePtr x;         // [n_heads] rows at x_head_stride floats
  DevicePtr weight;    // [head_dim] f32
  DevicePtr inv_freq;  // [rotary_dim / 2] f32
  DevicePtr step;      // DecodeStepParams
  DevicePtr y;         // [n_heads, head_dim]
  uint32_t n_heads, head_dim, x_head_stride, rotary_dim;
  float eps;
};

// k_cache[cache_pos] = k; v_cache[cache_pos] = v, converted to the cache dtype.
struct KvAppendArgs {
  static constexpr std::string_view kTypeName = "KvAppendArgs";
  DevicePtr k, v;              // [kv_dim] f32
  DevicePtr k_cache, v_cache;  // [capacity] rows of kv_row_bytes(dtype, kv_dim)
  DevicePtr step;
  uint32_t kv_dim;
};

// out[h] = softmax(q[h] . K[0..seq_len) * scale) V, query head h reading KV head
// h / (n_heads_q / n_heads_kv). No scratch proportional to seq_len.
struct AttentionDecodeArgs {
  static constexpr std::string_view kTypeName = "AttentionDecodeArgs";
  DevicePtr q;                 // [n_heads_q, head_dim]
  DevicePtr k_cache, v_cache;  // [capacity] rows of [n_heads_kv, head_dim] (see KvDtype)
  DevicePtr step;
  DevicePtr out;               // [n_heads_q, head_dim]
  uint32_t n_heads_q, n_heads_kv, head_dim;
  float scale;
};

// y[h, i] = x[h, i] * sigmoid(gate[h * gate_head_stride + i]).
struct SigmoidGateArgs {
  static constexpr std::string_view kTypeName = "SigmoidGateArgs";
  DevicePtr x, gate, y;
  uint32_t n_heads, head_dim, gate_head_stride;
};

// Causal depthwise conv update (spec 3.2 steps 2-4): window = [state rows, u],
// out = silu(sum_j w[c, j] window[j][c]); state shifts in u (pre-conv); then the
// q and k heads of out are L2-normalised (eps 1e-6) and q is scaled by q_scale.
struct ConvSiluL2NormArgs {
  static constexpr std::string_view kTypeName = "ConvSiluL2NormArgs";
  DevicePtr u;       // [conv_dim] raw in_proj_qkv output
  DevicePtr state;   // [conv_kernel - 1, conv_dim] f32, oldest first, updated in place
  DevicePtr weight;  // [conv_dim, conv_kernel] f32
  DevicePtr out;     // [conv_dim] = [q (n_heads_k*head_dim_k) | k | v]
  uint32_t conv_dim, conv_kernel, n_heads_k, head_dim_k;
  float q_scale;
};

// decay[j] = exp(-exp(a_log[j]) * softplus(a[j] + dt_bias[j])); beta[j] = sigmoid(b[j]).
struct GdnGateBetaArgs {
  static constexpr std::string_view kTypeName = "GdnGateBetaArgs";
  DevicePtr a, b, a_log, dt_bias;  // [n_heads_v]
  DevicePtr decay, beta;           // [n_heads_v]
  uint32_t n_heads_v;
};

// The Gated DeltaNet recurrent step for every value head j (spec 3.2 step 7):
// S = decay S; m = S^T k; delta = beta (v - m); S += k delta^T; out = S^T q.
struct GdnRecurrentArgs {
  static constexpr std::string_view kTypeName = "GdnRecurrentArgs";
  DevicePtr qkv;          // [q | k | v] as written by the conv kernel
  DevicePtr decay, beta;  // [n_heads_v]
  // [n_heads_v, head_dim_v, head_dim_k] f32, updated in place: S^T stored row by
  // row, so each value channel's dk-long column is contiguous and one pass over
  // it does the whole step (decay, read, update, output) for that channel.
  DevicePtr state;
  DevicePtr out;          // [n_heads_v, head_dim_v]
  uint32_t n_heads_k, n_heads_v, head_dim_k, head_dim_v;
  uint32_t tiled_value_heads;  // 1: value head j reads key head j % n_heads_k; 0: j / (nv / nk)
};

// y = silu(gate) * up.  [n]   (used only to compose a fused op a weight lacks)
struct SiluMulArgs {
  static constexpr std::string_view kTypeName = "SiluMulArgs";
  DevicePtr gate, up, y;
  uint32_t n;
};

// y = a + b.  [n]
struct AddArgs {
  static constexpr std::string_view kTypeName = "AddArgs";
  DevicePtr a, b, y;
  uint32_t n;
};

class GpuBackend;

// The layer kernels, resolved once. A backend missing any of them fails here,
// at start-up, with the kernel's name.
struct Qwen35Kernels {
  KvDtype kv_dtype = KvDtype::kBF16;
  Kernel<RmsNormArgs> rms_norm;
  Kernel<AddRmsNormArgs> add_rms_norm;
  Kernel<HeadNormRopeArgs> head_norm_rope;
  Kernel<KvAppendArgs> kv_append;
  Kernel<AttentionDecodeArgs> attention_decode;
  Kernel<SigmoidGateArgs> sigmoid_gate;
  Kernel<ConvSiluL2NormArgs> conv_silu_l2norm;
  Kernel<GdnGateBetaArgs> gdn_gate_beta;
  Kernel<GdnRecurrentArgs> gdn_recurrent;
  Kernel<SiluMulArgs> silu_mul;
  Kernel<AddArgs> add;

  static Qwen35Kernels resolve(GpuBackend& gpu, KvDtype kv_dtype);
};

}  // namespace qwen35
