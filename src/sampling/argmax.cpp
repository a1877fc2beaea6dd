// argmax over a vocabulary of logits, a chunk at a time: the maximum of each
// chunk (chunk_max.h), and only a chunk that beats the best so far is searched
// for its index. std::max_element's compare-and-branch per element took 0.8 ms
// for Qwen3.5's 248k logits, about 2% of a 0.8B token on a 2-core machine.
#include <algorithm>
#include <limits>

#include "chunk_max.h"
#include "qwen35/sampling.h"

namespace qwen35 {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr size_t kChunk = 256;

}  // namespace

int64_t argmax(std::span<const float> x) {
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
  for (; i + kChunk <= x.size(); i += kChunk) search(i, i + kChunk, sampling::chunk_max<kChunk>(x.data() + i));
  float tail = kNegInf;
  for (size_t j = i; j < x.size(); ++j) tail = x[j] > tail ? x[j] : tail;
  search(i, x.size(), tail);
  return best_index;
}

}  // namespace qwen35
