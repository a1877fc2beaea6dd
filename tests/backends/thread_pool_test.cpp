// The CPU backend's thread pool: every index visited exactly once, for any
// range and grain, across many back-to-back launches (as in decode).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "host/thread_pool.h"

namespace qwen35 {
namespace {

TEST(ThreadPool, VisitsEveryIndexOnce) {
  for (unsigned threads : {1u, 2u, 4u}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (size_t n : {0u, 1u, 2u, 7u, 100u, 1001u}) {
      for (size_t grain : {1u, 3u, 64u, 5000u}) {
        std::vector<std::atomic<int>> visits(n);
        pool.parallel_for(n, grain, [&](size_t begin, size_t end) {
          ASSERT_LE(end, n);
          ASSERT_LT(begin, end);
          for (size_t i = begin; i < end; ++i) visits[i].fetch_add(1);
        });
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(visits[i].load(), 1) << "n=" << n << " grain=" << grain;
      }
    }
  }
}

// Tapered chunks (min_grain < grain): still every index once, and the chunks,
// in the order they begin, never grow and keep to [min_grain, grain], except
// a last one cut short by the end of the range. (A pool of one thread runs
// the whole range as one chunk.)
TEST(ThreadPool, TaperedChunksShrinkWithinTheirBounds) {
  for (unsigned threads : {2u, 4u}) {
    ThreadPool pool(threads);
    for (size_t n : {1u, 7u, 100u, 1001u, 3584u, 248320u}) {
      for (auto [grain, min_grain] : {std::pair<size_t, size_t>{896, 112}, {64, 8}, {5, 2}, {8, 8}, {1000, 1}}) {
        std::vector<std::atomic<int>> visits(n);
        std::mutex mutex;
        std::vector<std::pair<size_t, size_t>> chunks;
        pool.parallel_for(
            n, grain,
            [&](size_t begin, size_t end) {
              ASSERT_LE(end, n);
              ASSERT_LT(begin, end);
              for (size_t i = begin; i < end; ++i) visits[i].fetch_add(1);
              std::lock_guard lock(mutex);
              chunks.emplace_back(begin, end);
            },
            min_grain);
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(visits[i].load(), 1) << "n=" << n << " grain=" << grain;
        std::sort(chunks.begin(), chunks.end());
        for (size_t c = 0; c < chunks.size(); ++c) {
          const size_t size = chunks[c].second - chunks[c].first;
          SCOPED_TRACE("n=" + std::to_string(n) + " grain=" + std::to_string(grain) + " chunk " + std::to_string(c));
          ASSERT_LE(size, grain);
          if (chunks[c].second == n) continue;  // the last: whatever was left
          ASSERT_GE(size, min_grain);
          if (c > 0) ASSERT_LE(size, chunks[c - 1].second - chunks[c - 1].first);
        }
        // With several threads and room to taper, the chunks do taper: the
        // last full one is shorter than the first.
        if (n >= 4 * threads * grain && min_grain < grain) {
          ASSERT_GE(chunks.size(), 3u);
          EXPECT_LT(chunks[chunks.size() - 2].second - chunks[chunks.size() - 2].first,
                    chunks[0].second - chunks[0].first);
        }
      }
    }
  }
}

TEST(ThreadPool, ManyLaunchesInARow) {
  ThreadPool pool(3);
  std::atomic<long> total{0};
  for (int launch = 0; launch < 5000; ++launch) {
    pool.parallel_for(16, 1, [&](size_t begin, size_t end) { total += static_cast<long>(end - begin); });
  }
  EXPECT_EQ(total.load(), 5000L * 16);
}

}  // namespace
}  // namespace qwen35
