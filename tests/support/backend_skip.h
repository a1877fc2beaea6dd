// For tests of one named backend: why it cannot run here, for GTEST_SKIP.
// Inline, so only test binaries that link the backends pull it in.
#pragma once

#include <string>

#include "qwen35/backend.h"

namespace qwen35::testing {

// Why backend `name` cannot run here (this build lacks it, or the machine its
// device); empty when it can.
inline std::string backend_unavailable(const std::string& name) {
  if (available_backends().find(name) == std::string::npos) return "built without the " + name + " backend";
  try {
    create_backend(name);
  } catch (const DeviceUnavailable& e) {
    return e.what();
  }
  return {};
}

}  // namespace qwen35::testing
