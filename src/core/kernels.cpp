// Resolving the layer kernels once per backend, and the KV dtype names.
#include "qwen35/kernels.h"

#include <array>
#include <string>

#include "qwen35/error.h"

namespace qwen35 {
namespace {

struct KvDtypeInfo {
  KvDtype dtype;
  std::string_view name;
  size_t element_bytes;
  size_t scale_bytes_per_block;  // 0: no scales
};

constexpr std::array kKvDtypes = {
    KvDtypeInfo{KvDtype::kF32, "f32", 4, 0}, KvDtypeInfo{KvDtype::kBF16, "bf16", 2, 0},
    KvDtypeInfo{KvDtype::kF16, "f16", 2, 0}, KvDtypeInfo{KvDtype::kFP8, "fp8", 1, 2}};

const KvDtypeInfo& info_of(KvDtype dtype) {
  for (const auto& info : kKvDtypes) {
    if (info.dtype == dtype) return info;
  }
  fail("unknown KV dtype {}", static_cast<int>(dtype));
}

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

std::string kv_dtype_names() {
  std::string names;
  for (const auto& info : kKvDtypes) names += (names.empty() ? "" : ", ") + std::string(info.name);
  return names;
}

size_t kv_row_bytes(KvDtype dtype, uint32_t kv_dim) {
  const KvDtypeInfo& info = info_of(dtype);
  return size_t{kv_dim} * info.element_bytes + size_t{kv_dim} / kKvFp8Block * info.scale_bytes_per_block;
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
