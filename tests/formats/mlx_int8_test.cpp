// MLX affine weights against x in 8 bits (BackendOptions::int8_activations):
// x as the integer kernels read it, the scalar twin against
// dequantize-then-float64 within the bound the quantization of x allows, and
// the integer kernels of every SIMD target (the VNNI one too, where the CPU
// has it) against the twin, directly and through the CPU backend.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <tuple>
#include <utility>

#include "cpu/int8_activations.h"
#include "cpu/mlx_int8.h"
#include "cpu/mlx_x16.h"
#include "cpu/simd.h"
#include "formats/mlx_affine_weights.h"
#include "gguf_test_util.h"
#include "mlx_int8_util.h"
#include "mlx_test_util.h"
#include "support/band_passes.h"

namespace qwen35::testing {
namespace {

TEST(MlxInt8Activations, CodesInCodeOrderWithTheirBlockScales) {
  const uint32_t cols = 1024;
  const std::vector<float> x = varied_floats(cols, 1);
  std::vector<float> gguf_scratch(cpu::int8_activation_floats(cols));
  const cpu::Int8Activations q = cpu::quantize_activations(x.data(), cols, gguf_scratch.data());
  for (uint32_t bits : kBits) {
    for (uint32_t gs : kGroupSizes) {
      SCOPED_TRACE(::testing::Message() << bits << " bits, group " << gs);
      const Quantized m(x, bits, gs);
      for (uint32_t c = 0; c < cols; ++c) {
        // Byte c * bits / 8 of a row's codes holds element c; with 4 bits, even
        // elements in the low nibbles and odd ones in the high.
        const int8_t code = bits == 8 ? m.x.codes[c] : m.x.codes[c % 2 * (cols / 2) + c / 2];
        ASSERT_EQ(code, q.q[c]) << "element " << c;
        ASSERT_EQ(m.x.lane_scales[c * bits / 32], q.scale[c / 32]) << "element " << c;
      }
      if (bits == 4) {  // per 512 elements (256 code bytes), block 4 v + c's scale in lane 4 c + v
        for (uint32_t quad = 0; quad < cols / 512; ++quad) {
          for (uint32_t lane = 0; lane < 16; ++lane) {
            ASSERT_EQ(m.x.quad_scales[16 * quad + lane], q.scale[16 * quad + 4 * (lane % 4) + lane / 4])
                << "quad " << quad << ", lane " << lane;
          }
        }
      }
      for (uint32_t g = 0; g < cols / gs; ++g) {  // the sums of x as quantized
        double sum = 0, magnitude = 0;
        for (uint32_t k = g * gs; k < (g + 1) * gs; ++k) {
          sum += double{q.scale[k / 32]} * q.q[k];
          magnitude += std::fabs(double{q.scale[k / 32]} * q.q[k]);
        }
        ASSERT_NEAR(m.x.group_sums[g], sum, 1e-6 * magnitude) << "group " << g;
      }
    }
  }
}

TEST(MlxInt8Activations, TwinWithinTheRoundingOfX) {
  for (uint32_t bits : kBits) {
    for (uint32_t gs : kGroupSizes) {
      for (DType dtype : kScaleTypes) {
        SCOPED_TRACE(::testing::Message() << bits << " bits, group " << gs << ", " << dtype_suffix(dtype));
        const QuantizedMatrix m = quantize_random(16, 1024, {bits, gs}, dtype, bits + gs);
        const std::vector<float> x = varied_floats(m.cols, 5);
        const Quantized q(x, bits, gs);
        const Reference ref = reference(m, x);
        double moved = 0;
        for (uint32_t r = 0; r < m.rows; ++r) {
          const double got = cpu::mlx_int8_row_dot(rows_of(m), r, q.x);
          ASSERT_LE(std::fabs(got - ref.y[r]), ref.rounding[r] * 1.0001 + 1e-6 * ref.magnitude[r]) << "row " << r;
          moved += std::fabs(got - ref.y[r]) / ref.rounding[r];
        }
        // The bound is not loose to the point of meaning nothing: rounding
        // errors partly cancel, but they do move the result.
        EXPECT_GT(moved / m.rows, 1e-3);
      }
    }
  }
}

TEST(MlxInt8Activations, NonFiniteBlockGivesNaN) {
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    const QuantizedMatrix m = quantize_random(2, 128, {4, 64}, DType::kBF16, 7);
    std::vector<float> x = random_floats(128, 8);
    x[100] = bad;
    const Quantized q(x, 4, 64);
    EXPECT_TRUE(std::isnan(cpu::mlx_int8_row_dot(rows_of(m), 1, q.x))) << bad;
  }
}

class MlxInt8Rows : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { simd::force_target(GetParam()); }
  void TearDown() override { simd::force_target(0); }
};

// cpu::mlx_int8_rows against the twin, with a base row, over row ranges that
// start mid-matrix, and rows whose codes end in part of a full vector (384
// columns of 4 bits: 192 bytes, three 64-byte vectors or one and 16-byte ones).
TEST_P(MlxInt8Rows, MatchTheTwin) {
  for (uint32_t bits : kBits) {
    for (uint32_t gs : kGroupSizes) {
      for (DType dtype : kScaleTypes) {
        for (const auto& [cols, begin, rows] :
             {std::tuple{128u, 0u, 7u}, {384u, 0u, 7u}, {128u, 3u, 37u}, {1152u, 1u, 9u}, {4096u, 0u, 3u}}) {
          if (cols % gs != 0) continue;
          SCOPED_TRACE(::testing::Message() << bits << " bits, group " << gs << ", " << dtype_suffix(dtype) << ", cols "
                                            << cols << ", rows " << begin << ".." << rows);
          const QuantizedMatrix m = quantize_random(rows, cols, {bits, gs}, dtype, bits + gs + cols);
          const std::vector<float> x = varied_floats(cols, 3);
          const std::vector<float> base = random_floats(rows, 4);
          const Quantized q(x, bits, gs);
          const Reference ref = reference(m, x);
          std::vector<float> y(rows, std::nanf(""));
          cpu::mlx_int8_rows(rows_of(m), q.x, base.data(), y.data(), begin, rows);
          for (uint32_t r = 0; r < begin; ++r) ASSERT_TRUE(std::isnan(y[r])) << "row " << r << " is outside the range";
          for (uint32_t r = begin; r < rows; ++r) {
            const double want = base[r] + cpu::mlx_int8_row_dot(rows_of(m), r, q.x);
            ASSERT_NEAR(y[r], want, kKernelTolerance * (ref.magnitude[r] + 1)) << "row " << r;
          }
        }
      }
    }
  }
}

// cpu::mlx_int8_bands, in two bands and in four, gives every row of its
// passes mlx_int8_rows' bits (the rows of a pass of the bands and the rows
// left over alike) and writes no other row.
TEST_P(MlxInt8Rows, BandsGiveTheRowsBits) {
  for (uint32_t bits : kBits) {
    for (uint32_t gs : kGroupSizes) {
      for (DType dtype : kScaleTypes) {
        for (uint32_t cols : {128u, 384u, 1152u}) {
          if (cols % gs != 0) continue;
          const QuantizedMatrix m = quantize_random(kBandRows, cols, {bits, gs}, dtype, bits + gs + cols + 1);
          const std::vector<float> x = varied_floats(cols, 5);
          const std::vector<float> base = random_floats(kBandRows, 6);
          const Quantized q(x, bits, gs);
          std::vector<float> expected(kBandRows);
          cpu::mlx_int8_rows(rows_of(m), q.x, base.data(), expected.data(), 0, kBandRows);
          SCOPED_TRACE(::testing::Message() << bits << " bits, group " << gs << ", " << dtype_suffix(dtype)
                                            << ", cols " << cols);
          expect_bits_in_bands(expected, [&](const cpu::RowPasses& passes, float* y) {
            cpu::mlx_int8_bands(rows_of(m), q.x, base.data(), y, passes);
          });
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, MlxInt8Rows, ::testing::ValuesIn(simd::available_targets()),
                         [](const ::testing::TestParamInfo<int64_t>& info) { return simd::target_name(info.param); });

// Through the CPU backend with the option on: plain, gate/up pair, SwiGLU-down
// with residual, each against the twin of what it multiplies.
TEST(MlxInt8Activations, CpuBackendGemvsMatchTheTwin) {
  std::unique_ptr<GpuBackend> gpu = create_backend("cpu", BackendOptions{.threads = 2, .int8_activations = true});
  const Stream s = gpu->default_stream();
  for (uint32_t bits : kBits) {
    for (uint32_t gs : kGroupSizes) {
      SCOPED_TRACE(::testing::Message() << bits << " bits, group " << gs);
      const uint32_t rows = 250, cols = 1024;
      const QuantizedMatrix m0 = quantize_random(rows, cols, {bits, gs}, DType::kBF16, bits + gs);
      const QuantizedMatrix m1 = quantize_random(rows, cols, {bits, gs}, DType::kBF16, bits + gs + 1);
      const auto place = [&](const QuantizedMatrix& m) {
        return make_mlx_affine_weights(*gpu, m.params, m.scale_dtype, m.rows, m.cols, m.codes.data(), m.scales.data(),
                                       m.biases.data(), s);
      };
      const auto w0 = place(m0), w1 = place(m1);
      const std::vector<float> x = varied_floats(cols, 3);
      const std::vector<float> up = random_floats(cols, 4, -2, 2);
      const std::vector<float> residual = random_floats(rows, 5);
      Device d{*gpu, {}};
      const DevicePtr dx = d.put(x), dup = d.put(up), dres = d.put(residual);
      const auto expect_twin = [&](const std::vector<float>& got, const QuantizedMatrix& m,
                                   const std::vector<float>& input, const std::vector<float>* base,
                                   const char* what) {
        const Quantized q(input, bits, gs);
        const Reference ref = reference(m, input);
        for (uint32_t r = 0; r < rows; ++r) {
          const double want = (base ? (*base)[r] : 0.0) + cpu::mlx_int8_row_dot(rows_of(m), r, q.x);
          ASSERT_NEAR(got[r], want, kKernelTolerance * (ref.magnitude[r] + 1)) << what << " row " << r;
        }
      };
      for (size_t bands : testing::kHeavyInt8Bands) {
        SCOPED_TRACE(::testing::Message() << "4-bit rows in " << bands << " bands");
        const testing::ForcedHeavyInt8Bands forced(bands);
        // Outputs of NaNs for each count, so that no count passes on another's results.
        const DevicePtr y0 = d.put(std::vector<float>(rows, NAN)), y1 = d.put(std::vector<float>(rows, NAN));
        w0->gemv(*gpu, dx, y0, s);
        expect_twin(d.get(y0, rows), m0, x, nullptr, "gemv");
        w0->gemv_gate_up_with(*w1, *gpu, dx, y0, y1, s);
        expect_twin(d.get(y0, rows), m0, x, nullptr, "pair first");
        expect_twin(d.get(y1, rows), m1, x, nullptr, "pair second");
        // The activation as the backend computes it, so both quantize the same floats.
        std::vector<float> act(cols);
        simd::silu_mul(x.data(), up.data(), act.data(), cols);
        w0->gemv_silu_gate_resid(*gpu, dx, dup, dres, y0, s);
        expect_twin(d.get(y0, rows), m0, act, &residual, "silu gate + residual");
      }
    }
  }
}

// The regrouped MLX gemvs' tuning knobs change no bit of their results:
// the band count (mlx-x16-bands; 240 rows are 15 groups of 16, which one, two
// or four bands split with groups over) and the prefetch distance
// (mlx-x16-prefetch: under a line; 64 KB, past the matrix's end from its
// later rows), for 4- and 8-bit codes and x in 8 and in 24 bits.
TEST(MlxInt8Activations, RegroupedTuningKnobsChangeNoBit) {
  constexpr uint32_t kRows = 240, kCols = 1024;
  const std::vector<float> x = varied_floats(kCols, 31);
  for (const BackendOptions& options : {BackendOptions{.threads = 2, .int8_activations = true},
                                        BackendOptions{.threads = 2, .int24_activations = true}}) {
    std::unique_ptr<GpuBackend> gpu = create_backend("cpu", options);
    for (uint32_t bits : kBits) {
      SCOPED_TRACE(::testing::Message() << bits << " bits"
                                        << (options.int8_activations ? ", x in 8 bits" : ", x in 24 bits"));
      ASSERT_TRUE(gpu->regroups_mlx_rows(bits, kRows, kCols));
      const size_t digits = options.int8_activations ? 1 : cpu::kInt24Digits;
      const QuantizedMatrix m = quantize_random(kRows, kCols, {bits, 64}, DType::kBF16, bits + 32);
      const auto w = make_mlx_affine_weights(*gpu, m.params, m.scale_dtype, m.rows, m.cols, m.codes.data(),
                                             m.scales.data(), m.biases.data(), gpu->default_stream());
      Device d{*gpu, {}};
      const DevicePtr dx = d.put(x);
      const std::vector<float> defaults = d.gemv(*w, dx, kRows);
      const std::pair<const char*, int64_t> settings[] = {{"mlx-x16-bands", 1},      {"mlx-x16-bands", 2},
                                                          {"mlx-x16-bands", 4},      {"mlx-x16-prefetch", 1},
                                                          {"mlx-x16-prefetch", 512}, {"mlx-x16-prefetch", 65536}};
      for (const auto& [knob, value] : settings) {
        gpu->set_tuning(knob, value);
        const size_t applied = knob == std::string_view("mlx-x16-bands") ? cpu::mlx_x16_bands()
                                                                         : cpu::mlx_x16_prefetch_bytes(bits, digits);
        ASSERT_EQ(applied, static_cast<size_t>(value)) << knob;
        const std::vector<float> tuned = d.gemv(*w, dx, kRows);
        gpu->set_tuning(knob, 0);
        ASSERT_EQ(std::memcmp(tuned.data(), defaults.data(), kRows * sizeof(float)), 0) << knob << "=" << value;
      }
      EXPECT_EQ(cpu::mlx_x16_bands(), cpu::default_mlx_x16_bands());
      EXPECT_EQ(cpu::mlx_x16_prefetch_bytes(bits, digits),
                cpu::default_mlx_x16_prefetch_bytes(bits, digits, cpu::band_host()));
    }
  }
}

// On Zen 4 only 4-bit codes with x in 24 bits ask for lines ahead.
TEST(MlxInt8Activations, RegroupedPrefetchByHost) {
  using cpu::BandHost;
  for (BandHost host : {BandHost::kAmdZen4, BandHost::kAmdZen5, BandHost::kOther}) {
    for (unsigned bits : {4u, 8u}) {
      for (size_t digits : {size_t{1}, cpu::kInt24Digits}) {
        const bool none = host == BandHost::kAmdZen4 && (bits == 8 || digits == 1);
        EXPECT_EQ(cpu::default_mlx_x16_prefetch_bytes(bits, digits, host), none ? 0 : cpu::kMlxX16PrefetchBytes)
            << bits << " bits, " << digits << " digits";
      }
    }
  }
}

TEST(MlxInt8Activations, CpuGemvPropagatesNaN) {
  std::unique_ptr<GpuBackend> gpu = create_backend("cpu", BackendOptions{.threads = 2, .int8_activations = true});
  const QuantizedMatrix m = quantize_random(4, 512, {8, 64}, DType::kF16, 6);
  const auto w = make_mlx_affine_weights(*gpu, m.params, m.scale_dtype, m.rows, m.cols, m.codes.data(),
                                         m.scales.data(), m.biases.data(), gpu->default_stream());
  std::vector<float> x = random_floats(m.cols, 7);
  x[300] = std::numeric_limits<float>::quiet_NaN();
  Device d{*gpu, {}};
  const DevicePtr y = d.put(std::vector<float>(m.rows, 0));
  w->gemv(*gpu, d.put(x), y, gpu->default_stream());
  for (float v : d.get(y, m.rows)) EXPECT_TRUE(std::isnan(v));
}

}  // namespace
}  // namespace qwen35::testing
