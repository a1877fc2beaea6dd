// write_safetensors: what is written reads back bit for bit, the layout follows
// the reference (8-byte-aligned header padded with spaces, no data gaps), and
// bad requests are refused before anything is written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>

#include "io/mapped_file.h"
#include "io/safetensors.h"
#include "io_test_util.h"
#include "support/test_support.h"

namespace qwen35 {
namespace {

using ::testing::AllOf;
using testing::error_message;
using ::testing::HasSubstr;

template <typename T>
std::span<const std::byte> as_bytes(const std::vector<T>& values) {
  return std::as_bytes(std::span<const T>(values));
}

class SafetensorsWrite : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  std::filesystem::path path_ = dir_.path() / "out.safetensors";
};

TEST_F(SafetensorsWrite, RoundTrip) {
  const std::vector<float> weights = testing::random_floats(6, 1234);
  const std::vector<uint16_t> halves = {f32_to_bf16(1.5f), f32_to_bf16(-2.0f), f32_to_bf16(0.25f)};
  const std::vector<int8_t> small = {1, -2, 3, -4, 5};
  const std::vector<double> scalar = {3.25};
  write_safetensors(path_,
                    {{"layer.halves", DType::kBF16, {3}, as_bytes(halves)},
                     {"layer.small", DType::kI8, {5}, as_bytes(small)},
                     {"layer.weights", DType::kF32, {2, 3}, as_bytes(weights)},
                     {"scalar", DType::kF64, {}, as_bytes(scalar)},
                     {"empty", DType::kF32, {0, 3}, {}}},
                    {{"format", "pt"}, {"writer", "qwen35"}});

  const SafetensorsFile file(path_);
  ASSERT_EQ(file.tensors().size(), 5u);
  EXPECT_EQ(file.tensors()[0].name, "scalar");  // the widest element type comes first in the data
  EXPECT_EQ(file.metadata().at("writer"), "qwen35");
  const TensorView* w = file.find("layer.weights");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, DType::kF32);
  EXPECT_EQ(w->shape_string(), "[2, 3]");
  ASSERT_EQ(w->bytes, weights.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(w->data, weights.data(), w->bytes), 0);
  const TensorView* h = file.find("layer.halves");
  ASSERT_EQ(h->bytes, 6u);
  EXPECT_EQ(std::memcmp(h->data, halves.data(), 6), 0);
  EXPECT_EQ(std::memcmp(file.find("layer.small")->data, small.data(), 5), 0);
  EXPECT_EQ(std::memcmp(file.find("scalar")->data, scalar.data(), 8), 0);
  EXPECT_EQ(file.find("empty")->numel(), 0);

  // Every tensor starts at a multiple of its element size within the file.
  const MappedFile raw(path_);
  for (const TensorView& view : file.tensors()) {
    EXPECT_EQ(static_cast<size_t>(view.data - raw.data()) % dtype_size(view.dtype), 0u) << view.name;
  }
}

TEST_F(SafetensorsWrite, HeaderIsPaddedWithSpacesAndDataHasNoGaps) {
  const std::vector<float> one = {1.0f};
  write_safetensors(path_, {{"x", DType::kF32, {1}, as_bytes(one)}});
  std::ifstream in(path_, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GE(bytes.size(), 8u);
  uint64_t header_length = 0;
  for (int i = 0; i < 8; ++i) header_length |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  EXPECT_EQ(header_length % 8, 0u);
  EXPECT_EQ(bytes.size(), 8 + header_length + sizeof(float));  // no gaps, nothing trailing
  const std::string header = bytes.substr(8, header_length);
  EXPECT_EQ(header.find_last_not_of(' '), header.rfind('}'));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "out.safetensors.partial"));
}

TEST_F(SafetensorsWrite, RejectsByteSizeMismatch) {
  const std::vector<float> three = {1, 2, 3};
  EXPECT_THAT(error_message([&] {
                write_safetensors(path_, {{"w", DType::kF32, {2, 2}, as_bytes(three)}});
              }),
              AllOf(HasSubstr(path_.string()), HasSubstr("tensor 'w'"), HasSubstr("need 16 bytes"),
                    HasSubstr("12 bytes were given")));
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(SafetensorsWrite, RejectsDuplicateName) {
  const std::vector<float> one = {1.0f};
  EXPECT_THAT(
      error_message([&] {
        write_safetensors(path_, {{"w", DType::kF32, {1}, as_bytes(one)}, {"w", DType::kF32, {1}, as_bytes(one)}});
      }),
      AllOf(HasSubstr(path_.string()), HasSubstr("'w' is given twice")));
}

TEST_F(SafetensorsWrite, RejectsReservedName) {
  EXPECT_THAT(error_message([&] {
                write_safetensors(path_, {{"__metadata__", DType::kF32, {0}, {}}});
              }),
              AllOf(HasSubstr(path_.string()), HasSubstr("'__metadata__' is reserved")));
}

TEST_F(SafetensorsWrite, RejectsNegativeDimension) {
  EXPECT_THAT(error_message([&] {
                write_safetensors(path_, {{"w", DType::kF32, {-1}, {}}});
              }),
              AllOf(HasSubstr(path_.string()), HasSubstr("tensor 'w'"), HasSubstr("negative dimension -1")));
}

TEST_F(SafetensorsWrite, UnwritableDirectory) {
  const auto path = dir_.path() / "no-such-dir" / "out.safetensors";
  EXPECT_THAT(error_message([&] { write_safetensors(path, {}); }),
              AllOf(HasSubstr(path.string()), HasSubstr("cannot create")));
}

}  // namespace
}  // namespace qwen35
