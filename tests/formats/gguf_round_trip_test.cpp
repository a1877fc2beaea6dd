// GGUF end to end: each golden checkpoint written as a llama.cpp-style GGUF
// (formats/gguf_converter.h: the converter's transforms, value heads tiled) with its
// matrices in one type, opened back with open_checkpoint, decoded on the CPU
// backend with a float32 KV cache and compared with the golden float64
// logits. The bounds are measured values with margin (docs/accuracy.md). Also:
// the checkpoint-level errors (missing tensor, architecture) and that the
// tiled value-head map is what makes tiny (4 value / 2 key heads) right.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "formats/gguf_converter.h"
#include "golden_decode.h"
#include "qwen35/checkpoint.h"
#include "qwen35/model.h"
#include "support/backend_skip.h"
#include "support/test_support.h"

namespace qwen35::testing {
namespace {

struct RoundTripCase {
  std::string folder;
  DType type;
  double max_relative_error;  // max |logit - golden| / max |golden|
  double min_top1_agreement;  // fraction of positions whose argmax matches the golden one
};

// "<folder>_<type>" for any case with those two fields.
template <typename Case>
std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.folder + "_" + dtype_lower_name(info.param.type);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

class GgufRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(GgufRoundTrip, LogitsStayNearTheGolden) {
  const RoundTripCase& param = GetParam();
  TempDir dir;
  const std::filesystem::path file = dir.path() / "model.gguf";
  write_gguf_from_checkpoint(open_hf_checkpoint(shared_dir() / "golden" / param.folder), file,
                             {.matrix_type = param.type});
  Checkpoint checkpoint = open_checkpoint(file);
  EXPECT_EQ(checkpoint.config.value_head_map, ValueHeadMap::kTiled);
  EXPECT_TRUE(checkpoint.layout.norms_include_one);
  const TensorView* embed = checkpoint.tensors->find("model.embed_tokens.weight");
  ASSERT_NE(embed, nullptr);
  EXPECT_EQ(embed->dtype, param.type);
  EXPECT_EQ(embed->name, "token_embd.weight");

  const Decoded d = decode_against_golden(param.folder, std::move(checkpoint));
  const double agreement = static_cast<double>(d.agree) / static_cast<double>(d.tokens);
  std::cout << "[ gguf     ] " << param.folder << " " << dtype_name(param.type)
            << ": max |logit - golden| / max |golden| = " << d.relative_error << ", top-1 agreement " << d.agree
            << "/" << d.tokens << "\n";
  EXPECT_LE(d.relative_error, param.max_relative_error);
  EXPECT_GE(agreement, param.min_top1_agreement);
}

// Bounds: about twice the measured error (docs/accuracy.md, GGUF section).
INSTANTIATE_TEST_SUITE_P(
    Goldens, GgufRoundTrip,
    ::testing::Values(RoundTripCase{"tiny", DType::kF32, 1e-4, 1.0}, RoundTripCase{"tiny", DType::kBF16, 1e-4, 1.0},
                      RoundTripCase{"tiny", DType::kF16, 1e-4, 1.0}, RoundTripCase{"tiny", DType::kQ8_0, 0.08, 0.85},
                      RoundTripCase{"tiny", DType::kQ6_K, 0.33, 0.45}, RoundTripCase{"tiny", DType::kQ5_K, 0.75, 0.3},
                      RoundTripCase{"tiny", DType::kQ4_K, 1.2, 0.15}, RoundTripCase{"tiny", DType::kQ4_0, 1.2, 0.12},
                      RoundTripCase{"tied-flat-sharded", DType::kF32, 1e-4, 1.0},
                      RoundTripCase{"tied-flat-sharded", DType::kF16, 0.02, 0.95},
                      RoundTripCase{"tied-flat-sharded", DType::kQ8_0, 0.2, 0.75},
                      RoundTripCase{"tied-flat-sharded", DType::kQ6_K, 0.75, 0.45},
                      RoundTripCase{"tied-flat-sharded", DType::kQ5_K, 1.2, 0.25},
                      RoundTripCase{"tied-flat-sharded", DType::kQ4_K, 1.8, 0.15},
                      RoundTripCase{"tied-flat-sharded", DType::kQ4_0, 2.2, 0.05}),
    case_name<RoundTripCase>);

// With int8 activations (BackendOptions::int8_activations) the same GGUF
// decodes to logits near those of float activations, and as near the golden
// as the float bounds above ask. These random-weight models amplify every
// perturbation through their layers: rounding x to 8 bits moves the logits
// about as much as Q8_0's own weight rounding does, and far less than the
// 4- to 6-bit weights move them from the golden. Bounds: about twice the
// measured values (docs/accuracy.md).
struct Int8Case {
  std::string folder;
  DType type;
  double max_deviation;     // max |int8 logit - float logit| / max |float logit|
  double max_golden_error;  // as RoundTripCase::max_relative_error
};

// A golden converted to GGUF with `type` matrices, decoded on the CPU with
// float activations and with `options`.
FloatAndOther decode_float_and(const std::string& folder, DType type, const BackendOptions& options) {
  TempDir dir;
  const std::filesystem::path file = dir.path() / "model.gguf";
  write_gguf_from_checkpoint(open_hf_checkpoint(shared_dir() / "golden" / folder), file, {.matrix_type = type});
  return {decode_against_golden(folder, open_checkpoint(file)),
          decode_against_golden(folder, open_checkpoint(file), "cpu", options)};
}

class GgufInt8Activations : public ::testing::TestWithParam<Int8Case> {};

TEST_P(GgufInt8Activations, LogitsStayNearThoseOfFloatActivations) {
  const Int8Case& param = GetParam();
  const auto [float_x, int8_x] = decode_float_and(param.folder, param.type, {.int8_activations = true});
  const Deviation d = deviation(int8_x.logits.data(), float_x.logits.data(), float_x.logits.size());
  std::cout << "[ gguf     ] " << param.folder << " " << dtype_name(param.type)
            << " int8 activations: max |logit - float activations'| / max = " << d.relative()
            << "; against the golden " << int8_x.relative_error << " (float activations " << float_x.relative_error
            << ")\n";
  EXPECT_FALSE(d.has_nan);
  EXPECT_GT(d.relative(), 0.0);  // the integer kernels did run
  EXPECT_LE(d.relative(), param.max_deviation);
  EXPECT_LE(int8_x.relative_error, param.max_golden_error);
}

INSTANTIATE_TEST_SUITE_P(Goldens, GgufInt8Activations,
                         ::testing::Values(Int8Case{"tiny", DType::kQ8_0, 0.12, 0.08},
                                           Int8Case{"tiny", DType::kQ4_0, 0.12, 1.2},
                                           Int8Case{"tiny", DType::kQ4_K, 0.1, 1.2},
                                           Int8Case{"tiny", DType::kQ5_K, 0.1, 0.75},
                                           Int8Case{"tiny", DType::kQ6_K, 0.12, 0.33},
                                           Int8Case{"tied-flat-sharded", DType::kQ8_0, 0.23, 0.2},
                                           Int8Case{"tied-flat-sharded", DType::kQ4_K, 0.16, 1.8},
                                           Int8Case{"tied-flat-sharded", DType::kQ4_0, 0.23, 2.2},
                                           Int8Case{"tied-flat-sharded", DType::kQ6_K, 0.25, 0.75}),
                         case_name<Int8Case>);

// With x in 24 bits (BackendOptions::int24_activations) the regrouped
// matrices' and Q6_K's logits are those of float activations to float32's precision:
// no further from them than another float32 implementation's (the GPU
// backends' bound below, 3e-5), where 8 bits moved them by 0.05-0.2.
class GgufInt24Activations : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(GgufInt24Activations, LogitsAreThoseOfFloatActivations) {
  const RoundTripCase& param = GetParam();
  const auto [float_x, int24_x] = decode_float_and(param.folder, param.type, {.int24_activations = true});
  expect_float32_grade(float_x, int24_x,
                       "[ gguf     ] " + param.folder + " " + std::string(dtype_name(param.type)) + " int24 activations");
}

INSTANTIATE_TEST_SUITE_P(Goldens, GgufInt24Activations,
                         ::testing::Values(RoundTripCase{"tiny", DType::kQ4_0}, RoundTripCase{"tiny", DType::kQ4_K},
                                           RoundTripCase{"tiny", DType::kQ5_K}, RoundTripCase{"tiny", DType::kQ6_K},
                                           RoundTripCase{"tied-flat-sharded", DType::kQ4_0},
                                           RoundTripCase{"tied-flat-sharded", DType::kQ4_K},
                                           RoundTripCase{"tied-flat-sharded", DType::kQ6_K}),
                         case_name<RoundTripCase>);

// The file holds tiled value heads; reading them with the grouped map (the
// Hugging Face one) must visibly break tiny, whose 4 value heads share 2 key heads.
TEST(GgufCheckpoint, TiledValueHeadsAreWhatMakesTinyRight) {
  TempDir dir;
  const std::filesystem::path file = dir.path() / "tiny.gguf";
  write_gguf_from_checkpoint(open_hf_checkpoint(shared_dir() / "golden" / "tiny"), file, {.matrix_type = DType::kF32});
  Checkpoint grouped = open_gguf_checkpoint(file);
  ASSERT_EQ(grouped.config.n_heads_v_lin, 4u);
  ASSERT_EQ(grouped.config.n_heads_k_lin, 2u);
  grouped.config.value_head_map = ValueHeadMap::kGrouped;
  const Decoded wrong = decode_against_golden("tiny", std::move(grouped));
  std::cout << "[ gguf     ] tiny F32 read with the grouped map: error " << wrong.relative_error << "\n";
  EXPECT_GT(wrong.relative_error, 1e-2);
  const Decoded right = decode_against_golden("tiny", open_gguf_checkpoint(file), "reference");
  EXPECT_LE(right.relative_error, 1e-4);
}

void expect_open_error(const std::filesystem::path& file, const std::string& needle) {
  try {
    open_checkpoint(file);
    ADD_FAILURE() << "opening " << file << " did not fail; expected an error containing: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(file.filename().string()), std::string::npos) << e.what();
  }
}

TEST(GgufCheckpoint, ErrorsNameTheFileAndWhatIsWrong) {
  TempDir dir;
  const Checkpoint tiny = open_hf_checkpoint(shared_dir() / "golden" / "tiny");
  const auto write = [&](const std::string& name, GgufConvertOptions options) {
    const std::filesystem::path file = dir.path() / name;
    options.matrix_type = DType::kQ8_0;
    write_gguf_from_checkpoint(tiny, file, options);
    return file;
  };
  expect_open_error(write("missing.gguf", {.skip = {"blk.1.ssm_a"}}),
                    "missing tensor 'blk.1.ssm_a' (the model's 'model.layers.1.linear_attn.A_log')");
  expect_open_error(write("missing_ffn.gguf", {.skip = {"blk.3.ffn_down.weight"}}), "missing tensor 'blk.3.ffn_down.weight'");
  expect_open_error(write("moe.gguf", {.architecture = "qwen35moe"}), "architecture 'qwen35moe' (Qwen3.5 mixture of experts) is not supported yet");
  expect_open_error(write("llama.gguf", {.architecture = "llama"}), "unsupported architecture 'llama' (expected 'qwen35')");
  // A GGUF without the extension is recognised by its magic.
  const std::filesystem::path renamed = dir.path() / "model.bin";
  std::filesystem::copy_file(write("valid.gguf", {}), renamed);
  EXPECT_EQ(open_checkpoint(renamed).config.value_head_map, ValueHeadMap::kTiled);
  const std::filesystem::path not_gguf = dir.path() / "notes.txt";
  std::ofstream(not_gguf) << "hello";
  expect_open_error(not_gguf, "is a file but not a GGUF file");
}

// An MTP block after the decoder (block_count includes it) is ignored.
TEST(GgufCheckpoint, MtpBlockIsIgnored) {
  TempDir dir;
  const std::filesystem::path file = dir.path() / "mtp.gguf";
  write_gguf_from_checkpoint(open_hf_checkpoint(shared_dir() / "golden" / "tiny"), file,
                             {.matrix_type = DType::kF32, .mtp_block = true});
  Checkpoint checkpoint = open_checkpoint(file);
  EXPECT_EQ(checkpoint.config.num_layers, 4u);
  EXPECT_LE(decode_against_golden("tiny", std::move(checkpoint)).relative_error, 1e-4);
}

TEST(GgufCheckpoint, ShapeMismatchNamesTheGgufTensor) {
  TempDir dir;
  const std::filesystem::path file = dir.path() / "tiny.gguf";
  write_gguf_from_checkpoint(open_hf_checkpoint(shared_dir() / "golden" / "tiny"), file, {.matrix_type = DType::kQ8_0});
  Checkpoint checkpoint = open_checkpoint(file);
  Qwen35ForwardConfig config = checkpoint.config;
  config.intermediate = 256;  // the file's ffn tensors are [512, 256]
  std::unique_ptr<GpuBackend> gpu = create_backend("reference");
  std::shared_ptr<const TensorSource> tensors = std::move(checkpoint.tensors);
  try {
    Model::load(*gpu, config, tensors, checkpoint.layout);
    ADD_FAILURE() << "loading with the wrong intermediate size did not fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tiny.gguf: tensor 'blk.0.ffn_gate.weight' (Q8_0) has shape [512, 256]; "
                                         "expected [256, 256]"),
              std::string::npos)
        << e.what();
  }
}

TEST(GgufCheckpoint, SmallProjectionsKeepTheirOwnType) {
  TempDir dir;
  const std::filesystem::path file = dir.path() / "mixed.gguf";
  write_gguf_from_checkpoint(open_hf_checkpoint(shared_dir() / "golden" / "tiny"), file,
                             {.matrix_type = DType::kQ6_K, .small_type = DType::kBF16});
  Checkpoint checkpoint = open_checkpoint(file);
  EXPECT_EQ(checkpoint.tensors->find("model.layers.0.linear_attn.in_proj_a.weight")->dtype, DType::kBF16);
  EXPECT_EQ(checkpoint.tensors->find("model.layers.0.linear_attn.in_proj_qkv.weight")->dtype, DType::kQ6_K);
  EXPECT_EQ(checkpoint.tensors->find("model.layers.0.linear_attn.conv1d.weight")->shape,
            (std::vector<int64_t>{1024, 1, 4}));
  const Decoded d = decode_against_golden("tiny", std::move(checkpoint));
  EXPECT_LE(d.relative_error, 0.2);
}

// The GPU backends decode a whole GGUF model, block-typed embedding and output
// projection included, to the CPU's logits (both float32 arithmetic; only the
// order of the sums differs). Skipped where a backend is not built or finds no
// device; CI runs Vulkan on Mesa's lavapipe.
class GgufOnGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufOnGpu, DecodesAsTheCpuDoes) {
  const std::string backend = GetParam();
  if (const std::string why = backend_unavailable(backend); !why.empty()) GTEST_SKIP() << why;
  for (DType type : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K}) {
    SCOPED_TRACE(dtype_name(type));
    TempDir dir;
    const std::filesystem::path file = dir.path() / "model.gguf";
    write_gguf_from_checkpoint(open_hf_checkpoint(shared_dir() / "golden" / "tiny"), file, {.matrix_type = type});
    const Decoded cpu = decode_against_golden("tiny", open_checkpoint(file));
    const Decoded gpu = decode_against_golden("tiny", open_checkpoint(file), backend);
    const Deviation d = deviation(gpu.logits.data(), cpu.logits.data(), cpu.logits.size());
    std::cout << "[ gguf     ] tiny " << dtype_name(type) << " on " << backend
              << ": max |logit - cpu| / max |cpu| = " << d.relative() << "\n";
    EXPECT_FALSE(d.has_nan);
    EXPECT_LE(d.relative(), 3e-5) << "max |" << backend << " - cpu| / max |cpu|";  // lavapipe: 1.1e-6 .. 2.7e-6
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, GgufOnGpu, ::testing::Values("vulkan", "cuda"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// `qwen35 bench --dtype q8_0` removes its temporary GGUF once the model is
// loaded: the reference backend aliases the file's mapping, which must outlive the name.
TEST(GgufCheckpoint, LoadedModelOutlivesTheFileName) {
  TempDir dir;
  const std::filesystem::path file = dir.path() / "removed.gguf";
  write_gguf_from_checkpoint(open_hf_checkpoint(shared_dir() / "golden" / "tiny"), file, {.matrix_type = DType::kQ8_0});
  Checkpoint checkpoint = open_checkpoint(file);
  std::filesystem::remove(file);
  EXPECT_LE(decode_against_golden("tiny", std::move(checkpoint), "reference").relative_error, 0.08);
}

TEST(GgufConverter, ReadsOnlyTheHuggingFaceLayout) {
  TempDir dir;
  Checkpoint tiny = open_hf_checkpoint(shared_dir() / "golden" / "tiny");
  tiny.layout.norms_include_one = true;  // as MLX stores them
  try {
    write_gguf_from_checkpoint(tiny, dir.path() / "mlx.gguf", {});
    ADD_FAILURE() << "converting a layout with the +1 in the norms did not fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the GGUF converter reads the Hugging Face layout"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace qwen35::testing
