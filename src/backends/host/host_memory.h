// Host allocations for backends that compute in host memory. Blocks from 64
// KiB up live in memory advised as transparent huge pages: those of 4 MiB and
// more mapped one each, 2 MiB-aligned, smaller ones packed into shared 32 MiB
// slabs. A decode step walks gigabytes of weights, and with 4 KiB pages every
// other weight row would cost a TLB miss.
#pragma once

#include <cstddef>

namespace qwen35 {

// 64-byte aligned; throws Error when memory is exhausted.
void* allocate_host_memory(size_t bytes);
void release_host_memory(void* p, size_t bytes);

}  // namespace qwen35
