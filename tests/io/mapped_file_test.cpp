// MappedFile: contents, empty files, moves, and errors naming the path.
#include "io/mapped_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <utility>

#include "io_test_util.h"
#include "support/test_support.h"

namespace qwen35 {
namespace {

using ::testing::AllOf;
using testing::error_message;
using ::testing::HasSubstr;
using testing::TempDir;
using testing::write_file;

TEST(MappedFile, MapsTheWholeFile) {
  TempDir dir;
  const auto path = dir.path() / "bytes.bin";
  write_file(path, "hello, mapping");
  const MappedFile file(path);
  ASSERT_EQ(file.size(), 14u);
  EXPECT_EQ(std::memcmp(file.data(), "hello, mapping", 14), 0);
  EXPECT_EQ(file.path(), path);
}

TEST(MappedFile, EmptyFileHasNoBytes) {
  TempDir dir;
  const auto path = dir.path() / "empty.bin";
  write_file(path, "");
  const MappedFile file(path);
  EXPECT_EQ(file.size(), 0u);
  EXPECT_EQ(file.data(), nullptr);
  EXPECT_TRUE(file.bytes().empty());
}

TEST(MappedFile, MoveTransfersTheMapping) {
  TempDir dir;
  const auto path = dir.path() / "bytes.bin";
  write_file(path, "abcdefgh");
  MappedFile first(path);
  const std::byte* data = first.data();
  MappedFile second(std::move(first));
  EXPECT_EQ(second.data(), data);
  EXPECT_EQ(second.size(), 8u);
  EXPECT_EQ(first.data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  MappedFile third(path);
  third = std::move(second);
  EXPECT_EQ(third.data(), data);
  EXPECT_EQ(std::memcmp(third.data(), "abcdefgh", 8), 0);
}

TEST(MappedFile, MissingFileNamesThePath) {
  TempDir dir;
  const auto path = dir.path() / "absent.safetensors";
  EXPECT_THAT(error_message([&] { MappedFile file(path); }),
              AllOf(HasSubstr(path.string()), HasSubstr("No such file")));
}

TEST(MappedFile, DirectoryIsRejected) {
  TempDir dir;
  EXPECT_THAT(error_message([&] { MappedFile file(dir.path()); }),
              AllOf(HasSubstr(dir.path().string()), HasSubstr("regular file")));
}

}  // namespace
}  // namespace qwen35
