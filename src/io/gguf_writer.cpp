// The GGUF writer (layout in gguf.h): metadata serialised as it is added, then
// tensor infos with offsets aligned to `alignment`, padding, and the data.
#include <fmt/format.h>

#include <cstring>
#include <fstream>

#include "io/gguf.h"
#include "qwen35/error.h"

namespace qwen35 {
namespace {

template <typename T>
void put(std::vector<std::byte>& out, T value) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

void put_string(std::vector<std::byte>& out, std::string_view s) {
  put<uint64_t>(out, s.size());
  const size_t at = out.size();
  out.resize(at + s.size());
  std::memcpy(out.data() + at, s.data(), s.size());
}

void put_key(GgufMetadataWriter& w, std::string_view key, GgufValueType type) {
  put_string(w.bytes, key);
  put<uint32_t>(w.bytes, static_cast<uint32_t>(type));
  ++w.count;
}

}  // namespace

void GgufMetadataWriter::add_string(std::string_view key, std::string_view value) {
  put_key(*this, key, GgufValueType::kString);
  put_string(bytes, value);
}
void GgufMetadataWriter::add_u32(std::string_view key, uint32_t value) {
  put_key(*this, key, GgufValueType::kU32);
  put(bytes, value);
}
void GgufMetadataWriter::add_i32(std::string_view key, int32_t value) {
  put_key(*this, key, GgufValueType::kI32);
  put(bytes, value);
}
void GgufMetadataWriter::add_u64(std::string_view key, uint64_t value) {
  put_key(*this, key, GgufValueType::kU64);
  put(bytes, value);
}
void GgufMetadataWriter::add_f32(std::string_view key, float value) {
  put_key(*this, key, GgufValueType::kF32);
  put(bytes, value);
}
void GgufMetadataWriter::add_f64(std::string_view key, double value) {
  put_key(*this, key, GgufValueType::kF64);
  put(bytes, value);
}
void GgufMetadataWriter::add_bool(std::string_view key, bool value) {
  put_key(*this, key, GgufValueType::kBool);
  put<uint8_t>(bytes, value ? 1 : 0);
}
void GgufMetadataWriter::add_u8(std::string_view key, uint8_t value) {
  put_key(*this, key, GgufValueType::kU8);
  put(bytes, value);
}
void GgufMetadataWriter::add_i8(std::string_view key, int8_t value) {
  put_key(*this, key, GgufValueType::kI8);
  put(bytes, value);
}
void GgufMetadataWriter::add_u16(std::string_view key, uint16_t value) {
  put_key(*this, key, GgufValueType::kU16);
  put(bytes, value);
}
void GgufMetadataWriter::add_i16(std::string_view key, int16_t value) {
  put_key(*this, key, GgufValueType::kI16);
  put(bytes, value);
}
void GgufMetadataWriter::add_i64(std::string_view key, int64_t value) {
  put_key(*this, key, GgufValueType::kI64);
  put(bytes, value);
}
void GgufMetadataWriter::add_string_array(std::string_view key, const std::vector<std::string>& values) {
  put_key(*this, key, GgufValueType::kArray);
  put<uint32_t>(bytes, static_cast<uint32_t>(GgufValueType::kString));
  put<uint64_t>(bytes, values.size());
  for (const std::string& v : values) put_string(bytes, v);
}
void GgufMetadataWriter::add_i32_array(std::string_view key, const std::vector<int32_t>& values) {
  put_key(*this, key, GgufValueType::kArray);
  put<uint32_t>(bytes, static_cast<uint32_t>(GgufValueType::kI32));
  put<uint64_t>(bytes, values.size());
  for (int32_t v : values) put(bytes, v);
}

void write_gguf(const std::filesystem::path& path, const GgufMetadataWriter& metadata,
                const std::vector<GgufTensorToWrite>& tensors, uint32_t alignment, uint32_t version) {
  std::vector<std::byte> header;
  header.insert(header.end(), {std::byte{'G'}, std::byte{'G'}, std::byte{'U'}, std::byte{'F'}});
  put<uint32_t>(header, version);
  put<uint64_t>(header, tensors.size());
  put<uint64_t>(header, metadata.count);
  header.insert(header.end(), metadata.bytes.begin(), metadata.bytes.end());
  uint64_t offset = 0;
  std::vector<uint64_t> offsets;
  for (const GgufTensorToWrite& t : tensors) {
    int64_t numel = 1;
    for (int64_t d : t.shape) numel *= d;
    if (t.shape.empty() || numel <= 0 || t.bytes.size() != dtype_bytes(t.dtype, static_cast<size_t>(numel)) ||
        t.shape.back() % static_cast<int64_t>(dtype_block_size(t.dtype)) != 0) {
      fail("write_gguf {}: tensor '{}' ({}, {} elements) has {} bytes, which do not match its shape", path.string(),
           t.name, dtype_name(t.dtype), numel, t.bytes.size());
    }
    put_string(header, t.name);
    put<uint32_t>(header, static_cast<uint32_t>(t.shape.size()));
    for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it) put<uint64_t>(header, static_cast<uint64_t>(*it));
    put<uint32_t>(header, ggml_type_of(t.dtype));
    put<uint64_t>(header, offset);
    offsets.push_back(offset);
    offset = (offset + t.bytes.size() + alignment - 1) / alignment * alignment;
  }
  header.resize((header.size() + alignment - 1) / alignment * alignment, std::byte{0});

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail("write_gguf: cannot create {}", path.string());
  out.write(reinterpret_cast<const char*>(header.data()), static_cast<std::streamsize>(header.size()));
  uint64_t written = 0;
  const std::vector<char> zeros(alignment, 0);
  for (size_t i = 0; i < tensors.size(); ++i) {
    out.write(zeros.data(), static_cast<std::streamsize>(offsets[i] - written));
    out.write(reinterpret_cast<const char*>(tensors[i].bytes.data()), static_cast<std::streamsize>(tensors[i].bytes.size()));
    written = offsets[i] + tensors[i].bytes.size();
  }
  if (!out) fail("write_gguf: error while writing {}", path.string());
}

}  // namespace qwen35
