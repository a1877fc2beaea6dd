// Software prefetch of the line some bytes past a pointer, shared by the CPU
// kernels that run ahead of their hardware prefetcher (the GGUF and MLX
// gemvs, attention, the bandwidth probe).
#pragma once

#include <cstddef>
#include <cstdint>

namespace qwen35::cpu {

// Prefetches the line `bytes` past p. The address may lie past the buffer
// (a matrix's last rows, a cache's end), which a prefetch tolerates, so it is
// formed as an integer rather than by pointer arithmetic.
//
// The builtin itself, always inlined. Through hwy::Prefetch (a function of
// its own target, "sse2") GCC 12 at -O1 and above deleted the calls in some
// of the kernels' files (an interprocedural pass found the out-of-line
// callee free of side effects): the regrouped GGUF and MLX gemvs and the
// row-major integer and float GGUF ones had no prefetch instruction at all
// until the thirty-second session, attention and the dense gemvs some of
// theirs (objdump -d of each object file, counting prefetcht0). A lambda
// whose body is only prefetches goes the same way: one in group_dots
// (cpu_gguf_x16.cpp, forty-fourth session) took 500 of that object's 2185
// prefetch instructions with it. Write the prefetch loops in the kernel.
__attribute__((always_inline)) inline void prefetch_past(const void* p, size_t bytes) {
  __builtin_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(p) + bytes), /*rw=*/0, /*locality=*/3);
}

// The same, into L2 but not L1 (prefetcht2). A prefetch into L1 holds one of
// the core's few L1 miss buffers until its line arrives, so lines asked for
// far ahead (attention's, 32 KB on) queue behind one another there; into L2
// they do not, and the L1's own prefetcher brings them the last step.
__attribute__((always_inline)) inline void prefetch_past_to_l2(const void* p, size_t bytes) {
  __builtin_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(p) + bytes), /*rw=*/0, /*locality=*/1);
}

}  // namespace qwen35::cpu
