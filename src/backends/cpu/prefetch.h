// Software prefetch of the line some bytes past a pointer, shared by the CPU
// kernels that run ahead of their hardware prefetcher (the GGUF and MLX
// gemvs, attention, the bandwidth probe).
#pragma once

#include <cstddef>
#include <cstdint>

#include "hwy/cache_control.h"

namespace qwen35::cpu {

// Prefetches the line `bytes` past p. The address may lie past the buffer
// (a matrix's last rows, a cache's end), which a prefetch tolerates, so it is
// formed as an integer rather than by pointer arithmetic.
inline void prefetch_past(const void* p, size_t bytes) {
  hwy::Prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(p) + bytes));
}

}  // namespace qwen35::cpu
