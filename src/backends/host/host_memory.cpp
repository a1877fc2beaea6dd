// allocate_host_memory / release_host_memory (see host_memory.h).
#include "host/host_memory.h"

#include <sys/mman.h>

#include <cstdlib>

#include "qwen35/error.h"

namespace qwen35 {
namespace {
constexpr size_t kAlignment = 64;
constexpr size_t kHugePage = size_t{2} << 20;
// Below this, huge pages would waste more than they save.
constexpr size_t kHugeThreshold = size_t{4} << 20;

size_t rounded(size_t bytes, size_t to) { return (std::max<size_t>(bytes, 1) + to - 1) / to * to; }
}  // namespace

void* allocate_host_memory(size_t bytes) {
  if (bytes < kHugeThreshold) {
    void* p = std::aligned_alloc(kAlignment, rounded(bytes, kAlignment));
    if (p == nullptr) fail("out of host memory allocating {} bytes", bytes);
    return p;
  }
  void* p = mmap(nullptr, rounded(bytes, kHugePage), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) fail("out of host memory mapping {} bytes", bytes);
  madvise(p, rounded(bytes, kHugePage), MADV_HUGEPAGE);  // advisory: failure only costs speed
  return p;
}

void release_host_memory(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes < kHugeThreshold) {
    std::free(p);
  } else {
    munmap(p, rounded(bytes, kHugePage));
  }
}

}  // namespace qwen35
