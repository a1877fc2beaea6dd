// What the tests of GGUF weights against x in 8 or 24 bits share: x
// quantized as the CPU kernels quantize it, the float64 reference with the
// bound that rounding x to 8 bits allows, the scalar twin, and the check of
// the CPU kernels against it.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "cpu/int8_activations.h"
#include "cpu/simd.h"
#include "gguf_test_util.h"
#include "int24_test_util.h"
#include "qwen35/backend.h"
#include "qwen35/dense_weights.h"
#include "qwen35/gguf_quants.h"
#include "support/test_support.h"

namespace qwen35::testing {

inline constexpr DType kGgufInt8Types[] = {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K};

struct GgufQuantized {
  std::vector<float> scratch;
  cpu::Int8Activations x;
  explicit GgufQuantized(const std::vector<float>& v, size_t digits = 1)
      : scratch(cpu::int8_activation_floats(v.size(), digits)) {
    x = cpu::quantize_activations(v.data(), v.size(), scratch.data(), digits);
  }
};

// Per row: the float64 dot with W dequantized by the specification, sum |w x|
// (for float tolerances), and sum |w| * (x's step / 2), the most that rounding
// x to 8 bits can move the dot (the K-quants' min terms too meet x as quantized).
struct Reference {
  std::vector<double> y, magnitude, rounding;
};

inline Reference reference(DType type, const std::vector<std::byte>& w, uint32_t rows, uint32_t cols,
                    const std::vector<float>& x, const cpu::Int8Activations& q) {
  Reference ref{std::vector<double>(rows), std::vector<double>(rows), std::vector<double>(rows)};
  std::vector<float> row(cols);
  for (uint32_t r = 0; r < rows; ++r) {
    const std::byte* bytes = w.data() + r * dtype_bytes(type, cols);
    gguf_dequantize_row(type, bytes, row.data(), cols);
    for (uint32_t c = 0; c < cols; ++c) {
      ref.y[r] += double{row[c]} * x[c];
      ref.magnitude[r] += std::fabs(double{row[c]} * x[c]);
      ref.rounding[r] += std::fabs(double{row[c]}) * q.scale[c / 32] / 2;
    }
  }
  return ref;
}

// The twin for every row of w, plus base[r] if given.
inline std::vector<double> gguf_twin(DType type, const std::vector<std::byte>& w, uint32_t rows, uint32_t cols,
                         const std::vector<float>& x, const std::vector<float>* base = nullptr,
                                     size_t digits = 1) {
  const GgufQuantized q(x, digits);
  std::vector<double> y(rows);
  for (uint32_t r = 0; r < rows; ++r) {
    y[r] = cpu::int8_row_dot(type, w.data() + r * dtype_bytes(type, cols), q.x, cols) + (base ? (*base)[r] : 0.0);
  }
  return y;
}

// The twin's dot against the float64 one for every type, x in `digits` 8-bit
// digits: within what rounding x can move it (`rounding_scale` times the
// 8-bit bound, Reference::rounding) plus `float_slack` times sum |w x|.
// Returns the mean error over the rounding bound.
inline double twin_error_over_rounding(size_t digits, double rounding_scale, double float_slack) {
  double moved = 0;
  size_t count = 0;
  for (DType type : kGgufInt8Types) {
    SCOPED_TRACE(dtype_name(type));
    const uint32_t rows = 16, cols = 1024;
    const std::vector<std::byte> w = random_blocks(type, rows * cols / dtype_block_size(type), 4);
    const std::vector<float> x = varied_floats(cols, 5);
    const GgufQuantized q(x, digits);
    const Reference ref = reference(type, w, rows, cols, x, q.x);
    for (uint32_t r = 0; r < rows; ++r) {
      const double got = cpu::int8_row_dot(type, w.data() + r * dtype_bytes(type, cols), q.x, cols);
      const double bound = ref.rounding[r] * rounding_scale;
      EXPECT_LE(std::fabs(got - ref.y[r]), bound * 1.0001 + float_slack * ref.magnitude[r]) << "row " << r;
      moved += std::fabs(got - ref.y[r]) / bound;
      ++count;
    }
  }
  return moved / static_cast<double>(count);
}

// A NaN in x makes every row of the CPU's gemv NaN, as in float arithmetic,
// for `types` on a CPU backend with `options` (rows 16: regrouped where the
// options regroup the type).
inline void check_gemv_propagates_nan(std::span<const DType> types, const BackendOptions& options) {
  std::unique_ptr<GpuBackend> gpu = create_backend("cpu", options);
  for (DType type : types) {
    SCOPED_TRACE(dtype_name(type));
    const uint32_t rows = 16, cols = 512;
    const std::vector<std::byte> w = random_blocks(type, rows * cols / dtype_block_size(type), 6);
    const auto m = make_dense_weights(*gpu, type, rows, cols, w.data(), gpu->default_stream());
    std::vector<float> x = random_floats(cols, 7);
    x[300] = std::numeric_limits<float>::quiet_NaN();
    Device d{*gpu, {}};
    const DevicePtr y = d.put(std::vector<float>(rows, 0));
    m->gemv(*gpu, d.put(x), y, gpu->default_stream());
    for (float v : d.get(y, rows)) EXPECT_TRUE(std::isnan(v));
  }
}

// The CPU's GGUF gemv, pair and SwiGLU-down + residual against the twin, x
// in `digits` 8-bit digits: 1 (int8_activations) or 3 (int24_activations,
// where the matrices left row-major but Q6_K, Q8_0's among them, take float x:
// the same floats as the float backend's, to the bit); with 3, x random and
// digit-rich (digit_rich_floats) in turn.
inline void check_gguf_cpu_kernels(std::span<const DType> types = kGgufInt8Types, size_t digits = 1) {
  const BackendOptions options{.threads = 2, .int8_activations = digits == 1, .int24_activations = digits != 1};
  std::unique_ptr<GpuBackend> gpu = create_backend("cpu", options);
  // The float backend the row-major matrices but Q6_K are compared with (24-bit x only).
  const std::unique_ptr<GpuBackend> float_x =
      digits != 1 ? create_backend("cpu", BackendOptions{.threads = 2}) : nullptr;
  const Stream s = gpu->default_stream();
  for (DType type : types) {
    const uint32_t bs = static_cast<uint32_t>(dtype_block_size(type));
    // Rows in multiples of 16 make Q4_0, Q8_0, Q4_K, Q5_K and Q6_K regrouped
    // (Q4_0x16, ...). x in 24 bits reaches the regrouped layouts and Q6_K;
    // the other row-major matrices keep float x.
    for (uint32_t rows : {1u, 5u, 16u, 33u, 240u, 250u}) {
      for (uint32_t cols : {bs, 3 * bs, 4096u}) {
        for (bool rich : {false, true}) {
          if (rows >= 240 && cols != 4096) continue;
          if (rich && digits == 1) continue;
          SCOPED_TRACE(::testing::Message() << dtype_name(type) << " rows " << rows << " cols " << cols
                                            << (rich ? " digit-rich x" : ""));
          Device d{*gpu, {}};
          const std::vector<std::byte> w0 = random_blocks(type, rows * cols / bs, rows + cols);
          const std::vector<std::byte> w1 = random_blocks(type, rows * cols / bs, rows + cols + 1);
          const auto m0 = make_dense_weights(*gpu, type, rows, cols, w0.data(), s);
          const auto m1 = make_dense_weights(*gpu, type, rows, cols, w1.data(), s);
          const std::optional<DType> regrouped = gguf_regrouped_layout(type);
          const bool is_regrouped = regrouped && rows % 16 == 0 && (digits == 1 || type != DType::kQ8_0);
          ASSERT_EQ(m0->dtype(), is_regrouped ? *regrouped : type);
          const std::vector<float> x = rich ? digit_rich_floats(cols, 3) : varied_floats(cols, 3);
          const std::vector<float> up = random_floats(cols, 4, -2, 2);
          const std::vector<float> residual = random_floats(rows, 5);
          const DevicePtr dx = d.put(x), dup = d.put(up), dres = d.put(residual);
          const DevicePtr y0 = d.put(std::vector<float>(rows, NAN)), y1 = d.put(std::vector<float>(rows, NAN));
          if (digits != 1 && !is_regrouped && type != DType::kQ6_K) {
            Device f{*float_x, {}};
            const auto f0 = make_dense_weights(*float_x, type, rows, cols, w0.data(), float_x->default_stream());
            const DevicePtr fy = f.put(std::vector<float>(rows, NAN));
            f0->gemv(*float_x, f.put(x), fy, float_x->default_stream());
            m0->gemv(*gpu, dx, y0, s);
            const std::vector<float> got = d.get(y0, rows), want = f.get(fy, rows);
            ASSERT_EQ(std::memcmp(got.data(), want.data(), rows * sizeof(float)), 0) << "float x where not regrouped";
            continue;
          }
          const GgufQuantized q(x, digits);
          const Reference ref0 = reference(type, w0, rows, cols, x, q.x);
          const Reference ref1 = reference(type, w1, rows, cols, x, q.x);
          // float32 sums of integer sub-block sums times float factors: relative to sum |w x|.
          const auto expect_close = [&](const std::vector<float>& got, const std::vector<double>& want,
                                        const Reference& ref, std::string_view what) {
            for (uint32_t r = 0; r < rows; ++r) {
              ASSERT_NEAR(got[r], want[r], 4e-6 * (ref.magnitude[r] + 1)) << what << " row " << r;
            }
          };
          const auto twin = [&](const std::vector<std::byte>& w, const std::vector<float>& v,
                                const std::vector<float>* base = nullptr) {
            return gguf_twin(type, w, rows, cols, v, base, digits);
          };
          m0->gemv(*gpu, dx, y0, s);
          expect_close(d.get(y0, rows), twin(w0, x), ref0, "gemv");
          m0->gemv_gate_up_with(*m1, *gpu, dx, y0, y1, s);
          expect_close(d.get(y0, rows), twin(w0, x), ref0, "pair first");
          expect_close(d.get(y1, rows), twin(w1, x), ref1, "pair second");
          // The activation as the backend computes it, so both quantize the same floats.
          std::vector<float> act(cols);
          simd::silu_mul(x.data(), up.data(), act.data(), cols);
          m0->gemv_silu_gate_resid(*gpu, dx, dup, dres, y0, s);
          const Reference ref_act = reference(type, w0, rows, cols, act, GgufQuantized(act, digits).x);
          expect_close(d.get(y0, rows), twin(w0, act, &residual), ref_act, "silu gate + residual");
        }
      }
    }
  }
}

}  // namespace qwen35::testing
