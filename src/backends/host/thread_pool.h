// A persistent pool of worker threads with cheap fork/join: parallel_for hands
// out chunks of an index range through one atomic counter, and the calling
// thread works too. Decode issues hundreds of launches per token, so workers
// spin briefly before sleeping, and a launch reaches a spinning worker, and
// its end the spinning caller, through atomics alone: the mutex and condition
// variables are touched only by a thread that goes to sleep and by whoever
// must wake it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace qwen35 {

class ThreadPool {
 public:
  // threads = 0: one per hardware thread. The caller counts as one of them.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // Runs body(begin, end) over [0, n) in chunks of `grain` indices (the last may
  // be shorter), spread over all threads; returns when every chunk is done.
  void parallel_for(size_t n, size_t grain, const std::function<void(size_t, size_t)>& body);

  // While timing, parallel_for adds to join_wait_seconds() the time its caller
  // waits for the other threads after finishing its own chunks. Both belong
  // to the thread that calls parallel_for.
  void set_timing(bool enabled) { timing_ = enabled; }
  double join_wait_seconds() const { return join_wait_seconds_; }

 private:
  void publish_generation();
  void worker_loop();
  void run_chunks();
  void join();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  // Bumped once per launch, after the launch's fields below are set.
  std::atomic<uint64_t> generation_{0};
  // Workers asleep on wake_, and whether the caller sleeps on done_: counted
  // under mutex_ before sleeping, so that whoever publishes (a generation, the
  // last worker's finish) and then finds them nonzero takes mutex_ to notify.
  std::atomic<unsigned> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
  bool stopping_ = false;  // set before the last generation is published

  const std::function<void(size_t, size_t)>* body_ = nullptr;
  size_t n_ = 0;
  size_t grain_ = 1;
  std::atomic<size_t> next_{0};
  std::atomic<unsigned> busy_workers_{0};
  bool timing_ = false;
  double join_wait_seconds_ = 0;
};

}  // namespace qwen35
