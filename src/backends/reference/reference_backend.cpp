// Scalar reference kernels, one per entry of Qwen35Kernels plus the dense gemv
// family, each a direct transcription of the formula named beside it.
#include "reference/reference_backend.h"

#include <cmath>
#include <vector>

#include "host/element_types.h"
#include "host/kv_rows.h"
#include "qwen35/dense_weights.h"
#include "qwen35/kernels.h"
#include "qwen35/mlx_affine.h"

namespace qwen35 {
namespace {

double silu(double x) { return x / (1.0 + std::exp(-x)); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) { return x > 20.0 ? x : std::log1p(std::exp(x)); }

// y = x / sqrt(mean(x^2) + eps) * w
void rms_norm_row(const float* x, const float* w, float* y, uint32_t n, float eps) {
  double sum_sq = 0;
  for (uint32_t i = 0; i < n; ++i) sum_sq += double{x[i]} * x[i];
  const double inv = 1.0 / std::sqrt(sum_sq / n + eps);
  for (uint32_t i = 0; i < n; ++i) y[i] = static_cast<float>(x[i] * inv * w[i]);
}

void rms_norm(const RmsNormArgs& a) {
  for (uint32_t r = 0; r < a.n_rows; ++r) {
    rms_norm_row(host_ptr<const float>(a.x) + size_t{r} * a.x_row_stride, host_ptr<const float>(a.weight),
                 host_ptr<float>(a.y) + size_t{r} * a.y_row_stride, a.row_len, a.eps);
  }
}

void add_rms_norm(const AddRmsNormArgs& a) {
  const float* x = host_ptr<const float>(a.a);
  const float* o = host_ptr<const float>(a.b);
  float* sum = host_ptr<float>(a.sum);
  for (uint32_t i = 0; i < a.n; ++i) sum[i] = x[i] + o[i];
  rms_norm_row(sum, host_ptr<const float>(a.weight), host_ptr<float>(a.norm), a.n, a.eps);
}

// Spec 3.1 steps 3-4: per-head RMSNorm, then rotate-half RoPE on the first rotary_dim dims.
void head_norm_rope(const HeadNormRopeArgs& a) {
  const auto& step = *host_ptr<const DecodeStepParams>(a.step);
  const float* inv_freq = host_ptr<const float>(a.inv_freq);
  const uint32_t half = a.rotary_dim / 2;
  std::vector<float> normed(a.head_dim);
  for (uint32_t h = 0; h < a.n_heads; ++h) {
    rms_norm_row(host_ptr<const float>(a.x) + size_t{h} * a.x_head_stride, host_ptr<const float>(a.weight),
                 normed.data(), a.head_dim, a.eps);
    float* y = host_ptr<float>(a.y) + size_t{h} * a.head_dim;
    for (uint32_t i = 0; i < a.head_dim; ++i) y[i] = normed[i];
    for (uint32_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(step.position) * inv_freq[i];
      const double c = std::cos(angle), s = std::sin(angle);
      y[i] = static_cast<float>(normed[i] * c - normed[i + half] * s);
      y[i + half] = static_cast<float>(normed[i + half] * c + normed[i] * s);
    }
  }
}

// Row t of a cache as float32: one KV head's head_dim values.
template <typename E>
void load_kv_head(DevicePtr cache, uint32_t kv_dim, uint32_t t, uint32_t first, uint32_t n, float* out) {
  if constexpr (is_fp8_kv<E>) {
    dequantize_fp8_kv(fp8_kv_row(cache, kv_dim, t), kv_dim, first, n, out);
  } else {
    const auto* row = host_ptr<const typename E::Storage>(cache) + size_t{t} * kv_dim + first;
    for (uint32_t i = 0; i < n; ++i) out[i] = E::load(row[i]);
  }
}

// Spec 3.1 step 6: two-pass softmax over all positions, in double.
template <typename E>
void attention_decode(const AttentionDecodeArgs& a) {
  const auto& step = *host_ptr<const DecodeStepParams>(a.step);
  const uint32_t kv_dim = a.n_heads_kv * a.head_dim;
  const uint32_t group = a.n_heads_q / a.n_heads_kv;
  std::vector<double> scores(step.seq_len);
  std::vector<float> row(a.head_dim);
  for (uint32_t h = 0; h < a.n_heads_q; ++h) {
    const float* q = host_ptr<const float>(a.q) + size_t{h} * a.head_dim;
    const uint32_t kv_offset = (h / group) * a.head_dim;
    double max_score = -INFINITY;
    for (uint32_t t = 0; t < step.seq_len; ++t) {
      load_kv_head<E>(a.k_cache, kv_dim, t, kv_offset, a.head_dim, row.data());
      double dot = 0;
      for (uint32_t i = 0; i < a.head_dim; ++i) dot += double{q[i]} * row[i];
      scores[t] = dot * a.scale;
      max_score = std::max(max_score, scores[t]);
    }
    double total = 0;
    for (uint32_t t = 0; t < step.seq_len; ++t) total += scores[t] = std::exp(scores[t] - max_score);
    std::vector<double> acc(a.head_dim, 0.0);
    for (uint32_t t = 0; t < step.seq_len; ++t) {
      load_kv_head<E>(a.v_cache, kv_dim, t, kv_offset, a.head_dim, row.data());
      for (uint32_t i = 0; i < a.head_dim; ++i) acc[i] += scores[t] * row[i];
    }
    float* out = host_ptr<float>(a.out) + size_t{h} * a.head_dim;
    for (uint32_t i = 0; i < a.head_dim; ++i) out[i] = static_cast<float>(acc[i] / total);
  }
}

void sigmoid_gate(const SigmoidGateArgs& a) {
  for (uint32_t h = 0; h < a.n_heads; ++h) {
    for (uint32_t i = 0; i < a.head_dim; ++i) {
      const size_t j = size_t{h} * a.head_dim + i;
      host_ptr<float>(a.y)[j] = static_cast<float>(
          host_ptr<const float>(a.x)[j] * sigmoid(host_ptr<const float>(a.gate)[size_t{h} * a.gate_head_stride + i]));
    }
  }
}

// Spec 3.2 steps 2-4.
void conv_silu_l2norm(const ConvSiluL2NormArgs& a) {
  const float* u = host_ptr<const float>(a.u);
  float* state = host_ptr<float>(a.state);
  const float* w = host_ptr<const float>(a.weight);
  float* out = host_ptr<float>(a.out);
  const uint32_t history = a.conv_kernel - 1;
  for (uint32_t c = 0; c < a.conv_dim; ++c) {
    double acc = 0;
    for (uint32_t j = 0; j < history; ++j) acc += double{w[size_t{c} * a.conv_kernel + j]} * state[size_t{j} * a.conv_dim + c];
    acc += double{w[size_t{c} * a.conv_kernel + history]} * u[c];
    out[c] = static_cast<float>(silu(acc));
    for (uint32_t j = 0; j + 1 < history; ++j) state[size_t{j} * a.conv_dim + c] = state[size_t{j + 1} * a.conv_dim + c];
    if (history > 0) state[size_t{history - 1} * a.conv_dim + c] = u[c];
  }
  // q heads then k heads: x / sqrt(sum x^2 + 1e-6), q additionally times q_scale.
  for (uint32_t h = 0; h < 2 * a.n_heads_k; ++h) {
    float* x = out + size_t{h} * a.head_dim_k;
    double sum_sq = 0;
    for (uint32_t i = 0; i < a.head_dim_k; ++i) sum_sq += double{x[i]} * x[i];
    const double scale = (h < a.n_heads_k ? a.q_scale : 1.0) / std::sqrt(sum_sq + 1e-6);
    for (uint32_t i = 0; i < a.head_dim_k; ++i) x[i] = static_cast<float>(x[i] * scale);
  }
}

void gdn_gate_beta(const GdnGateBetaArgs& a) {
  for (uint32_t j = 0; j < a.n_heads_v; ++j) {
    const double g = -std::exp(double{host_ptr<const float>(a.a_log)[j]}) *
                     softplus(double{host_ptr<const float>(a.a)[j]} + host_ptr<const float>(a.dt_bias)[j]);
    host_ptr<float>(a.decay)[j] = static_cast<float>(std::exp(g));
    host_ptr<float>(a.beta)[j] = static_cast<float>(sigmoid(host_ptr<const float>(a.b)[j]));
  }
}

// Spec 3.2 step 7, in the order written there.
void gdn_recurrent(const GdnRecurrentArgs& a) {
  const uint32_t dk = a.head_dim_k, dv = a.head_dim_v;
  const float* q_all = host_ptr<const float>(a.qkv);
  const float* k_all = q_all + size_t{a.n_heads_k} * dk;
  const float* v_all = k_all + size_t{a.n_heads_k} * dk;
  std::vector<double> m(dv), delta(dv);
  for (uint32_t j = 0; j < a.n_heads_v; ++j) {
    const uint32_t kj = a.tiled_value_heads ? j % a.n_heads_k : j / (a.n_heads_v / a.n_heads_k);
    const float* q = q_all + size_t{kj} * dk;
    const float* k = k_all + size_t{kj} * dk;
    const float* v = v_all + size_t{j} * dv;
    float* St = host_ptr<float>(a.state) + size_t{j} * dk * dv;  // S^T: [dv, dk]
    auto S = [&](uint32_t r, uint32_t c) -> float& { return St[size_t{c} * dk + r]; };  // S[r][c], r < dk
    const double decay = host_ptr<const float>(a.decay)[j];
    const double beta = host_ptr<const float>(a.beta)[j];
    for (size_t e = 0; e < size_t{dk} * dv; ++e) St[e] = static_cast<float>(St[e] * decay);
    for (uint32_t c = 0; c < dv; ++c) {
      m[c] = 0;
      for (uint32_t r = 0; r < dk; ++r) m[c] += double{S(r, c)} * k[r];
      delta[c] = beta * (v[c] - m[c]);
    }
    for (uint32_t r = 0; r < dk; ++r) {
      for (uint32_t c = 0; c < dv; ++c) S(r, c) = static_cast<float>(S(r, c) + k[r] * delta[c]);
    }
    float* out = host_ptr<float>(a.out) + size_t{j} * dv;
    for (uint32_t c = 0; c < dv; ++c) {
      double acc = 0;
      for (uint32_t r = 0; r < dk; ++r) acc += double{S(r, c)} * q[r];
      out[c] = static_cast<float>(acc);
    }
  }
}

void silu_mul(const SiluMulArgs& a) {
  for (uint32_t i = 0; i < a.n; ++i) {
    host_ptr<float>(a.y)[i] =
        static_cast<float>(silu(host_ptr<const float>(a.gate)[i]) * host_ptr<const float>(a.up)[i]);
  }
}

void add(const AddArgs& a) {
  for (uint32_t i = 0; i < a.n; ++i) host_ptr<float>(a.y)[i] = host_ptr<const float>(a.a)[i] + host_ptr<const float>(a.b)[i];
}

template <typename E>
void gemv(const GemvArgs& a) {
  const auto* w = host_ptr<const typename E::Storage>(a.w);
  const float* x = host_ptr<const float>(a.x);
  for (uint32_t r = 0; r < a.rows; ++r) {
    double acc = 0;
    for (uint32_t c = 0; c < a.cols; ++c) acc += double{E::load(w[size_t{r} * a.cols + c])} * x[c];
    host_ptr<float>(a.y)[r] = static_cast<float>(acc);
  }
}

template <typename E>
void row_to_f32(const RowToF32Args& a) {
  const auto* w = host_ptr<const typename E::Storage>(a.w) + size_t{a.row} * a.cols;
  for (uint32_t c = 0; c < a.cols; ++c) host_ptr<float>(a.y)[c] = E::load(w[c]);
}

// MLX affine (qwen35/mlx_affine.h): each weight dequantized as the spec says,
// then the dense formula. E is the element type of the scales and biases.
template <uint32_t Bits, typename E>
float mlx_weight(const MlxMatrixRef& w, uint32_t cols, uint32_t group_size, uint32_t r, uint32_t c) {
  const size_t group = size_t{r} * (cols / group_size) + c / group_size;
  const uint32_t* row_codes = host_ptr<const uint32_t>(w.codes) + size_t{r} * (cols * Bits / 32);
  return mlx_dequantize(E::load(host_ptr<const typename E::Storage>(w.scales)[group]),
                        mlx_code(row_codes, c, Bits), E::load(host_ptr<const typename E::Storage>(w.biases)[group]));
}

template <uint32_t Bits, typename E>
void mlx_gemv(const MlxGemvArgs& a) {
  const float* x = host_ptr<const float>(a.x);
  for (uint32_t r = 0; r < a.rows; ++r) {
    double acc = 0;
    for (uint32_t c = 0; c < a.cols; ++c) acc += double{mlx_weight<Bits, E>(a.w, a.cols, a.group_size, r, c)} * x[c];
    host_ptr<float>(a.y)[r] = static_cast<float>(acc);
  }
}

template <uint32_t Bits, typename E>
void mlx_row_to_f32(const MlxRowToF32Args& a) {
  for (uint32_t c = 0; c < a.cols; ++c) host_ptr<float>(a.y)[c] = mlx_weight<Bits, E>(a.w, a.cols, a.group_size, a.row, c);
}

template <uint32_t Bits, typename E>
void register_mlx(HostBackend& backend) {
  const std::string suffix = "mlx" + std::to_string(Bits) + "_" + std::string(E::kSuffix);
  backend.register_kernel<MlxGemvArgs>("gemv_" + suffix, mlx_gemv<Bits, E>);
  backend.register_kernel<MlxRowToF32Args>("row_to_f32_" + suffix, mlx_row_to_f32<Bits, E>);
}

}  // namespace

ReferenceBackend::ReferenceBackend() {
  register_kernel<RmsNormArgs>("rms_norm", rms_norm);
  register_kernel<AddRmsNormArgs>("add_rms_norm", add_rms_norm);
  register_kernel<HeadNormRopeArgs>("head_norm_rope", head_norm_rope);
  register_kernel<KvAppendArgs>("kv_append_f32", append_kv_rows<F32Element>);
  register_kernel<KvAppendArgs>("kv_append_bf16", append_kv_rows<BF16Element>);
  register_kernel<AttentionDecodeArgs>("attention_decode_f32", attention_decode<F32Element>);
  register_kernel<AttentionDecodeArgs>("attention_decode_bf16", attention_decode<BF16Element>);
  register_kernel<KvAppendArgs>("kv_append_f16", append_kv_rows<F16Element>);
  register_kernel<AttentionDecodeArgs>("attention_decode_f16", attention_decode<F16Element>);
  register_kernel<KvAppendArgs>("kv_append_fp8", append_kv_rows<Fp8KvElement>);
  register_kernel<AttentionDecodeArgs>("attention_decode_fp8", attention_decode<Fp8KvElement>);
  register_kernel<SigmoidGateArgs>("sigmoid_gate", sigmoid_gate);
  register_kernel<ConvSiluL2NormArgs>("conv_silu_l2norm", conv_silu_l2norm);
  register_kernel<GdnGateBetaArgs>("gdn_gate_beta", gdn_gate_beta);
  register_kernel<GdnRecurrentArgs>("gdn_recurrent", gdn_recurrent);
  register_kernel<SiluMulArgs>("silu_mul", silu_mul);
  register_kernel<AddArgs>("add", add);
  register_kernel<GemvArgs>("gemv_f32", gemv<F32Element>);
  register_kernel<GemvArgs>("gemv_bf16", gemv<BF16Element>);
  register_kernel<GemvArgs>("gemv_f16", gemv<F16Element>);
  register_kernel<RowToF32Args>("row_to_f32_f32", row_to_f32<F32Element>);
  register_kernel<RowToF32Args>("row_to_f32_bf16", row_to_f32<BF16Element>);
  register_kernel<RowToF32Args>("row_to_f32_f16", row_to_f32<F16Element>);
  register_mlx<4, F32Element>(*this);
  register_mlx<4, BF16Element>(*this);
  register_mlx<4, F16Element>(*this);
  register_mlx<8, F32Element>(*this);
  register_mlx<8, BF16Element>(*this);
  register_mlx<8, F16Element>(*this);
  register_reference_gguf_kernels(*this);
}

}  // namespace qwen35
