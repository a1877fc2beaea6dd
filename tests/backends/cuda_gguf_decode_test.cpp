// The CUDA GGUF kernels' block decoding, run on the host: bit for bit the
// specification's dequantizer for every unit of 32 weights of random blocks.
// Needs no GPU (the kernels call the same decode function on the device).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "cuda_gguf_host.h"
#include "formats/gguf_test_util.h"
#include "qwen35/gguf_quants.h"

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

}  // namespace
}  // namespace qwen35::testing
