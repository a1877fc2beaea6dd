// The fast path of the CUDA GGUF gemvs: a thread dots "pieces" of 8 or 16
// weights with the block scales factored out of the sum, d (sum q a) -
// dmin m (sum a), instead of decoding every weight as the specification writes
// it (cuda_gguf.cu keeps that exact decoding for row_to_f32 and for rows the
// fast path cannot take).
//
// Consecutive pieces are adjacent in the row and go to adjacent lanes, so a
// warp's loads of weights and of activations each cover a contiguous span:
// with whole blocks per lane (32 activations, 64 or 128 bytes apart from lane
// to lane) every 16-byte activation load touched 16-32 cache lines, and L1's
// passes over them, not DRAM, set the speed (about 1 TB/s on an H200). A piece:
//   Q8_0: 8 codes of a block (a quarter) and its scale;
//   Q4_0: 4 bytes of a block (a quarter: 4 low and 4 high nibbles);
//   Q4_K, Q5_K: 8 bytes of a 32-byte chunk (8 weights of each of its two
//     sub-blocks) with the super-block's 16-byte header (and Q5_K's 8 bytes of qh);
//   Q6_K: 8 bytes of ql (8 weights of each of two scale groups) with the
//     matching 8 bytes of qh, the two scales and d.
// The activations of a piece are kRuns runs of kRunLen consecutive columns,
// at 4-column boundaries.
//
// Codes become floats without the integer conversion: a code placed in the
// low mantissa byte of 2^23 is 2^23 + code as a float, and one subtraction of
// 2^23 plus the format's offset (Q8_0's 128 after flipping the sign bit, Q4_0's
// 8, Q6_K's 32) leaves the signed value exactly.
//
// Everything here also compiles in nvcc's host pass, where tests/backends/
// cuda_gguf_decode_test.cpp checks whole rows against a float64 reference
// through gguf_row_dot_on_host (cuda_gguf_host.h).
#pragma once

#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "qwen35/dtype.h"
#include "qwen35/gguf_quants.h"

namespace qwen35::cuda::gguf {

__host__ __device__ inline uint32_t byte_perm(uint32_t x, uint32_t y, uint32_t selector) {
#ifdef __CUDA_ARCH__
  return __byte_perm(x, y, selector);
#else
  const uint64_t bytes = (uint64_t{y} << 32) | x;
  uint32_t out = 0;
  for (int i = 0; i < 4; ++i) out |= static_cast<uint32_t>((bytes >> (8 * ((selector >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return out;
#endif
}

__host__ __device__ inline float bits_to_float(uint32_t bits) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

__host__ __device__ inline float half_bits_to_float(uint32_t bits) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
}

// Weights are read once per token: cache-streaming loads keep L1 for the activations.
template <typename T>
__host__ __device__ inline T stream_load(const T* p) {
#ifdef __CUDA_ARCH__
  return __ldcs(p);
#else
  return *p;
#endif
}

// 16 bytes from a 16-byte aligned address.
__host__ __device__ inline void load16_aligned(const uint8_t* p, uint32_t (&out)[4]) {
#ifdef __CUDA_ARCH__
  const uint4 v = __ldcs(reinterpret_cast<const uint4*>(p));
  out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
#else
  std::memcpy(out, p, 16);
#endif
}

// 8 bytes from an 8-byte aligned address.
__host__ __device__ inline void load8_aligned(const uint8_t* p, uint32_t (&out)[2]) {
#ifdef __CUDA_ARCH__
  const uint2 v = __ldcs(reinterpret_cast<const uint2*>(p));
  out[0] = v.x, out[1] = v.y;
#else
  std::memcpy(out, p, 8);
#endif
}

__host__ __device__ inline uint32_t load_u16(const uint8_t* p) {
  return stream_load(reinterpret_cast<const unsigned short*>(p));
}

// 4 kWords bytes from a 2-byte aligned address, as 32-bit words.
template <uint32_t kWords>
__host__ __device__ inline void load_halves(const uint8_t* p, uint32_t (&out)[kWords]) {
  const auto* halves = reinterpret_cast<const unsigned short*>(p);
  for (uint32_t i = 0; i < kWords; ++i) {
    out[i] = static_cast<uint32_t>(stream_load(halves + 2 * i)) |
             (static_cast<uint32_t>(stream_load(halves + 2 * i + 1)) << 16);
  }
}

constexpr float kTwo23 = 8388608.0f;

// Byte i of `word` (a code of at most 8 bits) as 2^23 + code.
__host__ __device__ inline float biased_code(uint32_t word, uint32_t i) {
  return bits_to_float(byte_perm(word, 0x4b000000u, i | 0x7540u));
}

// sum over the four bytes of `word` of (code - offset) * a[i], onto acc.
__host__ __device__ inline float dot4(uint32_t word, float offset, const float* a, float acc) {
  for (uint32_t i = 0; i < 4; ++i) acc = fmaf(biased_code(word, i) - offset, a[i], acc);
  return acc;
}

// Q8_0 and Q4_0: piece k of a block is its fp16 scale and kWords words of
// codes, a quarter of the block (bytes 4 kWords (k % 4) .. of its codes).
template <typename Block, uint32_t kWords>
struct QuarterBlockPiece {
  static constexpr bool kHasMin = false;
  struct Codes {
    uint32_t d;
    uint32_t q[kWords];
  };
  __host__ __device__ static Codes load(const uint8_t* row, uint32_t piece) {
    const uint8_t* block = row + size_t{piece / 4} * sizeof(Block);
    Codes c;
    c.d = load_u16(block);
    load_halves(block + 2 + 4 * kWords * (piece % 4), c.q);
    return c;
  }
};

struct Q8_0Piece : QuarterBlockPiece<GgufBlockQ8_0, 2> {
  static constexpr uint32_t kWeights = 8, kRuns = 1, kRunLen = 8;
  __host__ __device__ static uint32_t run_start(uint32_t piece, uint32_t) { return kWeights * piece; }
  __host__ __device__ static float dot(const Codes& c, const float (&a)[kWeights], const float (&)[kRuns]) {
    float acc = 0.0f;
    for (uint32_t k = 0; k < 2; ++k) acc = dot4(c.q[k] ^ 0x80808080u, kTwo23 + 128.0f, a + 4 * k, acc);
    return half_bits_to_float(c.d) * acc;
  }
};

// Q4_0: byte j of a block holds element j (low nibble) and j + 16 (high).
struct Q4_0Piece : QuarterBlockPiece<GgufBlockQ4_0, 1> {
  static constexpr uint32_t kWeights = 8, kRuns = 2, kRunLen = 4;
  __host__ __device__ static uint32_t run_start(uint32_t piece, uint32_t run) {
    return 32 * (piece / 4) + 16 * run + 4 * (piece % 4);
  }
  __host__ __device__ static float dot(const Codes& c, const float (&a)[kWeights], const float (&)[kRuns]) {
    float acc = dot4(c.q[0] & 0x0f0f0f0fu, kTwo23 + 8.0f, a, 0.0f);
    acc = dot4((c.q[0] >> 4) & 0x0f0f0f0fu, kTwo23 + 8.0f, a + 4, acc);
    return half_bits_to_float(c.d) * acc;
  }
};

// The 6-bit scales and mins of Q4_K/Q5_K sub-blocks 2 chunk and 2 chunk + 1
// (gguf_scale_min_k4), from the header's words 1..3 (its 12 scale bytes),
// as 2^23 + value. Whole words at once: bytes 0..3 of `low` are the scales of
// sub-blocks 0..3, of `high` those of 4..7; likewise the mins.
__host__ __device__ inline void k4_scales_mins(const uint32_t (&header)[4], uint32_t chunk, float (&scale)[2],
                                               float (&min)[2]) {
  const uint32_t w1 = header[1], w2 = header[2], w3 = header[3];
  const bool upper = chunk >= 2;
  const uint32_t scales = upper ? (w3 & 0x0f0f0f0fu) | ((w1 >> 2) & 0x30303030u) : w1 & 0x3f3f3f3fu;
  const uint32_t mins = upper ? ((w3 >> 4) & 0x0f0f0f0fu) | ((w2 >> 2) & 0x30303030u) : w2 & 0x3f3f3f3fu;
  const uint32_t first = 2 * (chunk % 2);
  for (uint32_t i = 0; i < 2; ++i) {
    scale[i] = biased_code(scales, first + i) - kTwo23;
    min[i] = biased_code(mins, first + i) - kTwo23;
  }
}

// Q4_K and Q5_K: piece k of a super-block is bytes 8 (k % 4) .. + 7 of its chunk
// k / 4, whose low nibbles are elements l0 .. l0 + 7 (l0 = 8 (k % 4)) of
// sub-block 2 (k / 4) and high nibbles the same elements of the next
// sub-block. Q5_K adds each element's fifth bit from qh (bit j of qh[l] for
// sub-block j).
template <bool kFifthBit>
struct K4Piece {
  static constexpr uint32_t kWeights = 16, kRuns = 2, kRunLen = 8;
  static constexpr bool kHasMin = true;
  static constexpr size_t kBlockBytes = kFifthBit ? sizeof(GgufBlockQ5K) : sizeof(GgufBlockQ4K);
  static constexpr size_t kQs = kFifthBit ? offsetof(GgufBlockQ5K, qs) : offsetof(GgufBlockQ4K, qs);
  struct Codes {
    uint32_t header[4];  // d, dmin, then the 12 scale bytes
    uint32_t qs[2];
    uint32_t qh[2];  // Q5_K only
    uint32_t chunk;
  };
  __host__ __device__ static uint32_t run_start(uint32_t piece, uint32_t run) {
    const uint32_t k = piece % 16;
    return 256 * (piece / 16) + 64 * (k / 4) + 32 * run + 8 * (k % 4);
  }
  __host__ __device__ static Codes load(const uint8_t* row, uint32_t piece) {
    const uint8_t* block = row + size_t{piece / 16} * kBlockBytes;
    const uint32_t k = piece % 16, chunk = k / 4, l0 = 8 * (k % 4);
    Codes c;
    load16_aligned(block, c.header);
    load8_aligned(block + kQs + 32 * chunk + l0, c.qs);
    if constexpr (kFifthBit) load8_aligned(block + offsetof(GgufBlockQ5K, qh) + l0, c.qh);
    c.chunk = chunk;
    return c;
  }
  __host__ __device__ static float dot(const Codes& c, const float (&a)[kWeights], const float (&sums)[kRuns]) {
    float low = 0.0f, high = 0.0f;
    for (uint32_t k = 0; k < 2; ++k) {
      uint32_t lo = c.qs[k] & 0x0f0f0f0fu, hi = (c.qs[k] >> 4) & 0x0f0f0f0fu;
      if constexpr (kFifthBit) {
        lo |= ((c.qh[k] >> (2 * c.chunk)) & 0x01010101u) << 4;
        hi |= ((c.qh[k] >> (2 * c.chunk + 1)) & 0x01010101u) << 4;
      }
      low = dot4(lo, kTwo23, a + 4 * k, low);
      high = dot4(hi, kTwo23, a + 8 + 4 * k, high);
    }
    const float d = half_bits_to_float(c.header[0] & 0xffffu), dmin = half_bits_to_float(c.header[0] >> 16);
    float scale[2], min[2];
    k4_scales_mins(c.header, c.chunk, scale, min);
    // The specification's per-sub-block factors, d * sc and dmin * m, rounded as it rounds them.
    const float out = fmaf(d * scale[0], low, -(dmin * min[0]) * sums[0]);
    return out + fmaf(d * scale[1], high, -(dmin * min[1]) * sums[1]);
  }
};

// Q6_K: elements 128 h + 32 g + l (half h, group g = 0..3, l = 0..31) take their
// low four bits from ql[64 h + 32 (g % 2) + l] (the low nibble for g < 2),
// their top two from bits 2g of qh[32 h + l], and scale scales[8 h + 2 g + l / 16].
// Piece k of a block is ql bytes 8k .. 8k + 7: half h = k / 8, j = 8 (k % 8),
// l0 = j % 32, groups g = j / 32 (low nibbles) and g + 2 (high nibbles).
struct Q6KPiece {
  static constexpr uint32_t kWeights = 16, kRuns = 2, kRunLen = 8;
  static constexpr bool kHasMin = false;
  struct Codes {
    uint32_t ql[2], qh[2];
    uint32_t scale_low, scale_high;  // scales of the two groups (bytes, signed)
    uint32_t d;
    uint32_t group;  // g of the low nibbles: 0 or 1
  };
  __host__ __device__ static uint32_t run_start(uint32_t piece, uint32_t run) {
    const uint32_t k = piece % 16, j = 8 * (k % 8);
    return 256 * (piece / 16) + 128 * (k / 8) + 32 * (j / 32 + 2 * run) + j % 32;
  }
  __host__ __device__ static Codes load(const uint8_t* row, uint32_t piece) {
    const uint8_t* block = row + size_t{piece / 16} * sizeof(GgufBlockQ6K);
    const uint32_t k = piece % 16, h = k / 8, j = 8 * (k % 8), g = j / 32, l0 = j % 32;
    Codes c;
    load_halves(block + offsetof(GgufBlockQ6K, ql) + 8 * k, c.ql);
    load_halves(block + offsetof(GgufBlockQ6K, qh) + 32 * h + l0, c.qh);
    const uint8_t* scales = block + offsetof(GgufBlockQ6K, scales) + 8 * h + 2 * g + l0 / 16;
    c.scale_low = stream_load(scales);
    c.scale_high = stream_load(scales + 4);
    c.d = load_u16(block + offsetof(GgufBlockQ6K, d));
    c.group = g;
    return c;
  }
  __host__ __device__ static float dot(const Codes& c, const float (&a)[kWeights], const float (&)[kRuns]) {
    float low = 0.0f, high = 0.0f;
    const uint32_t shift = 2 * c.group;  // qh bits 2g (low nibbles) and 2g + 4 (high)
    for (uint32_t k = 0; k < 2; ++k) {
      const uint32_t top = c.qh[k] >> shift;
      const uint32_t lo = (c.ql[k] & 0x0f0f0f0fu) | ((top << 4) & 0x30303030u);
      const uint32_t hi = ((c.ql[k] >> 4) & 0x0f0f0f0fu) | (top & 0x30303030u);
      low = dot4(lo, kTwo23 + 32.0f, a + 4 * k, low);
      high = dot4(hi, kTwo23 + 32.0f, a + 8 + 4 * k, high);
    }
    const float d = half_bits_to_float(c.d);
    const float out = d * static_cast<float>(static_cast<int8_t>(c.scale_low)) * low;
    return fmaf(d * static_cast<float>(static_cast<int8_t>(c.scale_high)), high, out);
  }
};

template <DType kType>
struct PieceOf;
template <>
struct PieceOf<DType::kQ8_0> {
  using type = Q8_0Piece;
};
template <>
struct PieceOf<DType::kQ4_0> {
  using type = Q4_0Piece;
};
template <>
struct PieceOf<DType::kQ4_K> {
  using type = K4Piece<false>;
};
template <>
struct PieceOf<DType::kQ5_K> {
  using type = K4Piece<true>;
};
template <>
struct PieceOf<DType::kQ6_K> {
  using type = Q6KPiece;
};

// The activations of piece p, run by run, and each run's sum where the format
// needs it; `load4(column, out)` reads 4 floats. Load4 is a device lambda in the
// kernels and a host one in the host check: the pragma stops nvcc warning that
// each could be called from the other side.
#pragma nv_exec_check_disable
template <typename Piece, typename Load4>
__host__ __device__ inline void piece_activations(uint32_t piece, Load4 load4, float (&a)[Piece::kWeights],
                                                  float (&sums)[Piece::kRuns]) {
  for (uint32_t r = 0; r < Piece::kRuns; ++r) {
    const uint32_t start = Piece::run_start(piece, r);
    for (uint32_t i = 0; i < Piece::kRunLen; i += 4) load4(start + i, a + r * Piece::kRunLen + i);
    sums[r] = 0.0f;
    if constexpr (Piece::kHasMin) {
      for (uint32_t i = 0; i < Piece::kRunLen; ++i) sums[r] += a[r * Piece::kRunLen + i];
    }
  }
}

}  // namespace qwen35::cuda::gguf
