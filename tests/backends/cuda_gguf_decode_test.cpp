// The CUDA GGUF kernels' block decoding and fast dot products, run on the host:
// the decoding bit for bit the specification's dequantizer for every unit of 32
// weights of random blocks, the gemvs' piece-by-piece dots against float64.
// Needs no GPU (the kernels call the same functions on the device).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "cuda_gguf_host.h"
#include "formats/gguf_test_util.h"
#include "qwen35/gguf_quants.h"
#include "support/test_support.h"

namespace qwen35::testing {
namespace {

TEST(CudaGgufDecode, EveryUnitMatchesTheSpecificationBitForBit) {
  for (DType type : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K}) {
    SCOPED_TRACE(dtype_name(type));
    const size_t block = dtype_block_size(type), blocks = 3;
    const size_t cols = blocks * block;
    for (uint32_t seed : {1u, 2u, 3u}) {
      const std::vector<std::byte> bytes = random_blocks(type, blocks, seed);
      std::vector<float> spec(cols), got(cols);
      gguf_dequantize_row(type, bytes.data(), spec.data(), cols);
      for (uint32_t unit = 0; unit < cols / 32; ++unit) {
        cuda::decode_gguf_unit_on_host(type, reinterpret_cast<const uint8_t*>(bytes.data()), unit, got.data() + 32 * unit);
      }
      for (size_t i = 0; i < cols; ++i) {
        ASSERT_EQ(std::memcmp(&got[i], &spec[i], sizeof(float)), 0) << "element " << i << ": " << got[i] << " vs "
                                                                    << spec[i];
      }
    }
  }
}

// Rows of several super-blocks (every piece position of every block), random
// codes and scales, activations of mixed signs and magnitudes: within the
// conformance suite's bound on the GPU, 2e-6 of sum |w x|.
TEST(CudaGgufDecode, PieceDotsMatchFloat64) {
  for (DType type : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K}) {
    SCOPED_TRACE(dtype_name(type));
    const uint32_t cols = 4 * 256;
    for (uint32_t seed : {1u, 2u, 3u, 4u}) {
      const std::vector<std::byte> bytes = random_blocks(type, cols / dtype_block_size(type), seed);
      const std::vector<float> x = seed % 2 ? random_floats(cols, seed + 10, -2, 2) : varied_floats(cols, seed + 10);
      std::vector<float> w(cols);
      gguf_dequantize_row(type, bytes.data(), w.data(), cols);
      double want = 0, scale = 0;
      for (uint32_t c = 0; c < cols; ++c) {
        want += double{w[c]} * x[c];
        scale += std::fabs(double{w[c]} * x[c]);
      }
      const float got = cuda::gguf_row_dot_on_host(type, reinterpret_cast<const uint8_t*>(bytes.data()), x.data(), cols);
      EXPECT_NEAR(got, want, 2e-6 * (scale + 1)) << "seed " << seed;
    }
  }
}

}  // namespace
}  // namespace qwen35::testing
