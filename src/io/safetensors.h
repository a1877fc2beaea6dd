// The safetensors container: an 8-byte little-endian header length N, N bytes
// of JSON {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}},
// then the data section. Reading validates every header entry against the file;
// writing produces files the reference (Rust/Python) implementation accepts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/mapped_file.h"
#include "qwen35/checkpoint.h"
#include "qwen35/dtype.h"

namespace qwen35 {

// The reference implementation's limit; a larger header means a corrupt file.
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

struct SafetensorsContents {
  std::vector<TensorView> tensors;  // in data-section order; data points into the parsed bytes
  std::map<std::string, std::string> metadata;
};

// Parses and validates a whole file's bytes (kept separate from the mapping so
// that it can be fuzzed). `where` names the file in errors and in TensorView::file.
SafetensorsContents parse_safetensors(std::span<const std::byte> file_bytes, std::string_view where);

// One mapped and validated .safetensors file. Movable: views point into the
// mapping, which does not move with the object.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_.path(); }
  const std::vector<TensorView>& tensors() const { return contents_.tensors; }
  const std::map<std::string, std::string>& metadata() const { return contents_.metadata; }
  // Null when the file holds no tensor of that name.
  const TensorView* find(std::string_view name) const;

 private:
  MappedFile file_;
  SafetensorsContents contents_;
  std::map<std::string, size_t, std::less<>> index_;  // name -> position in contents_.tensors
};

struct TensorToWrite {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;        // outermost first
  std::span<const std::byte> bytes;  // numel * dtype_size bytes, little-endian
};

// Writes a complete file (via a temporary next to it, renamed into place). The
// header is padded with spaces to a multiple of 8 bytes; data is laid out by
// decreasing element size (then the caller's order) so that every tensor starts
// aligned to its element size.
// Throws Error on a duplicate or reserved name, a size mismatch or an I/O failure.
void write_safetensors(const std::filesystem::path& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace qwen35
