// A kernel setting that the tests and `qwen35 bench --ab` (through
// GpuBackend::set_tuning) may force between launches: process-wide, as the
// kernels that read it are; 0 keeps the default. Forcing checks the value
// against what the setting takes and fails naming the setting.
#pragma once

#include <atomic>
#include <cstddef>
#include <initializer_list>
#include <string_view>

namespace qwen35::cpu {

class ForcedSetting {
 public:
  size_t or_default(size_t default_value) const {
    const size_t forced = forced_.load(std::memory_order_relaxed);
    return forced != 0 ? forced : default_value;
  }
  // `value` must be 0 or one of `allowed` (in increasing order).
  void force_one_of(size_t value, std::string_view what, std::initializer_list<size_t> allowed);
  // `value` must be at most `max`.
  void force_at_most(size_t value, std::string_view what, size_t max);

 private:
  std::atomic<size_t> forced_{0};
};

}  // namespace qwen35::cpu
