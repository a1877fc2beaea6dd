// Writing safetensors: a JSON header padded with spaces to 8 bytes, then the
// data contiguous with no gaps (the reference loader rejects gaps), largest
// element size first so that every tensor is aligned to its element size.
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "io/safetensors.h"
#include "qwen35/error.h"

namespace qwen35 {
namespace {

using nlohmann::json;

void check_tensor(const TensorToWrite& tensor, const std::filesystem::path& path) {
  if (tensor.name == "__metadata__") fail("{}: '__metadata__' is reserved and cannot name a tensor", path.string());
  uint64_t numel = 1;
  for (int64_t dim : tensor.shape) {
    if (dim < 0) fail("{}: tensor '{}': negative dimension {} in its shape", path.string(), tensor.name, dim);
    numel *= static_cast<uint64_t>(dim);
  }
  const uint64_t expected = numel * dtype_size(tensor.dtype);
  if (tensor.bytes.size() != expected) {
    fail("{}: tensor '{}': {} elements of {} need {} bytes, but {} bytes were given", path.string(), tensor.name, numel,
         dtype_name(tensor.dtype), expected, tensor.bytes.size());
  }
}

void write_or_fail(std::ofstream& out, const void* data, size_t size, const std::filesystem::path& path) {
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) fail("{}: write of {} bytes failed", path.string(), size);
}

}  // namespace

void write_safetensors(const std::filesystem::path& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::set<std::string_view> names;
  for (const TensorToWrite& tensor : tensors) {
    check_tensor(tensor, path);
    if (!names.insert(tensor.name).second) fail("{}: tensor '{}' is given twice", path.string(), tensor.name);
  }

  std::vector<size_t> data_order(tensors.size());
  std::iota(data_order.begin(), data_order.end(), size_t{0});
  std::stable_sort(data_order.begin(), data_order.end(),
                   [&](size_t a, size_t b) { return dtype_size(tensors[a].dtype) > dtype_size(tensors[b].dtype); });
  std::vector<uint64_t> begin(tensors.size());
  uint64_t offset = 0;
  for (size_t index : data_order) {
    begin[index] = offset;
    offset += tensors[index].bytes.size();
  }

  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  for (size_t i = 0; i < tensors.size(); ++i) {
    header[tensors[i].name] = {{"dtype", dtype_name(tensors[i].dtype)},
                               {"shape", tensors[i].shape},
                               {"data_offsets", {begin[i], begin[i] + tensors[i].bytes.size()}}};
  }
  std::string header_text = header.dump();
  header_text.append((8 - header_text.size() % 8) % 8, ' ');  // keeps the data section 8-byte aligned

  std::filesystem::path temporary = path;
  temporary += ".partial";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) fail("{}: cannot create file for writing", temporary.string());
    unsigned char length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(header_text.size() >> (8 * i));
    write_or_fail(out, length, sizeof length, temporary);
    write_or_fail(out, header_text.data(), header_text.size(), temporary);
    for (size_t index : data_order) {
      write_or_fail(out, tensors[index].bytes.data(), tensors[index].bytes.size(), temporary);
    }
    out.close();
    if (!out) fail("{}: closing the file failed", temporary.string());
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) fail("{}: cannot rename {} into place: {}", path.string(), temporary.string(), error.message());
}

}  // namespace qwen35
