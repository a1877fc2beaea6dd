// heavy_int8_gemv_bands: the host's choice, from its CPU vendor.
#include "cpu/row_bands.h"

#include <atomic>
#include <cstring>

#include "hwy/base.h"

#if HWY_ARCH_X86
#include <cpuid.h>
#endif

namespace qwen35::cpu {
namespace {

bool amd_x86_cpu() {
#if HWY_ARCH_X86
  unsigned max_leaf = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &max_leaf, &ebx, &ecx, &edx) == 0) return false;
  char vendor[12];
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  return std::memcmp(vendor, "AuthenticAMD", 12) == 0;
#else
  return false;
#endif
}

std::atomic<size_t> forced_bands{0};
std::atomic<size_t> forced_dense_bands{0};
std::atomic<size_t> forced_dense_prefetch{0};

// How far ahead of its loads each band's read stream is prefetched. On the
// Xeon host of the twenty-second session (bf16 decode, alternating runs),
// 1024 bytes beat 512 and 2048, and any prefetch beat none by 15-30%: the
// hardware prefetcher alone ramps up too slowly on streams that jump to a
// new page every few KB (docs/performance.md).
constexpr size_t kDenseGemvPrefetchBytes = 1024;

}  // namespace

size_t heavy_int8_gemv_bands() {
  static const size_t host_bands = amd_x86_cpu() ? 2 : 4;
  const size_t forced = forced_bands.load(std::memory_order_relaxed);
  return forced != 0 ? forced : host_bands;
}

size_t dense_gemv_bands(size_t row_bytes) {
  const size_t forced = forced_dense_bands.load(std::memory_order_relaxed);
  return forced != 0 ? forced : default_dense_gemv_bands(row_bytes);
}

size_t dense_gemv_prefetch_bytes() {
  const size_t forced = forced_dense_prefetch.load(std::memory_order_relaxed);
  if (forced == 0) return kDenseGemvPrefetchBytes;
  return forced < 64 ? 0 : forced;
}

void set_dense_gemv_bands(size_t bands) {
  if (bands > 4 || bands == 3) fail("dense gemv bands must be 1, 2 or 4 (0: the defaults), not {}", bands);
  forced_dense_bands.store(bands, std::memory_order_relaxed);
}

void set_dense_gemv_prefetch_bytes(size_t bytes) {
  if (bytes > 65536) fail("dense gemv prefetch distance must be at most 65536 bytes (0: the default), not {}", bytes);
  forced_dense_prefetch.store(bytes, std::memory_order_relaxed);
}

void set_heavy_int8_gemv_bands(size_t bands) {
  if (bands != 0 && bands != 2 && bands != 4) {
    fail("heavy int8 gemv bands must be 2 or 4 (0: the host's), not {}", bands);
  }
  forced_bands.store(bands, std::memory_order_relaxed);
}

}  // namespace qwen35::cpu
