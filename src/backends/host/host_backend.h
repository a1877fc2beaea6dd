// HostBackend: the part of a GpuBackend that every backend computing in host
// memory shares (the scalar reference and the CPU backend): aligned
// allocations, synchronous streams, zero-copy mapping of host weights, and a
// table of typed kernels registered by name.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "qwen35/backend.h"

namespace qwen35 {

template <typename T>
T* host_ptr(DevicePtr p) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(p.address));
}

class HostBackend : public GpuBackend {
 public:
  DevicePtr allocate(size_t bytes) override;
  void release(DevicePtr ptr) override;
  void upload(DevicePtr dst, const void* src, size_t bytes, Stream stream) override;
  void download(void* dst, DevicePtr src, size_t bytes, Stream stream) override;
  const void* host_readable(DevicePtr src, size_t) const override { return host_ptr<const void>(src); }
  void copy(DevicePtr dst, DevicePtr src, size_t bytes, Stream stream) override;
  void fill(DevicePtr dst, uint8_t byte_value, size_t bytes, Stream stream) override;
  std::optional<DevicePtr> map_host(const void* host, size_t bytes) override;
  Stream default_stream() override { return Stream{0}; }
  void synchronize(Stream) override {}
  std::optional<KernelHandle> find_kernel(std::string_view name, std::string_view args_type) override;
  void launch(KernelHandle kernel, const void* args, size_t args_bytes, Stream stream) override;
  void set_profiling(bool enabled) override;
  std::vector<KernelProfile> profile() const override;

  // Registers a kernel under `name`; its argument struct type is checked at resolve time.
  template <typename Args>
  void register_kernel(std::string name, std::function<void(const Args&)> body) {
    add_untyped(std::move(name), Args::kTypeName, sizeof(Args),
                [body = std::move(body)](const void* args) { body(*static_cast<const Args*>(args)); });
  }

 protected:
  // Seconds the launching thread has waited for the backend's other threads
  // so far (KernelProfile::wait_seconds); a backend with a pool overrides it.
  virtual double helper_wait_seconds() const { return 0; }

 private:
  struct Entry {
    std::string name;
    std::string_view args_type;
    size_t args_bytes;
    std::function<void(const void*)> run;
  };
  void add_untyped(std::string name, std::string_view args_type, size_t args_bytes,
                   std::function<void(const void*)> run);

  std::mutex allocations_mutex_;
  std::unordered_map<uint64_t, size_t> allocation_bytes_;  // address -> bytes, to release
  std::vector<Entry> kernels_;
  std::unordered_map<std::string, size_t> by_name_;
  bool profiling_ = false;
  std::vector<KernelProfile> profile_;  // parallel to kernels_
};

}  // namespace qwen35
