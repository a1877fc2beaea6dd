// A cheap in-suite fuzzer for the safetensors parser: random byte flips and
// truncations of a valid file must either parse into views that stay inside the
// buffer or throw qwen35::Error — never crash, never throw anything else.
// Run under the sanitizer build (QWEN35_SANITIZE) this also checks memory safety.
#include <gtest/gtest.h>

#include <random>
#include <span>
#include <string>

#include "io/safetensors.h"
#include "io_test_util.h"
#include "qwen35/error.h"

namespace qwen35 {
namespace {

TEST(SafetensorsMutation, RandomCorruptionsParseOrThrowError) {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
      R"("b":{"dtype":"BF16","shape":[3],"data_offsets":[16,22]},"c":{"dtype":"I8","shape":[],"data_offsets":[22,23]}})";
  const std::string valid = testing::safetensors_bytes(header, 23);
  constexpr uint32_t kSeed = 20240601;
  SCOPED_TRACE(::testing::Message() << "seed " << kSeed);
  std::mt19937 rng(kSeed);
  int parsed = 0;
  for (int iteration = 0; iteration < 5000; ++iteration) {
    std::string bytes = valid;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xff);
    if (rng() % 8 == 0) bytes.resize(rng() % bytes.size());
    const auto span = std::as_bytes(std::span(bytes.data(), bytes.size()));
    try {
      const SafetensorsContents contents = parse_safetensors(span, "mutated.safetensors");
      ++parsed;
      for (const TensorView& view : contents.tensors) {
        ASSERT_GE(view.data, span.data()) << "iteration " << iteration;
        ASSERT_LE(view.data + view.bytes, span.data() + span.size()) << "iteration " << iteration;
        ASSERT_EQ(view.bytes, static_cast<size_t>(view.numel()) * dtype_size(view.dtype)) << "iteration " << iteration;
      }
    } catch (const Error& e) {
      ASSERT_NE(std::string(e.what()).find("mutated.safetensors"), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(parsed, 0);  // flips inside the data section leave the file valid
}

}  // namespace
}  // namespace qwen35
