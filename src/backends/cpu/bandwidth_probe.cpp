// HostReadProbe: each thread sums its slice of one large buffer with SIMD
// loads, as 1..8 interleaved streams, with and without software prefetch;
// bytes / wall time, median of the repeats.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>

#include "cpu/simd.h"
#include "host/host_memory.h"
#include "host/thread_pool.h"
#include "qwen35/error.h"
#include "qwen35/host_bandwidth.h"

namespace qwen35 {

std::string ReadPattern::name() const {
  std::string text = std::to_string(streams) + " streams/thread";
  if (prefetch_bytes) text += " + prefetch " + std::to_string(prefetch_bytes) + " B";
  return text;
}

struct HostReadProbe::State {
  ThreadPool pool;
  size_t per_thread;
  size_t bytes = 0;
  float* data;
  std::atomic<float> sink{0};
  State(unsigned threads) : pool(threads), per_thread(0), data(nullptr) {}
};

HostReadProbe::HostReadProbe(unsigned threads, size_t bytes) : state_(std::make_unique<State>(threads)) {
  State& s = *state_;
  s.per_thread = bytes / sizeof(float) / s.pool.size() / 4096 * 4096;
  if (s.per_thread == 0) fail("bandwidth probe: {} bytes is too small", bytes);
  const size_t count = s.per_thread * s.pool.size();
  s.bytes = count * sizeof(float);
  s.data = static_cast<float*>(allocate_host_memory(s.bytes));  // the same pages as the weights get
  // First touch from the threads that will read, so pages land near them.
  s.pool.parallel_for(s.pool.size(), 1, [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) std::fill(s.data + t * s.per_thread, s.data + (t + 1) * s.per_thread, 1.0f);
  });
}

HostReadProbe::~HostReadProbe() { release_host_memory(state_->data, state_->bytes); }

ReadBandwidth HostReadProbe::measure(const ReadPattern& pattern, int repeats) {
  State& s = *state_;
  std::vector<double> gbps;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto start = std::chrono::steady_clock::now();
    s.pool.parallel_for(s.pool.size(), 1, [&](size_t begin, size_t end) {
      float sum = 0;
      for (size_t t = begin; t < end; ++t) {
        sum += simd::read_streams(s.data + t * s.per_thread, s.per_thread, pattern.streams, pattern.prefetch_bytes);
      }
      s.sink.store(sum, std::memory_order_relaxed);  // keeps the reads alive
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    gbps.push_back(static_cast<double>(s.per_thread * s.pool.size() * sizeof(float)) / seconds / 1e9);
  }
  std::nth_element(gbps.begin(), gbps.begin() + static_cast<long>(gbps.size() / 2), gbps.end());
  return ReadBandwidth{pattern, gbps[gbps.size() / 2]};
}

std::vector<ReadBandwidth> HostReadProbe::measure_all(int repeats) {
  // Hardware prefetching alone, then with software prefetch a few lines ahead
  // (what the gemv kernels do): a roofline is the fastest of them. The last
  // two are the gemvs' own: the dense ones' four bands 1 KB ahead (on the
  // Zen 5 host the fastest pattern, 5-8% above the next, fortieth session)
  // and the regrouped GGUF ones' two bands 4 KB ahead (there 0.72-0.80 of
  // the fastest, arithmetic aside), so that a run shows what their reads reach.
  std::vector<ReadBandwidth> results;
  for (ReadPattern pattern : {ReadPattern{1, 0}, ReadPattern{2, 0}, ReadPattern{4, 0}, ReadPattern{8, 0},
                              ReadPattern{1, 512}, ReadPattern{4, 512}, ReadPattern{4, 2048},
                              ReadPattern{8, 1024}, ReadPattern{4, 1024}, ReadPattern{2, 4096}}) {
    results.push_back(measure(pattern, repeats));
  }
  std::stable_sort(results.begin(), results.end(),
                   [](const ReadBandwidth& a, const ReadBandwidth& b) { return a.gbps < b.gbps; });
  return results;
}

}  // namespace qwen35
