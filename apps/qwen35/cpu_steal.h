// CPU time the hypervisor gave to other guests ("steal"), from Linux's
// /proc/stat. On a shared virtual machine a benchmark that lost a few percent
// of its CPU time to steal measures the neighbours as much as the code, so
// `qwen35 bench` reports it next to its timings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qwen35::app {

// Clock ticks summed over all CPUs since boot.
struct CpuTicks {
  uint64_t steal = 0;
  uint64_t total = 0;  // user, nice, system, idle, iowait, irq, softirq, steal
};

// The aggregate "cpu" line of a /proc/stat text; nullopt if it has none.
std::optional<CpuTicks> parse_proc_stat(const std::string& text);
// This machine's ticks now; nullopt where /proc/stat cannot be read (not Linux).
std::optional<CpuTicks> read_cpu_ticks();
// Steal's share of the CPU time between two readings (0 when no time passed).
double steal_fraction(const CpuTicks& before, const CpuTicks& after);

// Steal over a run's timed intervals, each given by its readings before and
// after. One missing reading, or a counter that ran backwards, makes the
// whole run's steal unknown rather than wrong.
class StealMeter {
 public:
  void add(const std::optional<CpuTicks>& before, const std::optional<CpuTicks>& after);
  // Over all intervals added; nullopt if unknown.
  std::optional<double> fraction() const;
  // Each interval's, in the order added.
  const std::vector<double>& per_interval() const { return per_interval_; }

 private:
  bool known_ = true;
  CpuTicks sum_;  // steal and total ticks summed over the intervals
  std::vector<double> per_interval_;
};

}  // namespace qwen35::app
