// The CPU backend's thread pool: every index visited exactly once, for any
// range and grain, across many back-to-back launches (as in decode).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
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

// One launch where the worker's chunk takes 30 ms and the caller's returns as
// soon as the worker has begun: the caller then waits out the worker. Returns
// the wait the pool added, and the most it could be: the time from the end of
// the caller's chunk to the return of parallel_for.
struct SlowWorkerLaunch {
  double added_wait;
  double longest_possible;
};

SlowWorkerLaunch time_a_slow_worker(ThreadPool& pool) {
  using Clock = std::chrono::steady_clock;
  std::atomic<bool> worker_started{false};
  const auto caller = std::this_thread::get_id();
  Clock::time_point caller_chunk_done;
  const double before = pool.join_wait_seconds();
  pool.parallel_for(2, 1, [&](size_t, size_t) {
    if (std::this_thread::get_id() != caller) {
      worker_started = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    } else {
      while (!worker_started) std::this_thread::yield();
      caller_chunk_done = Clock::now();
    }
  });
  const double longest = std::chrono::duration<double>(Clock::now() - caller_chunk_done).count();
  return {pool.join_wait_seconds() - before, longest};
}

TEST(ThreadPool, TimesTheCallersWaitForTheOthersOnlyWhenAsked) {
  ThreadPool pool(2);
  EXPECT_EQ(time_a_slow_worker(pool).added_wait, 0.0);
  pool.set_timing(true);
  // The timed wait never exceeds its bound. It covers most of the worker's
  // 30 ms unless the caller was descheduled between its chunk and the join (a
  // busy CI machine does that), so a few launches get the chance to show it.
  double longest_wait = 0;
  for (int attempt = 0; attempt < 10 && longest_wait < 0.025; ++attempt) {
    const SlowWorkerLaunch launch = time_a_slow_worker(pool);
    EXPECT_GE(launch.added_wait, 0.0);
    EXPECT_LE(launch.added_wait, launch.longest_possible);
    longest_wait = std::max(longest_wait, launch.added_wait);
  }
  EXPECT_GE(longest_wait, 0.025);
  pool.set_timing(false);
  EXPECT_EQ(time_a_slow_worker(pool).added_wait, 0.0);
}

TEST(ThreadPool, ManyLaunchesInARow) {
  ThreadPool pool(3);
  std::atomic<long> total{0};
  for (int launch = 0; launch < 5000; ++launch) {
    pool.parallel_for(16, 1, [&](size_t begin, size_t end) { total += static_cast<long>(end - begin); });
  }
  EXPECT_EQ(total.load(), 5000L * 16);
}

// Launches spaced so that the workers have stopped spinning and sleep (about
// 0.1 ms), or are just about to: each must still be woken, and the caller,
// which sleeps in its join while a worker's chunk outlasts its spin, woken
// back. A lost wake-up would hang: a watchdog aborts the test instead.
TEST(ThreadPool, WakesSleepingWorkersAndCaller) {
  std::atomic<bool> finished{false};
  std::thread watchdog([&] {
    for (int waited = 0; !finished; ++waited) {
      if (waited == 3000) {
        std::fprintf(stderr, "ThreadPool: a launch never finished (a lost wake-up)\n");
        std::abort();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  ThreadPool pool(3);
  std::atomic<long> total{0};
  for (int launch = 0; launch < 60; ++launch) {
    std::this_thread::sleep_for(std::chrono::microseconds(40 * (launch % 8)));
    pool.parallel_for(3, 1, [&](size_t begin, size_t end) {
      if (launch % 5 == 0 && begin == 2) std::this_thread::sleep_for(std::chrono::microseconds(500));
      total += static_cast<long>(end - begin);
    });
  }
  EXPECT_EQ(total.load(), 60L * 3);
  finished = true;
  watchdog.join();
}

}  // namespace
}  // namespace qwen35
