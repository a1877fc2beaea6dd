// Resolving the layer kernels once per backend, and the KV dtype names.
#include "qwen35/kernels.h"

#include <array>

namespace qwen35 {
namespace {

struct KvDtypeInfo {
  KvDtype dtype;
  std::string_view name;
  size_t size;
};

constexpr std::array kKvDtypes = {KvDtypeInfo{KvDtype::kF32, "f32", 4}, KvDtypeInfo{KvDtype::kBF16, "bf16", 2}};

}  // namespace

std::string_view kv_dtype_name(KvDtype dtype) {
  for (const auto& info : kKvDtypes) {
    if (info.dtype == dtype) return info.name;
  }
  return "?";
}

std::optional<KvDtype> parse_kv_dtype(std::string_view name) {
  for (const auto& info : kKvDtypes) {
    if (info.name == name) return info.dtype;
  }
  return std::nullopt;
}

size_t kv_dtype_size(KvDtype dtype) {
  for (const auto& info : kKvDtypes) {
    if (info.dtype == dtype) return info.size;
  }
  return 0;
}

Qwen35Kernels Qwen35Kernels::resolve(GpuBackend& gpu, KvDtype kv_dtype) {
  const std::string kv = std::string(kv_dtype_name(kv_dtype));
  Qwen35Kernels k;
  k.kv_dtype = kv_dtype;
  k.rms_norm = resolve_kernel<RmsNormArgs>(gpu, "rms_norm");
  k.add_rms_norm = resolve_kernel<AddRmsNormArgs>(gpu, "add_rms_norm");
  k.head_norm_rope = resolve_kernel<HeadNormRopeArgs>(gpu, "head_norm_rope");
  k.kv_append = resolve_kernel<KvAppendArgs>(gpu, "kv_append_" + kv);
  k.attention_decode = resolve_kernel<AttentionDecodeArgs>(gpu, "attention_decode_" + kv);
  k.sigmoid_gate = resolve_kernel<SigmoidGateArgs>(gpu, "sigmoid_gate");
  k.conv_silu_l2norm = resolve_kernel<ConvSiluL2NormArgs>(gpu, "conv_silu_l2norm");
  k.gdn_gate_beta = resolve_kernel<GdnGateBetaArgs>(gpu, "gdn_gate_beta");
  k.gdn_recurrent = resolve_kernel<GdnRecurrentArgs>(gpu, "gdn_recurrent");
  k.silu_mul = resolve_kernel<SiluMulArgs>(gpu, "silu_mul");
  k.add = resolve_kernel<AddArgs>(gpu, "add");
  return k;
}

}  // namespace qwen35
