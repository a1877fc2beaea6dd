// Reading safetensors: a hand-made valid file, and one test per kind of broken
// file, each checking that the error names the file and the offending tensor/value.
#include "io/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "io_test_util.h"
#include "support/test_support.h"

namespace qwen35 {
namespace {

using ::testing::AllOf;
using testing::error_message;
using ::testing::HasSubstr;
using testing::safetensors_bytes;
using testing::safetensors_bytes_with_length;
using testing::write_file;

class SafetensorsRead : public ::testing::Test {
 protected:
  // Writes `bytes` as a .safetensors file and returns the message of the Error opening it throws.
  std::string open_error(std::string_view bytes) {
    write_file(path_, bytes);
    return error_message([&] { SafetensorsFile file(path_); });
  }

  testing::TempDir dir_;
  std::filesystem::path path_ = dir_.path() / "model.safetensors";
  std::string file_ = path_.string();
};

TEST_F(SafetensorsRead, HandMadeFile) {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"BF16","shape":[2,3],"data_offsets":[16,28]},)"
      R"("a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"s":{"dtype":"I64","shape":[],"data_offsets":[28,36]}})";
  write_file(path_, safetensors_bytes(header, 36));
  const SafetensorsFile file(path_);
  ASSERT_EQ(file.tensors().size(), 3u);
  EXPECT_EQ(file.tensors()[0].name, "a");  // listed in data order, not header order
  EXPECT_EQ(file.tensors()[2].name, "s");
  EXPECT_EQ(file.metadata().at("format"), "pt");

  const TensorView* b = file.find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->dtype, DType::kBF16);
  EXPECT_EQ(b->shape_string(), "[2, 3]");
  EXPECT_EQ(b->numel(), 6);
  EXPECT_EQ(b->bytes, 12u);
  EXPECT_EQ(b->file, file_);
  const TensorView* a = file.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(b->data - a->data, 16);
  const TensorView* s = file.find("s");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->shape_string(), "[]");
  EXPECT_EQ(s->numel(), 1);  // a scalar
  EXPECT_EQ(file.find("missing"), nullptr);
}

TEST_F(SafetensorsRead, EmptyTensorsMayShareAnOffset) {
  const std::string header =
      R"({"e1":{"dtype":"F32","shape":[0,4],"data_offsets":[4,4]},"e2":{"dtype":"F16","shape":[0],"data_offsets":[4,4]},)"
      R"("x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  write_file(path_, safetensors_bytes(header, 8));
  const SafetensorsFile file(path_);
  EXPECT_EQ(file.find("e1")->numel(), 0);
  EXPECT_EQ(file.find("e1")->bytes, 0u);
}

TEST_F(SafetensorsRead, EmptyFile) {
  EXPECT_THAT(open_error(""), AllOf(HasSubstr(file_), HasSubstr("0 bytes"), HasSubstr("8-byte")));
}

TEST_F(SafetensorsRead, ShorterThanTheLengthField) {
  EXPECT_THAT(open_error(std::string_view("\x05\x00\x00", 3)),
              AllOf(HasSubstr(file_), HasSubstr("3 bytes"), HasSubstr("8-byte")));
}

TEST_F(SafetensorsRead, HeaderLengthBeyondFile) {
  EXPECT_THAT(
      open_error(safetensors_bytes_with_length(1000, "{}", 0)),
      AllOf(HasSubstr(file_), HasSubstr("header length 1000"), HasSubstr("past the end"), HasSubstr("2 bytes")));
}

TEST_F(SafetensorsRead, AbsurdHeaderLength) {
  EXPECT_THAT(open_error(safetensors_bytes_with_length(uint64_t{1} << 40, "{}", 0)),
              AllOf(HasSubstr(file_), HasSubstr("header length 1099511627776"), HasSubstr("100000000")));
}

TEST_F(SafetensorsRead, MalformedHeaderJson) {
  EXPECT_THAT(open_error(safetensors_bytes(R"({"w":{"dtype":"F32",)", 0)),
              AllOf(HasSubstr(file_), HasSubstr("not valid JSON"), HasSubstr("line 1, column")));
}

TEST_F(SafetensorsRead, HeaderNotAnObject) {
  EXPECT_THAT(open_error(safetensors_bytes("[1, 2]  ", 0)),
              AllOf(HasSubstr(file_), HasSubstr("JSON object"), HasSubstr("array")));
}

TEST_F(SafetensorsRead, EntryNotAnObject) {
  EXPECT_THAT(open_error(safetensors_bytes(R"({"w": [1, 2]})", 0)),
              AllOf(HasSubstr(file_), HasSubstr("tensor 'w'"), HasSubstr("must be a JSON object"), HasSubstr("[1,2]")));
}

TEST_F(SafetensorsRead, MissingDtype) {
  EXPECT_THAT(open_error(safetensors_bytes(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", 4)),
              AllOf(HasSubstr(file_), HasSubstr("tensor 'w'"), HasSubstr("no 'dtype' field")));
}

TEST_F(SafetensorsRead, MissingShape) {
  EXPECT_THAT(open_error(safetensors_bytes(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", 4)),
              AllOf(HasSubstr(file_), HasSubstr("tensor 'w'"), HasSubstr("no 'shape' field")));
}

TEST_F(SafetensorsRead, MissingDataOffsets) {
  EXPECT_THAT(open_error(safetensors_bytes(R"({"w":{"dtype":"F32","shape":[1]}})", 4)),
              AllOf(HasSubstr(file_), HasSubstr("tensor 'w'"), HasSubstr("no 'data_offsets' field")));
}

TEST_F(SafetensorsRead, UnknownDtype) {
  EXPECT_THAT(open_error(safetensors_bytes(R"({"w":{"dtype":"F12","shape":[1],"data_offsets":[0,4]}})", 4)),
              AllOf(HasSubstr(file_), HasSubstr("tensor 'w'"), HasSubstr("unknown dtype \"F12\"")));
}

TEST_F(SafetensorsRead, DtypeNotAString) {
  EXPECT_THAT(open_error(safetensors_bytes(R"({"w":{"dtype":7,"shape":[1],"data_offsets":[0,4]}})", 4)),
              AllOf(HasSubstr(file_), HasSubstr("tensor 'w'"), HasSubstr("dtype must be a string, found 7")));
}

TEST_F(SafetensorsRead, NegativeShapeDim) {
  EXPECT_THAT(open_error(safetensors_bytes(R"({"w":{"dtype":"F32","shape":[2,-3],"data_offsets":[0,4]}})", 4)),
              AllOf(HasSubstr(file_), HasSubstr("tensor 'w'"), HasSubstr("shape[1]"), HasSubstr("found -3")));
}

TEST_F(SafetensorsRead, NonIntegerShapeDim) {
  EXPECT_THAT(open_error(safetensors_bytes(R"({"w":{"dtype":"F32","shape":[2.5],"data_offsets":[0,4]}})", 4)),
              AllOf(HasSubstr(file_), HasSubstr("tensor 'w'"), HasSubstr("shape[0]"), HasSubstr("found 2.5")));
}

TEST_F(SafetensorsRead, StringShapeDim) {
  EXPECT_THAT(open_error(safetensors_bytes(R"({"w":{"dtype":"F32","shape":["4"],"data_offsets":[0,16]}})", 16)),
              AllOf(HasSubstr(file_), HasSubstr("tensor 'w'"), HasSubstr("shape[0]"), HasSubstr("found \"4\"")));
}

TEST_F(SafetensorsRead, ShapeWhoseElementCountOverflows) {
  EXPECT_THAT(
      open_error(safetensors_bytes(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", 4)),
      AllOf(HasSubstr(file_), HasSubstr("tensor 'w'"), HasSubstr("63 bits")));
}

TEST_F(SafetensorsRead, DataOffsetsNotAPair) {
  EXPECT_THAT(open_error(safetensors_bytes(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4)),
              AllOf(HasSubstr(file_), HasSubstr("tensor 'w'"), HasSubstr("data_offsets must be [begin, end]"),
                    HasSubstr("[0]")));
}

TEST_F(SafetensorsRead, DataOffsetsBeginAfterEnd) {
  EXPECT_THAT(open_error(safetensors_bytes(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", 8)),
              AllOf(HasSubstr(file_), HasSubstr("tensor 'w'"), HasSubstr("[8, 4] has begin after end")));
}

TEST_F(SafetensorsRead, DataOffsetsBeyondDataSection) {
  EXPECT_THAT(open_error(safetensors_bytes(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 12)),
              AllOf(HasSubstr(file_), HasSubstr("tensor 'w'"), HasSubstr("end 16"), HasSubstr("12 bytes"),
                    HasSubstr("truncated")));
}

TEST_F(SafetensorsRead, TruncatedFile) {
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[4],"data_offsets":[16,32]}})";
  const std::string whole = safetensors_bytes(header, 32);
  EXPECT_THAT(open_error(std::string_view(whole).substr(0, whole.size() - 5)),
              AllOf(HasSubstr(file_), HasSubstr("tensor 'b'"), HasSubstr("end 32"), HasSubstr("27 bytes"),
                    HasSubstr("truncated")));
}

TEST_F(SafetensorsRead, ByteSizeMismatch) {
  EXPECT_THAT(open_error(safetensors_bytes(R"({"w":{"dtype":"BF16","shape":[3,2],"data_offsets":[0,16]}})", 16)),
              AllOf(HasSubstr(file_), HasSubstr("tensor 'w'"), HasSubstr("span 16 bytes"), HasSubstr("BF16"),
                    HasSubstr("6 elements x 2 bytes")));
}

TEST_F(SafetensorsRead, OverlappingTensors) {
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})";
  EXPECT_THAT(open_error(safetensors_bytes(header, 20)),
              AllOf(HasSubstr(file_), HasSubstr("'a' (bytes [0, 16))"), HasSubstr("'b' (bytes [12, 20))"),
                    HasSubstr("overlap")));
}

TEST_F(SafetensorsRead, TensorInsideAnotherOverlaps) {
  const std::string header =
      R"({"big":{"dtype":"F32","shape":[8],"data_offsets":[0,32]},"mid":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
      R"("late":{"dtype":"F32","shape":[1],"data_offsets":[20,24]}})";
  EXPECT_THAT(open_error(safetensors_bytes(header, 32)),
              AllOf(HasSubstr(file_), HasSubstr("'big'"), HasSubstr("'mid'"), HasSubstr("overlap")));
}

TEST_F(SafetensorsRead, DuplicateTensorName) {
  const std::string header =
      R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  EXPECT_THAT(open_error(safetensors_bytes(header, 8)), AllOf(HasSubstr(file_), HasSubstr("'w' twice")));
}

TEST_F(SafetensorsRead, MetadataValueNotAString) {
  EXPECT_THAT(open_error(safetensors_bytes(R"({"__metadata__":{"format":3}})", 0)),
              AllOf(HasSubstr(file_), HasSubstr("__metadata__"), HasSubstr("'format'"), HasSubstr("found 3")));
}

}  // namespace
}  // namespace qwen35
