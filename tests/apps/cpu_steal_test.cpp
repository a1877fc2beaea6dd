// `qwen35 bench`'s steal reading: /proc/stat's aggregate line parsed, the
// share of CPU time between two readings, and its sum over timed intervals.
#include <gtest/gtest.h>

#include "cpu_steal.h"

namespace qwen35::app {
namespace {

TEST(CpuSteal, ParsesTheAggregateLine) {
  // Fields: user nice system idle iowait irq softirq steal guest guest_nice.
  const auto ticks = parse_proc_stat(
      "cpu  6107412 2 737209 1880928 5916 0 902 19787 11 12\n"
      "cpu0 3053706 1 368604 940464 2958 0 451 9893 0 0\n"
      "intr 123\n");
  ASSERT_TRUE(ticks);
  EXPECT_EQ(ticks->steal, 19787u);
  EXPECT_EQ(ticks->total, 6107412u + 2 + 737209 + 1880928 + 5916 + 0 + 902 + 19787);
}

TEST(CpuSteal, RejectsTextWithoutTheLine) {
  EXPECT_FALSE(parse_proc_stat(""));
  EXPECT_FALSE(parse_proc_stat("cpu0 1 2 3 4 5 6 7 8\n"));
  EXPECT_FALSE(parse_proc_stat("cpu  1 2 3\n"));  // too few fields: an older or foreign format
}

TEST(CpuSteal, FractionOfTheTicksBetweenReadings) {
  EXPECT_DOUBLE_EQ(steal_fraction({.steal = 100, .total = 1000}, {.steal = 130, .total = 1400}), 0.075);
  EXPECT_DOUBLE_EQ(steal_fraction({.steal = 100, .total = 1000}, {.steal = 100, .total = 1000}), 0.0);
}

TEST(CpuSteal, MeterSumsTheIntervals) {
  StealMeter meter;
  meter.add(CpuTicks{.steal = 100, .total = 1000}, CpuTicks{.steal = 130, .total = 1400});
  meter.add(CpuTicks{.steal = 200, .total = 2000}, CpuTicks{.steal = 200, .total = 2600});
  ASSERT_TRUE(meter.fraction());
  EXPECT_DOUBLE_EQ(*meter.fraction(), 30.0 / 1000);
  ASSERT_EQ(meter.per_interval().size(), 2u);
  EXPECT_DOUBLE_EQ(meter.per_interval()[0], 0.075);
  EXPECT_DOUBLE_EQ(meter.per_interval()[1], 0.0);
}

TEST(CpuSteal, MeterIsUnknownAfterAMissingOrBackwardReading) {
  const CpuTicks start{.steal = 100, .total = 1000}, later{.steal = 130, .total = 1400};
  StealMeter missing;
  missing.add(start, later);
  missing.add(start, std::nullopt);
  EXPECT_FALSE(missing.fraction());
  StealMeter steal_backwards;
  steal_backwards.add(later, CpuTicks{.steal = 120, .total = 1500});
  EXPECT_FALSE(steal_backwards.fraction());
  StealMeter total_backwards;
  total_backwards.add(later, CpuTicks{.steal = 130, .total = 1300});
  EXPECT_FALSE(total_backwards.fraction());
}

#ifdef __linux__
TEST(CpuSteal, ReadsThisMachine) {
  const auto ticks = read_cpu_ticks();
  ASSERT_TRUE(ticks);
  EXPECT_GT(ticks->total, 0u);
  EXPECT_LE(ticks->steal, ticks->total);
}
#endif

}  // namespace
}  // namespace qwen35::app
