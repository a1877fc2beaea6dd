// CudaBackend: device selection, memory, transfers, launches and CUDA graphs
// (see cuda_backend.h). Set-up calls throw Error with CUDA's description; a
// failed launch is a broken invariant of the hot path and aborts with the
// kernel's name.
#include "cuda/cuda_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "cuda/cuda_check.h"

namespace qwen35 {
namespace {

void* address(DevicePtr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p.address)); }

[[noreturn]] void launch_failed(std::string_view what, cudaError_t status) {
  fmt::print(stderr, "CUDA backend: {} failed: {} ({})\n", what, cudaGetErrorString(status), cudaGetErrorName(status));
  std::fflush(stderr);
  std::abort();
}

std::string version_text(int version) { return fmt::format("{}.{}", version / 1000, version % 1000 / 10); }

// An unsigned number from the environment, or `fallback` where it is unset.
uint32_t env_number(const char* name, uint32_t fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  char* end = nullptr;
  const unsigned long parsed = std::strtoul(value, &end, 10);
  if (*end != '\0' || parsed > UINT32_MAX) fail("{}={} is not a number", name, value);
  return static_cast<uint32_t>(parsed);
}

}  // namespace

CudaBackend::CudaBackend(const BackendOptions& options) : device_(options.device) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // clear it, so that nothing later reports it again
    throw DeviceUnavailable(fmt::format("no usable CUDA device (cudaGetDeviceCount: {}, {})",
                                        cudaGetErrorString(status), cudaGetErrorName(status)));
  }
  if (count == 0) throw DeviceUnavailable("no CUDA device found (cudaGetDeviceCount returned 0)");
  if (device_ < 0 || device_ >= count) {
    fail("--device {} is not a CUDA device index: {} device(s) found (0 .. {})", device_, count, count - 1);
  }
  cuda::check(cudaSetDevice(device_), "cudaSetDevice");
  cudaDeviceProp properties{};
  cuda::check(cudaGetDeviceProperties(&properties, device_), "cudaGetDeviceProperties");
  if (properties.major < 8) {
    throw DeviceUnavailable(fmt::format("CUDA device {} ({}) has compute capability {}.{}; the kernels need 8.0 or newer",
                                        device_, properties.name, properties.major, properties.minor));
  }
  // The tuning knobs, all read here, before anything is allocated, so that a
  // malformed value fails with its name and leaks nothing (src/backends/cuda/README.md).
  // Programmatic dependent launch (compute capability 9.0) is opt-in until it has
  // been measured on a GPU: QWEN35_CUDA_PDL=1 turns it on, and
  // QWEN35_CUDA_PREFETCH_BYTES sets how much of each row a gemv then asks L2 for
  // before it waits (0: none). QWEN35_CUDA_GEMV_WARPS (0: the default) and
  // QWEN35_CUDA_GGUF_EXACT are for sweeps and for the exact path's checks.
  const bool programmatic = properties.major >= 9 && env_number("QWEN35_CUDA_PDL", 0) != 0;
  const uint32_t prefetch_row_bytes = env_number("QWEN35_CUDA_PREFETCH_BYTES", 4096);
  const uint32_t gemv_wanted_warps = env_number("QWEN35_CUDA_GEMV_WARPS", 0);
  const bool exact_gguf = env_number("QWEN35_CUDA_GGUF_EXACT", 0) != 0;
  int runtime = 0, driver = 0;
  cuda::check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  cuda::check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  description_ = fmt::format("{} (device {}, compute {}.{}, {} SMs, {:.1f} GiB; CUDA runtime {}, driver {})",
                             properties.name, device_, properties.major, properties.minor,
                             properties.multiProcessorCount, static_cast<double>(properties.totalGlobalMem) / (1 << 30),
                             version_text(runtime), version_text(driver));

  int pools = 0;
  cuda::check(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device_), "cudaDeviceGetAttribute");
  async_alloc_ = pools != 0;
  if (async_alloc_) {
    // Keep freed memory in the pool instead of returning it to the driver at every synchronize.
    cudaMemPool_t pool = nullptr;
    cuda::check(cudaDeviceGetDefaultMemPool(&pool, device_), "cudaDeviceGetDefaultMemPool");
    uint64_t threshold = UINT64_MAX;
    cuda::check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold), "cudaMemPoolSetAttribute");
  }
  cuda::check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  void* scratch = nullptr;
  const cudaError_t scratch_status = cudaMalloc(&scratch, cuda::kScratchBytes);
  if (scratch_status != cudaSuccess) {
    cudaStreamDestroy(stream_);
    cuda::check(scratch_status, "cudaMalloc (attention scratch)");
  }
  context_ = cuda::LaunchContext{.stream = stream_,
                                 .multiprocessors = properties.multiProcessorCount,
                                 .scratch = scratch,
                                 .scratch_bytes = cuda::kScratchBytes,
                                 .programmatic_launch = programmatic,
                                 .overlap_previous_kernel = false,
                                 .prefetch_row_bytes = programmatic ? prefetch_row_bytes : 0};
  if (gemv_wanted_warps != 0) context_.gemv_wanted_warps = gemv_wanted_warps;
  context_.exact_gguf = exact_gguf;
  if (programmatic) {
    description_ += fmt::format(", programmatic launch, {} B/row prefetch", context_.prefetch_row_bytes);
  }

  cuda::add_norm_kernels(specs_);
  cuda::add_attention_kernels(specs_);
  cuda::add_gdn_kernels(specs_);
  cuda::add_elementwise_kernels(specs_);
  cuda::add_gemv_kernels(specs_);
  cuda::add_mlx_kernels(specs_);
  cuda::add_probe_kernels(specs_);
  cuda::add_gguf_kernels(specs_);
}

CudaBackend::~CudaBackend() {
  if (capturing_) {  // abandon the recording
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(stream_, &graph) == cudaSuccess && graph != nullptr) cudaGraphDestroy(graph);
    capturing_ = false;
  }
  cudaStreamSynchronize(stream_);
  for (const TimedLaunch& t : timed_) free_events_.insert(free_events_.end(), {t.start, t.stop});
  for (cudaEvent_t event : free_events_) cudaEventDestroy(event);
  for (auto& [id, exec] : graphs_) cudaGraphExecDestroy(exec);
  release_deferred();
  cudaStreamSynchronize(stream_);
  cudaFree(context_.scratch);
  cudaStreamDestroy(stream_);
  (void)cudaGetLastError();
}

void CudaBackend::require_not_capturing(std::string_view what) const {
  if (capturing_) fail("CUDA backend: {} cannot be recorded in a capture (only launches, copies and fills)", what);
}

DevicePtr CudaBackend::allocate(size_t bytes) {
  require_not_capturing("allocate");
  void* ptr = nullptr;
  const size_t size = std::max<size_t>(bytes, 16);  // a distinct, non-null address even for 0 bytes
  const cudaError_t status = async_alloc_ ? cudaMallocAsync(&ptr, size, stream_) : cudaMalloc(&ptr, size);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    fail("CUDA backend: cannot allocate {} bytes on device {}: {} ({} of {} MiB free)", bytes, device_,
         cudaGetErrorString(status), free_bytes >> 20, total_bytes >> 20);
  }
  return DevicePtr{reinterpret_cast<uintptr_t>(ptr)};
}

void CudaBackend::release(DevicePtr ptr) {
  if (ptr.is_null()) return;
  if (capturing_) {
    deferred_releases_.push_back(ptr);
    return;
  }
  // Stream-ordered: work already queued that reads the memory finishes first.
  // Called from destructors, so it reports nothing.
  if ((async_alloc_ ? cudaFreeAsync(address(ptr), stream_) : cudaFree(address(ptr))) != cudaSuccess) {
    (void)cudaGetLastError();
  }
}

void* CudaBackend::allocate_host(size_t bytes) {
  require_not_capturing("allocate_host");
  void* host = nullptr;
  const cudaError_t status = cudaHostAlloc(&host, std::max<size_t>(bytes, 16), cudaHostAllocPortable);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    fail("CUDA backend: cannot allocate {} bytes of page-locked host memory: {}", bytes, cudaGetErrorString(status));
  }
  return host;
}

void CudaBackend::release_host(void* host) {
  if (host != nullptr && cudaFreeHost(host) != cudaSuccess) (void)cudaGetLastError();  // from destructors: silent
}

void CudaBackend::release_deferred() {
  std::vector<DevicePtr> pending;
  pending.swap(deferred_releases_);
  for (DevicePtr ptr : pending) release(ptr);
}

void CudaBackend::upload(DevicePtr dst, const void* src, size_t bytes, Stream) {
  require_not_capturing("upload");
  if (bytes == 0) return;
  cuda::check(cudaMemcpyAsync(address(dst), src, bytes, cudaMemcpyHostToDevice, stream_), "upload (cudaMemcpyAsync)");
  after_kernel_ = false;
}

void CudaBackend::download(void* dst, DevicePtr src, size_t bytes, Stream) {
  require_not_capturing("download");
  if (bytes == 0) return;
  cuda::check(cudaMemcpyAsync(dst, address(src), bytes, cudaMemcpyDeviceToHost, stream_),
              "download (cudaMemcpyAsync)");
  after_kernel_ = false;
}

void CudaBackend::copy(DevicePtr dst, DevicePtr src, size_t bytes, Stream) {
  if (bytes == 0) return;
  cuda::check(cudaMemcpyAsync(address(dst), address(src), bytes, cudaMemcpyDeviceToDevice, stream_),
              "copy (cudaMemcpyAsync)");
  after_kernel_ = false;
}

void CudaBackend::fill(DevicePtr dst, uint8_t byte_value, size_t bytes, Stream) {
  if (bytes == 0) return;
  cuda::check(cudaMemsetAsync(address(dst), byte_value, bytes, stream_), "fill (cudaMemsetAsync)");
  after_kernel_ = false;
}

void CudaBackend::synchronize(Stream) {
  require_not_capturing("synchronize");
  cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (an earlier launch or copy failed)");
}

std::optional<KernelHandle> CudaBackend::find_kernel(std::string_view name, std::string_view args_type) {
  for (const cuda::KernelSpec& spec : specs_) {
    if (spec.name != name) continue;
    if (spec.args_type != args_type) fail("backend 'cuda': kernel '{}' takes {}, not {}", name, spec.args_type, args_type);
    const auto known = std::find(kernels_.begin(), kernels_.end(), &spec);
    if (known != kernels_.end()) return KernelHandle{static_cast<uint64_t>(known - kernels_.begin())};
    kernels_.push_back(&spec);
    return KernelHandle{kernels_.size() - 1};
  }
  return std::nullopt;
}

void CudaBackend::launch(KernelHandle kernel, const void* args, size_t args_bytes, Stream) {
  QWEN35_ASSERT(kernel.id < kernels_.size());
  const cuda::KernelSpec& spec = *kernels_[kernel.id];
  QWEN35_ASSERT(args_bytes == spec.args_bytes);
  const bool timed = profiling_ && !capturing_;
  TimedLaunch record{};
  if (timed) {
    record = TimedLaunch{kernel.id, take_event(), take_event()};
    cudaEventRecord(record.start, stream_);
  }
  // Kernel parameters are copied at launch, so a captured graph keeps these arguments.
  context_.overlap_previous_kernel = context_.programmatic_launch && after_kernel_ && !timed;
  spec.launch(args, context_);
  after_kernel_ = !timed;
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) launch_failed("launching '" + spec.name + "'", status);
  if (timed) {
    cudaEventRecord(record.stop, stream_);
    timed_.push_back(record);
    if (timed_.size() >= 4096) collect_timings();  // bounds the events alive at once
  }
}

cudaEvent_t CudaBackend::take_event() {
  if (!free_events_.empty()) {
    cudaEvent_t event = free_events_.back();
    free_events_.pop_back();
    return event;
  }
  cudaEvent_t event = nullptr;
  if (cudaEventCreate(&event) != cudaSuccess) launch_failed("cudaEventCreate (profiling)", cudaGetLastError());
  return event;
}

void CudaBackend::collect_timings() const {
  if (timed_.empty()) return;
  cudaEventSynchronize(timed_.back().stop);
  for (const TimedLaunch& t : timed_) {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, t.start, t.stop) == cudaSuccess) {
      while (totals_.size() <= t.kernel) totals_.push_back(KernelProfile{.name = kernels_[totals_.size()]->name});
      KernelProfile& total = totals_[t.kernel];
      total.launches += 1;
      total.seconds += ms * 1e-3;
    }
    free_events_.insert(free_events_.end(), {t.start, t.stop});
  }
  (void)cudaGetLastError();
  timed_.clear();
}

void CudaBackend::set_profiling(bool enabled) {
  require_not_capturing("set_profiling");
  collect_timings();
  totals_.assign(kernels_.size(), KernelProfile{});
  for (size_t i = 0; i < kernels_.size(); ++i) totals_[i].name = kernels_[i]->name;
  profiling_ = enabled;
}

std::vector<KernelProfile> CudaBackend::profile() const {
  collect_timings();
  std::vector<KernelProfile> result;
  for (const KernelProfile& total : totals_) {
    if (total.launches > 0) result.push_back(total);
  }
  return result;
}

void CudaBackend::begin_capture(Stream) {
  require_not_capturing("begin_capture");
  cuda::check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  capturing_ = true;
  after_kernel_ = false;  // a graph's first kernel has no kernel before it inside the graph
}

GraphHandle CudaBackend::end_capture(Stream) {
  if (!capturing_) fail("CUDA backend: end_capture without begin_capture");
  capturing_ = false;
  after_kernel_ = false;
  cudaGraph_t graph = nullptr;
  cuda::check(cudaStreamEndCapture(stream_, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  const cudaError_t status = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  cuda::check(status, "cudaGraphInstantiate");
  release_deferred();
  const uint64_t id = next_graph_++;
  graphs_.emplace(id, exec);
  return GraphHandle{id};
}

void CudaBackend::replay(GraphHandle graph, Stream) {
  const auto it = graphs_.find(graph.id);
  QWEN35_ASSERT(it != graphs_.end());
  QWEN35_ASSERT(!capturing_);
  const cudaError_t status = cudaGraphLaunch(it->second, stream_);
  if (status != cudaSuccess) launch_failed("cudaGraphLaunch", status);
  after_kernel_ = false;
}

void CudaBackend::destroy_graph(GraphHandle graph) {
  const auto it = graphs_.find(graph.id);
  if (it == graphs_.end()) return;
  if (!capturing_) cudaStreamSynchronize(stream_);  // a replay of it may still be queued
  cudaGraphExecDestroy(it->second);
  graphs_.erase(it);
}

}  // namespace qwen35
