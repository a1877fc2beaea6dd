// The CUDA backend's kernel table: each kernel file (cuda_*.cu) adds its
// kernels by name with the argument struct they take and a host function that
// launches them on a stream. The backend resolves names against this table
// once; the launchers pick their own grid sizes from the arguments.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace qwen35::cuda {

// What a launcher may use besides its arguments: the stream, the device's
// multiprocessor count, scratch memory owned by the backend (the same address
// for the backend's lifetime, so captured graphs may keep it), and whether its
// launches may overlap the kernel before them (cuda_launch.cuh).
struct LaunchContext {
  cudaStream_t stream;
  int multiprocessors;
  void* scratch;
  size_t scratch_bytes;
  bool programmatic_launch = false;     // the device and the options allow PDL
  bool overlap_previous_kernel = false;  // PDL, and the stream's last operation is a kernel
  uint32_t prefetch_row_bytes = 0;       // gemvs ask L2 for this much of each row before they wait
  // Warps a gemv launch aims for before it splits rows between warps
  // (cuda_gemv_rows.cuh: gemv_split; QWEN35_CUDA_GEMV_WARPS).
  uint32_t gemv_wanted_warps = 4096;
  bool exact_gguf = false;  // every GGUF gemv on the exact decoding (QWEN35_CUDA_GGUF_EXACT=1)

  // The context for a launcher's second kernel, which follows its first.
  LaunchContext after_kernel() const {
    LaunchContext next = *this;
    next.overlap_previous_kernel = programmatic_launch;
    return next;
  }
};

struct KernelSpec {
  std::string name;
  std::string_view args_type;
  size_t args_bytes;
  void (*launch)(const void* args, const LaunchContext& context);
};

// One entry for kernel `name` launched by `Launch` with arguments of type Args.
template <typename Args, void (*Launch)(const Args&, const LaunchContext&)>
KernelSpec kernel_spec(std::string name) {
  static_assert(std::is_trivially_copyable_v<Args>);
  return KernelSpec{std::move(name), Args::kTypeName, sizeof(Args),
                    [](const void* args, const LaunchContext& context) {
                      Launch(*static_cast<const Args*>(args), context);
                    }};
}

// Bytes of scratch the backend allocates for the launchers (attention partials).
constexpr size_t kScratchBytes = size_t{8} << 20;

// y = silu(gate) * up [n] (cuda_elementwise.cu), also the first step of gemv_silu_gate.
void launch_silu_mul(const float* gate, const float* up, float* y, uint32_t n, const LaunchContext& ctx);

// One per kernel file.
void add_norm_kernels(std::vector<KernelSpec>& specs);         // cuda_norm.cu
void add_attention_kernels(std::vector<KernelSpec>& specs);    // cuda_attention.cu
void add_gdn_kernels(std::vector<KernelSpec>& specs);          // cuda_gdn.cu
void add_elementwise_kernels(std::vector<KernelSpec>& specs);  // cuda_elementwise.cu
void add_gemv_kernels(std::vector<KernelSpec>& specs);         // cuda_gemv.cu
void add_mlx_kernels(std::vector<KernelSpec>& specs);          // cuda_mlx.cu
void add_probe_kernels(std::vector<KernelSpec>& specs);        // cuda_probe.cu
void add_gguf_kernels(std::vector<KernelSpec>& specs);         // cuda_gguf.cu

}  // namespace qwen35::cuda
