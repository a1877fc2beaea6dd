// CpuBackend construction: the pool and every op family's kernels.
#include "cpu/cpu_backend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join moved here in fmt 11

#include <algorithm>
#include <cctype>

#include "cpu/gemv_scheduler.h"
#include "cpu/gguf_rows.h"
#include "cpu/gguf_x16.h"
#include "cpu/mlx_x16.h"
#include "cpu/row_bands.h"
#include "cpu/simd.h"
#include "qwen35/error.h"
#include "qwen35/gguf_quants.h"
#include "qwen35/mlx_affine.h"

namespace qwen35 {

namespace {

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::vector<std::string> simd_target_names() {
  std::vector<std::string> names;
  for (int64_t target : simd::available_targets()) names.push_back(simd::target_name(target));
  return names;
}

std::string simd_targets() { return fmt::format("{}", fmt::join(simd_target_names(), ", ")); }

CpuBackend::CpuBackend(const BackendOptions& options)
    : pool_(options.threads),
      int8_activations_(options.int8_activations),
      int24_activations_(options.int24_activations),
      regroup_rows_((options.int8_activations || options.int24_activations) && options.regroup_rows) {
  int64_t forced = 0;
  if (!options.simd_target.empty()) {
    const std::vector<int64_t> targets = simd::available_targets();
    const auto it = std::find_if(targets.begin(), targets.end(), [&](int64_t target) {
      return same_name(simd::target_name(target), options.simd_target);
    });
    if (it == targets.end()) {
      fail("SIMD target '{}' is not available here (this build on this CPU: {})", options.simd_target, simd_targets());
    }
    forced = *it;
  }
  register_cpu_gemv_kernels(*this);
  register_cpu_norm_kernels(*this);
  register_cpu_attention_kernels(*this);
  register_cpu_gdn_kernels(*this);
  register_cpu_mlx_kernels(*this);
  register_cpu_gguf_kernels(*this);
  // Last, so that a constructor that throws leaves dispatch as it was.
  if (forced != 0) {
    simd::force_target(forced);
    forced_target_ = true;
  }
}

CpuBackend::~CpuBackend() {
  if (forced_target_) simd::force_target(0);
}

std::string CpuBackend::device_description() const {
  std::string description = fmt::format("CPU, {} threads, SIMD {}{}", pool_.size(), simd::current_target(),
                                        forced_target_ ? " (forced)" : "");
  if (int8_activations_) {
    description += fmt::format(
        ", int8 activations for GGUF and MLX weights (integer kernels {}; Q6_K and row-major mlx4 rows in {} bands)",
        gguf_cpu::int8_kernel_target(), cpu::heavy_int8_gemv_bands());
  } else if (int24_activations_) {
    description += fmt::format(", int24 activations for {} weights (integer kernels {})",
                               regroup_rows_ ? "regrouped GGUF and MLX, and Q6_K" : "GGUF Q6_K",
                               gguf_cpu::int8_kernel_target());
  }
  return description;
}

namespace {

// Every knob is process-wide, as the kernels that read it are (cpu/forced_setting.h).
struct TuningKnob {
  std::string_view name;
  void (*set)(size_t);
};
constexpr TuningKnob kTuningKnobs[] = {{"attention-prefetch", cpu::set_attention_prefetch_blocks},
                                       {"attention-prefetch-level", cpu::set_attention_prefetch_level},
                                       {"dense-bands", cpu::set_dense_gemv_bands},
                                       {"dense-prefetch", cpu::set_dense_gemv_prefetch_bytes},
                                       {"gguf-x16-bands", gguf_cpu::set_x16_bands},
                                       {"gguf-x16-prefetch", gguf_cpu::set_x16_prefetch_bytes},
                                       {"gguf-x16-q5-prefetch-lines", gguf_cpu::set_x16_q5_prefetch_lines},
                                       {"heavy-int8-bands", cpu::set_heavy_int8_gemv_bands},
                                       {"mlx-x16-bands", cpu::set_mlx_x16_bands},
                                       {"mlx-x16-prefetch", cpu::set_mlx_x16_prefetch_bytes},
                                       {"solo-bytes", cpu::set_solo_launch_bytes}};

}  // namespace

std::vector<std::string> CpuBackend::tuning_knobs() const {
  std::vector<std::string> names;
  for (const TuningKnob& knob : kTuningKnobs) names.emplace_back(knob.name);
  return names;
}

void CpuBackend::set_tuning(std::string_view knob, int64_t value) {
  const auto it = std::find_if(std::begin(kTuningKnobs), std::end(kTuningKnobs),
                               [&](const TuningKnob& k) { return k.name == knob; });
  if (it == std::end(kTuningKnobs)) {
    fail("backend 'cpu' has no tuning knob '{}' (it has: {})", knob, fmt::join(tuning_knobs(), ", "));
  }
  if (value < 0) fail("tuning knob '{}' takes a count, not {}", knob, value);
  it->set(static_cast<size_t>(value));
}

// With x in 24 bits, Q8_0 stays row-major with float x: its float kernel
// already reads near the probe's rate, and three digits' dot products made
// q8_0 decode slower (Zen 5, alternating: 61.1 and 52.6 tok/s against 66.0
// and 61.5), where they made the 4- and 5-bit types faster (q4_k 75.0-78.9
// against 56.6-61.6, q4_0 91.7 and 93.4 against 84.8 and 70.1, q5_k 57.4
// and 50.6 against 53.3 and 45.9).
DType CpuBackend::weight_layout(DType dtype, uint32_t rows, uint32_t cols) const {
  const std::optional<DType> regrouped = gguf_regrouped_layout(dtype);
  const bool integer_x = int8_activations_ || dtype != DType::kQ8_0;
  return regroup_rows_ && integer_x && regrouped && rows % 16 == 0 && cols % dtype_block_size(dtype) == 0 ? *regrouped
                                                                                                          : dtype;
}

bool CpuBackend::regroups_mlx_rows(uint32_t bits, uint32_t rows, uint32_t cols) const {
  return regroup_rows_ && mlx_regroupable(bits, rows, cols);
}

float* CpuBackend::launch_scratch(size_t count) {
  // Aligned to a cache line: the kernels read x from here in vectors of up to
  // 64 bytes, which cost two loads each where they cross a line.
  constexpr size_t kLineFloats = 16;
  if (launch_scratch_.size() < count + kLineFloats) launch_scratch_.resize(count + kLineFloats);
  const auto address = reinterpret_cast<uintptr_t>(launch_scratch_.data());
  return launch_scratch_.data() + (-address / sizeof(float)) % kLineFloats;
}

}  // namespace qwen35
