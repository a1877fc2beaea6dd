// The GGUF container: files written by write_gguf read back (every metadata
// value type, tensor shapes, alignment, data), and broken files (bad magic,
// versions, truncation at every byte of the header, unknown value and tensor
// types, rows not a multiple of the block, data past the end, bad alignment)
// each rejected with an Error naming the file and what is wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>

#include "io/gguf.h"
#include "io_test_util.h"
#include "support/test_support.h"

namespace qwen35::testing {
namespace {

std::vector<std::byte> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

// A small valid file: metadata of every type, an F32 [3, 5] tensor, a Q8_0 [2, 64] one.
struct SmallFile {
  std::vector<float> f32 = random_floats(15, 1);
  std::vector<std::byte> q8 = std::vector<std::byte>(2 * 2 * 34, std::byte{1});
  std::vector<std::byte> bytes;
  size_t header_end = 0;  // bytes before the tensor data section's padding

  explicit SmallFile(const std::filesystem::path& path, uint32_t alignment = 32, uint32_t version = 3) {
    GgufMetadataWriter m;
    m.add_string("general.architecture", "qwen35");
    if (alignment != 32) m.add_u32("general.alignment", alignment);
    m.add_u8("t.u8", 200);
    m.add_i8("t.i8", -100);
    m.add_u16("t.u16", 60000);
    m.add_i16("t.i16", -30000);
    m.add_u32("t.u32", 4000000000u);
    m.add_i32("t.i32", -2000000000);
    m.add_u64("t.u64", 1ull << 40);
    m.add_i64("t.i64", -(1ll << 40));
    m.add_f32("t.f32", 0.5f);
    m.add_f64("t.f64", 1e-300);
    m.add_bool("t.bool", true);
    m.add_string_array("t.strings", {"a", "", "ccc"});
    m.add_i32_array("t.ints", {1, -2, 3});
    write_gguf(path, m,
               {{"small", DType::kF32, {3, 5}, std::as_bytes(std::span(f32))},
                {"blocks", DType::kQ8_0, {2, 64}, q8}},
               alignment, version);
    bytes = read_bytes(path);
  }
};

// Offset of the tensor info of `name` (its name's length field) in a file's bytes.
size_t info_offset(const std::vector<std::byte>& bytes, std::string_view name) {
  for (size_t i = 8; i + 8 + name.size() <= bytes.size(); ++i) {
    uint64_t length;
    std::memcpy(&length, bytes.data() + i, 8);
    if (length == name.size() && std::memcmp(bytes.data() + i + 8, name.data(), name.size()) == 0) return i;
  }
  ADD_FAILURE() << "no tensor info for " << name;
  return 0;
}

template <typename T>
void patch(std::vector<std::byte>& bytes, size_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}

std::string parse_error(const std::vector<std::byte>& bytes) {
  return error_message([&] { parse_gguf(bytes, "broken.gguf"); });
}

TEST(GgufReader, ReadsWhatTheWriterWrote) {
  TempDir dir;
  for (uint32_t version : {2u, 3u}) {
    for (uint32_t alignment : {32u, 64u}) {
      SCOPED_TRACE(::testing::Message() << "version " << version << " alignment " << alignment);
      const std::filesystem::path path = dir.path() / "small.gguf";
      const SmallFile small(path, alignment, version);
      const GgufFile file(path);
      const GgufContents& c = file.contents();
      EXPECT_EQ(c.version, version);
      EXPECT_EQ(c.alignment, alignment);
      EXPECT_EQ(c.data_offset % alignment, 0u);
      EXPECT_EQ(std::get<std::string_view>(c.find("general.architecture")->scalar), "qwen35");
      EXPECT_EQ(std::get<uint64_t>(c.find("t.u8")->scalar), 200u);
      EXPECT_EQ(std::get<int64_t>(c.find("t.i8")->scalar), -100);
      EXPECT_EQ(std::get<uint64_t>(c.find("t.u16")->scalar), 60000u);
      EXPECT_EQ(std::get<int64_t>(c.find("t.i16")->scalar), -30000);
      EXPECT_EQ(std::get<uint64_t>(c.find("t.u32")->scalar), 4000000000u);
      EXPECT_EQ(std::get<int64_t>(c.find("t.i32")->scalar), -2000000000);
      EXPECT_EQ(std::get<uint64_t>(c.find("t.u64")->scalar), 1ull << 40);
      EXPECT_EQ(std::get<int64_t>(c.find("t.i64")->scalar), -(1ll << 40));
      EXPECT_EQ(std::get<double>(c.find("t.f32")->scalar), 0.5);
      EXPECT_EQ(std::get<double>(c.find("t.f64")->scalar), 1e-300);
      EXPECT_EQ(std::get<bool>(c.find("t.bool")->scalar), true);
      const GgufValue* strings = c.find("t.strings");
      ASSERT_EQ(strings->strings.size(), 3u);
      EXPECT_EQ(strings->strings[2], "ccc");
      EXPECT_EQ(c.find("t.ints")->numbers, (std::vector<double>{1, -2, 3}));
      EXPECT_EQ(c.find("t.ints")->describe(), "array of 3 i32");
      EXPECT_EQ(c.find("missing"), nullptr);

      ASSERT_EQ(c.tensors.size(), 2u);
      const TensorView& small_view = c.tensors[0];
      EXPECT_EQ(small_view.name, "small");
      EXPECT_EQ(small_view.shape, (std::vector<int64_t>{3, 5}));  // ne = {5, 3} in the file
      EXPECT_EQ(small_view.dtype, DType::kF32);
      EXPECT_EQ(small_view.file, path.string());
      ASSERT_EQ(small_view.bytes, 60u);
      EXPECT_EQ(std::memcmp(small_view.data, small.f32.data(), 60), 0);
      const TensorView& blocks = c.tensors[1];
      EXPECT_EQ(blocks.dtype, DType::kQ8_0);
      EXPECT_EQ(blocks.bytes, small.q8.size());
      EXPECT_EQ(static_cast<size_t>(blocks.data - small_view.data) % alignment, 0u);
    }
  }
}

TEST(GgufReader, RejectsBadMagicAndVersions) {
  TempDir dir;
  SmallFile small(dir.path() / "small.gguf");
  std::vector<std::byte> bytes = small.bytes;
  std::memcpy(bytes.data(), "GGUX", 4);
  EXPECT_NE(parse_error(bytes).find("broken.gguf: not a GGUF file: magic is 'GGUX', expected 'GGUF'"),
            std::string::npos);
  for (uint32_t version : {1u, 4u}) {
    bytes = small.bytes;
    patch<uint32_t>(bytes, 4, version);
    EXPECT_NE(parse_error(bytes).find(fmt::format("GGUF version {} is not supported (supported: 2 and 3)", version)),
              std::string::npos);
  }
  EXPECT_NE(parse_error({}).find("too short for the magic"), std::string::npos);
}

// Every prefix of the header and tensor infos is a truncated file: an Error, never a crash.
TEST(GgufReader, EveryTruncationIsAnError) {
  TempDir dir;
  SmallFile small(dir.path() / "small.gguf");
  for (size_t size = 0; size < small.bytes.size(); ++size) {
    const std::vector<std::byte> cut(small.bytes.begin(), small.bytes.begin() + static_cast<ptrdiff_t>(size));
    const std::string message = parse_error(cut);
    ASSERT_NE(message.find("broken.gguf"), std::string::npos) << "size " << size << ": " << message;
    if (size >= 24) {  // past the counts: the bytes run out, or a count or length no longer fits
      const bool explained = message.find("truncated") != std::string::npos ||
                             message.find("more than") != std::string::npos ||
                             message.find("remain in the file") != std::string::npos ||
                             message.find("past the end") != std::string::npos;
      EXPECT_TRUE(explained) << "size " << size << ": " << message;
    }
  }
}

TEST(GgufReader, RejectsBadTensorInfos) {
  TempDir dir;
  SmallFile small(dir.path() / "small.gguf");
  const size_t info = info_offset(small.bytes, "blocks");
  const size_t dims = info + 8 + 6, ne0 = dims + 4, type = ne0 + 16, offset = type + 4;

  std::vector<std::byte> bytes = small.bytes;
  patch<uint32_t>(bytes, type, 99);
  EXPECT_NE(parse_error(bytes).find("tensor 'blocks' has unknown ggml type 99 (supported: F32, F16, Q4_0, Q8_0, "
                                    "Q4_K, Q5_K, Q6_K, BF16)"),
            std::string::npos)
      << parse_error(bytes);
  bytes = small.bytes;
  patch<uint32_t>(bytes, type, 3);
  EXPECT_NE(parse_error(bytes).find("tensor 'blocks' has ggml type Q4_1 (3), which this engine cannot read"),
            std::string::npos);
  bytes = small.bytes;
  patch<uint64_t>(bytes, ne0, 48);
  EXPECT_NE(parse_error(bytes).find("tensor 'blocks' (Q8_0) has rows of 48 elements, not a multiple of the Q8_0 "
                                    "block size 32"),
            std::string::npos);
  bytes = small.bytes;
  patch<uint32_t>(bytes, dims, 5);
  EXPECT_NE(parse_error(bytes).find("tensor 'blocks' has 5 dimensions (expected 1 to 4)"), std::string::npos);
  bytes = small.bytes;
  patch<uint64_t>(bytes, ne0, 0);
  EXPECT_NE(parse_error(bytes).find("tensor 'blocks' has invalid size 0 in dimension 0"), std::string::npos);
  bytes = small.bytes;
  patch<uint64_t>(bytes, offset, 8);
  EXPECT_NE(parse_error(bytes).find("tensor 'blocks' data offset 8 is not a multiple of the alignment 32"),
            std::string::npos);
  bytes = small.bytes;
  patch<uint64_t>(bytes, ne0 + 8, uint64_t{1} << 40);  // 2^40 rows: far past the end
  EXPECT_NE(parse_error(bytes).find("tensor 'blocks' data [64, "), std::string::npos) << parse_error(bytes);
  EXPECT_NE(parse_error(bytes).find("lies past the end of the data section"), std::string::npos);
  // The last byte of the data cut off.
  bytes.assign(small.bytes.begin(), small.bytes.end() - 1);
  EXPECT_NE(parse_error(bytes).find("tensor 'blocks' data [64, 200) lies past the end of the data section"),
            std::string::npos)
      << parse_error(bytes);
  // Two tensors of one name.
  const std::vector<float> values(32, 1.0f);
  const std::filesystem::path twice = dir.path() / "twice.gguf";
  write_gguf(twice, {},
             {{"w", DType::kF32, {32}, std::as_bytes(std::span(values))},
              {"w", DType::kF32, {32}, std::as_bytes(std::span(values))}});
  EXPECT_NE(error_message([&] { GgufFile{twice}; }).find("twice.gguf: tensor 'w' appears twice"), std::string::npos);
}

TEST(GgufReader, RejectsBadMetadata) {
  TempDir dir;
  SmallFile small(dir.path() / "small.gguf");
  // The value type of the first key ("general.architecture", 20 bytes) is at 24 + 8 + 20.
  std::vector<std::byte> bytes = small.bytes;
  patch<uint32_t>(bytes, 52, 13);
  EXPECT_NE(parse_error(bytes).find("metadata 'general.architecture' at offset 52 has unknown value type 13"),
            std::string::npos)
      << parse_error(bytes);
  bytes = small.bytes;
  patch<uint64_t>(bytes, 56, uint64_t{1} << 50);  // the string's length
  EXPECT_NE(parse_error(bytes).find("claims 1125899906842624 bytes"), std::string::npos) << parse_error(bytes);
  bytes = small.bytes;
  patch<uint64_t>(bytes, 16, uint64_t{1} << 60);  // metadata count
  EXPECT_NE(parse_error(bytes).find("metadata entries, more than"), std::string::npos);
  bytes = small.bytes;
  patch<uint64_t>(bytes, 8, uint64_t{1} << 60);  // tensor count
  EXPECT_NE(parse_error(bytes).find("tensors, more than"), std::string::npos);

  const std::filesystem::path odd = dir.path() / "odd.gguf";
  SmallFile small_aligned(odd, 64);
  bytes = small_aligned.bytes;
  const std::string key = "general.alignment";
  for (size_t i = 0; i + key.size() < bytes.size(); ++i) {
    if (std::memcmp(bytes.data() + i, key.data(), key.size()) == 0) {
      patch<uint32_t>(bytes, i + key.size() + 4, 48);
      break;
    }
  }
  EXPECT_NE(parse_error(bytes).find("general.alignment must be a u32 power of two, found u32 48"), std::string::npos)
      << parse_error(bytes);
}

// A cheap in-suite fuzzer: random byte flips and truncations of a valid file
// parse into views inside the buffer or throw qwen35::Error naming the file
// (run under QWEN35_SANITIZE for memory safety too).
TEST(GgufReader, RandomCorruptionsParseOrThrowError) {
  TempDir dir;
  const SmallFile small(dir.path() / "small.gguf");
  constexpr uint32_t kSeed = 20261130;
  SCOPED_TRACE(::testing::Message() << "seed " << kSeed);
  std::mt19937 rng(kSeed);
  int parsed = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::vector<std::byte> bytes = small.bytes;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) bytes[rng() % bytes.size()] = static_cast<std::byte>(rng() & 0xff);
    if (rng() % 8 == 0) bytes.resize(rng() % bytes.size());
    try {
      const GgufContents contents = parse_gguf(bytes, "mutated.gguf");
      ++parsed;
      for (const TensorView& view : contents.tensors) {
        ASSERT_GE(view.data, bytes.data()) << "iteration " << iteration;
        ASSERT_LE(view.data + view.bytes, bytes.data() + bytes.size()) << "iteration " << iteration;
        ASSERT_EQ(view.bytes, dtype_bytes(view.dtype, static_cast<size_t>(view.numel()))) << "iteration " << iteration;
      }
    } catch (const Error& e) {
      ASSERT_NE(std::string(e.what()).find("mutated.gguf"), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(parsed, 0);  // flips inside the data section (and in some values) leave the file valid
}

TEST(GgufReader, MissingFileIsAnError) {
  EXPECT_NE(error_message([] { GgufFile("/nonexistent/model.gguf"); }).find("/nonexistent/model.gguf"),
            std::string::npos);
}

}  // namespace
}  // namespace qwen35::testing
