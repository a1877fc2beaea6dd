// A read-only memory mapping of a whole file, kept alive as long as the tensors
// that point into it. Move-only; an empty file is valid and maps nothing.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>

namespace qwen35 {

class MappedFile {
 public:
  // Throws Error naming the path when the file is missing, not a regular file,
  // unreadable or cannot be mapped.
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }  // null for an empty file
  size_t size() const { return size_; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  const std::filesystem::path& path() const { return path_; }

 private:
  void unmap();

  std::filesystem::path path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace qwen35
