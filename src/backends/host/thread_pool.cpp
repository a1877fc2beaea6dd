// ThreadPool: fork/join over a persistent set of workers (see thread_pool.h).
#include "thread_pool.h"

#include <algorithm>
#include <chrono>

namespace qwen35 {
namespace {
// Iterations a worker spins on the generation counter before it sleeps, about
// 0.1 ms: long enough to catch the next launch of the same token, short enough
// to idle well. A tenth of it let a worker fall asleep between launches about
// one launch in three (21851 context switches in a 3 s int8 Q4_K gemv
// benchmark, against 259), and waking it cost more than its share of the work.
constexpr int kSpinIterations = 200000;
}  // namespace

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    ++generation_;
    published_generation_.store(generation_, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run_chunks() {
  for (;;) {
    const size_t begin = next_.fetch_add(grain_, std::memory_order_relaxed);
    if (begin >= n_) return;
    (*body_)(begin, std::min(n_, begin + grain_));
  }
}

void ThreadPool::parallel_for(size_t n, size_t grain, const std::function<void(size_t, size_t)>& body) {
  grain = std::max<size_t>(grain, 1);
  if (n == 0) return;
  if (workers_.empty() || n <= grain) {
    body(0, n);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    body_ = &body;
    n_ = n;
    grain_ = grain;
    next_.store(0, std::memory_order_relaxed);
    busy_workers_.store(static_cast<unsigned>(workers_.size()), std::memory_order_relaxed);
    ++generation_;
    published_generation_.store(generation_, std::memory_order_release);
  }
  wake_.notify_all();
  run_chunks();
  if (!timing_) {
    join();
    return;
  }
  const auto own_chunks_done = std::chrono::steady_clock::now();
  join();
  join_wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - own_chunks_done).count();
}

void ThreadPool::join() {
  // Spin first (the other workers usually finish within microseconds).
  for (int i = 0; i < kSpinIterations; ++i) {
    if (busy_workers_.load(std::memory_order_acquire) == 0) return;
  }
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return busy_workers_.load(std::memory_order_acquire) == 0; });
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    bool ready = false;
    for (int i = 0; i < kSpinIterations && !ready; ++i) {
      ready = published_generation_.load(std::memory_order_acquire) != seen;
    }
    {
      std::unique_lock lock(mutex_);
      if (!ready) wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (stopping_) return;
    }
    run_chunks();
    if (busy_workers_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard lock(mutex_);
      done_.notify_one();
    }
  }
}

}  // namespace qwen35
