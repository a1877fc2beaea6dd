// GpuBackend: the only door between the vendor-free core and a device. Device
// memory, streams, and kernels that are resolved once by name into typed handles
// and launched with a typed argument struct. The core never picks launch
// geometry: each backend decides that inside its kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qwen35/dtype.h"
#include "qwen35/error.h"

namespace qwen35 {

// A device address. On host-memory backends it is a plain pointer; on GPUs the
// backend maps it to its own buffers. Offsets are byte arithmetic, as on CUDA.
struct DevicePtr {
  uint64_t address = 0;

  bool is_null() const { return address == 0; }
  DevicePtr offset(size_t bytes) const { return DevicePtr{address + bytes}; }
  // Offset by `count` elements of T.
  template <typename T>
  DevicePtr at(size_t count) const {
    return offset(count * sizeof(T));
  }
  friend bool operator==(DevicePtr, DevicePtr) = default;
};

struct Stream {
  uint64_t id = 0;
};

struct KernelHandle {
  uint64_t id = 0;
};

// A recorded sequence of launches (a CUDA graph, a Vulkan command buffer).
struct GraphHandle {
  uint64_t id = 0;
};

// Time spent in one kernel since profiling was enabled.
struct KernelProfile {
  std::string name;
  uint64_t launches = 0;
  double seconds = 0;
  // Of `seconds`, the time the launching thread waited for the backend's other
  // threads to finish their share: their load imbalance. 0 where a backend
  // runs no threads of its own (the CPU backend has a pool).
  double wait_seconds = 0;
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;

  // "cpu", "reference", ...; and a line about the device for logs.
  virtual std::string name() const = 0;
  virtual std::string device_description() const = 0;

  // Memory. allocate throws Error when the device is out of memory.
  virtual DevicePtr allocate(size_t bytes) = 0;
  virtual void release(DevicePtr ptr) = 0;
  // Copies are ordered on `stream`; host memory passed to upload must stay valid
  // until the stream is synchronized.
  virtual void upload(DevicePtr dst, const void* src, size_t bytes, Stream stream) = 0;
  virtual void download(void* dst, DevicePtr src, size_t bytes, Stream stream) = 0;
  virtual void copy(DevicePtr dst, DevicePtr src, size_t bytes, Stream stream) = 0;
  virtual void fill(DevicePtr dst, uint8_t byte_value, size_t bytes, Stream stream) = 0;
  // Host memory for buffers the device copies to or from every token (the
  // logits): page-locked where the backend has such memory, so the copy runs at
  // full speed without staging; plain memory otherwise.
  virtual void* allocate_host(size_t bytes) { return ::operator new(bytes); }
  virtual void release_host(void* host) { ::operator delete(host); }
  // Where the host reads `bytes` of device memory at `src` without a copy once
  // `src`'s stream is synchronized: backends that compute in host memory return
  // its address; others return nullptr (download it).
  virtual const void* host_readable(DevicePtr src, size_t bytes) const {
    (void)src;
    (void)bytes;
    return nullptr;
  }
  // Backends that compute in host memory alias `host` instead of copying it
  // (memory-mapped weights stay shared with the page cache). Others return nullopt.
  virtual std::optional<DevicePtr> map_host(const void* host, size_t bytes) {
    (void)host;
    (void)bytes;
    return std::nullopt;
  }

  // The layout this backend keeps a [rows, cols] matrix stored as `dtype` in:
  // `dtype` itself, or one regrouped for its kernels (gguf_regrouped_layout:
  // kQ4_0x16 for Q4_0), into which make_dense_weights converts it at load.
  virtual DType weight_layout(DType dtype, uint32_t rows, uint32_t cols) const {
    (void)rows;
    (void)cols;
    return dtype;
  }
  // Whether this backend keeps a [rows, cols] MLX matrix of `bits`-bit codes
  // regrouped 16 rows at a time (qwen35/mlx_affine.h: mlx_regroup_rows, into
  // which make_mlx_affine_weights converts it at load, and whose kernels are
  // "gemv_mlx4x16_bf16", ...).
  virtual bool regroups_mlx_rows(uint32_t bits, uint32_t rows, uint32_t cols) const {
    (void)bits;
    (void)rows;
    (void)cols;
    return false;
  }

  // Streams.
  virtual Stream default_stream() = 0;
  virtual void synchronize(Stream stream) = 0;

  // Kernels. find_kernel returns nullopt when the backend has no kernel of that
  // name, and throws Error when it has one taking a different argument struct.
  virtual std::optional<KernelHandle> find_kernel(std::string_view name, std::string_view args_type) = 0;
  virtual void launch(KernelHandle kernel, const void* args, size_t args_bytes, Stream stream) = 0;

  // Recording. Backends that can replay a recorded launch sequence say so here;
  // between begin_capture and end_capture launches and device-to-device copies
  // on `stream` are recorded instead of run, and replay runs them again with
  // the same arguments (per-token values come from device memory).
  virtual bool supports_capture() const { return false; }
  virtual void begin_capture(Stream stream) {
    (void)stream;
    fail("backend '{}' cannot record launches", name());
  }
  virtual GraphHandle end_capture(Stream stream) {
    (void)stream;
    fail("backend '{}' cannot record launches", name());
  }
  virtual void replay(GraphHandle graph, Stream stream) {
    (void)graph;
    (void)stream;
    fail("backend '{}' cannot replay launches", name());
  }
  virtual void destroy_graph(GraphHandle graph) { (void)graph; }

  // Profiling: per-kernel launch counts and times. Backends that cannot time
  // launches return an empty profile. Enabling resets the counters.
  virtual void set_profiling(bool enabled) { (void)enabled; }
  virtual std::vector<KernelProfile> profile() const { return {}; }

  // Tuning: knobs that change how kernels walk their data, never what they
  // compute, settable between launches so that a benchmark can compare two
  // settings in one process (`qwen35 bench --ab`), where separate runs on a
  // shared machine differ by more than the settings do. 0 restores a knob's
  // default; a name the backend lacks or a value out of range throws Error
  // naming both.
  virtual std::vector<std::string> tuning_knobs() const { return {}; }
  virtual void set_tuning(std::string_view knob, int64_t value) {
    (void)value;
    fail("backend '{}' has no tuning knob '{}'", name(), knob);
  }
};

// A kernel handle typed by its argument struct: launching with the wrong
// arguments does not compile, and a missing kernel is found at resolve time.
template <typename Args>
class Kernel {
 public:
  Kernel() = default;
  explicit Kernel(KernelHandle handle) : handle_(handle), valid_(true) {}
  bool valid() const { return valid_; }
  KernelHandle handle() const { return handle_; }

 private:
  KernelHandle handle_;
  bool valid_ = false;
};

// Resolves `name` or throws Error naming the kernel, its argument type and the backend.
template <typename Args>
Kernel<Args> resolve_kernel(GpuBackend& gpu, std::string_view name) {
  std::optional<KernelHandle> handle = gpu.find_kernel(name, Args::kTypeName);
  if (!handle) fail("backend '{}' has no kernel '{}' ({})", gpu.name(), name, Args::kTypeName);
  return Kernel<Args>(*handle);
}

// Resolves `name` if the backend has it; an invalid handle otherwise.
template <typename Args>
Kernel<Args> try_resolve_kernel(GpuBackend& gpu, std::string_view name) {
  std::optional<KernelHandle> handle = gpu.find_kernel(name, Args::kTypeName);
  return handle ? Kernel<Args>(*handle) : Kernel<Args>();
}

template <typename Args>
void launch(GpuBackend& gpu, const Kernel<Args>& kernel, const Args& args, Stream stream) {
  QWEN35_ASSERT(kernel.valid());
  gpu.launch(kernel.handle(), &args, sizeof(Args), stream);
}

// Owns one device allocation; move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(GpuBackend& gpu, size_t bytes) : gpu_(&gpu), ptr_(gpu.allocate(bytes)), bytes_(bytes) {}
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      gpu_ = std::exchange(other.gpu_, nullptr);
      ptr_ = std::exchange(other.ptr_, DevicePtr{});
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  DevicePtr ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  void reset() {
    if (gpu_ && !ptr_.is_null()) gpu_->release(ptr_);
    gpu_ = nullptr;
    ptr_ = DevicePtr{};
    bytes_ = 0;
  }

 private:
  GpuBackend* gpu_ = nullptr;
  DevicePtr ptr_;
  size_t bytes_ = 0;
};

struct BackendOptions {
  unsigned threads = 0;  // CPU backends: 0 = all cores
  int device = 0;        // GPU backends: device index
  // CPU backend: GGUF block weights and MLX affine weights meet x quantized
  // to 8 bits per 32 in integer dot products (as llama.cpp does for GGUF),
  // up to twice as fast on 4- to 6-bit weights but no longer float32
  // arithmetic: each element of x is off by up to max|x| / 254 of its block.
  // Off by default.
  bool int8_activations = false;
  // CPU backend: GGUF Q4_0, Q4_K, Q5_K and Q6_K matrices and MLX ones,
  // regrouped (below) or not (Q6_K), meet x in 24 bits per 32, three 8-bit digits
  // (cpu/int8_activations.h), each off by up to 2^-24 of its block's largest
  // element: the precision of float32 arithmetic through the integer kernels,
  // at about half their speed and 1.1-1.5 times the float kernels'. Other
  // matrices keep float x (Q8_0's float kernel is the faster one).
  // int8_activations wins where both are set.
  bool int24_activations = false;
  // CPU backend, with int8_activations: Q4_0, Q8_0, Q4_K, Q5_K and Q6_K matrices whose rows
  // are a multiple of 16 are regrouped at load (DType::kQ4_0x16, kQ8_0x16, ...) for
  // integer gemvs that serve 16 rows per instruction, and so are MLX ones
  // (GpuBackend::regroups_mlx_rows); with int24_activations alone, all of them
  // but Q8_0. Off only to compare.
  bool regroup_rows = true;
  // CPU backend: run the SIMD kernels of this target ("AVX2", "NEON", "SCALAR",
  // any name simd_targets() lists, in any case) instead of the best one this
  // CPU supports, to compare them on one machine. Highway's dispatch is
  // process-wide, so the choice holds for every CPU backend while this one
  // lives. Empty: the best.
  std::string simd_target;
};

// The registry of compiled-in backends (src/backends/registry.cpp).
std::unique_ptr<GpuBackend> create_backend(std::string_view name, const BackendOptions& options = {});
std::string available_backends();  // "cpu, reference"
std::vector<std::string> backend_names();
// The SIMD targets the CPU backend can run here, best first ({"AVX3", "AVX2", ...}),
// and the same joined for messages ("AVX3, AVX2, ...").
std::vector<std::string> simd_target_names();
std::string simd_targets();

}  // namespace qwen35
