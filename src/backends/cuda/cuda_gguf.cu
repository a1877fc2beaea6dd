// ggml block types on the GPU (qwen35/gguf_quants.h is the specification):
// gemv, the fused pair and SiLU-gate forms, and row_to_f32 for Q8_0, Q4_0, Q4_K,
// Q5_K and Q6_K, names "gemv_q8_0" and so on.
//
// The gemvs dot pieces of 8 or 16 weights with the block scales factored out
// of the sums (cuda_gguf_pieces.cuh). row_to_f32, and the gemvs where the activations
// or weights are not aligned for the pieces' wide loads, take one unit of 32
// weights at a time (a Q8_0/Q4_0 block, or a 32-element sub-block of a K-quant
// super-block) and decode it exactly as the specification's dequantizer does
// (products rounded as written, no fused multiply-add), so row_to_f32 is
// bit-exact. Blocks of Q8_0, Q4_0 and Q6_K are 2-byte aligned: bytes are read
// as 16-bit words. Both also compile for the host, where
// tests/backends/cuda_gguf_decode_test.cpp checks them without a GPU (the
// decoder's loops have constant trip counts, which nvcc unrolls without being asked).
#include <cuda_fp16.h>

#include <cstring>

#include "cuda_common.cuh"
#include "cuda_gemv_rows.cuh"
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "qwen35/dense_weights.h"
#include "cuda_gguf_host.h"
#include "cuda_gguf_pieces.cuh"
#include "qwen35/gguf_quants.h"

namespace qwen35::cuda {
namespace {

constexpr uint32_t kUnit = 32;

// Products and differences rounded as written on both sides: nvcc would fuse
// them into FMAs on the device; the host pass compiles ISO C++ (no contraction).
__host__ __device__ inline float mul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
__host__ __device__ inline float sub_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

__host__ __device__ float half_at(const uint8_t* p) {
  return __half2float(__ushort_as_half(*reinterpret_cast<const uint16_t*>(p)));
}

// 32 bytes from a 2-byte aligned address.
__host__ __device__ void bytes32(const uint8_t* p, uint8_t out[32]) {
  const auto* words = reinterpret_cast<const uint16_t*>(p);
  for (int i = 0; i < 16; ++i) {
    const uint16_t w = words[i];
    out[2 * i] = static_cast<uint8_t>(w & 0xff);
    out[2 * i + 1] = static_cast<uint8_t>(w >> 8);
  }
}

// gguf_scale_min_k4, on the device.
__host__ __device__ void scale_min_k4(int j, const uint8_t* q, float* scale, float* min) {
  if (j < 4) {
    *scale = static_cast<float>(q[j] & 63);
    *min = static_cast<float>(q[j + 4] & 63);
  } else {
    *scale = static_cast<float>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *min = static_cast<float>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Unit u (elements 32u .. 32u + 31) of a row, as the specification's dequantizer writes them.
template <DType kType>
__host__ __device__ void decode_unit(const uint8_t* row, uint32_t u, float w[kUnit]) {
  uint8_t q[32];
  if constexpr (kType == DType::kQ8_0) {
    const uint8_t* block = row + size_t{u} * sizeof(GgufBlockQ8_0);
    const float d = half_at(block);
    bytes32(block + 2, q);
    for (int i = 0; i < 32; ++i) w[i] = mul_rn(static_cast<float>(static_cast<int8_t>(q[i])), d);
  } else if constexpr (kType == DType::kQ4_0) {
    const uint8_t* block = row + size_t{u} * sizeof(GgufBlockQ4_0);
    const float d = half_at(block);
    const auto* words = reinterpret_cast<const uint16_t*>(block + 2);
    for (int i = 0; i < 8; ++i) {
      const uint16_t pair = words[i];
      for (int b = 0; b < 2; ++b) {
        const uint8_t byte = static_cast<uint8_t>(pair >> (8 * b));
        w[2 * i + b] = mul_rn(static_cast<float>((byte & 0x0F) - 8), d);
        w[2 * i + b + 16] = mul_rn(static_cast<float>((byte >> 4) - 8), d);
      }
    }
  } else if constexpr (kType == DType::kQ4_K || kType == DType::kQ5_K) {
    constexpr bool kFifthBit = kType == DType::kQ5_K;
    constexpr size_t kBlockBytes = kFifthBit ? sizeof(GgufBlockQ5K) : sizeof(GgufBlockQ4K);
    const uint8_t* block = row + size_t{u / 8} * kBlockBytes;
    const uint32_t sub = u % 8, chunk = sub / 2, half = sub % 2;
    const float d = half_at(block), dmin = half_at(block + 2);
    float sc, m;
    scale_min_k4(static_cast<int>(sub), block + 4, &sc, &m);
    const float d1 = mul_rn(d, sc), m1 = mul_rn(dmin, m);
    const uint8_t* qs = block + (kFifthBit ? 48 : 16) + 32 * chunk;
    const uint8_t* qh = block + 16;
    for (int l = 0; l < 32; ++l) {
      int value = half == 0 ? qs[l] & 0xF : qs[l] >> 4;
      if constexpr (kFifthBit) {
        if ((qh[l] >> (2 * chunk + half)) & 1) value += 16;
      }
      w[l] = sub_rn(mul_rn(d1, static_cast<float>(value)), m1);
    }
  } else {
    static_assert(kType == DType::kQ6_K);
    const uint8_t* block = row + size_t{u / 8} * sizeof(GgufBlockQ6K);
    const uint32_t first = kUnit * (u % 8), h = first / 128, k = (first % 128) / 32;
    const float d = half_at(block + offsetof(GgufBlockQ6K, d));
    const auto* scales = reinterpret_cast<const int8_t*>(block + offsetof(GgufBlockQ6K, scales)) + 8 * h + 2 * k;
    uint8_t high[32];
    bytes32(block + offsetof(GgufBlockQ6K, ql) + 64 * h + 32 * (k & 1), q);
    bytes32(block + offsetof(GgufBlockQ6K, qh) + 32 * h, high);
    for (int l = 0; l < 32; ++l) {
      const int low = k < 2 ? q[l] & 0xF : q[l] >> 4;
      const int value = (low | (((high[l] >> (2 * k)) & 3) << 4)) - 32;
      w[l] = mul_rn(mul_rn(d, static_cast<float>(scales[l / 16])), static_cast<float>(value));
    }
  }
}

__host__ __device__ constexpr size_t block_bytes(DType type) {
  switch (type) {
    case DType::kQ8_0: return sizeof(GgufBlockQ8_0);
    case DType::kQ4_0: return sizeof(GgufBlockQ4_0);
    case DType::kQ4_K: return sizeof(GgufBlockQ4K);
    case DType::kQ5_K: return sizeof(GgufBlockQ5K);
    default: return sizeof(GgufBlockQ6K);
  }
}
__host__ __device__ constexpr uint32_t block_elements(DType type) { return type == DType::kQ8_0 || type == DType::kQ4_0 ? 32 : 256; }
// The bytes of a row of `cols` elements (a multiple of the block).
__host__ __device__ constexpr size_t row_bytes_of(DType type, uint32_t cols) {
  return size_t{cols} / block_elements(type) * block_bytes(type);
}

// A [rows, cols] matrix of kType blocks. kFast: pieces with factored scales
// (cuda_gguf_pieces.cuh), which need 16-byte aligned activations and, for
// Q4_K/Q5_K, 16-byte aligned weights; otherwise each unit of 32 weights is
// decoded as the specification writes it and the activations are read one by one.
template <DType kType, bool kFast>
struct GgufMatrix {
  struct Row {
    const uint8_t* bytes;
    __device__ const void* weights() const { return bytes; }
  };
  static constexpr uint32_t kColsPerThread = kFast ? gguf::PieceOf<kType>::type::kWeights : kUnit;
  const uint8_t* w;
  uint32_t cols;

  __device__ size_t row_bytes() const { return row_bytes_of(kType, cols); }

  __device__ Row row(uint32_t r) const { return Row{w + r * row_bytes()}; }

  template <uint32_t kRows, typename Activation>
  __device__ static void dot_rows(const GgufMatrix& m, const Row (&rows)[kRows], const Activation& act,
                                  uint32_t index, uint32_t count, float (&acc)[kRows]) {
#pragma unroll
    for (uint32_t r = 0; r < kRows; ++r) acc[r] = 0.0f;
    if constexpr (kFast) {
      using Piece = typename gguf::PieceOf<kType>::type;
      // Rows are always valid (the kernel repeats a real row past the end): no branches, loads issued together.
      const auto piece = [&](uint32_t c) {
        const uint32_t p = c / Piece::kWeights;
        typename Piece::Codes codes[kRows];
#pragma unroll
        for (uint32_t r = 0; r < kRows; ++r) codes[r] = Piece::load(rows[r].bytes, p);
        float a[Piece::kWeights], sums[Piece::kRuns];
        gguf::piece_activations<Piece>(p, [&](uint32_t column, float* out) { act.at4(column, out); }, a, sums);
#pragma unroll
        for (uint32_t r = 0; r < kRows; ++r) acc[r] += Piece::dot(codes[r], a, sums);
      };
      batched_columns<kGemvBatch / 2>(index * Piece::kWeights, count * Piece::kWeights, m.cols, piece);
    } else {
      for (uint32_t u = index; u < m.cols / kUnit; u += count) {
        float a[kUnit];
#pragma unroll
        for (uint32_t i = 0; i < kUnit; ++i) a[i] = act.at(u * kUnit + i);
#pragma unroll
        for (uint32_t r = 0; r < kRows; ++r) {
          float w[kUnit];
          decode_unit<kType>(rows[r].bytes, u, w);
#pragma unroll
          for (uint32_t i = 0; i < kUnit; ++i) acc[r] = fmaf(w[i], a[i], acc[r]);
        }
      }
    }
  }
};

// Whether the fast path can read these weights and activations: not where
// QWEN35_CUDA_GGUF_EXACT=1 keeps every gemv on the exact decoding (to compare
// the two paths' speed and to run the conformance checks over the exact one).
template <DType kType>
bool fast_ok(DevicePtr w, const float* x, const LaunchContext& ctx) {
  const bool wide_weight_loads = kType == DType::kQ4_K || kType == DType::kQ5_K;
  return !ctx.exact_gguf && aligned16(x) &&
         (wide_weight_loads ? aligned16(as<const void>(w)) : (w.address & 1) == 0);
}

template <DType kType, typename Body>
void with_gguf(bool fast, Body body) {
  with_matrix<GgufMatrix<kType, true>, GgufMatrix<kType, false>>(fast, body);
}

template <DType kType>
void check_shape(uint32_t cols) {
  QWEN35_ASSERT(cols % block_elements(kType) == 0);
}

template <DType kType>
void gemv(const GemvArgs& a, const LaunchContext& ctx) {
  check_shape<kType>(a.cols);
  const float* x = as<const float>(a.x);
  with_gguf<kType>(fast_ok<kType>(a.w, x, ctx), [&](auto tag) {
    using M = decltype(tag);
    const M m{as<const uint8_t>(a.w), a.cols};
    launch_gemv_rows(GemvTarget<M>{.m0 = m, .m1 = m, .y0 = as<float>(a.y), .y1 = nullptr, .residual = nullptr,
                                   .rows0 = a.rows, .rows1 = 0},
                     PlainActivation{x}, ctx);
  });
}

template <DType kType>
void gemv_pair(const GemvPairArgs& a, const LaunchContext& ctx) {
  check_shape<kType>(a.cols);
  const float* x = as<const float>(a.x);
  with_gguf<kType>(fast_ok<kType>(a.w0, x, ctx) && fast_ok<kType>(a.w1, x, ctx), [&](auto tag) {
    using M = decltype(tag);
    launch_gemv_rows(GemvTarget<M>{.m0 = M{as<const uint8_t>(a.w0), a.cols}, .m1 = M{as<const uint8_t>(a.w1), a.cols},
                                   .y0 = as<float>(a.y0), .y1 = as<float>(a.y1), .residual = nullptr,
                                   .rows0 = a.rows0, .rows1 = a.rows1},
                     PlainActivation{x}, ctx);
  });
}

template <DType kType>
void gemv_silu_gate(const GemvSiluGateArgs& a, const LaunchContext& ctx) {
  check_shape<kType>(a.cols);
  const PlainActivation act = silu_gate_activation(as<const float>(a.gate), as<const float>(a.up), a.cols, ctx);
  with_gguf<kType>(fast_ok<kType>(a.w, act.x, ctx), [&](auto tag) {
    using M = decltype(tag);
    const M m{as<const uint8_t>(a.w), a.cols};
    launch_gemv_rows(GemvTarget<M>{.m0 = m, .m1 = m, .y0 = as<float>(a.y), .y1 = nullptr,
                                   .residual = as<const float>(a.residual), .rows0 = a.rows, .rows1 = 0},
                     act, ctx.after_kernel());
  });
}

template <DType kType>
__global__ void row_to_f32_kernel(const uint8_t* row, float* y, uint32_t units) {
  start_after_previous_kernel();
  for (uint32_t u = blockIdx.x * blockDim.x + threadIdx.x; u < units; u += gridDim.x * blockDim.x) {
    float w[kUnit];
    decode_unit<kType>(row, u, w);
#pragma unroll
    for (uint32_t i = 0; i < kUnit; ++i) y[size_t{u} * kUnit + i] = w[i];
  }
}

template <DType kType>
void row_to_f32(const RowToF32Args& a, const LaunchContext& ctx) {
  check_shape<kType>(a.cols);
  const uint32_t units = a.cols / kUnit;
  launch_kernel(ctx, row_to_f32_kernel<kType>, blocks_for(units, 128), 128,
      as<const uint8_t>(a.w) + size_t{a.row} * row_bytes_of(kType, a.cols), as<float>(a.y), units);
}

template <DType kType>
void add_for(std::vector<KernelSpec>& specs, const std::string& name) {
  specs.push_back(kernel_spec<GemvArgs, gemv<kType>>("gemv_" + name));
  specs.push_back(kernel_spec<GemvPairArgs, gemv_pair<kType>>("gemv_pair_" + name));
  specs.push_back(kernel_spec<GemvSiluGateArgs, gemv_silu_gate<kType>>("gemv_silu_gate_" + name));
  specs.push_back(kernel_spec<RowToF32Args, row_to_f32<kType>>("row_to_f32_" + name));
}

}  // namespace

void decode_gguf_unit_on_host(DType type, const uint8_t* row, uint32_t unit, float out[32]) {
  switch (type) {
    case DType::kQ8_0: return decode_unit<DType::kQ8_0>(row, unit, out);
    case DType::kQ4_0: return decode_unit<DType::kQ4_0>(row, unit, out);
    case DType::kQ4_K: return decode_unit<DType::kQ4_K>(row, unit, out);
    case DType::kQ5_K: return decode_unit<DType::kQ5_K>(row, unit, out);
    case DType::kQ6_K: return decode_unit<DType::kQ6_K>(row, unit, out);
    default: QWEN35_ASSERT(false && "not a ggml block type");
  }
}

namespace {
template <DType kType>
float row_dot_on_host(const uint8_t* row, const float* x, uint32_t cols) {
  using Piece = typename gguf::PieceOf<kType>::type;
  float acc = 0.0f;
  for (uint32_t p = 0; p < cols / Piece::kWeights; ++p) {
    const typename Piece::Codes codes = Piece::load(row, p);
    float a[Piece::kWeights], sums[Piece::kRuns];
    gguf::piece_activations<Piece>(
        p, [&](uint32_t column, float* out) { std::memcpy(out, x + column, 4 * sizeof(float)); }, a, sums);
    acc += Piece::dot(codes, a, sums);
  }
  return acc;
}
}  // namespace

float gguf_row_dot_on_host(DType type, const uint8_t* row, const float* x, uint32_t cols) {
  switch (type) {
    case DType::kQ8_0: return row_dot_on_host<DType::kQ8_0>(row, x, cols);
    case DType::kQ4_0: return row_dot_on_host<DType::kQ4_0>(row, x, cols);
    case DType::kQ4_K: return row_dot_on_host<DType::kQ4_K>(row, x, cols);
    case DType::kQ5_K: return row_dot_on_host<DType::kQ5_K>(row, x, cols);
    case DType::kQ6_K: return row_dot_on_host<DType::kQ6_K>(row, x, cols);
    default: QWEN35_ASSERT(false && "not a ggml block type");
  }
  return 0.0f;
}

void add_gguf_kernels(std::vector<KernelSpec>& specs) {
  add_for<DType::kQ8_0>(specs, "q8_0");
  add_for<DType::kQ4_0>(specs, "q4_0");
  add_for<DType::kQ4_K>(specs, "q4_k");
  add_for<DType::kQ5_K>(specs, "q5_k");
  add_for<DType::kQ6_K>(specs, "q6_k");
}

}  // namespace qwen35::cuda
