// The CPU backend: host memory, a persistent thread pool over all cores, and
// kernels that split each launch across it. One file per op family registers
// its kernels.
#pragma once

#include <vector>

#include "cpu/int8_activations.h"
#include "host/host_backend.h"
#include "host/thread_pool.h"

namespace qwen35 {

class CpuBackend final : public HostBackend {
 public:
  explicit CpuBackend(const BackendOptions& options);
  ~CpuBackend() override;
  std::string name() const override { return "cpu"; }
  std::string device_description() const override;
  ThreadPool& pool() { return pool_; }
  // Profiling also times how long each launch waits for the pool's other threads.
  void set_profiling(bool enabled) override {
    pool_.set_timing(enabled);
    HostBackend::set_profiling(enabled);
  }
  // The read streams per thread and prefetch distances of the gemvs and
  // attention, each a setter beside its kernels' defaults (the list is
  // cpu_backend.cpp's kTuningKnobs).
  std::vector<std::string> tuning_knobs() const override;
  void set_tuning(std::string_view knob, int64_t value) override;
  // How the GGUF and MLX gemvs take x, in 8-bit digits (0: as floats): in 1
  // (8 bits) with int8_activations; with BackendOptions::int24_activations
  // alone in 3 (24 bits) where the matrix's kernel takes them (`takes_int24`:
  // the regrouped layouts and Q6_K), else as floats.
  size_t x_digits(bool takes_int24) const {
    if (int8_activations_) return 1;
    return int24_activations_ && takes_int24 ? cpu::kInt24Digits : 0;
  }
  // Weights are copied into huge-page memory rather than aliased: walking a
  // memory-mapped file's 4 KiB pages costs a TLB miss every few rows.
  std::optional<DevicePtr> map_host(const void*, size_t) override { return std::nullopt; }
  // Q4_0, Q8_0, Q4_K, Q5_K and Q6_K regrouped 16 rows at a time (BackendOptions::regroup_rows)
  // for the integer kernels.
  DType weight_layout(DType dtype, uint32_t rows, uint32_t cols) const override;
  // And MLX matrices alike (cpu_mlx_x16.cpp).
  bool regroups_mlx_rows(uint32_t bits, uint32_t rows, uint32_t cols) const override;
  // Float scratch for values shared by all threads of one launch (launches on
  // the CPU run one at a time, so one buffer serves them all), starting a
  // cache line.
  float* launch_scratch(size_t count);

 protected:
  double helper_wait_seconds() const override { return pool_.join_wait_seconds(); }

 private:
  ThreadPool pool_;
  bool int8_activations_;
  bool int24_activations_;
  bool regroup_rows_;  // for x in 8 or 24 bits
  bool forced_target_ = false;  // BackendOptions::simd_target, undone on destruction
  std::vector<float> launch_scratch_;
};

namespace cpu {
// How many blocks of 32 positions ahead decode attention asks for its K and V
// rows (1; at most 16, 0: the default again): the tuning knob
// attention-prefetch, process-wide. The results do not depend on it.
void set_attention_prefetch_blocks(size_t blocks);
// The cache level those prefetches fill: 1 (L1) or 2 (L2, the default; 0:
// the default again), the tuning knob attention-prefetch-level. The results
// do not depend on it.
void set_attention_prefetch_level(size_t level);
}  // namespace cpu

void register_cpu_gemv_kernels(CpuBackend& cpu);
void register_cpu_norm_kernels(CpuBackend& cpu);
void register_cpu_attention_kernels(CpuBackend& cpu);
void register_cpu_gdn_kernels(CpuBackend& cpu);
void register_cpu_mlx_kernels(CpuBackend& cpu);
void register_cpu_gguf_kernels(CpuBackend& cpu);

}  // namespace qwen35
