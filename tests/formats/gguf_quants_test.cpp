// ggml block types: the specification (qwen35/gguf_quants.h) against an
// element-by-element transcription of llama.cpp's dequantize_row_* (bit-exact,
// random blocks), the quantizers' round-trip error, and every backend's gemv,
// fused ops and row dequantization against dequantize-then-float64, with the
// CPU kernels run for every SIMD target compiled in and supported here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "cpu/simd.h"
#include "host/host_backend.h"
#include "qwen35/dense_weights.h"
#include "gguf_test_util.h"
#include "qwen35/gguf_quants.h"
#include "support/backend_skip.h"
#include "support/test_support.h"

namespace qwen35::testing {
namespace {

constexpr DType kTypes[] = {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K};

float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

// Element i (< block size) of one block, read from the byte offsets of ggml-common.h.
float reference_element(DType type, const uint8_t* b, int i) {
  switch (type) {
    case DType::kQ8_0:
      return static_cast<float>(static_cast<int8_t>(b[2 + i])) * half_at(b);
    case DType::kQ4_0: {
      const uint8_t byte = b[2 + i % 16];
      return static_cast<float>((i < 16 ? byte & 15 : byte >> 4) - 8) * half_at(b);
    }
    case DType::kQ4_K:
    case DType::kQ5_K: {
      const uint8_t* scales = b + 4;
      const bool q5 = type == DType::kQ5_K;
      const uint8_t* qh = b + 16;
      const uint8_t* qs = b + (q5 ? 48 : 16);
      const int chunk = i / 64, high = (i % 64) / 32, l = i % 32, j = 2 * chunk + high;
      const int sc = j < 4 ? scales[j] & 63 : (scales[j + 4] & 15) | ((scales[j - 4] >> 6) << 4);
      const int m = j < 4 ? scales[j + 4] & 63 : (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
      int q = high ? qs[32 * chunk + l] >> 4 : qs[32 * chunk + l] & 15;
      if (q5) q += ((qh[l] >> j) & 1) * 16;
      return half_at(b) * static_cast<float>(sc) * static_cast<float>(q) - half_at(b + 2) * static_cast<float>(m);
    }
    case DType::kQ6_K: {
      const uint8_t* ql = b;
      const uint8_t* qh = b + 128;
      const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
      const int h = i / 128, k = (i % 128) / 32, l = i % 32;
      const uint8_t low = ql[64 * h + l + 32 * (k & 1)];
      const int q = ((k < 2 ? low & 15 : low >> 4) | (((qh[32 * h + l] >> (2 * k)) & 3) << 4)) - 32;
      return half_at(b + 208) * static_cast<float>(sc[8 * h + l / 16 + 2 * k]) * static_cast<float>(q);
    }
    default:
      return NAN;
  }
}

TEST(GgufQuants, DequantizationIsBitExact) {
  for (DType type : kTypes) {
    SCOPED_TRACE(dtype_name(type));
    const size_t blocks = 7, bs = dtype_block_size(type);
    const std::vector<std::byte> bytes = random_blocks(type, blocks, 11);
    std::vector<float> y(blocks * bs);
    gguf_dequantize_row(type, bytes.data(), y.data(), y.size());
    for (size_t i = 0; i < y.size(); ++i) {
      const auto* block = reinterpret_cast<const uint8_t*>(bytes.data()) + i / bs * dtype_size(type);
      const float want = reference_element(type, block, static_cast<int>(i % bs));
      ASSERT_EQ(std::bit_cast<uint32_t>(y[i]), std::bit_cast<uint32_t>(want)) << "element " << i << ": " << y[i]
                                                                             << " vs " << want;
    }
  }
}

TEST(GgufQuants, QuantizersRoundTrip) {
  // RMS error relative to the RMS of uniform [-1, 1) data: about step / sqrt(12) / 0.58.
  const std::pair<DType, double> bounds[] = {
      {DType::kQ8_0, 0.006}, {DType::kQ4_0, 0.12}, {DType::kQ4_K, 0.1}, {DType::kQ5_K, 0.05}, {DType::kQ6_K, 0.03}};
  for (const auto& [type, bound] : bounds) {
    SCOPED_TRACE(dtype_name(type));
    const size_t n = 4 * 256;
    const std::vector<float> x = random_floats(n, 5);
    std::vector<std::byte> blocks(dtype_bytes(type, n));
    gguf_quantize_row(type, x.data(), blocks.data(), n);
    std::vector<float> y(n);
    gguf_dequantize_row(type, blocks.data(), y.data(), n);
    double err = 0, ref = 0;
    for (size_t i = 0; i < n; ++i) {
      err += (y[i] - x[i]) * double{y[i] - x[i]};
      ref += x[i] * double{x[i]};
    }
    const double relative = std::sqrt(err / ref);
    std::cout << "[ gguf     ] " << dtype_name(type) << " quantizer: relative RMS error " << relative << "\n";
    EXPECT_LE(relative, bound);
  }
  EXPECT_THROW(gguf_quantize_row(DType::kQ4_K, nullptr, nullptr, 100), Error);
}

// W x in double with W dequantized by the specification; `scale` gets sum |w x| (for tolerances).
std::vector<double> reference_gemv(DType type, const std::vector<std::byte>& w, uint32_t rows, uint32_t cols,
                                   const std::vector<float>& x, std::vector<double>& scale) {
  std::vector<double> y(rows);
  scale.assign(rows, 0);
  std::vector<float> row(cols);
  for (uint32_t r = 0; r < rows; ++r) {
    gguf_dequantize_row(type, w.data() + r * dtype_bytes(type, cols), row.data(), cols);
    for (uint32_t c = 0; c < cols; ++c) {
      y[r] += double{row[c]} * x[c];
      scale[r] += std::fabs(double{row[c]} * x[c]);
    }
  }
  return y;
}

void check_backend(GpuBackend& gpu) {
  const Stream s = gpu.default_stream();
  for (DType type : kTypes) {
    const uint32_t bs = static_cast<uint32_t>(dtype_block_size(type));
    // 33 rows: four bands of 8 and one row over; 250 rows of 4096 columns: the
    // CPU splits them into a share per thread, so bands also start mid-matrix.
    for (uint32_t rows : {1u, 5u, 33u, 250u}) {
      for (uint32_t cols : {bs, 3 * bs, 4096u}) {  // 4096: GPU gemvs split long rows over warps
        if (rows == 250 && cols != 4096) continue;
        SCOPED_TRACE(::testing::Message() << dtype_name(type) << " rows " << rows << " cols " << cols);
        Device d{gpu, {}};
        const std::vector<std::byte> w0 = random_blocks(type, rows * cols / bs, rows + cols);
        const std::vector<std::byte> w1 = random_blocks(type, rows * cols / bs, rows + cols + 1);
        const auto m0 = make_dense_weights(gpu, type, rows, cols, w0.data(), s);
        const auto m1 = make_dense_weights(gpu, type, rows, cols, w1.data(), s);
        EXPECT_EQ(m0->weight_bytes(), w0.size());
        const std::vector<float> x = random_floats(cols, 3, -2, 2);
        const std::vector<float> up = random_floats(cols, 4, -2, 2);
        const std::vector<float> residual = random_floats(rows, 5);
        const DevicePtr dx = d.put(x), dup = d.put(up), dres = d.put(residual);
        const DevicePtr y0 = d.put(std::vector<float>(rows, NAN)), y1 = d.put(std::vector<float>(rows, NAN));
        std::vector<double> scale0, scale1, scale_act;
        const std::vector<double> want0 = reference_gemv(type, w0, rows, cols, x, scale0);
        const std::vector<double> want1 = reference_gemv(type, w1, rows, cols, x, scale1);
        // float32 accumulation (one rounding per term and per block): relative to sum |w x|.
        const auto expect_close = [&](const std::vector<float>& got, const std::vector<double>& want,
                                      const std::vector<double>& scale, std::string_view what) {
          for (uint32_t r = 0; r < rows; ++r) {
            ASSERT_NEAR(got[r], want[r], 2e-6 * (scale[r] + 1)) << what << " row " << r;
          }
        };

        m0->gemv(gpu, dx, y0, s);
        expect_close(d.get(y0, rows), want0, scale0, "gemv");

        m0->gemv_gate_up_with(*m1, gpu, dx, y0, y1, s);
        expect_close(d.get(y0, rows), want0, scale0, "pair first");
        expect_close(d.get(y1, rows), want1, scale1, "pair second");

        // y = residual + W (silu(gate) * up), when the backend fuses it.
        std::vector<float> act(cols);
        for (uint32_t c = 0; c < cols; ++c) act[c] = static_cast<float>(x[c] / (1.0 + std::exp(-double{x[c]})) * up[c]);
        std::vector<double> want_act = reference_gemv(type, w0, rows, cols, act, scale_act);
        if (m0->supports(FusedOp::kSiluGateResidual)) {
          m0->gemv_silu_gate_resid(gpu, dx, dup, dres, y0, s);
          for (uint32_t r = 0; r < rows; ++r) want_act[r] += residual[r];
          expect_close(d.get(y0, rows), want_act, scale_act, "silu gate + residual");
        }

        std::vector<float> spec(cols);
        gguf_dequantize_row(type, w0.data() + (rows - 1) * dtype_bytes(type, cols), spec.data(), cols);
        const DevicePtr row = d.put(std::vector<float>(cols, NAN));
        m0->dequantize_row(gpu, rows - 1, row, s);
        const std::vector<float> got = d.get(row, cols);
        ASSERT_EQ(std::memcmp(got.data(), spec.data(), cols * sizeof(float)), 0) << "dequantize_row";
      }
    }
  }
}

TEST(GgufWeights, ReferenceBackendMatchesSpecification) {
  std::unique_ptr<GpuBackend> gpu = create_backend("reference");
  check_backend(*gpu);
}

// The GPU backends' GGUF kernels. Skipped where this build lacks the backend or
// the machine its device (CI runs Vulkan on Mesa's lavapipe).
class GgufGpuBackend : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufGpuBackend, KernelsMatchSpecification) {
  if (const std::string why = backend_unavailable(GetParam()); !why.empty()) GTEST_SKIP() << why;
  check_backend(*create_backend(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Backends, GgufGpuBackend, ::testing::Values("vulkan", "cuda"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

class GgufCpu : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { simd::force_target(GetParam()); }
  void TearDown() override { simd::force_target(0); }
};

TEST_P(GgufCpu, KernelsMatchSpecification) {
  std::unique_ptr<GpuBackend> gpu = create_backend("cpu", BackendOptions{.threads = 2});
  const auto probe = make_dense_weights(*gpu, DType::kQ8_0, 1, 32, random_blocks(DType::kQ8_0, 1, 1).data(),
                                        gpu->default_stream());
  EXPECT_TRUE(probe->supports(FusedOp::kSiluGate));
  check_backend(*gpu);
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, GgufCpu, ::testing::ValuesIn(simd::available_targets()),
                         [](const ::testing::TestParamInfo<int64_t>& info) { return simd::target_name(info.param); });

TEST(GgufWeights, RejectsRowsNotAMultipleOfTheBlock) {
  std::unique_ptr<GpuBackend> gpu = create_backend("reference");
  const std::vector<std::byte> w = random_blocks(DType::kQ4_K, 2, 1);
  EXPECT_THROW(
      {
        try {
          make_dense_weights(*gpu, DType::kQ4_K, 1, 300, w.data(), gpu->default_stream());
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("not a multiple of the Q4_K block size 256"), std::string::npos)
              << e.what();
          throw;
        }
      },
      Error);
}

// A backend without the GGUF kernels: placing the weights
// fails at load, naming the backend and the kernels, never at the first token.
class BareBackend final : public HostBackend {
 public:
  std::string name() const override { return "bare"; }
  std::string device_description() const override { return "no kernels"; }
};

TEST(GgufWeights, BackendWithoutTheKernelsFailsAtLoad) {
  BareBackend gpu;
  const std::vector<std::byte> w = random_blocks(DType::kQ6_K, 1, 1);
  try {
    make_dense_weights(gpu, DType::kQ6_K, 1, 256, w.data(), gpu.default_stream());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("backend 'bare' has no kernels for Q6_K weights (gemv_q6_k, "
                                         "row_to_f32_q6_k)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace qwen35::testing
