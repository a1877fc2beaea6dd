// The fast path of the CUDA GGUF gemvs: a thread dots "pieces" of 32 weights
// with scales factored out of the sum, d (sum q a) - dmin m (sum a), instead of
// decoding every weight as the specification writes it (cuda_gguf.cu keeps that
// exact decoding for row_to_f32 and for rows the fast path cannot take).
//
// A piece is the 32 weights whose bytes one thread can load in a few wide
// reads: a Q8_0 or Q4_0 block; 16 bytes of a Q4_K/Q5_K chunk (16 weights of
// each of two sub-blocks, with the super-block's 16-byte header); 8 bytes of
// each of the two low-bit runs and the high-bit run of a Q6_K half (8 weights
// in each of four scale groups). The activations of a piece are kGroups runs of
// kGroupLen consecutive columns, at 8-column boundaries.
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

constexpr uint32_t kPiece = 32;

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

struct Words4 {
  uint32_t w[4];
};

__host__ __device__ inline Words4 load16(const uint8_t* p) {
#ifdef __CUDA_ARCH__
  const uint4 v = __ldcs(reinterpret_cast<const uint4*>(p));
  return Words4{{v.x, v.y, v.z, v.w}};
#else
  Words4 out;
  std::memcpy(out.w, p, 16);
  return out;
#endif
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

// Byte i of `word` (a code of at most 8 bits) as 2^23 + code.
__host__ __device__ inline float biased_code(uint32_t word, uint32_t i) {
  return bits_to_float(byte_perm(word, 0x4b000000u, i | 0x7540u));
}

// sum over the four bytes of `word` of (code - offset) * a[i], onto acc.
__host__ __device__ inline float dot4(uint32_t word, float offset, const float* a, float acc) {
  for (uint32_t i = 0; i < 4; ++i) acc = fmaf(biased_code(word, i) - offset, a[i], acc);
  return acc;
}

constexpr float kTwo23 = 8388608.0f;

// Q8_0 and Q4_0: a piece is one block, its fp16 scale and kWords words of codes.
template <typename Block, uint32_t kWords>
struct BlockPiece {
  static constexpr uint32_t kGroups = 1, kGroupLen = 32;
  static constexpr bool kHasMin = false;
  struct Codes {
    uint32_t d;
    uint32_t q[kWords];
  };
  __host__ __device__ static uint32_t group_start(uint32_t piece, uint32_t) { return kPiece * piece; }
  __host__ __device__ static Codes load(const uint8_t* row, uint32_t piece) {
    const uint8_t* block = row + size_t{piece} * sizeof(Block);
    Codes c;
    c.d = stream_load(reinterpret_cast<const unsigned short*>(block));
    load_halves(block + 2, c.q);
    return c;
  }
};

struct Q8_0Piece : BlockPiece<GgufBlockQ8_0, 8> {
  __host__ __device__ static float dot(const Codes& c, const float (&a)[32], const float (&)[kGroups]) {
    float acc = 0.0f;
    for (uint32_t k = 0; k < 8; ++k) acc = dot4(c.q[k] ^ 0x80808080u, kTwo23 + 128.0f, a + 4 * k, acc);
    return half_bits_to_float(c.d) * acc;
  }
};

// Byte j of a Q4_0 block holds element j (low nibble) and element j + 16 (high nibble).
struct Q4_0Piece : BlockPiece<GgufBlockQ4_0, 4> {
  __host__ __device__ static float dot(const Codes& c, const float (&a)[32], const float (&)[kGroups]) {
    float acc = 0.0f;
    for (uint32_t k = 0; k < 4; ++k) {
      acc = dot4(c.q[k] & 0x0f0f0f0fu, kTwo23 + 8.0f, a + 4 * k, acc);
      acc = dot4((c.q[k] >> 4) & 0x0f0f0f0fu, kTwo23 + 8.0f, a + 16 + 4 * k, acc);
    }
    return half_bits_to_float(c.d) * acc;
  }
};

// Scale and min of sub-block j of a Q4_K/Q5_K super-block (gguf_scale_min_k4),
// from the header's words 1..3 (its 12 scale bytes).
__host__ __device__ inline void k4_scale_min(const Words4& header, uint32_t j, float* scale, float* min) {
  // Selects, not header.w[1 + i / 4]: a run-time index would put the words in local memory.
  const auto byte = [&](uint32_t i) {
    const uint32_t word = i < 4 ? header.w[1] : i < 8 ? header.w[2] : header.w[3];
    return (word >> (8 * (i % 4))) & 0xffu;
  };
  uint32_t sc, m;
  if (j < 4) {
    sc = byte(j) & 63;
    m = byte(j + 4) & 63;
  } else {
    sc = (byte(j + 4) & 0xf) | ((byte(j - 4) >> 6) << 4);
    m = (byte(j + 4) >> 4) | ((byte(j) >> 6) << 4);
  }
  *scale = static_cast<float>(sc);
  *min = static_cast<float>(m);
}

// Q4_K and Q5_K: piece k of a super-block is half (k % 2) of its chunk k / 2,
// 16 bytes whose low nibbles are elements 16 (k % 2) .. + 15 of sub-block 2 (k / 2)
// and high nibbles the same elements of sub-block 2 (k / 2) + 1. Q5_K adds each
// element's fifth bit from qh (bit j of qh[l] for sub-block j).
template <bool kFifthBit>
struct K4Piece {
  static constexpr uint32_t kGroups = 2, kGroupLen = 16;
  static constexpr bool kHasMin = true;
  static constexpr size_t kBlockBytes = kFifthBit ? sizeof(GgufBlockQ5K) : sizeof(GgufBlockQ4K);
  static constexpr size_t kQs = kFifthBit ? offsetof(GgufBlockQ5K, qs) : offsetof(GgufBlockQ4K, qs);
  struct Codes {
    Words4 header;  // d, dmin, then the 12 scale bytes
    Words4 qs;
    Words4 qh;  // Q5_K only
    uint32_t chunk;
  };
  __host__ __device__ static uint32_t group_start(uint32_t piece, uint32_t g) {
    const uint32_t k = piece % 8;
    return 256 * (piece / 8) + 64 * (k / 2) + 32 * g + 16 * (k % 2);
  }
  __host__ __device__ static Codes load(const uint8_t* row, uint32_t piece) {
    const uint8_t* block = row + size_t{piece / 8} * kBlockBytes;
    const uint32_t k = piece % 8, chunk = k / 2, half = k % 2;
    Codes c;
    c.header = load16(block);
    c.qs = load16(block + kQs + 32 * chunk + 16 * half);
    if constexpr (kFifthBit) c.qh = load16(block + offsetof(GgufBlockQ5K, qh) + 16 * half);
    c.chunk = chunk;
    return c;
  }
  __host__ __device__ static float dot(const Codes& c, const float (&a)[32], const float (&sums)[kGroups]) {
    float low = 0.0f, high = 0.0f;
    for (uint32_t k = 0; k < 4; ++k) {
      uint32_t lo = c.qs.w[k] & 0x0f0f0f0fu, hi = (c.qs.w[k] >> 4) & 0x0f0f0f0fu;
      if constexpr (kFifthBit) {
        lo |= ((c.qh.w[k] >> (2 * c.chunk)) & 0x01010101u) << 4;
        hi |= ((c.qh.w[k] >> (2 * c.chunk + 1)) & 0x01010101u) << 4;
      }
      low = dot4(lo, kTwo23, a + 4 * k, low);
      high = dot4(hi, kTwo23, a + 16 + 4 * k, high);
    }
    const float d = half_bits_to_float(c.header.w[0] & 0xffffu), dmin = half_bits_to_float(c.header.w[0] >> 16);
    float sc0, m0, sc1, m1;
    k4_scale_min(c.header, 2 * c.chunk, &sc0, &m0);
    k4_scale_min(c.header, 2 * c.chunk + 1, &sc1, &m1);
    // The specification's per-sub-block factors, d * sc and dmin * m, rounded as it rounds them.
    const float out = fmaf(d * sc0, low, -(dmin * m0) * sums[0]);
    return out + fmaf(d * sc1, high, -(dmin * m1) * sums[1]);
  }
};

// Q6_K: piece k of a super-block is half h = k / 4 at l0 = 8 (k % 4): for l in
// l0 .. l0 + 7, elements 128 h + 32 g + l (g = 0..3) take their low four bits
// from ql[64 h + 32 (g % 2) + l] (low nibble for g < 2), their top two from
// bits 2g of qh[32 h + l], and scale g from scales[8 h + 2 g + l0 / 16].
struct Q6KPiece {
  static constexpr uint32_t kGroups = 4, kGroupLen = 8;
  static constexpr bool kHasMin = false;
  struct Codes {
    uint32_t ql_a[2], ql_b[2], qh[2];
    uint32_t scales[2];  // bytes 8 h .. 8 h + 7 of scales
    uint32_t d;
    uint32_t odd;  // l0 / 16: which byte of each scale pair
  };
  __host__ __device__ static uint32_t group_start(uint32_t piece, uint32_t g) {
    const uint32_t k = piece % 8;
    return 256 * (piece / 8) + 128 * (k / 4) + 32 * g + 8 * (k % 4);
  }
  __host__ __device__ static Codes load(const uint8_t* row, uint32_t piece) {
    const uint8_t* block = row + size_t{piece / 8} * sizeof(GgufBlockQ6K);
    const uint32_t k = piece % 8, h = k / 4, l0 = 8 * (k % 4);
    Codes c;
    load_halves(block + offsetof(GgufBlockQ6K, ql) + 64 * h + l0, c.ql_a);
    load_halves(block + offsetof(GgufBlockQ6K, ql) + 64 * h + 32 + l0, c.ql_b);
    load_halves(block + offsetof(GgufBlockQ6K, qh) + 32 * h + l0, c.qh);
    load_halves(block + offsetof(GgufBlockQ6K, scales) + 8 * h, c.scales);
    c.d = stream_load(reinterpret_cast<const unsigned short*>(block + offsetof(GgufBlockQ6K, d)));
    c.odd = l0 / 16;
    return c;
  }
  __host__ __device__ static float dot(const Codes& c, const float (&a)[32], const float (&)[kGroups]) {
    float group[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (uint32_t k = 0; k < 2; ++k) {
      const uint32_t a_lo = c.ql_a[k] & 0x0f0f0f0fu, a_hi = (c.ql_a[k] >> 4) & 0x0f0f0f0fu;
      const uint32_t b_lo = c.ql_b[k] & 0x0f0f0f0fu, b_hi = (c.ql_b[k] >> 4) & 0x0f0f0f0fu;
      const uint32_t qh = c.qh[k];
      group[0] = dot4(a_lo | ((qh << 4) & 0x30303030u), kTwo23 + 32.0f, a + 4 * k, group[0]);
      group[1] = dot4(b_lo | ((qh << 2) & 0x30303030u), kTwo23 + 32.0f, a + 8 + 4 * k, group[1]);
      group[2] = dot4(a_hi | (qh & 0x30303030u), kTwo23 + 32.0f, a + 16 + 4 * k, group[2]);
      group[3] = dot4(b_hi | ((qh >> 2) & 0x30303030u), kTwo23 + 32.0f, a + 24 + 4 * k, group[3]);
    }
    const float d = half_bits_to_float(c.d);
    float out = 0.0f;
    for (uint32_t g = 0; g < 4; ++g) {
      // scales[8 h + 2 g + odd]: byte (2 g + odd) % 4 of word g / 2.
      const uint32_t byte = (c.scales[g / 2] >> (8 * ((2 * g + c.odd) % 4))) & 0xffu;
      out = fmaf(d * static_cast<float>(static_cast<int8_t>(byte)), group[g], out);
    }
    return out;
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

// The activations of piece p, group by group; `load8(column, out)` reads 8 floats.
// Load8 is a device lambda in the kernels and a host one in the host check:
// the pragma stops nvcc warning that each could be called from the other side.
#pragma nv_exec_check_disable
template <typename Piece, typename Load8>
__host__ __device__ inline void piece_activations(uint32_t piece, Load8 load8, float (&a)[32], float (&sums)[Piece::kGroups]) {
  for (uint32_t g = 0; g < Piece::kGroups; ++g) {
    const uint32_t start = Piece::group_start(piece, g);
    for (uint32_t i = 0; i < Piece::kGroupLen; i += 8) load8(start + i, a + g * Piece::kGroupLen + i);
    sums[g] = 0.0f;
    if constexpr (Piece::kHasMin) {
      for (uint32_t i = 0; i < Piece::kGroupLen; ++i) sums[g] += a[g * Piece::kGroupLen + i];
    }
  }
}

}  // namespace qwen35::cuda::gguf
