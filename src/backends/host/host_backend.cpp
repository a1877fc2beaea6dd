// HostBackend: memory, streams and the kernel table for host-memory backends.
#include "host_backend.h"

#include "host/host_memory.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

namespace qwen35 {
DevicePtr HostBackend::allocate(size_t bytes) {
  void* p = allocate_host_memory(bytes);
  std::lock_guard lock(allocations_mutex_);
  allocation_bytes_[reinterpret_cast<uintptr_t>(p)] = bytes;
  return DevicePtr{reinterpret_cast<uintptr_t>(p)};
}

void HostBackend::release(DevicePtr ptr) {
  size_t bytes = 0;
  {
    std::lock_guard lock(allocations_mutex_);
    auto it = allocation_bytes_.find(ptr.address);
    QWEN35_ASSERT(it != allocation_bytes_.end());
    bytes = it->second;
    allocation_bytes_.erase(it);
  }
  release_host_memory(host_ptr<void>(ptr), bytes);
}

void HostBackend::upload(DevicePtr dst, const void* src, size_t bytes, Stream) {
  if (bytes) std::memcpy(host_ptr<void>(dst), src, bytes);
}

void HostBackend::download(void* dst, DevicePtr src, size_t bytes, Stream) {
  if (bytes) std::memcpy(dst, host_ptr<void>(src), bytes);
}

void HostBackend::copy(DevicePtr dst, DevicePtr src, size_t bytes, Stream) {
  if (bytes) std::memmove(host_ptr<void>(dst), host_ptr<void>(src), bytes);
}

void HostBackend::fill(DevicePtr dst, uint8_t byte_value, size_t bytes, Stream) {
  if (bytes) std::memset(host_ptr<void>(dst), byte_value, bytes);
}

std::optional<DevicePtr> HostBackend::map_host(const void* host, size_t) {
  // Kernels load whole elements, so only map data aligned for 4-byte types;
  // anything else is copied into an aligned allocation by the caller.
  const auto address = reinterpret_cast<uintptr_t>(host);
  if (address % 4 != 0) return std::nullopt;
  return DevicePtr{address};
}

void HostBackend::add_untyped(std::string name, std::string_view args_type, size_t args_bytes,
                              std::function<void(const void*)> run) {
  by_name_[name] = kernels_.size();
  kernels_.push_back(Entry{std::move(name), args_type, args_bytes, std::move(run)});
}

std::optional<KernelHandle> HostBackend::find_kernel(std::string_view name, std::string_view args_type) {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  const Entry& entry = kernels_[it->second];
  if (entry.args_type != args_type) {
    fail("backend '{}': kernel '{}' takes {}, not {}", this->name(), name, entry.args_type, args_type);
  }
  return KernelHandle{it->second};
}

void HostBackend::launch(KernelHandle kernel, const void* args, size_t args_bytes, Stream) {
  QWEN35_ASSERT(kernel.id < kernels_.size());
  const Entry& entry = kernels_[kernel.id];
  QWEN35_ASSERT(entry.args_bytes == args_bytes);
  if (!profiling_) {
    entry.run(args);
    return;
  }
  const double wait_before = helper_wait_seconds();
  const auto start = std::chrono::steady_clock::now();
  entry.run(args);
  KernelProfile& p = profile_[kernel.id];
  p.launches += 1;
  p.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  p.wait_seconds += helper_wait_seconds() - wait_before;
}

void HostBackend::set_profiling(bool enabled) {
  profiling_ = enabled;
  profile_.assign(kernels_.size(), KernelProfile{});
  for (size_t i = 0; i < kernels_.size(); ++i) profile_[i].name = kernels_[i].name;
}

std::vector<KernelProfile> HostBackend::profile() const {
  std::vector<KernelProfile> used;
  for (const KernelProfile& p : profile_) {
    if (p.launches > 0) used.push_back(p);
  }
  return used;
}

}  // namespace qwen35
