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
  stopping_ = true;
  publish_generation();
  for (std::thread& t : workers_) t.join();
}

// The store and the load are sequentially consistent, as are a sleeper's
// count and its check of the generation (under mutex_): either the sleeper
// sees the new generation and does not sleep, or this sees the sleeper and
// wakes it. Until the thirty-eighth session a launch was published under
// mutex_, which a worker that saw it while spinning then locked too, often
// while the caller still held it, and slept on it: a launch of 16 rows on two
// threads took 2.2-2.3 us, 1.1-1.6 without (Zen 5 VM, alternating binaries,
// BM_LaunchOverhead).
void ThreadPool::publish_generation() {
  generation_.fetch_add(1, std::memory_order_seq_cst);
  if (sleeping_workers_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard lock(mutex_); }
    wake_.notify_all();
  }
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
  // No worker reads these until it sees the new generation, and every worker
  // finished with the previous launch's before its join returned.
  body_ = &body;
  n_ = n;
  grain_ = grain;
  next_.store(0, std::memory_order_relaxed);
  busy_workers_.store(static_cast<unsigned>(workers_.size()), std::memory_order_relaxed);
  publish_generation();
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
  caller_sleeping_.store(true, std::memory_order_seq_cst);
  done_.wait(lock, [this] { return busy_workers_.load(std::memory_order_seq_cst) == 0; });
  caller_sleeping_.store(false, std::memory_order_relaxed);
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    uint64_t now = seen;
    for (int i = 0; i < kSpinIterations && now == seen; ++i) now = generation_.load(std::memory_order_acquire);
    if (now == seen) {
      std::unique_lock lock(mutex_);
      sleeping_workers_.fetch_add(1, std::memory_order_seq_cst);
      wake_.wait(lock, [&] { return (now = generation_.load(std::memory_order_seq_cst)) != seen; });
      sleeping_workers_.fetch_sub(1, std::memory_order_relaxed);
    }
    seen = now;
    if (stopping_) return;
    run_chunks();
    if (busy_workers_.fetch_sub(1, std::memory_order_seq_cst) == 1 && caller_sleeping_.load(std::memory_order_seq_cst)) {
      { std::lock_guard lock(mutex_); }
      done_.notify_one();
    }
  }
}

}  // namespace qwen35
