// parse_tuning_settings, apply_tuning (see qwen35/tuning.h).
#include "qwen35/tuning.h"

#include <algorithm>
#include <exception>

#include "qwen35/backend.h"
#include "qwen35/error.h"

namespace qwen35 {

std::vector<TuningSetting> parse_tuning_settings(std::string_view text, std::string_view source) {
  std::vector<TuningSetting> settings;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t comma = std::min(text.find(',', begin), text.size());
    const std::string_view item = text.substr(begin, comma - begin);
    const size_t equals = item.find('=');
    if (equals == std::string_view::npos || equals == 0) {
      fail("{} wants KNOB=VALUE[,KNOB=VALUE...], not '{}'", source, text);
    }
    const std::string value(item.substr(equals + 1));
    size_t used = 0;
    int64_t number = 0;
    try {
      number = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value.size()) fail("{} '{}': the value '{}' is not a whole number", source, text, value);
    settings.push_back(TuningSetting{.knob = std::string(item.substr(0, equals)), .value = number});
    begin = comma + 1;
  }
  return settings;
}

void apply_tuning(GpuBackend& gpu, std::span<const TuningSetting> settings, bool tuned) {
  for (const TuningSetting& s : settings) gpu.set_tuning(s.knob, tuned ? s.value : 0);
}

}  // namespace qwen35
