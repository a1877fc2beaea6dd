// x's 8-bit codes per block of 32 on vectors (the rest of Int8Activations
// follows from them in int8_activations.cpp). Every integer gemv quantizes
// its x on the launching thread before the rows are split, so while this runs
// the other threads wait: done a scalar at a time it was about 2% of an int8
// decode's time on two cores (Q4_K and mlx4 at the 0.8B shape). The same
// float operations as the scalar twin, quantize_blocks_scalar, so the result
// is the same to the bit: max |x|, the scale and its inverse as scalars, x
// (lifted where tiny, see lift_of) times the inverse rounded to nearest even,
// clamped to +-127; for x in 24 bits, each remainder times 254 likewise.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/int8_quantize.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "cpu/int8_activations.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Blocks a chunk at a time, in three passes, so that no block's long chain
// (a reduction for its maximum, then two divisions, then the codes) waits
// on the one before: each block's scale and factor; the codes; the sums of
// each 16 codes, as integers from the stored bytes (SumsOf8 of the codes
// offset by 128), where a float reduction per group and digit took longer
// than the codes themselves.
void QuantizeBlocks(const float* x, size_t cols, int8_t* q, float* scale, float* code_sums, size_t digits) {
#if HWY_TARGET == HWY_SCALAR
  quantize_blocks_scalar(x, cols, q, scale, code_sums, digits);
#else
  // At most 16 lanes: a block of 32 is then whole vectors.
  const hn::CappedTag<float, 16> df;
  const hn::Rebind<int32_t, decltype(df)> di;
  const hn::Rebind<int8_t, decltype(df)> d8;
  const size_t n = hn::Lanes(df);
  // Bytes, at most 32 per vector: a whole number of groups of 16 in every block.
  const hn::CappedTag<uint8_t, 32> du8;
  const hn::Repartition<uint64_t, decltype(du8)> du64;
  const size_t n8 = hn::Lanes(du8);
  const auto limit = hn::Set(df, 127.0f);
  constexpr size_t kChunk = 32;
  float lift[kChunk], inverse[kChunk];
  bool finite[kChunk];
  for (size_t b0 = 0; b0 < cols / 32; b0 += kChunk) {
    const size_t count = std::min(kChunk, cols / 32 - b0);
    for (size_t c = 0; c < count; ++c) {
      const float* xb = x + 32 * (b0 + c);
      auto amax = hn::Zero(df);
      auto all_finite = hn::FirstN(df, n);
      for (size_t k = 0; k < 32; k += n) {
        const auto v = hn::LoadU(df, xb + k);
        amax = hn::Max(amax, hn::Abs(v));
        all_finite = hn::And(all_finite, hn::IsFinite(v));
      }
      finite[c] = hn::AllTrue(df, all_finite);
      if (!finite[c]) {  // codes 0 and a NaN scale, as in the twin
        scale[b0 + c] = std::numeric_limits<float>::quiet_NaN();
        continue;
      }
      const float block_max = hn::GetLane(hn::MaxOfLanes(df, amax));
      scale[b0 + c] = block_max / 127;
      lift[c] = lift_of(block_max);
      inverse[c] = block_max > 0 ? 127 / (block_max * lift[c]) : 0.0f;
    }
    for (size_t c = 0; c < count; ++c) {
      const size_t first = 32 * (b0 + c);
      if (!finite[c]) {
        for (size_t d = 0; d < digits; ++d) std::memset(q + d * cols + first, 0, 32);
        continue;
      }
      const auto lifted = hn::Set(df, lift[c]), factor = hn::Set(df, inverse[c]);
      for (size_t k = 0; k < 32; k += n) {
        auto t = hn::Mul(hn::Mul(hn::LoadU(df, x + first + k), lifted), factor);
        for (size_t d = 0; d < digits; ++d) {
          if (d > 0) t = hn::Mul(t, hn::Set(df, 254.0f));  // the remainder's next digit
          const auto codes = hn::Min(hn::Max(hn::Round(t), hn::Neg(limit)), limit);
          hn::StoreU(hn::DemoteTo(d8, hn::ConvertTo(di, codes)), d8, q + d * cols + first + k);
          t = hn::Sub(t, codes);
        }
      }
    }
    for (size_t d = 0; d < digits; ++d) {
      const auto* codes = reinterpret_cast<const uint8_t*>(q + d * cols + 32 * b0);
      float* sums = code_sums + d * (cols / 16) + 2 * b0;
      for (size_t o = 0; o < 32 * count; o += n8) {
        HWY_ALIGN uint64_t eights[32 / 8];  // sums of 8 codes, each + 128
        hn::Store(hn::SumsOf8(hn::Xor(hn::LoadU(du8, codes + o), hn::Set(du8, 0x80))), du64, eights);
        for (size_t g = 0; g < n8 / 16; ++g) {
          sums[o / 16 + g] = static_cast<float>(static_cast<int>(eights[2 * g] + eights[2 * g + 1]) - 16 * 128);
        }
      }
    }
  }
#endif
}

}  // namespace qwen35::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qwen35::cpu {

HWY_EXPORT(QuantizeBlocks);

void quantize_blocks(const float* x, size_t cols, int8_t* q, float* scale, float* code_sums, size_t digits) {
  HWY_DYNAMIC_DISPATCH(QuantizeBlocks)(x, cols, q, scale, code_sums, digits);
}

}  // namespace qwen35::cpu
#endif  // HWY_ONCE
