// argmax over a vocabulary of logits, a chunk at a time: the maximum of each
// chunk from eight independent running maxima (the compiler keeps them in
// vector registers), and only a chunk that beats the best so far is searched
// for its index. std::max_element's compare-and-branch per element took 0.8 ms
// for Qwen3.5's 248k logits, about 2% of a 0.8B token on a 2-core machine.
#include <algorithm>
#include <limits>

#include "qwen35/sampling.h"

namespace qwen35 {

int64_t argmax(std::span<const float> x) {
  constexpr size_t kChunk = 64, kLanes = 8;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  int64_t best_index = -1;
  float best = kNegInf;
  // [begin, end) holds best's first occurrence when its maximum beats best (or
  // first reaches it while nothing was found yet: -inf logits count, NaN never).
  const auto search = [&](size_t begin, size_t end, float chunk_max) {
    if (!(chunk_max > best || (best_index < 0 && chunk_max == best))) return;
    for (size_t i = begin; i < end; ++i) {
      if (x[i] == chunk_max) {
        best_index = static_cast<int64_t>(i);
        best = chunk_max;
        return;
      }
    }
  };
  size_t i = 0;
  for (; i + kChunk <= x.size(); i += kChunk) {
    float lanes[kLanes];
    std::fill(lanes, lanes + kLanes, kNegInf);
    for (size_t j = 0; j < kChunk; j += kLanes) {
      for (size_t k = 0; k < kLanes; ++k) lanes[k] = std::max(lanes[k], x[i + j + k]);  // NaN keeps the lane
    }
    search(i, i + kChunk, *std::max_element(lanes, lanes + kLanes));
  }
  float tail = kNegInf;
  for (size_t j = i; j < x.size(); ++j) tail = std::max(tail, x[j]);
  search(i, x.size(), tail);
  return best_index;
}

}  // namespace qwen35
