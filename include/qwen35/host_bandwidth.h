// A STREAM-style probe of this machine's memory read bandwidth, measured with
// all threads and several concurrent read streams per thread (decode reads many
// weight rows at once), for rooflines computed in the same run as a benchmark.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace qwen35 {

struct ReadPattern {
  size_t streams = 1;         // concurrent streams per thread
  size_t prefetch_bytes = 0;  // software prefetch distance, 0 = hardware only
  std::string name() const;
};

struct ReadBandwidth {
  ReadPattern pattern;
  double gbps = 0;  // median over repeats
};

class HostReadProbe {
 public:
  // Allocates and first-touches `bytes` (make it several times the last-level
  // cache) shared by `threads` threads (0 = all cores).
  HostReadProbe(unsigned threads, size_t bytes);
  ~HostReadProbe();

  // Every pattern (1..8 streams, with and without prefetch), fastest last.
  std::vector<ReadBandwidth> measure_all(int repeats);
  ReadBandwidth measure(const ReadPattern& pattern, int repeats);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace qwen35
