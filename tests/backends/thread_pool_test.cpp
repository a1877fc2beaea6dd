// The CPU backend's thread pool: every index visited exactly once, for any
// range and grain, across many back-to-back launches (as in decode).
#include <gtest/gtest.h>

#include <atomic>
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
