// The band counts and prefetch distances that may be forced, and the host's
// own choices, from its CPU's vendor and family (band_host).
#include "cpu/row_bands.h"

#include <cstring>

#include "cpu/forced_setting.h"
#include "hwy/base.h"

#if HWY_ARCH_X86
#include <cpuid.h>
#endif

namespace qwen35::cpu {
namespace {

BandHost read_band_host() {
#if HWY_ARCH_X86
  unsigned max_leaf = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &max_leaf, &ebx, &ecx, &edx) == 0) return BandHost::kOther;
  char vendor[12];
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  if (std::memcmp(vendor, "AuthenticAMD", 12) != 0 || max_leaf < 1) return BandHost::kOther;
  unsigned eax = 0;
  __get_cpuid(1, &eax, &ebx, &ecx, &edx);
  const unsigned base_family = (eax >> 8) & 0xf;
  const unsigned family = base_family == 0xf ? base_family + ((eax >> 20) & 0xff) : base_family;
  return band_host_of(/*amd=*/true, family);
#else
  return BandHost::kOther;
#endif
}

ForcedSetting forced_heavy_bands, forced_dense_bands, forced_dense_prefetch;

}  // namespace

BandHost band_host() {
  static const BandHost host = read_band_host();
  return host;
}

size_t heavy_int8_gemv_bands() {
  static const size_t host_bands = band_host() == BandHost::kOther ? 4 : 2;
  return forced_heavy_bands.or_default(host_bands);
}

size_t dense_gemv_bands(size_t row_bytes) {
  return forced_dense_bands.or_default(default_dense_gemv_bands(row_bytes, band_host()));
}

size_t dense_gemv_prefetch_bytes() {
  const size_t bytes = forced_dense_prefetch.or_default(default_dense_gemv_prefetch_bytes(band_host()));
  return bytes < kMinPrefetchBytes ? 0 : bytes;
}

void set_dense_gemv_bands(size_t bands) { forced_dense_bands.force_one_of(bands, "dense gemv bands", {1, 2, 4}); }

void set_dense_gemv_prefetch_bytes(size_t bytes) {
  forced_dense_prefetch.force_at_most(bytes, "dense gemv prefetch distance in bytes", kMaxPrefetchBytes);
}

void set_heavy_int8_gemv_bands(size_t bands) {
  forced_heavy_bands.force_one_of(bands, "heavy int8 gemv bands", {2, 4});
}

}  // namespace qwen35::cpu
