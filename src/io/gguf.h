// The GGUF container (llama.cpp, versions 2 and 3), little-endian:
//   "GGUF" | version u32 | tensor_count u64 | kv_count u64 |
//   kv_count x (key string, value type u32, value) |
//   tensor_count x (name string, n_dims u32, ne[n_dims] u64 (innermost first),
//                   ggml type u32, offset u64 from the data section) |
//   padding to general.alignment (default 32) | data section
// with strings as u64 length + bytes and arrays as element type u32 + count
// u64 + elements. Reading checks every length, count and offset against the
// file; writing produces files the reader (and llama.cpp) accepts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "io/mapped_file.h"
#include "qwen35/checkpoint.h"
#include "qwen35/dtype.h"

namespace qwen35 {

inline constexpr uint32_t kGgufDefaultAlignment = 32;

// GGUF metadata value types (gguf.h's gguf_type).
enum class GgufValueType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12
};
std::string_view gguf_value_type_name(GgufValueType type);

// One metadata value. Scalars are widened (integers to int64/uint64, floats to
// double); strings and string arrays point into the parsed bytes; numeric
// arrays are widened into `numbers`.
struct GgufValue {
  GgufValueType type = GgufValueType::kU8;
  std::variant<uint64_t, int64_t, double, bool, std::string_view> scalar;
  GgufValueType element_type = GgufValueType::kU8;  // arrays only
  std::vector<std::string_view> strings;             // string arrays
  std::vector<double> numbers;                       // numeric and bool arrays
  uint64_t count = 0;                                // array length

  bool is_integer() const;
  bool is_float() const { return type == GgufValueType::kF32 || type == GgufValueType::kF64; }
  std::string describe() const;  // "u32 42", "string 'qwen35'", "array of 12 string"
};

// The ggml type ids GGUF tensor infos use, and the DType each maps to
// (nullopt for a ggml type this engine does not read).
std::optional<DType> dtype_from_ggml_type(uint32_t ggml_type);
uint32_t ggml_type_of(DType dtype);  // for the writer; throws for a dtype GGUF cannot hold
std::string ggml_type_name(uint32_t ggml_type);  // "Q4_K", "IQ2_XXS", "type 99"

struct GgufContents {
  uint32_t version = 0;
  uint32_t alignment = kGgufDefaultAlignment;
  size_t data_offset = 0;                           // start of the data section in the file
  std::map<std::string, GgufValue, std::less<>> metadata;
  std::vector<TensorView> tensors;  // in tensor-info order; shape outermost first (ggml ne reversed)

  const GgufValue* find(std::string_view key) const;
};

// Parses and validates a whole file's bytes (separate from the mapping so that
// it can be fuzzed). `where` names the file in errors and in TensorView::file.
GgufContents parse_gguf(std::span<const std::byte> file_bytes, std::string_view where);

// One mapped and validated .gguf file. Movable: views point into the mapping.
class GgufFile {
 public:
  explicit GgufFile(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_.path(); }
  const GgufContents& contents() const { return contents_; }

 private:
  MappedFile file_;
  GgufContents contents_;
};

// ---- Writing (tests and tools) ----

struct GgufTensorToWrite {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;        // outermost first, as TensorView
  std::span<const std::byte> bytes;  // dtype_bytes(dtype, numel)
};

// Metadata in insertion order; arrays of strings, integers or floats.
struct GgufMetadataWriter {
  std::vector<std::byte> bytes;
  uint64_t count = 0;

  void add_string(std::string_view key, std::string_view value);
  void add_u32(std::string_view key, uint32_t value);
  void add_i32(std::string_view key, int32_t value);
  void add_u64(std::string_view key, uint64_t value);
  void add_f32(std::string_view key, float value);
  void add_f64(std::string_view key, double value);
  void add_bool(std::string_view key, bool value);
  void add_u8(std::string_view key, uint8_t value);
  void add_i8(std::string_view key, int8_t value);
  void add_u16(std::string_view key, uint16_t value);
  void add_i16(std::string_view key, int16_t value);
  void add_i64(std::string_view key, int64_t value);
  void add_string_array(std::string_view key, const std::vector<std::string>& values);
  void add_i32_array(std::string_view key, const std::vector<int32_t>& values);
};

// Writes a complete GGUF (version 3 unless told) with tensors aligned to `alignment`.
// Throws Error on a shape that does not match the bytes or an I/O failure.
void write_gguf(const std::filesystem::path& path, const GgufMetadataWriter& metadata,
                const std::vector<GgufTensorToWrite>& tensors, uint32_t alignment = kGgufDefaultAlignment,
                uint32_t version = 3);

}  // namespace qwen35
