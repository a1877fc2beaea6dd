// The kernel table of the Vulkan backend. Each entry pairs a kernel name with
// its argument struct and its dispatch size; the sizes quoted here are the
// shaders' local_size_x (shaders/), and for subgroup-per-item kernels the
// work of one subgroup.
#include "vulkan/vulkan_kernels.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "qwen35/dense_weights.h"
#include "qwen35/kernels.h"
#include "qwen35/mlx_affine.h"
#include "vulkan/vulkan_pipelines.h"

namespace qwen35::vulkan {
namespace {

// Vulkan guarantees 65535 workgroups per dimension; shaders stride past it.
uint32_t groups_for(size_t items, size_t per_group) {
  return static_cast<uint32_t>(std::clamp<size_t>((items + per_group - 1) / per_group, 1, 65535));
}

// Subgroups in a workgroup of 128 (gemv_rows.glsl, gdn_recurrent.comp).
size_t subgroups_per_group(uint32_t subgroup_size) { return std::max<size_t>(128 / subgroup_size, 1); }

template <typename Args>
KernelSpec kernel(std::string name, uint32_t (*workgroups)(const Args&, uint32_t subgroup_size)) {
  static_assert(std::is_trivially_copyable_v<Args>);
  static_assert(sizeof(Args) <= kPushConstantBytes, "kernel arguments must fit in the push constants");
  return KernelSpec{std::move(name), Args::kTypeName, sizeof(Args), [workgroups](const void* args, uint32_t subgroup) {
                      return workgroups(*static_cast<const Args*>(args), subgroup);
                    }};
}

uint32_t attention_groups(const AttentionDecodeArgs& a, uint32_t) {
  QWEN35_ASSERT(a.head_dim <= 512);  // attention_decode.comp keeps 4 dims per invocation of 128
  QWEN35_ASSERT(a.n_heads_kv > 0 && a.n_heads_q % a.n_heads_kv == 0);
  return groups_for(a.n_heads_q, 1);
}

uint32_t conv_groups(const ConvSiluL2NormArgs& a, uint32_t) {
  const size_t normed = 2 * size_t{a.n_heads_k};  // one workgroup per q or k head, then 128 value channels each
  QWEN35_ASSERT(a.conv_dim >= normed * a.head_dim_k);
  return groups_for(normed + (a.conv_dim - normed * a.head_dim_k + 127) / 128, 1);
}

uint32_t sigmoid_gate_groups(const SigmoidGateArgs& a, uint32_t) {
  return groups_for(size_t{a.n_heads} * a.head_dim, 256);
}

// gdn_recurrent.comp: one subgroup per value channel.
uint32_t gdn_recurrent_groups(const GdnRecurrentArgs& a, uint32_t subgroup_size) {
  return groups_for(size_t{a.n_heads_v} * a.head_dim_v, subgroups_per_group(subgroup_size));
}

// gemv_rows.glsl and mlx_rows.glsl: two rows per subgroup.
uint32_t gemv_groups(size_t rows, uint32_t subgroup_size) {
  return groups_for(rows, 2 * subgroups_per_group(subgroup_size));
}

std::vector<KernelSpec> make_specs() {
  std::vector<KernelSpec> specs = {
      kernel<RmsNormArgs>("rms_norm", [](const RmsNormArgs& a, uint32_t) { return groups_for(a.n_rows, 1); }),
      kernel<AddRmsNormArgs>("add_rms_norm", [](const AddRmsNormArgs&, uint32_t) { return 1u; }),
      kernel<HeadNormRopeArgs>("head_norm_rope",
                               [](const HeadNormRopeArgs& a, uint32_t) { return groups_for(a.n_heads, 1); }),
      kernel<SigmoidGateArgs>("sigmoid_gate", sigmoid_gate_groups),
      kernel<ConvSiluL2NormArgs>("conv_silu_l2norm", conv_groups),
      kernel<GdnGateBetaArgs>("gdn_gate_beta",
                              [](const GdnGateBetaArgs& a, uint32_t) { return groups_for(a.n_heads_v, 64); }),
      kernel<GdnRecurrentArgs>("gdn_recurrent", gdn_recurrent_groups),
      kernel<SiluMulArgs>("silu_mul", [](const SiluMulArgs& a, uint32_t) { return groups_for(a.n, 256); }),
      kernel<AddArgs>("add", [](const AddArgs& a, uint32_t) { return groups_for(a.n, 256); }),
  };
  for (const std::string kv : {"f32", "bf16", "f16", "fp8"}) {
    specs.push_back(kernel<KvAppendArgs>("kv_append_" + kv,
                                         [](const KvAppendArgs& a, uint32_t) { return groups_for(a.kv_dim, 256); }));
    specs.push_back(kernel<AttentionDecodeArgs>("attention_decode_" + kv, attention_groups));
  }
  for (const std::string dtype : {"f32", "bf16", "f16", "q8_0", "q4_0", "q4_k", "q5_k", "q6_k"}) {
    specs.push_back(
        kernel<GemvArgs>("gemv_" + dtype, [](const GemvArgs& a, uint32_t s) { return gemv_groups(a.rows, s); }));
    specs.push_back(kernel<GemvPairArgs>("gemv_pair_" + dtype, [](const GemvPairArgs& a, uint32_t s) {
      return gemv_groups(size_t{a.rows0} + a.rows1, s);
    }));
    specs.push_back(kernel<GemvSiluGateArgs>(
        "gemv_silu_gate_" + dtype, [](const GemvSiluGateArgs& a, uint32_t s) { return gemv_groups(a.rows, s); }));
    specs.push_back(kernel<RowToF32Args>("row_to_f32_" + dtype,
                                         [](const RowToF32Args& a, uint32_t) { return groups_for(a.cols, 256); }));
  }
  for (const std::string bits : {"4", "8"}) {
    for (const std::string scale : {"f32", "bf16", "f16"}) {
      const std::string suffix = "mlx" + bits + "_" + scale;
      specs.push_back(kernel<MlxGemvArgs>("gemv_" + suffix,
                                          [](const MlxGemvArgs& a, uint32_t s) { return gemv_groups(a.rows, s); }));
      specs.push_back(kernel<MlxGemvPairArgs>("gemv_pair_" + suffix, [](const MlxGemvPairArgs& a, uint32_t s) {
        return gemv_groups(size_t{a.rows0} + a.rows1, s);
      }));
      specs.push_back(kernel<MlxGemvSiluGateArgs>(
          "gemv_silu_gate_" + suffix, [](const MlxGemvSiluGateArgs& a, uint32_t s) { return gemv_groups(a.rows, s); }));
      specs.push_back(kernel<MlxRowToF32Args>(
          "row_to_f32_" + suffix, [](const MlxRowToF32Args& a, uint32_t) { return groups_for(a.cols, 128); }));
    }
  }
  return specs;
}

}  // namespace

std::span<const KernelSpec> kernel_specs() {
  static const std::vector<KernelSpec> kSpecs = make_specs();
  return kSpecs;
}

}  // namespace qwen35::vulkan
