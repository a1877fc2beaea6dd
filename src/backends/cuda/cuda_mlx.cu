// MLX affine gemv family (qwen35/mlx_affine.h): 4- and 8-bit codes with F32,
// BF16 or F16 scales and biases, names "gemv_mlx8_bf16" and so on. Each weight
// is dequantized as the spec says, fma(scale, code, bias), then multiplied in
// f32. Vector path: each lane reads 16 bytes of codes (16 or 32 weights, all in
// one group since groups hold at least 32) and the matching activations.
#include <initializer_list>

#include "cuda_common.cuh"
#include "cuda_gemv_rows.cuh"
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "qwen35/mlx_affine.h"

namespace qwen35::cuda {
namespace {

template <uint32_t Bits, typename E, bool kVector>
struct MlxMatrix {
  using S = typename E::Storage;
  static constexpr uint32_t kPerWord = 32 / Bits;
  static constexpr uint32_t kColsPerThread = kVector ? 4 * kPerWord : 1;
  struct Row {
    const uint32_t* codes;
    const S* scales;
    const S* biases;
    __device__ const void* weights() const { return codes; }
  };
  const uint32_t* codes;
  const S* scales;
  const S* biases;
  uint32_t cols, group_size;

  // Code `i` of a word as a float, without the slow integer conversion: the code
  // goes into the low mantissa bits of 2^23, and 2^23 is subtracted (exact).
  __device__ static float code_value(uint32_t word, uint32_t i) {
    constexpr uint32_t kTwo23 = 0x4b000000u;
    uint32_t bits;
    if constexpr (Bits == 8) {
      bits = __byte_perm(word, kTwo23, i | 0x7540u);  // bytes: code i, 0, 0, 0x4b
    } else {
      bits = ((word >> (i * Bits)) & ((1u << Bits) - 1u)) | kTwo23;
    }
    return __uint_as_float(bits) - 8388608.0f;
  }

  __device__ size_t row_bytes() const { return size_t{cols} / kPerWord * sizeof(uint32_t); }

  __device__ Row row(uint32_t r) const {
    const size_t groups = size_t{r} * (cols / group_size);
    return Row{codes + size_t{r} * (cols / kPerWord), scales + groups, biases + groups};
  }

  template <uint32_t kRows, typename Activation>
  __device__ static void dot_rows(const MlxMatrix& m, const Row (&rows)[kRows], const Activation& act,
                                  uint32_t index, uint32_t count, float (&acc)[kRows]) {
#pragma unroll
    for (uint32_t r = 0; r < kRows; ++r) acc[r] = 0.0f;
    if constexpr (kVector) {
      constexpr uint32_t kPerChunk = 4 * kPerWord;  // weights in 16 bytes of codes
      const auto chunk = [&](uint32_t c) {
        uint4 packed[kRows];
#pragma unroll
        for (uint32_t r = 0; r < kRows; ++r) packed[r] = load16<true>(reinterpret_cast<const uint4*>(rows[r].codes + c / kPerWord));
        float a[kPerChunk];
#pragma unroll
        for (uint32_t i = 0; i < kPerChunk; i += 8) act.at8(c + i, a + i);
        // sum (scale q + bias) a = scale sum q a + bias sum a: one FMA per weight,
        // and the activations' sum is shared by the rows.
        float a_sum = 0.0f;
#pragma unroll
        for (uint32_t i = 0; i < kPerChunk; ++i) a_sum += a[i];
        const uint32_t group = c / m.group_size;
#pragma unroll
        for (uint32_t r = 0; r < kRows; ++r) {
          const uint32_t words[4] = {packed[r].x, packed[r].y, packed[r].z, packed[r].w};
          float dot = 0.0f;
#pragma unroll
          for (uint32_t i = 0; i < kPerChunk; ++i) dot = fmaf(code_value(words[i / kPerWord], i % kPerWord), a[i], dot);
          acc[r] = fmaf(E::load(rows[r].scales[group]), dot, fmaf(E::load(rows[r].biases[group]), a_sum, acc[r]));
        }
      };
      // Half the dense batch: a chunk is already 16 or 32 weights (rows are always valid: no branches).
      batched_columns<kGemvBatch / 2>(index * kPerChunk, count * kPerChunk, m.cols, chunk);
    } else {
      for (uint32_t c = index; c < m.cols; c += count) {
        const float a = act.at(c);
        const uint32_t group = c / m.group_size;
#pragma unroll
        for (uint32_t r = 0; r < kRows; ++r) {
          const uint32_t code = (rows[r].codes[c / kPerWord] >> ((c % kPerWord) * Bits)) & ((1u << Bits) - 1u);
          const float w = fmaf(E::load(rows[r].scales[group]), static_cast<float>(code), E::load(rows[r].biases[group]));
          acc[r] = fmaf(w, a, acc[r]);
        }
      }
    }
  }
};

template <uint32_t Bits, typename E, typename Body>
void with_mlx(bool vector_path, Body body) {
  with_matrix<MlxMatrix<Bits, E, true>, MlxMatrix<Bits, E, false>>(vector_path, body);
}

template <typename M>
M matrix(const MlxMatrixRef& w, uint32_t cols, uint32_t group_size) {
  using S = typename M::S;
  return M{as<const uint32_t>(w.codes), as<const S>(w.scales), as<const S>(w.biases), cols, group_size};
}

// The vector path needs 16-byte aligned codes (then every row is: cols is a
// multiple of the group size, at least 32) and activations, and whole chunks.
template <uint32_t Bits>
bool vector_ok(const MlxMatrixRef& w, uint32_t cols, uint32_t group_size, std::initializer_list<DevicePtr> acts) {
  bool ok = aligned16(as<const void>(w.codes)) && cols % (128 / Bits) == 0 && group_size % (128 / Bits) == 0;
  for (DevicePtr p : acts) ok = ok && aligned16(as<const void>(p));
  return ok;
}

template <uint32_t Bits, typename E>
void gemv(const MlxGemvArgs& a, const LaunchContext& ctx) {
  QWEN35_ASSERT(a.group_size > 0 && a.cols % a.group_size == 0);
  with_mlx<Bits, E>(vector_ok<Bits>(a.w, a.cols, a.group_size, {a.x}), [&](auto tag) {
    using M = decltype(tag);
    const M m = matrix<M>(a.w, a.cols, a.group_size);
    launch_gemv_rows(GemvTarget<M>{.m0 = m, .m1 = m, .y0 = as<float>(a.y), .y1 = nullptr, .residual = nullptr,
                                   .rows0 = a.rows, .rows1 = 0},
                     PlainActivation{as<const float>(a.x)}, ctx);
  });
}

template <uint32_t Bits, typename E>
void gemv_pair(const MlxGemvPairArgs& a, const LaunchContext& ctx) {
  QWEN35_ASSERT(a.group_size > 0 && a.cols % a.group_size == 0);
  const bool vector_path =
      vector_ok<Bits>(a.w0, a.cols, a.group_size, {a.x}) && vector_ok<Bits>(a.w1, a.cols, a.group_size, {});
  with_mlx<Bits, E>(vector_path, [&](auto tag) {
    using M = decltype(tag);
    launch_gemv_rows(GemvTarget<M>{.m0 = matrix<M>(a.w0, a.cols, a.group_size),
                                   .m1 = matrix<M>(a.w1, a.cols, a.group_size), .y0 = as<float>(a.y0),
                                   .y1 = as<float>(a.y1), .residual = nullptr, .rows0 = a.rows0, .rows1 = a.rows1},
                     PlainActivation{as<const float>(a.x)}, ctx);
  });
}

template <uint32_t Bits, typename E>
void gemv_silu_gate(const MlxGemvSiluGateArgs& a, const LaunchContext& ctx) {
  QWEN35_ASSERT(a.group_size > 0 && a.cols % a.group_size == 0);
  const PlainActivation act = silu_gate_activation(as<const float>(a.gate), as<const float>(a.up), a.cols, ctx);
  with_mlx<Bits, E>(vector_ok<Bits>(a.w, a.cols, a.group_size, {DevicePtr{reinterpret_cast<uintptr_t>(act.x)}}),
                    [&](auto tag) {
    using M = decltype(tag);
    const M m = matrix<M>(a.w, a.cols, a.group_size);
    launch_gemv_rows(GemvTarget<M>{.m0 = m, .m1 = m, .y0 = as<float>(a.y), .y1 = nullptr,
                                   .residual = as<const float>(a.residual), .rows0 = a.rows, .rows1 = 0},
                     act, ctx.after_kernel());
  });
}

// Bit-identical to the reference: the same single fma per weight.
template <uint32_t Bits, typename E>
__global__ void row_to_f32_kernel(const uint32_t* codes, const typename E::Storage* scales,
                                  const typename E::Storage* biases, float* y, uint32_t cols, uint32_t group_size) {
  start_after_previous_kernel();
  constexpr uint32_t kPerWord = 32 / Bits;
  for (uint32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += gridDim.x * blockDim.x) {
    const uint32_t code = (codes[c / kPerWord] >> ((c % kPerWord) * Bits)) & ((1u << Bits) - 1u);
    const uint32_t g = c / group_size;
    y[c] = fmaf(E::load(scales[g]), static_cast<float>(code), E::load(biases[g]));
  }
}

template <uint32_t Bits, typename E>
void row_to_f32(const MlxRowToF32Args& a, const LaunchContext& ctx) {
  using S = typename E::Storage;
  QWEN35_ASSERT(a.group_size > 0 && a.cols % a.group_size == 0);
  const size_t groups = size_t{a.row} * (a.cols / a.group_size);
  launch_kernel(ctx, row_to_f32_kernel<Bits, E>, blocks_for(a.cols, 256), 256,
      as<const uint32_t>(a.w.codes) + size_t{a.row} * (a.cols / (32 / Bits)), as<const S>(a.w.scales) + groups,
      as<const S>(a.w.biases) + groups, as<float>(a.y), a.cols, a.group_size);
}

template <uint32_t Bits, typename E>
void add_for(std::vector<KernelSpec>& specs, const std::string& scale_dtype) {
  const std::string suffix = "mlx" + std::to_string(Bits) + "_" + scale_dtype;
  specs.push_back(kernel_spec<MlxGemvArgs, gemv<Bits, E>>("gemv_" + suffix));
  specs.push_back(kernel_spec<MlxGemvPairArgs, gemv_pair<Bits, E>>("gemv_pair_" + suffix));
  specs.push_back(kernel_spec<MlxGemvSiluGateArgs, gemv_silu_gate<Bits, E>>("gemv_silu_gate_" + suffix));
  specs.push_back(kernel_spec<MlxRowToF32Args, row_to_f32<Bits, E>>("row_to_f32_" + suffix));
}

}  // namespace

void add_mlx_kernels(std::vector<KernelSpec>& specs) {
  add_for<4, F32Elem>(specs, "f32");
  add_for<4, BF16Elem>(specs, "bf16");
  add_for<4, F16Elem>(specs, "f16");
  add_for<8, F32Elem>(specs, "f32");
  add_for<8, BF16Elem>(specs, "bf16");
  add_for<8, F16Elem>(specs, "f16");
}

}  // namespace qwen35::cuda
