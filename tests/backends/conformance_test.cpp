// The conformance suite every backend passes: each kernel of Qwen35Kernels and
// the dense gemv family against the scalar reference backend, on fresh random
// inputs (seed printed), at sizes just below and above the vector and block
// widths, with key/value head ratios 1, 2 and 4. Instantiated for every
// backend in the registry.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <tuple>

#include "backends/kernel_harness.h"
#include "qwen35/dense_weights.h"
#include "qwen35/kernels.h"
#include "qwen35/mlx_affine.h"

namespace qwen35::testing {
namespace {

// Float32 kernels against a double-accumulating reference: rounding grows with
// the reduction length n roughly as sqrt(n) * 2^-24; 2e-5 of the output scale
// covers reductions up to several thousand terms with margin.
constexpr double kF32Tolerance = 2e-5;
// Transcendentals (exp in SiLU, softplus, softmax) add a few float ulps.
constexpr double kActivationTolerance = 5e-5;

const std::vector<uint32_t> kSizes = {1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 129, 257, 1000};

class Conformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    try {
      gpu_ = create_backend(GetParam());
    } catch (const DeviceUnavailable& e) {
      GTEST_SKIP() << e.what();  // compiled in, but no device here: skipped, never passed
    }
    reference_ = create_backend("reference");
  }
  uint32_t seed(uint32_t salt) {
    const uint32_t s = 1234u + salt * 7919u;
    ::testing::Test::RecordProperty("seed", static_cast<int>(s));
    return s;
  }
  std::unique_ptr<GpuBackend> gpu_;
  std::unique_ptr<GpuBackend> reference_;
};

DecodeStepParams step_at(uint32_t position) {
  return DecodeStepParams{.position = position, .cache_pos = position, .seq_len = position + 1, .reserved = 0};
}

TEST_P(Conformance, RmsNorm) {
  for (uint32_t n : kSizes) {
    for (uint32_t rows : {1u, 3u}) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " rows=" << rows << " seed=" << seed(n));
      KernelInputs in;
      const uint32_t stride = n + 5;  // rows not packed: exercises the stride arguments
      in.f32("x", random_floats(size_t{rows} * stride, seed(n), -2, 2));
      in.f32("w", random_floats(n, seed(n) + 1, 0.5f, 1.5f));
      in.output("y", size_t{rows} * n);
      compare_with_reference<RmsNormArgs>(*gpu_, *reference_, "rms_norm", in, [&](const DeviceArrays& d) {
        return RmsNormArgs{.x = d["x"], .weight = d["w"], .y = d["y"], .n_rows = rows, .row_len = n,
                           .x_row_stride = stride, .y_row_stride = n, .eps = 1e-6f};
      }, {"y"}, kF32Tolerance);
    }
  }
}

TEST_P(Conformance, AddRmsNorm) {
  for (uint32_t n : kSizes) {
    SCOPED_TRACE(::testing::Message() << "n=" << n << " seed=" << seed(n));
    KernelInputs in;
    in.f32("a", random_floats(n, seed(n)));
    in.f32("b", random_floats(n, seed(n) + 1));
    in.f32("w", random_floats(n, seed(n) + 2, 0.5f, 1.5f));
    in.output("sum", n);
    in.output("norm", n);
    compare_with_reference<AddRmsNormArgs>(*gpu_, *reference_, "add_rms_norm", in, [&](const DeviceArrays& d) {
      return AddRmsNormArgs{.a = d["a"], .b = d["b"], .weight = d["w"], .sum = d["sum"], .norm = d["norm"], .n = n,
                            .eps = 1e-6f};
    }, {"sum", "norm"}, kF32Tolerance);
  }
}

TEST_P(Conformance, HeadNormRope) {
  for (uint32_t head_dim : {8u, 64u, 256u}) {
    for (uint32_t position : {0u, 1u, 17u, 4095u, 200000u}) {
      const uint32_t rotary = head_dim / 4, heads = 3, stride = 2 * head_dim;
      SCOPED_TRACE(::testing::Message() << "head_dim=" << head_dim << " position=" << position);
      KernelInputs in;
      in.f32("x", random_floats(size_t{heads} * stride, seed(head_dim + position)));
      in.f32("w", random_floats(head_dim, seed(head_dim) + 1, 0.5f, 1.5f));
      std::vector<float> inv_freq(rotary / 2);
      for (uint32_t i = 0; i < rotary / 2; ++i) inv_freq[i] = static_cast<float>(std::pow(1e7, -2.0 * i / rotary));
      in.f32("inv_freq", inv_freq);
      const DecodeStepParams step = step_at(position);
      in.raw("step", &step, sizeof(step));
      in.output("y", size_t{heads} * head_dim);
      compare_with_reference<HeadNormRopeArgs>(*gpu_, *reference_, "head_norm_rope", in, [&](const DeviceArrays& d) {
        return HeadNormRopeArgs{.x = d["x"], .weight = d["w"], .inv_freq = d["inv_freq"], .step = d["step"],
                                .y = d["y"], .n_heads = heads, .head_dim = head_dim, .x_head_stride = stride,
                                .rotary_dim = rotary, .eps = 1e-6f};
      }, {"y"}, kActivationTolerance);
    }
  }
}

const std::vector<KvDtype> kKvDtypes = {KvDtype::kF32, KvDtype::kBF16, KvDtype::kF16, KvDtype::kFP8};

// `rows` cached positions of kv_dim random values, in the row format of `dtype`.
// FP8 rows get random codes (every non-NaN pattern) and power-of-two scales.
std::vector<uint8_t> random_kv_rows(KvDtype dtype, uint32_t rows, uint32_t kv_dim, uint32_t seed) {
  const size_t row_bytes = kv_row_bytes(dtype, kv_dim);
  std::vector<uint8_t> bytes(rows * row_bytes);
  const std::vector<float> values = random_floats(size_t{rows} * kv_dim, seed, -2, 2);
  std::mt19937 rng(seed);
  for (uint32_t r = 0; r < rows; ++r) {
    uint8_t* row = bytes.data() + r * row_bytes;
    for (uint32_t i = 0; i < kv_dim; ++i) {
      const float x = values[size_t{r} * kv_dim + i];
      uint16_t half = 0;
      switch (dtype) {
        case KvDtype::kF32: std::memcpy(row + 4 * i, &x, 4); break;
        case KvDtype::kBF16: half = f32_to_bf16(x); std::memcpy(row + 2 * i, &half, 2); break;
        case KvDtype::kF16: half = f32_to_f16(x); std::memcpy(row + 2 * i, &half, 2); break;
        case KvDtype::kFP8:
          row[i] = static_cast<uint8_t>(rng() % 256);
          if ((row[i] & 0x7f) == 0x7f) row[i] ^= 1;  // not NaN
          break;
      }
    }
    if (dtype == KvDtype::kFP8) {
      for (uint32_t b = 0; b < kv_dim / kKvFp8Block; ++b) {
        const uint16_t scale = f32_to_bf16(std::ldexp(1.0f, -static_cast<int>(rng() % 6) - 6));
        std::memcpy(row + kv_dim + 2 * b, &scale, 2);
      }
    }
  }
  return bytes;
}

TEST_P(Conformance, KvAppendWritesOnlyItsSlot) {
  for (KvDtype dtype : kKvDtypes) {
    const uint32_t kv_dim = 48, capacity = 5, slot = 3;  // kv_dim: three fp8 blocks
    const std::string name(kv_dtype_name(dtype));
    const size_t row_bytes = kv_row_bytes(dtype, kv_dim);
    SCOPED_TRACE(name);
    KernelInputs in;
    // Spread over several binades, with one all-zero fp8 block in v.
    std::vector<float> k = random_floats(kv_dim, seed(1), -3, 3), v = random_floats(kv_dim, seed(2));
    for (uint32_t i = 0; i < kv_dim; ++i) k[i] *= std::ldexp(1.0f, static_cast<int>(i % 7) * 3 - 9);
    std::fill(v.begin() + 16, v.begin() + 32, 0.0f);
    in.f32("k", k);
    in.f32("v", v);
    const std::vector<uint8_t> cache_init(size_t{capacity} * row_bytes, 0x3c);
    in.raw("k_cache", cache_init.data(), cache_init.size());
    in.raw("v_cache", cache_init.data(), cache_init.size());
    const DecodeStepParams step = step_at(slot);
    in.raw("step", &step, sizeof(step));
    DeviceArrays actual(*gpu_, in), expected(*reference_, in);
    for (auto [backend, arrays] : {std::pair<GpuBackend*, DeviceArrays*>{gpu_.get(), &actual},
                                   std::pair<GpuBackend*, DeviceArrays*>{reference_.get(), &expected}}) {
      const auto kernel = resolve_kernel<KvAppendArgs>(*backend, "kv_append_" + name);
      DeviceArrays& d = *arrays;
      launch(*backend, kernel,
             KvAppendArgs{.k = d["k"], .v = d["v"], .k_cache = d["k_cache"], .v_cache = d["v_cache"],
                          .step = d["step"], .kv_dim = kv_dim},
             backend->default_stream());
    }
    for (const char* cache : {"k_cache", "v_cache"}) {
      const std::vector<uint8_t> got = actual.bytes(cache);
      EXPECT_EQ(got, expected.bytes(cache)) << cache;
      for (size_t i = 0; i < got.size(); ++i) {
        const bool in_slot = i / row_bytes == slot;
        if (!in_slot) {
          ASSERT_EQ(got[i], 0x3c) << cache << " byte " << i << " outside slot " << slot << " changed";
        }
      }
    }
    actual.expect_guards_intact();
  }
}

TEST_P(Conformance, AttentionDecode) {
  for (KvDtype dtype : kKvDtypes) {
    for (uint32_t ratio : {1u, 2u, 4u}) {
      for (uint32_t seq_len : {1u, 2u, 7u, 33u, 300u}) {
        const uint32_t n_kv = 2, n_q = n_kv * ratio, head_dim = 64, capacity = seq_len + 3;
        const std::string name(kv_dtype_name(dtype));
        SCOPED_TRACE(::testing::Message() << name << " ratio=" << ratio << " seq_len=" << seq_len);
        KernelInputs in;
        in.f32("q", random_floats(size_t{n_q} * head_dim, seed(seq_len + ratio), -2, 2));
        const auto k = random_kv_rows(dtype, capacity, n_kv * head_dim, seed(seq_len) + 1);
        const auto v = random_kv_rows(dtype, capacity, n_kv * head_dim, seed(seq_len) + 2);
        in.raw("k_cache", k.data(), k.size());
        in.raw("v_cache", v.data(), v.size());
        const DecodeStepParams step = step_at(seq_len - 1);
        in.raw("step", &step, sizeof(step));
        in.output("out", size_t{n_q} * head_dim);
        compare_with_reference<AttentionDecodeArgs>(
            *gpu_, *reference_, "attention_decode_" + name, in,
            [&](const DeviceArrays& d) {
              return AttentionDecodeArgs{.q = d["q"], .k_cache = d["k_cache"], .v_cache = d["v_cache"],
                                         .step = d["step"], .out = d["out"], .n_heads_q = n_q, .n_heads_kv = n_kv,
                                         .head_dim = head_dim, .scale = 0.125f};
            },
            {"out"}, kActivationTolerance);
      }
    }
  }
}

TEST_P(Conformance, SigmoidGate) {
  for (uint32_t head_dim : {1u, 7u, 64u, 256u}) {
    const uint32_t heads = 3;
    KernelInputs in;
    in.f32("x", random_floats(size_t{heads} * head_dim, seed(head_dim)));
    in.f32("gate", random_floats(size_t{heads} * head_dim * 2, seed(head_dim) + 1, -6, 6));
    in.output("y", size_t{heads} * head_dim);
    compare_with_reference<SigmoidGateArgs>(*gpu_, *reference_, "sigmoid_gate", in, [&](const DeviceArrays& d) {
      return SigmoidGateArgs{.x = d["x"], .gate = d["gate"], .y = d["y"], .n_heads = heads, .head_dim = head_dim,
                             .gate_head_stride = 2 * head_dim};
    }, {"y"}, kActivationTolerance);
  }
}

// The 0.8B's 16 + 16 + 16 heads of 128 span several of the CPU's claims of
// ~32 KB. Value heads of another width leave the values' part a partial
// number of key heads (the CPU splits the channels in rows of key heads).
TEST_P(Conformance, ConvSiluL2Norm) {
  for (const auto& [head_dim, n_k, n_v, head_dim_v] :
       {std::tuple{4u, 2u, 4u, 4u}, {16u, 2u, 4u, 16u}, {16u, 2u, 3u, 24u}, {128u, 2u, 4u, 128u},
        {128u, 2u, 3u, 96u}, {128u, 16u, 16u, 128u}}) {
    for (uint32_t kernel : {2u, 4u}) {
      const uint32_t conv_dim = 2 * n_k * head_dim + n_v * head_dim_v;
      SCOPED_TRACE(::testing::Message() << "head_dim=" << head_dim << "/" << head_dim_v << " heads " << n_k << "/"
                                        << n_v << " kernel=" << kernel);
      KernelInputs in;
      in.f32("u", random_floats(conv_dim, seed(head_dim), -3, 3));
      in.f32("state", random_floats(size_t{kernel - 1} * conv_dim, seed(head_dim) + 1, -3, 3));
      in.f32("w", random_floats(size_t{conv_dim} * kernel, seed(head_dim) + 2));
      in.output("out", conv_dim);
      compare_with_reference<ConvSiluL2NormArgs>(*gpu_, *reference_, "conv_silu_l2norm", in,
                                                 [&](const DeviceArrays& d) {
        return ConvSiluL2NormArgs{.u = d["u"], .state = d["state"], .weight = d["w"], .out = d["out"],
                                  .conv_dim = conv_dim, .conv_kernel = kernel, .n_heads_k = n_k,
                                  .head_dim_k = head_dim, .q_scale = 1.0f / std::sqrt(static_cast<float>(head_dim))};
      }, {"out", "state"}, kActivationTolerance);
    }
  }
}

TEST_P(Conformance, GdnGateBeta) {
  for (uint32_t n : {1u, 4u, 16u, 33u}) {
    KernelInputs in;
    in.f32("a", random_floats(n, seed(n), -30, 30));  // both softplus branches
    in.f32("b", random_floats(n, seed(n) + 1, -8, 8));
    in.f32("a_log", random_floats(n, seed(n) + 2, -2, 2));
    in.f32("dt_bias", random_floats(n, seed(n) + 3));
    in.output("decay", n);
    in.output("beta", n);
    compare_with_reference<GdnGateBetaArgs>(*gpu_, *reference_, "gdn_gate_beta", in, [&](const DeviceArrays& d) {
      return GdnGateBetaArgs{.a = d["a"], .b = d["b"], .a_log = d["a_log"], .dt_bias = d["dt_bias"],
                             .decay = d["decay"], .beta = d["beta"], .n_heads_v = n};
    }, {"decay", "beta"}, kActivationTolerance);
  }
}

TEST_P(Conformance, GdnRecurrentStep) {
  for (uint32_t ratio : {1u, 2u, 4u}) {
    for (uint32_t tiled : {0u, 1u}) {
      for (uint32_t dim : {8u, 33u, 128u}) {
        const uint32_t n_k = 2, n_v = n_k * ratio, dk = dim, dv = dim + 1;
        SCOPED_TRACE(::testing::Message() << "ratio=" << ratio << " tiled=" << tiled << " dim=" << dim);
        KernelInputs in;
        // q and k unit-norm per head as the conv kernel leaves them.
        std::vector<float> qkv = random_floats(2 * size_t{n_k} * dk + size_t{n_v} * dv, seed(dim + ratio));
        for (uint32_t h = 0; h < 2 * n_k; ++h) {
          double sum = 0;
          for (uint32_t i = 0; i < dk; ++i) sum += qkv[h * dk + i] * qkv[h * dk + i];
          for (uint32_t i = 0; i < dk; ++i) qkv[h * dk + i] /= static_cast<float>(std::sqrt(sum));
        }
        in.f32("qkv", qkv);
        in.f32("decay", random_floats(n_v, seed(dim) + 1, 0.5f, 1.0f));
        in.f32("beta", random_floats(n_v, seed(dim) + 2, 0.0f, 1.0f));
        in.f32("state", random_floats(size_t{n_v} * dk * dv, seed(dim) + 3));
        in.output("out", size_t{n_v} * dv);
        compare_with_reference<GdnRecurrentArgs>(*gpu_, *reference_, "gdn_recurrent", in, [&](const DeviceArrays& d) {
          return GdnRecurrentArgs{.qkv = d["qkv"], .decay = d["decay"], .beta = d["beta"], .state = d["state"],
                                  .out = d["out"], .n_heads_k = n_k, .n_heads_v = n_v, .head_dim_k = dk,
                                  .head_dim_v = dv, .tiled_value_heads = tiled};
        }, {"out", "state"}, kF32Tolerance);
      }
    }
  }
}

TEST_P(Conformance, ElementwiseSiluMulAndAdd) {
  for (uint32_t n : kSizes) {
    KernelInputs in;
    in.f32("a", random_floats(n, seed(n), -6, 6));
    in.f32("b", random_floats(n, seed(n) + 1));
    in.output("y", n);
    compare_with_reference<SiluMulArgs>(*gpu_, *reference_, "silu_mul", in, [&](const DeviceArrays& d) {
      return SiluMulArgs{.gate = d["a"], .up = d["b"], .y = d["y"], .n = n};
    }, {"y"}, kActivationTolerance);
    compare_with_reference<AddArgs>(*gpu_, *reference_, "add", in, [&](const DeviceArrays& d) {
      return AddArgs{.a = d["a"], .b = d["b"], .y = d["y"], .n = n};
    }, {"y"}, kF32Tolerance);
  }
}

// Weights in `dtype` as raw inputs named `name`.
void add_weights(KernelInputs& in, const std::string& dtype, const std::string& name, const std::vector<float>& w) {
  if (dtype == "f32") in.f32(name, w);
  if (dtype == "bf16") in.bf16(name, w);
  if (dtype == "f16") in.f16(name, w);
}

TEST_P(Conformance, DenseGemvFamily) {
  for (const std::string dtype : {"f32", "bf16", "f16"}) {
    // Up to 4096 columns: GPU gemvs split long rows over up to 8 warps.
    for (uint32_t cols : {1u, 7u, 8u, 9u, 16u, 17u, 63u, 64u, 65u, 255u, 1024u, 1031u, 4096u, 4103u}) {
      for (uint32_t rows : {1u, 5u, 64u, 67u}) {
        SCOPED_TRACE(::testing::Message() << dtype << " rows=" << rows << " cols=" << cols);
        KernelInputs in;
        add_weights(in, dtype, "w", random_floats(size_t{rows} * cols, seed(rows * 131 + cols)));
        add_weights(in, dtype, "w1", random_floats(size_t{rows + 3} * cols, seed(rows * 131 + cols) + 1));
        in.f32("x", random_floats(cols, seed(cols) + 2));
        in.f32("gate", random_floats(cols, seed(cols) + 3, -4, 4));
        in.f32("residual", random_floats(rows, seed(rows) + 4));
        in.output("y", rows);
        in.output("y1", rows + 3);
        in.output("row", cols);
        compare_with_reference<GemvArgs>(*gpu_, *reference_, "gemv_" + dtype, in, [&](const DeviceArrays& d) {
          return GemvArgs{.w = d["w"], .x = d["x"], .y = d["y"], .rows = rows, .cols = cols};
        }, {"y"}, kF32Tolerance);
        compare_with_reference<RowToF32Args>(*gpu_, *reference_, "row_to_f32_" + dtype, in,
                                             [&](const DeviceArrays& d) {
          return RowToF32Args{.w = d["w"], .y = d["row"], .row = rows - 1, .cols = cols};
        }, {"row"}, 0.0);
      }
    }
  }
}

// The fused weight kernels are optional: a backend without them is checked by
// the composed path in the model tests. Where present they must agree with
// gemv composed on the reference.
TEST_P(Conformance, FusedGemvKernelsMatchComposition) {
  if (!gpu_->find_kernel("gemv_pair_bf16", GemvPairArgs::kTypeName)) {
    GTEST_SKIP() << GetParam() << " has no fused weight kernels";
  }
  for (const std::string dtype : {"f32", "bf16", "f16"}) {
    for (uint32_t cols : {1u, 9u, 64u, 65u, 1031u, 4096u}) {
      const uint32_t rows = 37;
      SCOPED_TRACE(::testing::Message() << dtype << " cols=" << cols);
      KernelInputs in;
      const auto w0 = random_floats(size_t{rows} * cols, seed(cols));
      const auto w1 = random_floats(size_t{rows + 3} * cols, seed(cols) + 1);
      add_weights(in, dtype, "w0", w0);
      add_weights(in, dtype, "w1", w1);
      const auto x = random_floats(cols, seed(cols) + 2);
      const auto gate = random_floats(cols, seed(cols) + 3, -4, 4);
      const auto residual = random_floats(rows, seed(cols) + 4);
      in.f32("x", x);
      in.f32("gate", gate);
      in.f32("residual", residual);
      in.output("y0", rows);
      in.output("y1", rows + 3);
      in.output("y", rows);
      DeviceArrays d(*gpu_, in);
      const Stream s = gpu_->default_stream();
      launch(*gpu_, resolve_kernel<GemvPairArgs>(*gpu_, "gemv_pair_" + dtype),
             GemvPairArgs{.w0 = d["w0"], .w1 = d["w1"], .x = d["x"], .y0 = d["y0"], .y1 = d["y1"], .rows0 = rows,
                          .rows1 = rows + 3, .cols = cols}, s);
      launch(*gpu_, resolve_kernel<GemvSiluGateArgs>(*gpu_, "gemv_silu_gate_" + dtype),
             GemvSiluGateArgs{.w = d["w0"], .gate = d["gate"], .up = d["x"], .residual = d["residual"], .y = d["y"],
                              .rows = rows, .cols = cols}, s);
      // Expected values from the stored (rounded) weights, in double.
      const auto rounded = [&](const std::vector<float>& w) {
        std::vector<float> out(w.size());
        for (size_t i = 0; i < w.size(); ++i) {
          out[i] = dtype == "f32"    ? w[i]
                   : dtype == "bf16" ? bf16_to_f32(f32_to_bf16(w[i]))
                                     : f16_to_f32(f32_to_f16(w[i]));
        }
        return out;
      };
      const auto rounded_w0 = rounded(w0);
      const auto rw1 = rounded(w1);
      std::vector<float> y0(rows), y1(rows + 3), y(rows);
      for (uint32_t r = 0; r < rows + 3; ++r) {
        double a0 = 0, a1 = 0, ag = 0;
        for (uint32_t c = 0; c < cols; ++c) {
          const double act = gate[c] / (1.0 + std::exp(-double{gate[c]})) * x[c];
          if (r < rows) a0 += double{rounded_w0[size_t{r} * cols + c]} * x[c];
          if (r < rows) ag += double{rounded_w0[size_t{r} * cols + c]} * act;
          a1 += double{rw1[size_t{r} * cols + c]} * x[c];
        }
        if (r < rows) y0[r] = static_cast<float>(a0), y[r] = static_cast<float>(residual[r] + ag);
        y1[r] = static_cast<float>(a1);
      }
      for (auto [name, expected] : {std::pair<const char*, std::vector<float>*>{"y0", &y0}, {"y1", &y1}, {"y", &y}}) {
        const auto got = d.floats(name);
        const Deviation dev = deviation(got.data(), expected->data(), got.size());
        EXPECT_FALSE(dev.has_nan) << name;
        EXPECT_LE(dev.max_abs_error, kActivationTolerance * std::max(1.0, dev.max_abs_reference)) << name;
      }
      d.expect_guards_intact();
    }
  }
}

// MLX affine weights (qwen35/mlx_affine.h): any bit pattern is a valid code,
// so codes are random words; scales and biases random in the scale dtype.
// gemv against the reference's dequantize-then-multiply; row dequantization
// bit-exact; the fused kernels, where a backend has them, against the
// reference's gemv composed.
TEST_P(Conformance, MlxAffineGemvFamily) {
  if (!gpu_->find_kernel("gemv_mlx8_bf16", MlxGemvArgs::kTypeName)) {
    GTEST_SKIP() << GetParam() << " has no MLX affine kernels";
  }
  for (uint32_t bits : {4u, 8u}) {
    for (const std::string dtype : {"f32", "bf16", "f16"}) {
      for (uint32_t group_size : {32u, 64u, 128u}) {
        for (uint32_t cols : {128u, 384u, 1024u, 8192u}) {  // 8192: split over 8 warps on GPUs
          const uint32_t rows = 67, words = cols * bits / 32, groups = cols / group_size;
          const std::string name = "mlx" + std::to_string(bits) + "_" + dtype;
          SCOPED_TRACE(::testing::Message() << name << " group=" << group_size << " cols=" << cols);
          KernelInputs in;
          for (const char* w : {"w", "w1"}) {
            std::vector<uint32_t> codes(size_t{rows} * words);
            const auto bits_source = random_floats(codes.size(), seed(cols + bits) + (w[1] != 0), 0, 4.2e9f);
            for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<uint32_t>(bits_source[i]);
            in.raw(std::string(w) + ".codes", codes.data(), codes.size() * 4);
            // Scales small enough that 255 * scale stays O(1), as in real checkpoints.
            add_weights(in, dtype, std::string(w) + ".scales", random_floats(size_t{rows} * groups, seed(groups) + 1, 0, 0.02f));
            add_weights(in, dtype, std::string(w) + ".biases", random_floats(size_t{rows} * groups, seed(groups) + 2, -1, 1));
          }
          in.f32("x", random_floats(cols, seed(cols) + 3));
          in.f32("gate", random_floats(cols, seed(cols) + 4, -4, 4));
          in.f32("residual", random_floats(rows, seed(rows) + 5));
          in.output("y", rows);
          in.output("y1", rows);
          in.output("row", cols);
          const auto matrix = [](const DeviceArrays& d, const std::string& w) {
            return MlxMatrixRef{.codes = d[w + ".codes"], .scales = d[w + ".scales"], .biases = d[w + ".biases"]};
          };
          compare_with_reference<MlxGemvArgs>(*gpu_, *reference_, "gemv_" + name, in, [&](const DeviceArrays& d) {
            return MlxGemvArgs{.w = matrix(d, "w"), .x = d["x"], .y = d["y"], .rows = rows, .cols = cols,
                               .group_size = group_size};
          }, {"y"}, kF32Tolerance);
          compare_with_reference<MlxRowToF32Args>(*gpu_, *reference_, "row_to_f32_" + name, in,
                                                  [&](const DeviceArrays& d) {
            return MlxRowToF32Args{.w = matrix(d, "w"), .y = d["row"], .row = rows - 1, .cols = cols,
                                   .group_size = group_size};
          }, {"row"}, 0.0);
          if (!gpu_->find_kernel("gemv_pair_" + name, MlxGemvPairArgs::kTypeName)) continue;
          // Fused kernels against the reference gemv: y0/y1 from one pass, and
          // y = residual + W (silu(gate) * x) with the activation computed here.
          DeviceArrays actual(*gpu_, in), expected(*reference_, in);
          const Stream s = gpu_->default_stream();
          launch(*gpu_, resolve_kernel<MlxGemvPairArgs>(*gpu_, "gemv_pair_" + name),
                 MlxGemvPairArgs{.w0 = matrix(actual, "w"), .w1 = matrix(actual, "w1"), .x = actual["x"],
                                 .y0 = actual["y"], .y1 = actual["y1"], .rows0 = rows, .rows1 = rows, .cols = cols,
                                 .group_size = group_size}, s);
          const Kernel<MlxGemvArgs> ref_gemv = resolve_kernel<MlxGemvArgs>(*reference_, "gemv_" + name);
          const Stream rs = reference_->default_stream();
          launch(*reference_, ref_gemv, MlxGemvArgs{.w = matrix(expected, "w"), .x = expected["x"], .y = expected["y"],
                                                    .rows = rows, .cols = cols, .group_size = group_size}, rs);
          launch(*reference_, ref_gemv, MlxGemvArgs{.w = matrix(expected, "w1"), .x = expected["x"],
                                                    .y = expected["y1"], .rows = rows, .cols = cols,
                                                    .group_size = group_size}, rs);
          gpu_->synchronize(s);
          for (const char* out : {"y", "y1"}) {
            const auto got = actual.floats(out), want = expected.floats(out);
            const Deviation dev = deviation(got.data(), want.data(), got.size());
            EXPECT_FALSE(dev.has_nan) << out;
            EXPECT_LE(dev.max_abs_error, kF32Tolerance * std::max(1.0, dev.max_abs_reference)) << "pair " << out;
          }
          launch(*gpu_, resolve_kernel<MlxGemvSiluGateArgs>(*gpu_, "gemv_silu_gate_" + name),
                 MlxGemvSiluGateArgs{.w = matrix(actual, "w"), .gate = actual["gate"], .up = actual["x"],
                                     .residual = actual["residual"], .y = actual["y"], .rows = rows, .cols = cols,
                                     .group_size = group_size}, s);
          const auto gate = expected.floats("gate"), x = expected.floats("x"), residual = expected.floats("residual");
          std::vector<float> act(cols);
          for (uint32_t c = 0; c < cols; ++c) act[c] = static_cast<float>(gate[c] / (1.0 + std::exp(-double{gate[c]})) * x[c]);
          reference_->upload(expected["x"], act.data(), cols * 4, rs);
          launch(*reference_, ref_gemv, MlxGemvArgs{.w = matrix(expected, "w"), .x = expected["x"], .y = expected["y"],
                                                    .rows = rows, .cols = cols, .group_size = group_size}, rs);
          auto want = expected.floats("y");
          for (uint32_t r = 0; r < rows; ++r) want[r] += residual[r];
          const auto got = actual.floats("y");
          const Deviation dev = deviation(got.data(), want.data(), got.size());
          EXPECT_FALSE(dev.has_nan);
          EXPECT_LE(dev.max_abs_error, kActivationTolerance * std::max(1.0, dev.max_abs_reference)) << "silu gate";
          actual.expect_guards_intact();
        }
      }
    }
  }
}

// What decode returns its logits through: a backend whose memory the host
// reads in place (the host backends) shows a buffer's bytes, after a kernel
// wrote them and the stream was synchronized, where it says; the others say
// nullptr, and a download copies them.
TEST_P(Conformance, HostReadableMemoryHoldsWhatADownloadReads) {
  const uint32_t n = 1000;
  const std::vector<float> x = random_floats(n, seed(1), -2, 2), w = random_floats(n, seed(2), 0.5f, 1.5f);
  DeviceBuffer dx(*gpu_, n * 4), dw(*gpu_, n * 4), dy(*gpu_, n * 4);
  const Stream stream = gpu_->default_stream();
  gpu_->upload(dx.ptr(), x.data(), n * 4, stream);
  gpu_->upload(dw.ptr(), w.data(), n * 4, stream);
  launch(*gpu_, resolve_kernel<RmsNormArgs>(*gpu_, "rms_norm"),
         RmsNormArgs{.x = dx.ptr(), .weight = dw.ptr(), .y = dy.ptr(), .n_rows = 1, .row_len = n, .x_row_stride = n,
                     .y_row_stride = n, .eps = 1e-6f},
         stream);
  std::vector<float> downloaded(n);
  gpu_->download(downloaded.data(), dy.ptr(), n * 4, stream);
  gpu_->synchronize(stream);
  const void* in_place = gpu_->host_readable(dy.ptr(), n * 4);
  if (GetParam() == "cpu" || GetParam() == "reference") ASSERT_NE(in_place, nullptr);
  if (in_place == nullptr) return;
  EXPECT_EQ(std::memcmp(in_place, downloaded.data(), n * 4), 0);
  EXPECT_NE(std::memcmp(in_place, x.data(), n * 4), 0);  // the kernel's output, not its input
}

INSTANTIATE_TEST_SUITE_P(AllBackends, Conformance, ::testing::ValuesIn(backend_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace qwen35::testing
