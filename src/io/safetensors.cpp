// Reading safetensors: every header entry is checked against the file (dtype,
// shape, offsets inside the data section, size = numel * element size, no two
// tensors sharing bytes) so that nothing downstream can read out of bounds.
#include "io/safetensors.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

#include "qwen35/error.h"

namespace qwen35 {
namespace {

using nlohmann::json;

uint64_t read_le_u64(const std::byte* bytes) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  return value;
}

// JSON parses non-negative integers as unsigned; negatives, floats and strings are rejected.
std::optional<uint64_t> non_negative_integer(const json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  return std::nullopt;
}

// nlohmann keeps the last of two equal keys silently, so duplicates are caught while parsing.
json parse_header_json(std::string_view text, std::string_view where) {
  std::set<std::string> seen;
  std::string duplicate;
  auto callback = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth == 1 && event == json::parse_event_t::key && duplicate.empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!seen.insert(key).second) duplicate = key;
    }
    return true;
  };
  json header;
  try {
    header = json::parse(text, callback);
  } catch (const json::parse_error& e) {
    fail("{}: safetensors header is not valid JSON: {}", where, e.what());
  }
  if (!duplicate.empty()) fail("{}: safetensors header lists '{}' twice", where, duplicate);
  if (!header.is_object()) fail("{}: safetensors header must be a JSON object, found {}", where, header.type_name());
  return header;
}

std::map<std::string, std::string> parse_metadata(const json& value, std::string_view where) {
  if (!value.is_object()) fail("{}: __metadata__ must be a JSON object, found {}", where, value.dump());
  std::map<std::string, std::string> metadata;
  for (const auto& [key, item] : value.items()) {
    if (!item.is_string()) {
      fail("{}: __metadata__ value for '{}' must be a string, found {}", where, key, item.dump());
    }
    metadata.emplace(key, item.get<std::string>());
  }
  return metadata;
}

struct ParsedEntry {
  TensorView view;
  uint64_t begin = 0;  // within the data section
  uint64_t end = 0;
};

const json& require_field(const json& entry, std::string_view field, std::string_view name, std::string_view where) {
  const auto it = entry.find(field);
  if (it == entry.end()) {
    fail("{}: tensor '{}': header entry has no '{}' field (expected dtype, shape and data_offsets)", where, name,
         field);
  }
  return *it;
}

DType parse_entry_dtype(const json& value, std::string_view name, std::string_view where) {
  if (!value.is_string()) fail("{}: tensor '{}': dtype must be a string, found {}", where, name, value.dump());
  const std::string& text = value.get_ref<const std::string&>();
  const std::optional<DType> dtype = parse_dtype(text);
  if (!dtype)
    fail("{}: tensor '{}': unknown dtype \"{}\" (expected a safetensors dtype such as F32, BF16, F16)", where, name,
         text);
  return *dtype;
}

// Returns the shape and its element count, refusing counts that overflow 63 bits.
std::vector<int64_t> parse_entry_shape(const json& value, std::string_view name, std::string_view where,
                                       uint64_t& numel) {
  if (!value.is_array()) fail("{}: tensor '{}': shape must be an array, found {}", where, name, value.dump());
  std::vector<int64_t> shape;
  numel = 1;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::optional<uint64_t> dim = non_negative_integer(value[i]);
    if (!dim) {
      fail("{}: tensor '{}': shape[{}] must be a non-negative integer, found {}", where, name, i, value[i].dump());
    }
    if (__builtin_mul_overflow(numel, *dim, &numel) || numel > static_cast<uint64_t>(INT64_MAX)) {
      fail("{}: tensor '{}': shape {} has more elements than fit in 63 bits", where, name, value.dump());
    }
    shape.push_back(static_cast<int64_t>(*dim));
  }
  return shape;
}

ParsedEntry parse_entry(const std::string& name, const json& entry, std::span<const std::byte> data,
                        std::string_view where) {
  if (!entry.is_object()) {
    fail("{}: tensor '{}': header entry must be a JSON object, found {}", where, name, entry.dump());
  }
  const json& dtype_json = require_field(entry, "dtype", name, where);
  const json& shape_json = require_field(entry, "shape", name, where);
  const json& offsets_json = require_field(entry, "data_offsets", name, where);

  ParsedEntry parsed;
  parsed.view.name = name;
  parsed.view.file = std::string(where);
  parsed.view.dtype = parse_entry_dtype(dtype_json, name, where);
  uint64_t numel = 0;
  parsed.view.shape = parse_entry_shape(shape_json, name, where, numel);

  if (!offsets_json.is_array() || offsets_json.size() != 2 || !non_negative_integer(offsets_json[0]) ||
      !non_negative_integer(offsets_json[1])) {
    fail("{}: tensor '{}': data_offsets must be [begin, end] with non-negative integers, found {}", where, name,
         offsets_json.dump());
  }
  parsed.begin = offsets_json[0].get<uint64_t>();
  parsed.end = offsets_json[1].get<uint64_t>();
  if (parsed.begin > parsed.end) {
    fail("{}: tensor '{}': data_offsets [{}, {}] has begin after end", where, name, parsed.begin, parsed.end);
  }
  if (parsed.end > data.size()) {
    fail("{}: tensor '{}': data_offsets end {} is beyond the data section of {} bytes (file truncated?)", where, name,
         parsed.end, data.size());
  }
  const uint64_t actual_bytes = parsed.end - parsed.begin;
  uint64_t expected_bytes = 0;
  if (__builtin_mul_overflow(numel, dtype_size(parsed.view.dtype), &expected_bytes) || expected_bytes != actual_bytes) {
    fail("{}: tensor '{}': data_offsets [{}, {}] span {} bytes, but shape {} of {} needs {} elements x {} bytes", where,
         name, parsed.begin, parsed.end, actual_bytes, shape_json.dump(), dtype_name(parsed.view.dtype), numel,
         dtype_size(parsed.view.dtype));
  }
  parsed.view.data = data.data() + parsed.begin;
  parsed.view.bytes = static_cast<size_t>(actual_bytes);
  return parsed;
}

// With entries sorted by begin, a tensor overlaps an earlier one iff it starts
// before the furthest end seen so far. Empty tensors own no bytes and cannot overlap.
void check_no_overlap(const std::vector<ParsedEntry>& sorted, std::string_view where) {
  const ParsedEntry* furthest = nullptr;
  for (const ParsedEntry& entry : sorted) {
    if (entry.begin == entry.end) continue;
    if (furthest != nullptr && entry.begin < furthest->end) {
      fail("{}: tensors '{}' (bytes [{}, {})) and '{}' (bytes [{}, {})) overlap", where, furthest->view.name,
           furthest->begin, furthest->end, entry.view.name, entry.begin, entry.end);
    }
    if (furthest == nullptr || entry.end > furthest->end) furthest = &entry;
  }
}

}  // namespace

SafetensorsContents parse_safetensors(std::span<const std::byte> file_bytes, std::string_view where) {
  if (file_bytes.size() < 8) {
    fail("{}: file is {} bytes, shorter than the 8-byte safetensors header length", where, file_bytes.size());
  }
  const uint64_t header_bytes = read_le_u64(file_bytes.data());
  if (header_bytes > kMaxSafetensorsHeaderBytes) {
    fail("{}: header length {} exceeds the {}-byte limit (not a safetensors file, or corrupt)", where, header_bytes,
         kMaxSafetensorsHeaderBytes);
  }
  if (header_bytes > file_bytes.size() - 8) {
    fail("{}: header length {} runs past the end of the file ({} bytes after the length field)", where, header_bytes,
         file_bytes.size() - 8);
  }
  const std::string_view header_text(reinterpret_cast<const char*>(file_bytes.data() + 8), header_bytes);
  const std::span<const std::byte> data = file_bytes.subspan(8 + header_bytes);
  const json header = parse_header_json(header_text, where);

  SafetensorsContents contents;
  std::vector<ParsedEntry> entries;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      contents.metadata = parse_metadata(entry, where);
    } else {
      entries.push_back(parse_entry(name, entry, data, where));
    }
  }
  std::sort(entries.begin(), entries.end(), [](const ParsedEntry& a, const ParsedEntry& b) {
    return std::tie(a.begin, a.end, a.view.name) < std::tie(b.begin, b.end, b.view.name);
  });
  check_no_overlap(entries, where);
  for (ParsedEntry& entry : entries) contents.tensors.push_back(std::move(entry.view));
  return contents;
}

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path)
    : file_(path), contents_(parse_safetensors(file_.bytes(), path.string())) {
  for (size_t i = 0; i < contents_.tensors.size(); ++i) index_.emplace(contents_.tensors[i].name, i);
}

const TensorView* SafetensorsFile::find(std::string_view name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &contents_.tensors[it->second];
}

}  // namespace qwen35
