// CUDA runtime errors as the project's errors: set-up calls throw qwen35::Error
// naming the call and CUDA's own description of what went wrong.
#pragma once

#include <cuda_runtime_api.h>

#include "qwen35/error.h"

namespace qwen35::cuda {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    fail("CUDA backend: {} failed: {} ({})", what, cudaGetErrorString(status), cudaGetErrorName(status));
  }
}

}  // namespace qwen35::cuda
