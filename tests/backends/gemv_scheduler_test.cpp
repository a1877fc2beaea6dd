// How the CPU gemvs split their rows: passes walk bands (row_bands.h), and
// the scheduler (gemv_scheduler.h) hands every row of every matrix to exactly
// one thread, also when one thread stalls and the others take its work.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "cpu/gemv_scheduler.h"
#include "cpu/row_bands.h"

namespace qwen35::cpu {
namespace {

// Runs for_row_bands<M> over passes [first, last) of rows [begin, end),
// recording each row's visits and checking that a group of M rows is one row
// of each band, in band order.
template <size_t M>
void visit_passes(size_t begin, size_t end, size_t first, size_t last, std::vector<int>& visits) {
  const size_t band = (end - begin) / M;
  std::vector<float> y(end, -1.0f);
  for_row_bands<M>(RowPasses{begin, end, M, first, last}, nullptr, y.data(), [&](auto rows_n, size_t row0,
                                                                                 size_t stride, float* out) {
    constexpr size_t kRows = decltype(rows_n)::value;
    if (kRows == M) {
      EXPECT_EQ(stride, band);
    } else {
      EXPECT_GE(row0, begin + M * band);  // the rows left over, one at a time
    }
    for (size_t k = 0; k < kRows; ++k) {
      const size_t row = row0 + k * stride;
      ++visits[row];
      out[k] = static_cast<float>(row);
    }
  });
  for (size_t r = begin; r < end; ++r) {
    if (y[r] != -1.0f) {
      EXPECT_EQ(y[r], static_cast<float>(r));
    }
  }
}

template <size_t M>
void check_every_split_of_the_passes() {
  for (size_t rows : {0u, 1u, 3u, 4u, 5u, 9u, 17u, 64u}) {
    const size_t begin = 7, end = begin + rows, passes = pass_count(rows, M);
    for (size_t cut = 0; cut <= passes; ++cut) {
      std::vector<int> visits(end, 0);
      visit_passes<M>(begin, end, 0, cut, visits);
      visit_passes<M>(begin, end, cut, passes, visits);
      for (size_t r = 0; r < end; ++r) ASSERT_EQ(visits[r], r >= begin ? 1 : 0) << "rows=" << rows << " cut=" << cut;
    }
  }
}

TEST(RowBands, PassesSplitAnywhereCoverEveryRowOnce) {
  check_every_split_of_the_passes<1>();
  check_every_split_of_the_passes<2>();
  check_every_split_of_the_passes<4>();
}

TEST(RowBands, ForEachRowVisitsThePassesRows) {
  for (size_t bands : {1u, 2u, 4u}) {
    std::vector<int> visits(30, 0), expected(30, 0);
    const RowPasses p{3, 30, bands, 2, pass_count(27, bands)};
    for_each_row(p, [&](size_t r) { ++visits[r]; });
    switch (bands) {
      case 1: visit_passes<1>(3, 30, p.first, p.last, expected); break;
      case 2: visit_passes<2>(3, 30, p.first, p.last, expected); break;
      default: visit_passes<4>(3, 30, p.first, p.last, expected); break;
    }
    EXPECT_EQ(visits, expected) << "bands=" << bands;
  }
}

// The hosts that chose the band counts, by CPUID's vendor and family (the
// family as CPUID leaf 1 builds it: 0x19 is Zen 3 and 4, 0x1a Zen 5), and
// the dense gemvs' counts on each: Zen 4 walks short rows in two bands.
TEST(RowBands, HostsByVendorAndFamily) {
  EXPECT_EQ(band_host_of(false, 6), BandHost::kOther);
  EXPECT_EQ(band_host_of(false, 26), BandHost::kOther);
  EXPECT_EQ(band_host_of(true, 23), BandHost::kAmdZen4);
  EXPECT_EQ(band_host_of(true, 25), BandHost::kAmdZen4);
  EXPECT_EQ(band_host_of(true, 26), BandHost::kAmdZen5);
  EXPECT_EQ(band_host_of(true, 27), BandHost::kAmdZen5);
  for (BandHost host : {BandHost::kAmdZen4, BandHost::kAmdZen5, BandHost::kOther}) {
    EXPECT_EQ(default_dense_gemv_bands(kShortRowMaxBytes, host), host == BandHost::kAmdZen4 ? 2u : 4u);
    EXPECT_EQ(default_dense_gemv_bands(kShortRowMaxBytes + 1, host), 2u);
    EXPECT_EQ(default_dense_gemv_prefetch_bytes(host), host == BandHost::kAmdZen4 ? 0u : 1024u);
  }
}

// Every row of every segment once, for each segment given in whole bands'
// walks (begin, end and bands as the scheduler set them).
void check_covers(ThreadPool& pool, const std::vector<size_t>& segments, size_t bands, size_t row_bytes) {
  std::vector<std::vector<std::atomic<int>>> visits;
  for (size_t rows : segments) visits.emplace_back(rows);
  parallel_row_passes(pool, segments, bands, row_bytes, [&](size_t segment, const RowPasses& p) {
    ASSERT_LT(segment, segments.size());
    ASSERT_EQ(p.bands, bands);
    ASSERT_LE(p.end, segments[segment]);
    ASSERT_LT(p.first, p.last);
    ASSERT_LE(p.last, pass_count(p.end - p.begin, bands));
    for_each_row(p, [&](size_t r) { visits[segment][r].fetch_add(1); });
  });
  for (size_t s = 0; s < segments.size(); ++s) {
    for (size_t r = 0; r < segments[s]; ++r) {
      ASSERT_EQ(visits[s][r].load(), 1) << "segment " << s << " of " << segments[s] << " rows, row " << r
                                        << ", bands " << bands << ", row bytes " << row_bytes;
    }
  }
}

// Light launches run on the caller alone, unless forced to be shared (solo-bytes 1).
TEST(GemvScheduler, EveryRowOfEveryMatrixOnce) {
  for (size_t solo_bytes : {0u, 1u}) {
    set_solo_launch_bytes(solo_bytes);
    for (unsigned threads : {1u, 2u, 3u, 4u}) {
      ThreadPool pool(threads);
      const std::vector<std::vector<size_t>> launches = {{0},      {1},     {8},          {9},      {100},
                                                         {1001},   {16, 16}, {0, 37}, {3584, 3584}, {5, 1000}};
      for (const std::vector<size_t>& segments : launches) {
        for (size_t bands : {1u, 2u, 4u}) {
          for (size_t row_bytes : {64u, 4096u, 65536u}) check_covers(pool, segments, bands, row_bytes);
        }
      }
    }
  }
  set_solo_launch_bytes(0);
}

// A launch of at most solo_launch_bytes() runs on the calling thread, in one
// walk of each matrix; one row more is shared (every row still once).
TEST(GemvScheduler, ALightLaunchStaysOnTheCaller) {
  ThreadPool pool(2);
  const size_t row_bytes = 4096, rows = solo_launch_bytes() / row_bytes;
  const auto caller = std::this_thread::get_id();
  const size_t segments[] = {rows / 2, rows - rows / 2};
  std::atomic<int> bodies{0};
  parallel_row_passes(pool, segments, 2, row_bytes, [&](size_t segment, const RowPasses& p) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    EXPECT_EQ(p.begin, 0u);
    EXPECT_EQ(p.end, segments[segment]);
    EXPECT_EQ(p.first, 0u);
    EXPECT_EQ(p.last, pass_count(segments[segment], 2));
    ++bodies;
  });
  EXPECT_EQ(bodies.load(), 2);
  check_covers(pool, {rows / 2, rows - rows / 2 + 1}, 2, row_bytes);
}

TEST(GemvScheduler, ManyLaunchesInARow) {
  ThreadPool pool(3);
  for (int launch = 0; launch < 2000; ++launch) check_covers(pool, {200, 56}, 4, 8192);
}

// A worker that stalls on its first claim (as when another guest takes its
// core) leaves the rest of its share to the caller, who steals it half by
// half instead of waiting. The worker stays stalled until every other row is
// done, so the test does not depend on how fast either thread runs; the time
// limit only turns a scheduler that never steals into a failure, not a hang.
TEST(GemvScheduler, AStalledThreadsShareIsTakenOver) {
  ThreadPool pool(2);
  const auto caller = std::this_thread::get_id();
  constexpr size_t kRows = 1000;
  std::atomic<size_t> rows_by_caller{0};
  std::atomic<size_t> rows_done{0};
  std::atomic<bool> worker_stalled{false};
  std::vector<std::atomic<int>> visits(kRows);
  const size_t segments[] = {kRows};
  // A row of 64 KB: one pass per claim.
  parallel_row_passes(pool, segments, 1, size_t{64} << 10, [&](size_t, const RowPasses& p) {
    const size_t rows = p.last - p.first;
    if (std::this_thread::get_id() == caller) {
      while (!worker_stalled) std::this_thread::yield();  // the worker holds its first claim
      rows_by_caller += rows;
    } else if (!worker_stalled.exchange(true)) {
      const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (rows_done.load() < kRows - rows && std::chrono::steady_clock::now() < limit) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    for (size_t r = p.begin + p.first; r < p.begin + p.last; ++r) visits[r].fetch_add(1);
    rows_done += rows;
  });
  for (size_t r = 0; r < kRows; ++r) ASSERT_EQ(visits[r].load(), 1) << r;
  // Without stealing the caller would stop at its own half (500 rows).
  EXPECT_GE(rows_by_caller.load(), kRows - 1);
}

}  // namespace
}  // namespace qwen35::cpu
