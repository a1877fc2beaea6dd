// A backend's tuning knobs (GpuBackend::set_tuning) written as text,
// "KNOB=VALUE[,KNOB=VALUE...]": how `qwen35 bench --ab` and the
// micro-benchmarks' QWEN35_BENCH_AB take a setting to compare with the
// backend's defaults.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace qwen35 {

class GpuBackend;

struct TuningSetting {
  std::string knob;
  int64_t value;
};

// The settings in `text`. Fails naming `source` (where the text came from,
// e.g. "--ab") and the text for an item without a knob name and '=', or a
// value that is not a whole number; whether the backend has the knob and
// takes the value is set_tuning's to say.
std::vector<TuningSetting> parse_tuning_settings(std::string_view text, std::string_view source);

// Sets each knob to its value, or with `tuned` false back to its default (0).
void apply_tuning(GpuBackend& gpu, std::span<const TuningSetting> settings, bool tuned);

}  // namespace qwen35
