// parallel_row_passes: shares, claims and steals (see gemv_scheduler.h).
#include "cpu/gemv_scheduler.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "cpu/forced_setting.h"

namespace qwen35::cpu {
namespace {

// A claim's weights: small enough that the threads finish close together
// (a few microseconds of work), large enough that the claims' atomic
// operations cost nothing measurable.
constexpr size_t kClaimBytes = size_t{32} << 10;

// Launches of at most this many bytes run on the launching thread alone. On
// the development VM a shared launch costs about 4-7 us beyond its reads (a
// handoff is several cache lines crossing its two cores, at 0.3-0.65 us
// each), so sharing ~128 KB only adds time: per launch in q4_k decode
// (`qwen35 bench --profile`, two runs each), the Gated DeltaNet's a/b
// projections (two f32 16 x 1024 matrices, 128 KB) 5.8-6.0 -> 4.6-4.7 us,
// conv_silu_l2norm (196 KB) 10.5-11.0 -> 10.1-10.4, attention over 64-80
// positions (3 pieces, 192 KB) 13.7-16.9 -> 11.2-11.7. Until then only 8 rows
// or fewer of at most 32 KB stayed. Attention over ~250 positions (512 KB)
// measured 31-33 us alone against 35-36 shared with a bf16 cache, but an fp8
// cache's pieces carry more arithmetic per byte: 256 KB is where every
// measurement favoured one thread.
constexpr size_t kSoloBytes = size_t{256} << 10;
ForcedSetting forced_solo_bytes;

// The unclaimed passes [front, back) of one share, packed in one word: the
// owner takes from the front by adding to it, thieves from the back by a
// compare-and-exchange of the whole word, so no pass is handed out twice. Front
// only grows and back only shrinks: a word never repeats.
struct alignas(64) Share {
  size_t segment = 0, begin = 0, end = 0;
  std::atomic<uint64_t> unclaimed{0};
};

constexpr uint64_t pack(uint64_t front, uint64_t back) { return front << 32 | back; }
constexpr size_t front_of(uint64_t word) { return static_cast<size_t>(word >> 32); }
constexpr size_t back_of(uint64_t word) { return static_cast<size_t>(word & 0xFFFFFFFFu); }

// The rows' cut points: the segments' ends and, between them, a share's worth
// of rows for each thread rounded down to a multiple of 8.
std::vector<size_t> cut_points(std::span<const size_t> segment_rows, size_t total, size_t threads) {
  std::vector<size_t> cuts{0};
  size_t end = 0;
  for (size_t rows : segment_rows) cuts.push_back(end += rows);
  for (size_t t = 1; t < threads; ++t) cuts.push_back(total * t / threads / 8 * 8);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  return cuts;
}

}  // namespace

size_t solo_launch_bytes() { return forced_solo_bytes.or_default(kSoloBytes); }

void set_solo_launch_bytes(size_t bytes) {
  forced_solo_bytes.force_at_most(bytes, "bytes of a launch run on one thread", size_t{16} << 20);
}

void parallel_row_passes(ThreadPool& pool, std::span<const size_t> segment_rows, size_t bands, size_t row_bytes,
                         const RowPassesBody& body) {
  size_t total = 0;
  for (size_t rows : segment_rows) total += rows;
  // Light launches stay with the caller (kSoloBytes); heavier ones, however
  // few their rows (attention's pieces, 37-64 KB each at the 0.8B shape), are
  // shared by the stealing below.
  if (pool.size() == 1 || total <= 1 || total * row_bytes <= solo_launch_bytes()) {
    for (size_t s = 0; s < segment_rows.size(); ++s) {
      if (segment_rows[s] > 0) body(s, RowPasses{0, segment_rows[s], bands, 0, pass_count(segment_rows[s], bands)});
    }
    return;
  }
  const std::vector<size_t> cuts = cut_points(segment_rows, total, pool.size());
  const size_t n_shares = cuts.size() - 1;
  const auto shares = std::make_unique<Share[]>(n_shares);
  size_t segment = 0, segment_begin = 0;
  for (size_t i = 0; i < n_shares; ++i) {
    while (cuts[i] >= segment_begin + segment_rows[segment]) segment_begin += segment_rows[segment++];
    Share& share = shares[i];
    share.segment = segment;
    share.begin = cuts[i] - segment_begin;
    share.end = cuts[i + 1] - segment_begin;
    const size_t passes = pass_count(share.end - share.begin, bands);
    QWEN35_ASSERT(passes < (uint64_t{1} << 31));  // front passes back by at most a claim, still in 32 bits
    share.unclaimed.store(pack(0, passes), std::memory_order_relaxed);
  }
  const size_t claim = std::max<size_t>(1, kClaimBytes / std::max<size_t>(1, bands * row_bytes));
  const auto run = [&](const Share& share, size_t first, size_t last) {
    body(share.segment, RowPasses{share.begin, share.end, bands, first, last});
  };
  std::atomic<size_t> next_share{0};
  pool.parallel_for(pool.size(), 1, [&](size_t, size_t) {
    // Shares no thread owns yet, each from its front.
    for (size_t i; (i = next_share.fetch_add(1, std::memory_order_relaxed)) < n_shares;) {
      Share& share = shares[i];
      for (;;) {
        const uint64_t word = share.unclaimed.fetch_add(pack(claim, 0), std::memory_order_relaxed);
        const size_t front = front_of(word), back = back_of(word);
        if (front >= back) break;
        run(share, front, std::min(back, front + claim));
      }
    }
    // Then the back half of the largest remainder, until none is left.
    for (;;) {
      Share* victim = nullptr;
      uint64_t word = 0;
      size_t most = 0;
      for (size_t i = 0; i < n_shares; ++i) {
        const uint64_t w = shares[i].unclaimed.load(std::memory_order_relaxed);
        const size_t left = front_of(w) < back_of(w) ? back_of(w) - front_of(w) : 0;
        if (left > most) {
          most = left;
          victim = &shares[i];
          word = w;
        }
      }
      if (victim == nullptr) return;
      const size_t back = back_of(word), first = back - (most + 1) / 2;
      if (victim->unclaimed.compare_exchange_strong(word, pack(front_of(word), first), std::memory_order_relaxed)) {
        run(*victim, first, back);
      }
    }
  });
}

}  // namespace qwen35::cpu
