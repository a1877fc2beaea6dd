// The MLX affine format: the quantizer's error bound, row dequantization
// bit-exact against the independent scalar decoding on every backend, each
// quantized gemv (plain, gate/up pair, SwiGLU-down with residual) against
// dequantize-then-float32 gemv, and the format's load errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "formats/mlx_affine_weights.h"
#include "formats/weight_format.h"
#include "mlx_test_util.h"
#include "qwen35/checkpoint.h"

namespace qwen35::testing {
namespace {

using ::testing::HasSubstr;

TEST(MlxQuantizer, ErrorWithinHalfAStepPlusScaleRounding) {
  for (uint32_t bits : kBits) {
    for (uint32_t gs : kGroupSizes) {
      for (DType dtype : kScaleTypes) {
        SCOPED_TRACE(::testing::Message() << bits << " bits, group " << gs << ", " << dtype_suffix(dtype));
        const QuantizedMatrix m = quantize_random(3, 384, {bits, gs}, dtype, bits * 1000 + gs);
        // Values lie in [-1, 1]; a step is 2 / (2^bits - 1). Rounding the bias
        // and scale to 16 bits adds up to 2^-8 relative of each (bf16) times the codes.
        const double step = 2.0 / ((1u << bits) - 1);
        const double rounding = dtype == DType::kBF16 ? 2.0 * (1.0 / 256) : dtype == DType::kF16 ? 2.0 / 2048 : 1e-6;
        for (size_t i = 0; i < m.original.size(); ++i) {
          ASSERT_LE(std::fabs(m.dequantized[i] - m.original[i]), step / 2 + rounding + 1e-6) << i;
        }
      }
    }
  }
}

std::unique_ptr<MlxAffineWeights> place(GpuBackend& gpu, const QuantizedMatrix& m) {
  return make_mlx_affine_weights(gpu, m.params, m.scale_dtype, m.rows, m.cols, m.codes.data(), m.scales.data(),
                                 m.biases.data(), gpu.default_stream());
}

std::vector<float> run(GpuBackend& gpu, size_t n, const std::function<void(DevicePtr)>& body,
                       const std::vector<std::pair<DevicePtr*, const std::vector<float>*>>& inputs) {
  std::vector<DeviceBuffer> buffers;
  for (auto [ptr, values] : inputs) {
    buffers.emplace_back(gpu, values->size() * 4);
    gpu.upload(buffers.back().ptr(), values->data(), values->size() * 4, gpu.default_stream());
    *ptr = buffers.back().ptr();
  }
  DeviceBuffer y(gpu, n * 4);
  body(y.ptr());
  std::vector<float> out(n);
  gpu.download(out.data(), y.ptr(), n * 4, gpu.default_stream());
  gpu.synchronize(gpu.default_stream());
  return out;
}

class MlxOnBackend : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { gpu_ = create_backend(GetParam()); }
  std::unique_ptr<GpuBackend> gpu_;
};

TEST_P(MlxOnBackend, RowDequantizationIsBitExact) {
  for (uint32_t bits : kBits) {
    for (uint32_t gs : kGroupSizes) {
      for (DType dtype : kScaleTypes) {
        SCOPED_TRACE(::testing::Message() << bits << " bits, group " << gs << ", " << dtype_suffix(dtype));
        const QuantizedMatrix m = quantize_random(5, 256, {bits, gs}, dtype, gs + bits);
        const auto w = place(*gpu_, m);
        for (uint32_t r = 0; r < m.rows; ++r) {
          const std::vector<float> row =
              run(*gpu_, m.cols, [&](DevicePtr y) { w->dequantize_row(*gpu_, r, y, gpu_->default_stream()); }, {});
          ASSERT_EQ(0, std::memcmp(row.data(), m.dequantized.data() + size_t{r} * m.cols, m.cols * 4)) << "row " << r;
        }
      }
    }
  }
}

// y = W x in double from the dequantized weights.
std::vector<double> dense_gemv(const QuantizedMatrix& m, const std::vector<float>& x, std::vector<double>* scale) {
  std::vector<double> y(m.rows, 0.0);
  if (scale) scale->assign(m.rows, 0.0);
  for (uint32_t r = 0; r < m.rows; ++r) {
    for (uint32_t c = 0; c < m.cols; ++c) {
      const double term = double{m.dequantized[size_t{r} * m.cols + c]} * x[c];
      y[r] += term;
      if (scale) (*scale)[r] += std::fabs(term);
    }
  }
  return y;
}

// float32 accumulation of the factored form sum(q x) * s + b * sum(x): the
// partial sums reach (2^bits - 1) * |s| * sum |x| ~ sum |w x| per group, so
// the rounding is a few ulps of sum |w x| times sqrt(cols); 1e-5 of
// (sum |w x| + 1) holds for rows up to 10^4 long.
constexpr double kGemvTolerance = 1e-5;

void expect_close(const std::vector<float>& got, const std::vector<double>& want, const std::vector<double>& scale,
                  const char* what) {
  for (size_t r = 0; r < got.size(); ++r) {
    ASSERT_NEAR(got[r], want[r], kGemvTolerance * (scale[r] + 1)) << what << " row " << r;
  }
}

TEST_P(MlxOnBackend, GemvMatchesDequantizedGemv) {
  for (uint32_t bits : kBits) {
    for (uint32_t gs : kGroupSizes) {
      for (DType dtype : kScaleTypes) {
        for (uint32_t cols : {128u, 384u, 1024u}) {
          SCOPED_TRACE(::testing::Message() << bits << " bits, group " << gs << ", " << dtype_suffix(dtype)
                                            << ", cols " << cols);
          const uint32_t rows = 67;  // not a multiple of any block
          const QuantizedMatrix m = quantize_random(rows, cols, {bits, gs}, dtype, cols + gs + bits);
          const QuantizedMatrix m1 = quantize_random(rows + 3, cols, {bits, gs}, dtype, cols + gs + bits + 1);
          const auto w = place(*gpu_, m);
          const auto w1 = place(*gpu_, m1);
          const std::vector<float> x = random_floats(cols, cols + 7, -2, 2);
          const std::vector<float> gate = random_floats(cols, cols + 8, -4, 4);
          const std::vector<float> residual = random_floats(rows, cols + 9);
          std::vector<float> act(cols);
          for (uint32_t c = 0; c < cols; ++c) act[c] = static_cast<float>(gate[c] / (1.0 + std::exp(-double{gate[c]})) * x[c]);
          std::vector<double> scale, scale1, scale_act;
          const std::vector<double> want = dense_gemv(m, x, &scale);
          const std::vector<double> want1 = dense_gemv(m1, x, &scale1);
          std::vector<double> want_act = dense_gemv(m, act, &scale_act);
          for (uint32_t r = 0; r < rows; ++r) want_act[r] += residual[r];

          DevicePtr dx, dgate, dres;
          const Stream s = gpu_->default_stream();
          expect_close(run(*gpu_, rows, [&](DevicePtr y) { w->gemv(*gpu_, dx, y, s); }, {{&dx, &x}}), want, scale,
                       "gemv");
          DeviceBuffer y1(*gpu_, (rows + 3) * 4);
          const std::vector<float> y0 = run(*gpu_, rows, [&](DevicePtr y) {
            w->gemv_gate_up_with(*w1, *gpu_, dx, y, y1.ptr(), s);
          }, {{&dx, &x}});
          std::vector<float> got1(rows + 3);
          gpu_->download(got1.data(), y1.ptr(), got1.size() * 4, s);
          gpu_->synchronize(s);
          expect_close(y0, want, scale, "pair y0");
          expect_close(got1, want1, scale1, "pair y1");
          EXPECT_EQ(w->supports(FusedOp::kGateUp, w1.get()), w->supports(FusedOp::kSiluGate));
          if (w->supports(FusedOp::kSiluGateResidual)) {
            expect_close(run(*gpu_, rows, [&](DevicePtr y) { w->gemv_silu_gate_resid(*gpu_, dgate, dx, dres, y, s); },
                             {{&dx, &x}, {&dgate, &gate}, {&dres, &residual}}),
                         want_act, scale_act, "silu gate residual");
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(HostBackends, MlxOnBackend, ::testing::Values("reference", "cpu"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// A TensorSource over tensors held by the test.
class MapTensors final : public TensorSource {
 public:
  void add(const std::string& name, DType dtype, std::vector<int64_t> shape) {
    int64_t numel = 1;
    for (int64_t d : shape) numel *= d;
    auto& bytes = storage_[name];
    bytes.assign(static_cast<size_t>(numel) * dtype_size(dtype), std::byte{0});
    views_[name] = TensorView{name, dtype, std::move(shape), bytes.data(), bytes.size(), "test.safetensors"};
  }
  void remove(const std::string& name) { views_.erase(name); }
  const TensorView* find(std::string_view name) const override {
    const auto it = views_.find(std::string(name));
    return it == views_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const auto& [name, view] : views_) out.push_back(name);
    return out;
  }
  std::string origin() const override { return "test tensors"; }

 private:
  std::map<std::string, std::vector<std::byte>> storage_;
  std::map<std::string, TensorView> views_;
};

class MlxLoadErrors : public ::testing::Test {
 protected:
  // A [64, 256] projection stored as 4-bit codes in groups of 64.
  void SetUp() override {
    gpu_ = create_backend("cpu");
    quantization_.defaults = QuantizationConfig::Params{4, 64};
    tensors_.add("m.weight", DType::kU32, {64, 32});
    tensors_.add("m.scales", DType::kBF16, {64, 4});
    tensors_.add("m.biases", DType::kBF16, {64, 4});
  }
  std::string error(uint32_t cols = 256) {
    try {
      make_matrix(*gpu_, MatrixRequest{tensors_, "m", 64, cols, quantization_}, gpu_->default_stream());
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  std::unique_ptr<GpuBackend> gpu_;
  QuantizationConfig quantization_;
  MapTensors tensors_;
};

TEST_F(MlxLoadErrors, LoadsWhenNothingIsWrong) {
  PlacedMatrix m = make_matrix(*gpu_, MatrixRequest{tensors_, "m", 64, 256, quantization_}, gpu_->default_stream());
  EXPECT_EQ(m.weights->format_name(), "mlx4-g64-bf16");
  EXPECT_EQ(m.tensors.size(), 3u);
}

TEST_F(MlxLoadErrors, GroupSizeNotDividingTheRow) {
  EXPECT_THAT(error(224), AllOf(HasSubstr("'m'"), HasSubstr("group size 64 does not divide the row length 224")));
}

TEST_F(MlxLoadErrors, UnsupportedBits) {
  quantization_.overrides["m"] = QuantizationConfig::Params{3, 64};
  EXPECT_THAT(error(), AllOf(HasSubstr("'m'"), HasSubstr("unsupported bits 3")));
  EXPECT_THAT([] {
    try {
      parse_quantization_config(R"({"quantization": {"bits": 6, "group_size": 64}})", "config.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  }(), AllOf(HasSubstr("config.json"), HasSubstr("unsupported bits 6")));
}

TEST_F(MlxLoadErrors, PackedShapeWrong) {
  tensors_.add("m.weight", DType::kU32, {64, 64});  // 8-bit packing where the config says 4
  EXPECT_THAT(error(), AllOf(HasSubstr("m.weight"), HasSubstr("[64, 64]"), HasSubstr("[64, 32]")));
}

TEST_F(MlxLoadErrors, MissingScales) {
  tensors_.remove("m.scales");
  EXPECT_THAT(error(), AllOf(HasSubstr("missing tensor"), HasSubstr("m.scales")));
}

TEST_F(MlxLoadErrors, ScalesWithTheWrongGroupCount) {
  tensors_.add("m.scales", DType::kBF16, {64, 8});
  EXPECT_THAT(error(), AllOf(HasSubstr("m.scales"), HasSubstr("[64, 8]"), HasSubstr("[64, 4]")));
}

TEST_F(MlxLoadErrors, QuantizedWithoutAQuantizationBlock) {
  quantization_.defaults.reset();
  EXPECT_THAT(error(), AllOf(HasSubstr("'m'"), HasSubstr("quantization")));
}

TEST_F(MlxLoadErrors, ModuleOverriddenAsUnquantizedIsDense) {
  tensors_.remove("m.scales");
  tensors_.remove("m.biases");
  tensors_.add("m.weight", DType::kBF16, {64, 256});
  quantization_.overrides["m"] = std::nullopt;
  PlacedMatrix m = make_matrix(*gpu_, MatrixRequest{tensors_, "m", 64, 256, quantization_}, gpu_->default_stream());
  EXPECT_EQ(m.weights->format_name(), "bf16");
}

TEST(QuantizationConfig, OverridesAndDefaults) {
  const QuantizationConfig q = parse_quantization_config(
      R"({"quantization": {"group_size": 64, "bits": 4, "a.gate": {"group_size": 32, "bits": 8}, "a.b": false}})",
      "config.json");
  ASSERT_TRUE(q.for_module("x").has_value());
  EXPECT_EQ(q.for_module("x")->bits, 4u);
  EXPECT_EQ(q.for_module("a.gate")->bits, 8u);
  EXPECT_EQ(q.for_module("a.gate")->group_size, 32u);
  EXPECT_FALSE(q.for_module("a.b").has_value());
  EXPECT_FALSE(parse_quantization_config("{}", "config.json").defaults.has_value());
}

}  // namespace
}  // namespace qwen35::testing
