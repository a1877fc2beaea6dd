// The backends compiled into this build. Adding a backend means one folder
// under src/backends/ and one line in kBackends.
#include <functional>
#include <vector>

#include "cpu/cpu_backend.h"
#include "reference/reference_backend.h"
#if defined(QWEN35_HAVE_VULKAN)
#include "vulkan/vulkan_backend.h"
#endif
#if defined(QWEN35_HAVE_CUDA)
#include "cuda/cuda_backend.h"
#endif

namespace qwen35 {
namespace {

struct BackendEntry {
  std::string_view name;
  std::function<std::unique_ptr<GpuBackend>(const BackendOptions&)> create;
};

const std::vector<BackendEntry>& backends() {
  static const std::vector<BackendEntry> kBackends = {
      BackendEntry{"cpu", [](const BackendOptions& o) { return std::make_unique<CpuBackend>(o); }},
      BackendEntry{"reference", [](const BackendOptions&) { return std::make_unique<ReferenceBackend>(); }},
#if defined(QWEN35_HAVE_VULKAN)
      BackendEntry{"vulkan", [](const BackendOptions& o) { return std::make_unique<VulkanBackend>(o); }},
#endif
#if defined(QWEN35_HAVE_CUDA)
      BackendEntry{"cuda", [](const BackendOptions& o) { return std::make_unique<CudaBackend>(o); }},
#endif
  };
  return kBackends;
}

}  // namespace

std::unique_ptr<GpuBackend> create_backend(std::string_view name, const BackendOptions& options) {
  for (const BackendEntry& entry : backends()) {
    if (entry.name == name) return entry.create(options);
  }
  fail("unknown backend '{}' (available: {})", name, available_backends());
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const BackendEntry& entry : backends()) names.emplace_back(entry.name);
  return names;
}

std::string available_backends() {
  std::string joined;
  for (const std::string& name : backend_names()) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

}  // namespace qwen35
