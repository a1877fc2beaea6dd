// The backends compiled into this build. Adding a backend means one folder
// under src/backends/ and one line in kBackends.
#include <array>
#include <functional>

#include "cpu/cpu_backend.h"
#include "reference/reference_backend.h"

namespace qwen35 {
namespace {

struct BackendEntry {
  std::string_view name;
  std::function<std::unique_ptr<GpuBackend>(const BackendOptions&)> create;
};

const std::array<BackendEntry, 2>& backends() {
  static const std::array<BackendEntry, 2> kBackends = {
      BackendEntry{"cpu", [](const BackendOptions& o) { return std::make_unique<CpuBackend>(o); }},
      BackendEntry{"reference", [](const BackendOptions&) { return std::make_unique<ReferenceBackend>(); }},
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
