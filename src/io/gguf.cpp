// The GGUF reader (layout in gguf.h): a bounds-checked cursor over the file's
// bytes, the metadata and tensor infos parsed in one pass, and every tensor's
// extent checked against the data section.
#include "io/gguf.h"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cstring>
#include <limits>

#include "qwen35/error.h"

namespace qwen35 {
namespace {

constexpr uint32_t kMaxDims = 4;  // GGML_MAX_DIMS

struct GgmlTypeInfo {
  uint32_t id;
  std::string_view name;
  std::optional<DType> dtype;  // nullopt: known to ggml, not read here
};

// ggml.h's ggml_type ids (the ones removed from ggml are absent).
constexpr std::array<GgmlTypeInfo, 33> kGgmlTypes = {{
    {0, "F32", DType::kF32},      {1, "F16", DType::kF16},        {2, "Q4_0", DType::kQ4_0},
    {3, "Q4_1", std::nullopt},    {6, "Q5_0", std::nullopt},      {7, "Q5_1", std::nullopt},
    {8, "Q8_0", DType::kQ8_0},    {9, "Q8_1", std::nullopt},      {10, "Q2_K", std::nullopt},
    {11, "Q3_K", std::nullopt},   {12, "Q4_K", DType::kQ4_K},     {13, "Q5_K", DType::kQ5_K},
    {14, "Q6_K", DType::kQ6_K},   {15, "Q8_K", std::nullopt},     {16, "IQ2_XXS", std::nullopt},
    {17, "IQ2_XS", std::nullopt}, {18, "IQ3_XXS", std::nullopt},  {19, "IQ1_S", std::nullopt},
    {20, "IQ4_NL", std::nullopt}, {21, "IQ3_S", std::nullopt},    {22, "IQ2_S", std::nullopt},
    {23, "IQ4_XS", std::nullopt}, {24, "I8", DType::kI8},         {25, "I16", DType::kI16},
    {26, "I32", DType::kI32},     {27, "I64", DType::kI64},       {28, "F64", DType::kF64},
    {29, "IQ1_M", std::nullopt},  {30, "BF16", DType::kBF16},     {34, "TQ1_0", std::nullopt},
    {35, "TQ2_0", std::nullopt},  {39, "MXFP4", std::nullopt},    {40, "NVFP4", std::nullopt},
}};

const GgmlTypeInfo* ggml_info(uint32_t id) {
  for (const GgmlTypeInfo& info : kGgmlTypes) {
    if (info.id == id) return &info;
  }
  return nullptr;
}

std::string supported_types() {
  std::string names;
  for (const GgmlTypeInfo& info : kGgmlTypes) {
    if (info.dtype && (is_float_dtype(*info.dtype) || is_block_dtype(*info.dtype))) {
      names += (names.empty() ? "" : ", ") + std::string(info.name);
    }
  }
  return names;
}

size_t scalar_size(GgufValueType type) {
  switch (type) {
    case GgufValueType::kU8:
    case GgufValueType::kI8:
    case GgufValueType::kBool:
      return 1;
    case GgufValueType::kU16:
    case GgufValueType::kI16:
      return 2;
    case GgufValueType::kU32:
    case GgufValueType::kI32:
    case GgufValueType::kF32:
      return 4;
    case GgufValueType::kU64:
    case GgufValueType::kI64:
    case GgufValueType::kF64:
      return 8;
    default:
      return 0;  // string, array: variable
  }
}

// Reads little-endian values, failing with the file, the offset and what was
// being read when the bytes run out.
class Cursor {
 public:
  Cursor(std::span<const std::byte> bytes, std::string_view where) : bytes_(bytes), where_(where) {}

  size_t offset() const { return offset_; }
  size_t remaining() const { return bytes_.size() - offset_; }

  std::span<const std::byte> take(size_t n, std::string_view what) {
    if (n > remaining()) {
      fail("{}: truncated: {} at offset {} needs {} bytes, but the file has {} bytes", where_, what, offset_, n,
           bytes_.size());
    }
    const std::span<const std::byte> out = bytes_.subspan(offset_, n);
    offset_ += n;
    return out;
  }

  template <typename T>
  T read(std::string_view what) {
    T value;
    std::memcpy(&value, take(sizeof(T), what).data(), sizeof(T));
    return value;
  }

  std::string_view string(std::string_view what) {
    const uint64_t length = read<uint64_t>(what);
    if (length > remaining()) {
      fail("{}: truncated or corrupt: {} at offset {} claims {} bytes, but only {} remain in the file", where_, what,
           offset_ - 8, length,
           remaining());
    }
    const std::span<const std::byte> s = take(static_cast<size_t>(length), what);
    return {reinterpret_cast<const char*>(s.data()), s.size()};
  }

 private:
  std::span<const std::byte> bytes_;
  std::string_view where_;
  size_t offset_ = 0;
};

double read_number(Cursor& in, GgufValueType type, const std::string& what) {
  switch (type) {
    case GgufValueType::kU8: return in.read<uint8_t>(what);
    case GgufValueType::kI8: return in.read<int8_t>(what);
    case GgufValueType::kU16: return in.read<uint16_t>(what);
    case GgufValueType::kI16: return in.read<int16_t>(what);
    case GgufValueType::kU32: return in.read<uint32_t>(what);
    case GgufValueType::kI32: return in.read<int32_t>(what);
    case GgufValueType::kF32: return in.read<float>(what);
    case GgufValueType::kBool: return in.read<uint8_t>(what) != 0;
    case GgufValueType::kU64: return static_cast<double>(in.read<uint64_t>(what));
    case GgufValueType::kI64: return static_cast<double>(in.read<int64_t>(what));
    case GgufValueType::kF64: return in.read<double>(what);
    default: return 0;
  }
}

GgufValueType value_type(uint32_t raw, std::string_view where, const std::string& key, size_t offset) {
  if (raw > static_cast<uint32_t>(GgufValueType::kF64)) {
    fail("{}: metadata '{}' at offset {} has unknown value type {} (expected 0..12)", where, key, offset, raw);
  }
  return static_cast<GgufValueType>(raw);
}

GgufValue read_value(Cursor& in, GgufValueType type, std::string_view where, const std::string& key) {
  GgufValue value;
  value.type = type;
  const std::string what = fmt::format("the value of metadata '{}'", key);
  switch (type) {
    case GgufValueType::kString:
      value.scalar = in.string(what);
      return value;
    case GgufValueType::kBool:
      value.scalar = in.read<uint8_t>(what) != 0;
      return value;
    case GgufValueType::kF32:
      value.scalar = double{in.read<float>(what)};
      return value;
    case GgufValueType::kF64:
      value.scalar = in.read<double>(what);
      return value;
    case GgufValueType::kU8:
    case GgufValueType::kU16:
    case GgufValueType::kU32:
      value.scalar = static_cast<uint64_t>(read_number(in, type, what));
      return value;
    case GgufValueType::kU64:
      value.scalar = in.read<uint64_t>(what);
      return value;
    case GgufValueType::kI8:
    case GgufValueType::kI16:
    case GgufValueType::kI32:
      value.scalar = static_cast<int64_t>(read_number(in, type, what));
      return value;
    case GgufValueType::kI64:
      value.scalar = in.read<int64_t>(what);
      return value;
    case GgufValueType::kArray: {
      const size_t type_offset = in.offset();
      value.element_type = value_type(in.read<uint32_t>(what), where, key, type_offset);
      value.count = in.read<uint64_t>(what);
      if (value.element_type == GgufValueType::kArray) {
        fail("{}: metadata '{}' is an array of arrays, which this reader does not support", where, key);
      }
      // Every element takes at least one byte (a string at least eight), so a
      // count beyond the remaining bytes is corrupt: fail before allocating.
      const size_t min_size = value.element_type == GgufValueType::kString ? 8 : scalar_size(value.element_type);
      if (value.count > in.remaining() / min_size) {
        fail("{}: metadata '{}' claims {} array elements of {}, more than the {} bytes left in the file hold", where,
             key, value.count, gguf_value_type_name(value.element_type), in.remaining());
      }
      if (value.element_type == GgufValueType::kString) {
        value.strings.reserve(static_cast<size_t>(value.count));
        for (uint64_t i = 0; i < value.count; ++i) value.strings.push_back(in.string(what));
      } else {
        value.numbers.reserve(static_cast<size_t>(value.count));
        for (uint64_t i = 0; i < value.count; ++i) value.numbers.push_back(read_number(in, value.element_type, what));
      }
      return value;
    }
  }
  return value;
}

uint64_t checked_mul(uint64_t a, uint64_t b, std::string_view where, std::string_view name) {
  uint64_t out;
  if (__builtin_mul_overflow(a, b, &out)) fail("{}: tensor '{}': element count overflows", where, name);
  return out;
}

}  // namespace

std::string_view gguf_value_type_name(GgufValueType type) {
  static constexpr std::array<std::string_view, 13> kNames = {"u8",   "i8",   "u16",    "i16",   "u32", "i32", "f32",
                                                              "bool", "string", "array", "u64", "i64", "f64"};
  const auto i = static_cast<uint32_t>(type);
  return i < kNames.size() ? kNames[i] : "unknown";
}

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufValueType::kU8:
    case GgufValueType::kI8:
    case GgufValueType::kU16:
    case GgufValueType::kI16:
    case GgufValueType::kU32:
    case GgufValueType::kI32:
    case GgufValueType::kU64:
    case GgufValueType::kI64:
      return true;
    default:
      return false;
  }
}

std::string GgufValue::describe() const {
  if (type == GgufValueType::kArray) return fmt::format("array of {} {}", count, gguf_value_type_name(element_type));
  if (const auto* s = std::get_if<std::string_view>(&scalar)) return fmt::format("string '{}'", *s);
  if (const auto* u = std::get_if<uint64_t>(&scalar)) return fmt::format("{} {}", gguf_value_type_name(type), *u);
  if (const auto* i = std::get_if<int64_t>(&scalar)) return fmt::format("{} {}", gguf_value_type_name(type), *i);
  if (const auto* d = std::get_if<double>(&scalar)) return fmt::format("{} {}", gguf_value_type_name(type), *d);
  return fmt::format("bool {}", std::get<bool>(scalar));
}

std::optional<DType> dtype_from_ggml_type(uint32_t ggml_type) {
  const GgmlTypeInfo* info = ggml_info(ggml_type);
  return info ? info->dtype : std::nullopt;
}

uint32_t ggml_type_of(DType dtype) {
  for (const GgmlTypeInfo& info : kGgmlTypes) {
    if (info.dtype == dtype) return info.id;
  }
  fail("dtype {} has no GGUF (ggml) type", dtype_name(dtype));
}

std::string ggml_type_name(uint32_t ggml_type) {
  const GgmlTypeInfo* info = ggml_info(ggml_type);
  return info ? std::string(info->name) : fmt::format("type {}", ggml_type);
}

const GgufValue* GgufContents::find(std::string_view key) const {
  const auto it = metadata.find(key);
  return it == metadata.end() ? nullptr : &it->second;
}

GgufContents parse_gguf(std::span<const std::byte> file_bytes, std::string_view where) {
  Cursor in(file_bytes, where);
  GgufContents out;
  if (file_bytes.size() < 4) fail("{}: not a GGUF file: {} bytes, too short for the magic 'GGUF'", where, file_bytes.size());
  const std::span<const std::byte> magic = in.take(4, "the magic");
  if (std::memcmp(magic.data(), "GGUF", 4) != 0) {
    std::string shown;
    for (std::byte b : magic) {
      const auto c = static_cast<unsigned char>(b);
      shown += c >= 0x20 && c < 0x7f ? fmt::format("{}", static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
    }
    fail("{}: not a GGUF file: magic is '{}', expected 'GGUF'", where, shown);
  }
  out.version = in.read<uint32_t>("the version");
  if (out.version != 2 && out.version != 3) {
    fail("{}: GGUF version {} is not supported (supported: 2 and 3)", where, out.version);
  }
  const uint64_t tensor_count = in.read<uint64_t>("the tensor count");
  const uint64_t kv_count = in.read<uint64_t>("the metadata count");
  // A key-value pair takes at least 13 bytes (key length, type, one byte), a
  // tensor info at least 32: larger counts cannot fit in the file.
  if (kv_count > in.remaining() / 13) {
    fail("{}: header claims {} metadata entries, more than the {}-byte file can hold", where, kv_count,
         file_bytes.size());
  }
  if (tensor_count > in.remaining() / 32) {
    fail("{}: header claims {} tensors, more than the {}-byte file can hold", where, tensor_count, file_bytes.size());
  }

  for (uint64_t i = 0; i < kv_count; ++i) {
    const std::string key(in.string(fmt::format("the key of metadata entry {}", i)));
    const size_t type_offset = in.offset();
    const GgufValueType type = value_type(in.read<uint32_t>(fmt::format("the type of metadata '{}'", key)), where,
                                          key, type_offset);
    GgufValue value = read_value(in, type, where, key);
    if (!out.metadata.emplace(key, std::move(value)).second) fail("{}: metadata key '{}' appears twice", where, key);
  }

  if (const GgufValue* alignment = out.find("general.alignment")) {
    const auto* a = std::get_if<uint64_t>(&alignment->scalar);
    if (alignment->type != GgufValueType::kU32 || *a == 0 || !std::has_single_bit(*a)) {
      fail("{}: general.alignment must be a u32 power of two, found {}", where, alignment->describe());
    }
    out.alignment = static_cast<uint32_t>(*a);
  }

  struct Info {
    uint64_t offset;
    uint64_t bytes;
  };
  std::vector<Info> extents;
  std::map<std::string, size_t, std::less<>> seen;
  for (uint64_t i = 0; i < tensor_count; ++i) {
    TensorView view;
    view.name = std::string(in.string(fmt::format("the name of tensor {}", i)));
    view.file = std::string(where);
    const uint32_t n_dims = in.read<uint32_t>(fmt::format("the dimension count of tensor '{}'", view.name));
    if (n_dims == 0 || n_dims > kMaxDims) {
      fail("{}: tensor '{}' has {} dimensions (expected 1 to {})", where, view.name, n_dims, kMaxDims);
    }
    std::vector<uint64_t> ne(n_dims);
    uint64_t numel = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      ne[d] = in.read<uint64_t>(fmt::format("the shape of tensor '{}'", view.name));
      if (ne[d] == 0 || ne[d] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        fail("{}: tensor '{}' has invalid size {} in dimension {}", where, view.name, ne[d], d);
      }
      numel = checked_mul(numel, ne[d], where, view.name);
    }
    const uint32_t type_id = in.read<uint32_t>(fmt::format("the type of tensor '{}'", view.name));
    const uint64_t offset = in.read<uint64_t>(fmt::format("the data offset of tensor '{}'", view.name));
    const GgmlTypeInfo* type = ggml_info(type_id);
    if (type == nullptr) {
      fail("{}: tensor '{}' has unknown ggml type {} (supported: {})", where, view.name, type_id, supported_types());
    }
    if (!type->dtype) {
      fail("{}: tensor '{}' has ggml type {} ({}), which this engine cannot read (supported: {})", where, view.name,
           type->name, type_id, supported_types());
    }
    view.dtype = *type->dtype;
    const size_t block = dtype_block_size(view.dtype);
    if (ne[0] % block != 0) {
      fail("{}: tensor '{}' ({}) has rows of {} elements, not a multiple of the {} block size {}", where, view.name,
           type->name, ne[0], type->name, block);
    }
    view.shape.assign(ne.rbegin(), ne.rend());
    const uint64_t bytes = checked_mul(numel / block, dtype_size(view.dtype), where, view.name);
    if (offset % out.alignment != 0) {
      fail("{}: tensor '{}' data offset {} is not a multiple of the alignment {}", where, view.name, offset,
           out.alignment);
    }
    if (!seen.emplace(view.name, out.tensors.size()).second) fail("{}: tensor '{}' appears twice", where, view.name);
    view.bytes = static_cast<size_t>(bytes);
    extents.push_back({offset, bytes});
    out.tensors.push_back(std::move(view));
  }

  // The data section starts at the next multiple of the alignment.
  const uint64_t info_end = in.offset();
  out.data_offset = static_cast<size_t>((info_end + out.alignment - 1) / out.alignment * out.alignment);
  const uint64_t data_size = file_bytes.size() > out.data_offset ? file_bytes.size() - out.data_offset : 0;
  for (size_t i = 0; i < out.tensors.size(); ++i) {
    const Info& e = extents[i];
    if (e.offset > data_size || e.bytes > data_size - e.offset) {
      fail("{}: tensor '{}' data [{}, {}) lies past the end of the data section ({} bytes from offset {}; the file "
           "is {} bytes)",
           where, out.tensors[i].name, e.offset, e.offset + e.bytes, data_size, out.data_offset, file_bytes.size());
    }
    out.tensors[i].data = file_bytes.data() + out.data_offset + e.offset;
  }
  return out;
}

GgufFile::GgufFile(const std::filesystem::path& path) : file_(path), contents_(parse_gguf(file_.bytes(), path.string())) {}

}  // namespace qwen35
