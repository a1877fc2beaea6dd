// StopChecker: finds stop strings in streamed text even when a token boundary cuts
// through one, by holding back the longest tail that could still grow into a stop string.
// Fed whole UTF-8 characters (StreamingDecoder's output), it also emits whole characters.
#include <algorithm>

#include "qwen35/error.h"
#include "qwen35/sampling.h"

namespace qwen35 {

StopChecker::StopChecker(std::vector<std::string> stop_strings) : stops_(std::move(stop_strings)) {
  for (size_t i = 0; i < stops_.size(); ++i) {
    if (stops_[i].empty()) fail("stop string {} is empty", i);
  }
}

std::string StopChecker::feed(std::string_view text) {
  if (stopped_) return {};
  held_.append(text);
  // The earliest stop string wins; at the same place the longer one.
  size_t best = std::string::npos;
  const std::string* best_stop = nullptr;
  for (const std::string& stop : stops_) {
    const size_t at = held_.find(stop);
    if (at < best || (at == best && at != std::string::npos && stop.size() > best_stop->size())) {
      best = at;
      best_stop = &stop;
    }
  }
  if (best_stop != nullptr) {
    std::string out = held_.substr(0, best);
    stopped_ = true;
    matched_ = *best_stop;
    held_.clear();
    return out;
  }
  // Hold back the longest tail that some stop string starts with: it may complete later.
  size_t hold = 0;
  for (const std::string& stop : stops_) {
    for (size_t len = std::min(stop.size() - 1, held_.size()); len > hold; --len) {
      if (std::string_view(held_).substr(held_.size() - len) == std::string_view(stop).substr(0, len)) {
        hold = len;
        break;
      }
    }
  }
  std::string out = held_.substr(0, held_.size() - hold);
  held_.erase(0, held_.size() - hold);
  return out;
}

std::string StopChecker::flush() {
  std::string out = std::move(held_);
  held_.clear();
  return out;
}

void StopChecker::reset() {
  held_.clear();
  stopped_ = false;
  matched_.clear();
}

}  // namespace qwen35
