// The scalar reference backend: every kernel written as plainly as the spec
// (docs/qwen35-spec.md), single-threaded, accumulating in double. It is the
// executable specification other backends are tested against. It deliberately
// has no fused weight kernels, so running the model on it exercises the
// composed paths the forwards take when a weight format lacks them.
#pragma once

#include "host/host_backend.h"

namespace qwen35 {

class ReferenceBackend final : public HostBackend {
 public:
  ReferenceBackend();
  std::string name() const override { return "reference"; }
  std::string device_description() const override { return "scalar reference kernels (host memory)"; }
};

// GGUF block-weight kernels (reference_gguf.cpp).
void register_reference_gguf_kernels(HostBackend& backend);

}  // namespace qwen35
