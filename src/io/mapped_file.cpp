// POSIX implementation of MappedFile: open, fstat, mmap, close the descriptor
// (the mapping keeps the file alive on its own).
#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "qwen35/error.h"

namespace qwen35 {
namespace {

// Closes the descriptor on every path out of the constructor.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

MappedFile::MappedFile(const std::filesystem::path& path) : path_(path) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    fail("cannot open {}: {}", path.string(), std::strerror(err));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    const int err = errno;
    fail("cannot stat {}: {}", path.string(), std::strerror(err));
  }
  if (!S_ISREG(info.st_mode)) fail("cannot map {}: expected a regular file, found something else", path.string());
  size_ = static_cast<size_t>(info.st_size);
  if (size_ == 0) return;  // mmap rejects length 0; an empty file simply has no bytes
  void* mapping = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (mapping == MAP_FAILED) {
    const int err = errno;
    fail("cannot map {} ({} bytes): {}", path.string(), size_, std::strerror(err));
  }
  data_ = static_cast<const std::byte*>(mapping);
}

MappedFile::~MappedFile() { unmap(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::unmap() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace qwen35
