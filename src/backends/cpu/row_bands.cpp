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

}  // namespace

size_t heavy_int8_gemv_bands() {
  static const size_t host_bands = amd_x86_cpu() ? 2 : 4;
  const size_t forced = forced_bands.load(std::memory_order_relaxed);
  return forced != 0 ? forced : host_bands;
}

void set_heavy_int8_gemv_bands(size_t bands) {
  if (bands != 0 && bands != 2 && bands != 4) {
    fail("heavy int8 gemv bands must be 2 or 4 (0: the host's), not {}", bands);
  }
  forced_bands.store(bands, std::memory_order_relaxed);
}

}  // namespace qwen35::cpu
