// allocate_host_memory / release_host_memory (see host_memory.h).
#include "host/host_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>

#include "qwen35/error.h"

namespace qwen35 {
namespace {
constexpr size_t kAlignment = 64;
constexpr size_t kHugePage = size_t{2} << 20;
// Blocks from here to kOwnMapping share huge-page slabs: a quantized model's
// matrices (a 0.8B's MLP matrices in 4-bit are 2 MiB) and MLX scale arrays
// (about 100 KiB) fall in this range. Mapped one each, rounding to 2 MiB would
// waste up to a page per block; in 4 KiB pages a gemv's read of them needs a
// TLB entry, in a virtual machine a two-level page walk, every 4 KiB. Measured
// in decode with int8 x, alternating binaries, the gain is inside this VM's
// noise: medians of 4-6 runs, Q8_0 +4% and +6%, Q4_K +7% and -2%, mlx4 +3% and +8%.
constexpr size_t kSlabMin = size_t{64} << 10;
constexpr size_t kOwnMapping = size_t{4} << 20;
constexpr size_t kSlabBytes = size_t{32} << 20;

size_t rounded(size_t bytes, size_t to) { return (std::max<size_t>(bytes, 1) + to - 1) / to * to; }

// Anonymous memory, 2 MiB-aligned in size, advised as transparent huge pages.
void* map_huge(size_t bytes) {
  void* p = mmap(nullptr, rounded(bytes, kHugePage), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) fail("out of host memory mapping {} bytes", bytes);
  madvise(p, rounded(bytes, kHugePage), MADV_HUGEPAGE);  // advisory: failure only costs speed
  return p;
}

// Slabs carved from the front; a slab is unmapped when its last block is
// released (or, the slab being filled, starts over from its front).
class SlabArena {
 public:
  void* allocate(size_t bytes) {
    bytes = rounded(bytes, kAlignment);
    std::lock_guard lock(mutex_);
    if (current_ == nullptr || current_->used + bytes > kSlabBytes) {
      auto* base = static_cast<std::byte*>(map_huge(kSlabBytes));
      current_ = &slabs_[reinterpret_cast<uintptr_t>(base)];
      current_->base = base;
    }
    void* p = current_->base + current_->used;
    current_->used += bytes;
    ++current_->live;
    return p;
  }

  void release(void* p) {
    std::lock_guard lock(mutex_);
    auto it = slabs_.upper_bound(reinterpret_cast<uintptr_t>(p));
    QWEN35_ASSERT(it != slabs_.begin());
    Slab& slab = std::prev(it)->second;
    if (--slab.live > 0) return;
    if (&slab == current_) {
      slab.used = 0;
    } else {
      munmap(slab.base, kSlabBytes);
      slabs_.erase(std::prev(it));
    }
  }

 private:
  struct Slab {
    std::byte* base = nullptr;
    size_t used = 0, live = 0;
  };
  std::mutex mutex_;
  std::map<uintptr_t, Slab> slabs_;  // by base address
  Slab* current_ = nullptr;
};

// Never destroyed: backends may release memory during static destruction.
SlabArena& slab_arena() {
  static auto* arena = new SlabArena;
  return *arena;
}

// Under AddressSanitizer blocks stay separate allocations, so that an overrun
// into a neighbour is caught.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSlabs = false;
#else
constexpr bool kSlabs = true;
#endif

bool in_slab(size_t bytes) { return kSlabs && bytes >= kSlabMin && bytes < kOwnMapping; }
}  // namespace

void* allocate_host_memory(size_t bytes) {
  if (bytes >= kOwnMapping) return map_huge(bytes);
  if (in_slab(bytes)) return slab_arena().allocate(bytes);
  void* p = std::aligned_alloc(kAlignment, rounded(bytes, kAlignment));
  if (p == nullptr) fail("out of host memory allocating {} bytes", bytes);
  return p;
}

void release_host_memory(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes >= kOwnMapping) {
    munmap(p, rounded(bytes, kHugePage));
  } else if (in_slab(bytes)) {
    slab_arena().release(p);
  } else {
    std::free(p);
  }
}

}  // namespace qwen35
