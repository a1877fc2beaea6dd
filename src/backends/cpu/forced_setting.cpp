// ForcedSetting's checks.
#include "cpu/forced_setting.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

#include "qwen35/error.h"

namespace qwen35::cpu {

void ForcedSetting::force_one_of(size_t value, std::string_view what, std::initializer_list<size_t> allowed) {
  if (value != 0 && std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    const std::vector<size_t> values(allowed);
    const std::string choices =
        values.size() == 1 ? fmt::format("{}", values[0])
                           : fmt::format("{} or {}", fmt::join(values.begin(), values.end() - 1, ", "), values.back());
    fail("{} must be {} (0: the default), not {}", what, choices, value);
  }
  forced_.store(value, std::memory_order_relaxed);
}

void ForcedSetting::force_at_most(size_t value, std::string_view what, size_t max) {
  if (value > max) fail("{} must be at most {} (0: the default), not {}", what, max, value);
  forced_.store(value, std::memory_order_relaxed);
}

}  // namespace qwen35::cpu
