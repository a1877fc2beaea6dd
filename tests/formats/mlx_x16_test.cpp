// MLX rows regrouped 16 at a time (qwen35/mlx_affine.h): the layout against
// its definition, the CPU's choice of it, row dequantization from it, and its
// integer gemvs on every SIMD target against the scalar twin of the rows as
// they came (cpu::mlx_int8_row_dot).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "cpu/simd.h"
#include "formats/mlx_affine_weights.h"
#include "gguf_test_util.h"
#include "int24_test_util.h"
#include "mlx_int8_util.h"
#include "mlx_test_util.h"

namespace qwen35::testing {
namespace {

std::vector<std::byte> regroup(const QuantizedMatrix& m) {
  std::vector<std::byte> g(m.codes.size() * 4 + m.scales.size() + m.biases.size());
  mlx_regroup_rows(m.params, dtype_size(m.scale_dtype), m.rows, m.cols, m.codes.data(), m.scales.data(),
                   m.biases.data(), g.data());
  return g;
}

TEST(MlxRegroup, RegroupableShapes) {
  EXPECT_TRUE(mlx_regroupable(4, 16, 64));
  EXPECT_TRUE(mlx_regroupable(4, 48, 1024));
  EXPECT_TRUE(mlx_regroupable(8, 16, 32));
  EXPECT_FALSE(mlx_regroupable(4, 15, 64));  // not whole groups of rows
  EXPECT_FALSE(mlx_regroupable(4, 16, 32));  // 16 code bytes: not a whole unit
  EXPECT_FALSE(mlx_regroupable(8, 32, 48));
}

// Spelled out from the layout's description, not through the layout's
// functions that the conversion uses; and those functions then find every
// byte where it went.
TEST(MlxRegroup, LanesHoldTheRowsCodeBytes) {
  for (uint32_t bits : kBits) {
    for (uint32_t gs : kGroupSizes) {
      for (DType dtype : {DType::kF32, DType::kBF16}) {
        SCOPED_TRACE(::testing::Message() << bits << " bits, group " << gs << ", " << dtype_suffix(dtype));
        const QuantizedMatrix m = quantize_random(48, 256, {bits, gs}, dtype, bits + gs);
        const std::vector<std::byte> g = regroup(m);
        const auto* in = reinterpret_cast<const std::byte*>(m.codes.data());
        const size_t row_bytes = m.cols * bits / 8, units = row_bytes / 32, groups = m.cols / gs;
        const size_t es = dtype_size(dtype);
        // A segment: max(a unit's columns, a group's); its scales, biases, then codes.
        const size_t unit_cols = 256 / bits, segment_cols = std::max<size_t>(unit_cols, gs);
        const size_t segment_groups = segment_cols / gs, segment_units = segment_cols / unit_cols;
        const size_t segment_bytes = 16 * (2 * segment_groups * es + 32 * segment_units);
        const size_t group_bytes = m.cols / segment_cols * segment_bytes;
        for (size_t group = 0; group < m.rows / 16; ++group) {
          for (size_t u = 0; u < units; ++u) {
            const size_t unit_at = group * group_bytes + u / segment_units * segment_bytes +
                                   2 * 16 * segment_groups * es + 512 * (u % segment_units);
            for (size_t v = 0; v < 8; ++v) {
              for (size_t r = 0; r < 16; ++r) {
                const std::byte* lane = g.data() + unit_at + 64 * v + 4 * r;
                ASSERT_EQ(0, std::memcmp(lane, in + (16 * group + r) * row_bytes + 32 * u + 4 * v, 4))
                    << "rows " << 16 * group << "+" << r << ", unit " << u << ", run " << v;
              }
            }
          }
          for (size_t i = 0; i < groups; ++i) {
            for (size_t r = 0; r < 16; ++r) {
              const size_t at = group * group_bytes + i / segment_groups * segment_bytes +
                                (i % segment_groups * 16 + r) * es;
              const size_t from = ((16 * group + r) * groups + i) * es;
              ASSERT_EQ(0, std::memcmp(g.data() + at, m.scales.data() + from, es)) << "group " << i;
              ASSERT_EQ(0, std::memcmp(g.data() + at + 16 * segment_groups * es, m.biases.data() + from, es))
                  << "group " << i;
            }
          }
        }
        const MlxRegroupedLayout layout(m.params, es, m.cols);
        for (uint32_t r = 0; r < m.rows; ++r) {
          for (size_t byte = 0; byte < row_bytes; ++byte) {
            ASSERT_EQ(g[layout.code_byte(r, byte)], in[r * row_bytes + byte]);
          }
          for (size_t i = 0; i < groups; ++i) {
            ASSERT_EQ(0, std::memcmp(g.data() + layout.scale_byte(r, i), m.scales.data() + (r * groups + i) * es, es));
            ASSERT_EQ(0, std::memcmp(g.data() + layout.bias_byte(r, i), m.biases.data() + (r * groups + i) * es, es));
          }
        }
      }
    }
  }
}

std::unique_ptr<MlxAffineWeights> place(GpuBackend& gpu, const QuantizedMatrix& m) {
  return make_mlx_affine_weights(gpu, m.params, m.scale_dtype, m.rows, m.cols, m.codes.data(), m.scales.data(),
                                 m.biases.data(), gpu.default_stream());
}

bool is_regrouped(const MlxAffineWeights& w) { return w.format_name().find("x16") != std::string::npos; }

// The CPU regroups matrices of whole groups of 16 rows when x is in 8 or
// 24 bits, and nothing else.
TEST(MlxRegroup, CpuRegroupsRowsForIntegerActivations) {
  const BackendOptions int8{.threads = 2, .int8_activations = true}, int24{.threads = 2, .int24_activations = true};
  const BackendOptions float_x{.threads = 2};
  const BackendOptions unregrouped{.threads = 2, .int8_activations = true, .regroup_rows = false};
  const QuantizedMatrix four = quantize_random(32, 128, {4, 64}, DType::kBF16, 1);
  const QuantizedMatrix odd_rows = quantize_random(33, 128, {4, 64}, DType::kBF16, 2);
  const QuantizedMatrix eight = quantize_random(32, 128, {8, 64}, DType::kBF16, 3);
  for (const BackendOptions& options : {int8, int24}) {
    std::unique_ptr<GpuBackend> cpu = create_backend("cpu", options);
    EXPECT_EQ(place(*cpu, four)->format_name(), "mlx4x16-g64-bf16");
    EXPECT_FALSE(is_regrouped(*place(*cpu, odd_rows)));
    EXPECT_EQ(place(*cpu, eight)->format_name(), "mlx8x16-g64-bf16");
  }
  for (const BackendOptions& options : {float_x, unregrouped}) {
    std::unique_ptr<GpuBackend> other = create_backend("cpu", options);
    EXPECT_EQ(place(*other, four)->format_name(), "mlx4-g64-bf16");
    EXPECT_EQ(place(*other, eight)->format_name(), "mlx8-g64-bf16");
  }
  EXPECT_FALSE(is_regrouped(*place(*create_backend("reference"), four)));
}

void check_gemvs(GpuBackend& gpu, size_t digits = 1);

constexpr BackendOptions kInt24{.threads = 2, .int24_activations = true};

// On the target the backend chooses: where the CPU has AVX-512 VNNI, its
// kernels, which no forced target runs.
TEST(MlxRegroup, GemvsMatchTheTwinOnTheChosenTarget) {
  check_gemvs(*create_backend("cpu", BackendOptions{.threads = 2, .int8_activations = true}));
  check_gemvs(*create_backend("cpu", kInt24), cpu::kInt24Digits);
}

class MlxX16Cpu : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override {
    simd::force_target(GetParam());
    gpu_ = create_backend("cpu", BackendOptions{.threads = 2, .int8_activations = true});
  }
  void TearDown() override { simd::force_target(0); }
  std::unique_ptr<GpuBackend> gpu_;
};

// Each row read back from the regrouped arrays is the specification's, to the bit.
TEST_P(MlxX16Cpu, RowDequantizationIsBitExact) {
  for (uint32_t bits : kBits) {
    for (uint32_t gs : kGroupSizes) {
      for (DType dtype : kScaleTypes) {
        SCOPED_TRACE(::testing::Message() << bits << " bits, group " << gs << ", " << dtype_suffix(dtype));
        const QuantizedMatrix m = quantize_random(32, 256, {bits, gs}, dtype, gs + bits);
        const auto w = place(*gpu_, m);
        ASSERT_TRUE(is_regrouped(*w));
        Device d{*gpu_, {}};
        const DevicePtr y = d.put(std::vector<float>(m.cols, NAN));
        for (uint32_t r = 0; r < m.rows; ++r) {
          w->dequantize_row(*gpu_, r, y, gpu_->default_stream());
          const std::vector<float> row = d.get(y, m.cols);
          ASSERT_EQ(0, std::memcmp(row.data(), m.dequantized.data() + size_t{r} * m.cols, m.cols * 4)) << "row " << r;
        }
      }
    }
  }
}

// Plain, gate/up pair, SwiGLU-down with residual, each against the twin of
// the rows as they came: from one group of 16 rows (a pass of one band) to
// many (passes of two bands and groups left over, split across threads);
// rows of one unit (64 columns) and of several; every group size and scale
// type; x in `digits` 8-bit digits (gpu's: 1 or 3), for 3 random and
// digit-rich (digit_rich_floats) in turn.
void check_gemvs(GpuBackend& gpu, size_t digits) {
  const Stream s = gpu.default_stream();
  for (uint32_t bits : kBits) {
    for (uint32_t gs : kGroupSizes) {
      for (DType dtype : kScaleTypes) {
        for (uint32_t rows : {16u, 48u, 80u, 256u}) {
          for (uint32_t cols : {64u, 192u, 1024u}) {
            for (bool rich : {false, true}) {
              if (cols % gs != 0 || (rich && digits == 1)) continue;
              SCOPED_TRACE(::testing::Message() << bits << " bits, group " << gs << ", " << dtype_suffix(dtype)
                                                << ", rows " << rows << ", cols " << cols
                                                << (rich ? ", digit-rich x" : ""));
              const QuantizedMatrix m0 = quantize_random(rows, cols, {bits, gs}, dtype, rows + cols + gs + bits);
              const QuantizedMatrix m1 =
                  quantize_random(rows + 16, cols, {bits, gs}, dtype, rows + cols + gs + bits + 1);
              const auto w0 = place(gpu, m0), w1 = place(gpu, m1);
              ASSERT_TRUE(is_regrouped(*w0) && is_regrouped(*w1));
              const std::vector<float> x = rich ? digit_rich_floats(cols, 3) : varied_floats(cols, 3);
              const std::vector<float> up = random_floats(cols, 4, -2, 2);
              const std::vector<float> residual = random_floats(rows, 5);
              Device d{gpu, {}};
              const DevicePtr dx = d.put(x), dup = d.put(up), dres = d.put(residual);
              const DevicePtr y0 = d.put(std::vector<float>(rows, NAN)), y1 = d.put(std::vector<float>(rows + 16, NAN));
              const auto expect_twin = [&](const std::vector<float>& got, const QuantizedMatrix& m,
                                           const std::vector<float>& input, const std::vector<float>* base,
                                           const char* what) {
                const Quantized q(input, bits, gs, digits);
                const Reference ref = reference(m, input);
                for (uint32_t r = 0; r < m.rows; ++r) {
                  const double want = (base ? (*base)[r] : 0.0) + cpu::mlx_int8_row_dot(rows_of(m), r, q.x);
                  // The kernels' sums are of codes times scales, w - bias: as large as
                  // sum |w x| + sum |bias x|, which digit-rich x (one element per block
                  // dominating) can make several times sum |w x| alone.
                  double bias_part = 0;
                  for (uint32_t c = 0; c < m.cols; ++c) {
                    bias_part += std::fabs(load_scale(m.scale_dtype, m.biases, size_t{r} * (m.cols / gs) + c / gs) *
                                           double{input[c]});
                  }
                  ASSERT_NEAR(got[r], want, kKernelTolerance * (ref.magnitude[r] + bias_part + 1))
                      << what << " row " << r;
                }
              };
              w0->gemv(gpu, dx, y0, s);
              expect_twin(d.get(y0, rows), m0, x, nullptr, "gemv");
              w0->gemv_gate_up_with(*w1, gpu, dx, y0, y1, s);
              expect_twin(d.get(y0, rows), m0, x, nullptr, "pair first");
              expect_twin(d.get(y1, rows + 16), m1, x, nullptr, "pair second");
              // The activation as the backend computes it, so both quantize the same floats.
              std::vector<float> act(cols);
              simd::silu_mul(x.data(), up.data(), act.data(), cols);
              w0->gemv_silu_gate_resid(gpu, dx, dup, dres, y0, s);
              expect_twin(d.get(y0, rows), m0, act, &residual, "silu gate + residual");
            }
          }
        }
      }
    }
  }
}

TEST_P(MlxX16Cpu, GemvsMatchTheTwin) { check_gemvs(*gpu_); }

TEST_P(MlxX16Cpu, GemvsMatchTheTwinWithXIn24Bits) { check_gemvs(*create_backend("cpu", kInt24), cpu::kInt24Digits); }

INSTANTIATE_TEST_SUITE_P(EveryTarget, MlxX16Cpu, ::testing::ValuesIn(simd::available_targets()),
                         [](const ::testing::TestParamInfo<int64_t>& info) { return simd::target_name(info.param); });

}  // namespace
}  // namespace qwen35::testing
