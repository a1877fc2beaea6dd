// /proc/stat's aggregate line: "cpu  user nice system idle iowait irq softirq
// steal guest guest_nice"; guest time is already counted in user.
#include "cpu_steal.h"

#include <fstream>
#include <sstream>

namespace qwen35::app {

std::optional<CpuTicks> parse_proc_stat(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string name;
    if (!(fields >> name) || name != "cpu") continue;
    CpuTicks ticks;
    for (int i = 0; i < 8; ++i) {
      uint64_t value = 0;
      if (!(fields >> value)) return std::nullopt;
      ticks.total += value;
      if (i == 7) ticks.steal = value;
    }
    return ticks;
  }
  return std::nullopt;
}

std::optional<CpuTicks> read_cpu_ticks() {
  std::ifstream file("/proc/stat");
  if (!file) return std::nullopt;
  std::stringstream text;
  text << file.rdbuf();
  return parse_proc_stat(text.str());
}

double steal_fraction(const CpuTicks& before, const CpuTicks& after) {
  if (after.total <= before.total || after.steal < before.steal) return 0.0;
  return static_cast<double>(after.steal - before.steal) / static_cast<double>(after.total - before.total);
}

void StealMeter::add(const std::optional<CpuTicks>& before, const std::optional<CpuTicks>& after) {
  if (!before || !after || after->steal < before->steal || after->total < before->total) {
    known_ = false;
    return;
  }
  per_interval_.push_back(steal_fraction(*before, *after));
  sum_.steal += after->steal - before->steal;
  sum_.total += after->total - before->total;
}

std::optional<double> StealMeter::fraction() const {
  if (!known_) return std::nullopt;
  return steal_fraction(CpuTicks{}, sum_);
}

}  // namespace qwen35::app
