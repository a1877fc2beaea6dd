// KV-cache append and decode attention on the CPU. Attention cuts the
// positions into pieces (more for longer contexts, up to 16 per thread),
// which the threads take as the gemvs take rows (gemv_scheduler.h): each its
// own share in order, then halves of what another has left. A piece is read
// by one thread, every query head over it, each cached K and V row once and
// in order (the hardware prefetchers follow that; one KV head's slice of each
// row, a row apart, they did not), in runs of up to 32 blocks: a run's K
// rows scored, a step of an online softmax, the run's V rows weighted. The
// pieces are merged in order at the end, so the result does not depend on
// which thread took which. Scratch grows with the thread count, never with
// the context length. FP8 caches are decoded in registers as the SIMD
// kernels read them.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_math.h"
#include "cpu/forced_setting.h"
#include "cpu/fp8_kv_quantize.h"
#include "cpu/gemv_scheduler.h"
#include "host/kv_rows.h"
#include "qwen35/error.h"
#include "qwen35/kernels.h"

namespace qwen35 {
namespace {

// The bytes of one position's row of a cache.
template <typename E>
size_t kv_row_size(const AttentionDecodeArgs& a) {
  const uint32_t kv_dim = a.n_heads_kv * a.head_dim;
  if constexpr (is_fp8_kv<E>) {
    return kv_row_bytes(KvDtype::kFP8, kv_dim);
  } else {
    return size_t{kv_dim} * sizeof(typename E::Storage);
  }
}

// The address of position t's row in a cache.
template <typename E>
const std::byte* kv_row(DevicePtr cache, const AttentionDecodeArgs& a, uint32_t t) {
  return host_ptr<const std::byte>(cache) + size_t{t} * kv_row_size<E>(a);
}

// A block of positions [t0, t0 + n) of one cache, as the SIMD kernels take it,
// asking for the rows `prefetch` positions on as they go. FP8 rows are decoded
// in registers as they are read; first dequantised into a float tile per
// block, they made fp8 attention slower than bf16, which reads twice the bytes
// (4096 positions from the caches: 617-713 us, now 460-570, bf16 300-360).
template <typename E>
simd::KvBlock kv_block(DevicePtr cache, const AttentionDecodeArgs& a, uint32_t t0, uint32_t n, uint32_t prefetch,
                       bool prefetch_to_l1) {
  const uint32_t kv_dim = a.n_heads_kv * a.head_dim;
  simd::KvBlock block{.rows = kv_row<E>(cache, a, t0), .type = simd::WeightType::kF32, .row_stride = kv_dim,
                      .n_rows = n, .n_heads = a.n_heads_kv, .head_dim = a.head_dim,
                      .group = a.n_heads_q / a.n_heads_kv, .prefetch_rows = prefetch,
                      .prefetch_to_l1 = prefetch_to_l1};
  if constexpr (is_fp8_kv<E>) {
    block.row_stride = kv_row_size<E>(a);  // bytes
    block.fp8 = true;
  } else {
    block.type = cpu::weight_type<E>();
  }
  return block;
}

// Positions per call of the SIMD kernels, and the unit of the pieces.
constexpr uint32_t kBlock = 32;

// How far ahead (positions) a block asks for rows: one block (32 KB of a
// bf16 cache at the 0.8B shape, within L1). While a block was a run of its
// own, one block ahead was answered too late on the Zen 5 host and two read
// 4096 positions of a bf16 cache in 265-275 us instead of 325-338 (thirty-first
// session). Since runs of up to 32 blocks read each cache as one stream
// (thirty-sixth), one block reads faster again, compared in one process
// (BM_AttentionDecode with QWEN35_BENCH_AB, fortieth session, from DRAM): 4096
// positions 1.02-1.06 times as fast as two, 32768 1.02-1.07, 256 1.06-1.13;
// from the caches 0.98-1.02. Four blocks 0.92 times two, eight 0.77-0.86.
constexpr uint32_t kPrefetchBlocks = 1;
cpu::ForcedSetting forced_prefetch_blocks;

// The cache level those prefetches fill: 2 (L2, prefetch_past_to_l2), not 1.
// Into L1 each waited for one of the core's few L1 miss buffers, and the
// rows came from DRAM as if the arithmetic and the reads took turns: on the
// Zen 4 host of the forty-sixth session, one thread read 4096 positions of a
// bf16 cache at 8.2 GB/s from DRAM against 17.1 from L3 and 18.4 for a dense
// gemv from DRAM. Into L2 (BM_AttentionDecode with QWEN35_BENCH_AB, medians
// of 5): 4096 positions from DRAM 1.62 times as fast on one thread (1.51
// with prefetcht1), 1.72 on two, 32768 1.56; from L3 1.10; fp8 caches,
// bound by their decoding, 1.02-1.04. In decode (q4_k, 4096 positions)
// attention took 2.15-2.39 ms per token instead of 2.68-3.61; whole tokens
// at 4096 (`qwen35 bench --ab attention-prefetch-level=1`, L1 against L2)
// measured q4_k 0.920, q5_k 0.972, mlx4 1.013, bf16 1.043 and 1.021, the
// last two within the noise. Zen 5 and the Xeons are unmeasured: the tuning
// knob attention-prefetch-level compares.
constexpr size_t kPrefetchLevel = 2;
cpu::ForcedSetting forced_prefetch_level;

// Pieces per thread at most. Two chunks per thread, fixed, left the launching
// thread waiting up to 40% of the kernel's time at 4096 positions (0.2-40%
// over 12 decodes), the other thread's chunks taking 8-22% longer;
// with pieces taken and stolen, 0-2.7% (docs/performance.md, sixteenth
// session). Up to 16 blocks per thread, each block is a piece: short contexts
// are shared too (the scheduler keeps a few rows on one thread only when light).
constexpr uint32_t kPiecesPerThread = 16;

// Positions scored whole before a softmax step: a piece's, up to 32 blocks
// (32 KB of scores per thread with 8 query heads), so that no scratch grows
// with the context. Pieces reach that length at 32768 positions on two threads.
constexpr uint32_t kRunMax = 32 * kBlock;

// Every query head over the pieces of positions [t_begin, t_end), a run of up
// to kRunMax positions at a time: all its K rows scored, a softmax step per
// query head (running max and sum, the accumulators rescaled when the max
// rises), then all its V rows weighted. Each cached row is read once, in
// order, for all the query heads (a KV head's slice for the query heads
// sharing it), the K rows of a run as one stream and then its V rows as
// another; each block of rows asks for the rows kPrefetchBlocks on in its
// own cache, across runs and pieces (the thread that reads a piece usually
// reads the next one too). Writes, per piece and query head h, at its slots +
// h * (head_dim + 2): the unnormalised output (head_dim floats), then the
// running max and sum.
// Until the thirty-sixth session the runs were single blocks, and scoring a
// block also asked for the V rows two blocks on: the K and V streams took
// turns every 32 KB. Whole runs read 4096 positions of a bf16 cache from DRAM
// in 222-247 us against 268-297, 32768 in 1.56-1.82 ms against 1.91-2.16 (two
// threads, alternating, three rounds); fp8 the same (docs/performance.md).
template <typename E>
void attend_pieces(const AttentionDecodeArgs& a, uint32_t t_begin, uint32_t t_end, uint32_t seq_len,
                   uint32_t piece_len, float* slots) {
  const uint32_t hd = a.head_dim;
  const size_t stride = hd + 2;  // per query head: acc[hd], max, sum
  const size_t piece_floats = size_t{a.n_heads_q} * stride;
  const float* q = host_ptr<const float>(a.q);
  const uint32_t run_len = std::min(piece_len, kRunMax);
  thread_local std::vector<float> scores;  // [n_heads_q, run_len]: one contiguous row per query head
  scores.resize(size_t{run_len} * a.n_heads_q);
  const auto distance = static_cast<uint32_t>(kBlock * forced_prefetch_blocks.or_default(kPrefetchBlocks));
  const bool prefetch_to_l1 = forced_prefetch_level.or_default(kPrefetchLevel) == 1;
  // Rows [t0, t0 + kBlock) of a cache, clipped at `end`, asking for those `distance` on.
  const auto block = [&](DevicePtr cache, uint32_t t0, uint32_t end) {
    const uint32_t prefetch = t0 + distance < seq_len ? distance : 0;
    return kv_block<E>(cache, a, t0, std::min(kBlock, end - t0), prefetch, prefetch_to_l1);
  };
  for (uint32_t p0 = t_begin; p0 < t_end; p0 += piece_len) {
    const uint32_t p_end = std::min(t_end, p0 + piece_len);
    float* piece_slots = slots + size_t{p0 / piece_len} * piece_floats;
    // One fill for all the heads: a fill per head (8 per piece) spent 5% of
    // 256-position attention starting and stopping.
    std::fill(piece_slots, piece_slots + piece_floats, 0.0f);
    for (uint32_t h = 0; h < a.n_heads_q; ++h) piece_slots[h * stride + hd] = -INFINITY;
    for (uint32_t r0 = p0; r0 < p_end; r0 += run_len) {
      const uint32_t r_end = std::min(p_end, r0 + run_len), n = r_end - r0;
      for (uint32_t t0 = r0; t0 < r_end; t0 += kBlock) {
        simd::attention_scores(block(a.k_cache, t0, r_end), q, scores.data() + (t0 - r0), run_len);
      }
      for (uint32_t h = 0; h < a.n_heads_q; ++h) {
        float* acc = piece_slots + h * stride;
        float& max = acc[hd];
        float& sum = acc[hd + 1];
        float* s = &scores[size_t{h} * run_len];
        const float run_max = simd::max_value(s, n) * a.scale;  // scale > 0 keeps the largest score largest
        if (run_max > max) {
          if (max != -INFINITY) {  // on a piece's first run, acc and sum are still zero
            const float keep = std::exp(max - run_max);
            sum *= keep;
            simd::scale_add(simd::WeightType::kF32, acc, keep, 0.0f, acc, hd);
          }
          max = run_max;
        }
        sum += simd::exp_shifted(s, n, a.scale, max);
      }
      for (uint32_t t0 = r0; t0 < r_end; t0 += kBlock) {
        simd::attention_values(block(a.v_cache, t0, r_end), scores.data() + (t0 - r0), run_len, piece_slots,
                               stride);
      }
    }
  }
}

template <typename E>
void attention_decode(CpuBackend& cpu, const AttentionDecodeArgs& a) {
  // FP8 slices must start at a scale's first value (the caches ask for this on creation).
  if constexpr (is_fp8_kv<E>) QWEN35_ASSERT(a.head_dim % kKvFp8Block == 0);
  const uint32_t seq_len = host_ptr<const DecodeStepParams>(a.step)->seq_len;
  const uint32_t threads = cpu.pool().size();
  // Pieces of whole blocks, at most kPiecesPerThread per thread.
  const uint32_t max_pieces = kPiecesPerThread * threads;
  const uint32_t blocks_per_piece = std::max<uint32_t>(1, (seq_len + max_pieces * kBlock - 1) / (max_pieces * kBlock));
  const uint32_t piece_len = blocks_per_piece * kBlock;
  const uint32_t n_pieces = (seq_len + piece_len - 1) / piece_len;
  const size_t stride = a.head_dim + 2;  // acc, then max and sum
  const size_t piece_floats = size_t{a.n_heads_q} * stride;
  float* scratch = cpu.launch_scratch(n_pieces * piece_floats);

  // A piece reads its K and V rows.
  cpu::parallel_gemv_rows(cpu.pool(), n_pieces, 2 * piece_len * kv_row_size<E>(a), [&](size_t first, size_t last) {
    const auto t_begin = static_cast<uint32_t>(first * piece_len);
    const uint32_t t_end = std::min<uint32_t>(seq_len, static_cast<uint32_t>(last * piece_len));
    attend_pieces<E>(a, t_begin, t_end, seq_len, piece_len, scratch);
  });

  // Merge: rescale each piece to the global max.
  for (uint32_t h = 0; h < a.n_heads_q; ++h) {
    auto slot = [&](uint32_t c) { return scratch + c * piece_floats + h * stride; };
    float max = -INFINITY;
    for (uint32_t c = 0; c < n_pieces; ++c) max = std::max(max, slot(c)[a.head_dim]);
    float* out = host_ptr<float>(a.out) + size_t{h} * a.head_dim;
    std::fill(out, out + a.head_dim, 0.0f);
    float total = 0;
    for (uint32_t c = 0; c < n_pieces; ++c) {
      const float* part = slot(c);
      if (part[a.head_dim + 1] == 0.0f) continue;
      const float w = std::exp(part[a.head_dim] - max);
      total += w * part[a.head_dim + 1];
      simd::scale_add(simd::WeightType::kF32, part, 1.0f, w, out, a.head_dim);
    }
    const float inv = 1.0f / total;
    for (uint32_t i = 0; i < a.head_dim; ++i) out[i] *= inv;
  }
}

template <typename E>
void register_for(CpuBackend& cpu) {
  const std::string s(E::kSuffix);
  cpu.register_kernel<KvAppendArgs>("kv_append_" + s, append_kv_rows<E, cpu::quantize_fp8_kv>);
  cpu.register_kernel<AttentionDecodeArgs>("attention_decode_" + s,
                                           [&cpu](const AttentionDecodeArgs& a) { attention_decode<E>(cpu, a); });
}

}  // namespace

void cpu::set_attention_prefetch_blocks(size_t blocks) {
  forced_prefetch_blocks.force_at_most(blocks, "attention prefetch distance in blocks of 32 positions", 16);
}

void cpu::set_attention_prefetch_level(size_t level) {
  forced_prefetch_level.force_one_of(level, "attention prefetch cache level", {1, 2});
}

void register_cpu_attention_kernels(CpuBackend& cpu) {
  register_for<F32Element>(cpu);
  register_for<BF16Element>(cpu);
  register_for<F16Element>(cpu);
  register_for<Fp8KvElement>(cpu);
}

}  // namespace qwen35
