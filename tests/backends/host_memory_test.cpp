// Host memory for the CPU backends: every block aligned, writable and apart
// from every other, whatever its size class; blocks of 64 KiB and more in
// memory advised as transparent huge pages (except under AddressSanitizer,
// which keeps the medium blocks separate to catch overruns).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "host/host_memory.h"

namespace qwen35 {
namespace {

struct Block {
  std::byte* p;
  size_t bytes;
};

// Whether the mapping holding p carries the MADV_HUGEPAGE flag ("hg" in
// /proc/self/smaps' VmFlags).
bool advised_huge(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto address = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = address >= begin && address < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.find(" hg") != std::string::npos;
    }
  }
  return false;
}

TEST(HostMemory, BlocksOfEverySizeAreAlignedWritableAndDisjoint) {
  std::vector<Block> blocks;
  for (size_t bytes : {size_t{1}, size_t{100}, size_t{64} << 10, (size_t{64} << 10) + 1, size_t{1} << 20,
                       (size_t{3} << 20) + 5, (size_t{4} << 20) - 64, size_t{4} << 20, (size_t{9} << 20) + 3}) {
    for (int copy = 0; copy < 12; ++copy) {  // several per slab, and past one slab's end
      blocks.push_back({static_cast<std::byte*>(allocate_host_memory(bytes)), bytes});
    }
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(blocks[i].p) % 64, 0u) << blocks[i].bytes << " bytes";
    std::memset(blocks[i].p, static_cast<int>(i % 251), blocks[i].bytes);
  }
  for (size_t i = 0; i < blocks.size(); ++i) {  // no block wrote over another
    const auto want = static_cast<std::byte>(i % 251);
    EXPECT_EQ(blocks[i].p[0], want) << i;
    EXPECT_EQ(blocks[i].p[blocks[i].bytes - 1], want) << i;
  }
  // Released out of order, then allocated again: slabs are reused or unmapped.
  for (size_t i = 0; i < blocks.size(); i += 2) release_host_memory(blocks[i].p, blocks[i].bytes);
  for (size_t i = 0; i < blocks.size(); i += 2) {
    blocks[i].p = static_cast<std::byte*>(allocate_host_memory(blocks[i].bytes));
    std::memset(blocks[i].p, 0x5a, blocks[i].bytes);
  }
  for (size_t i = 1; i < blocks.size(); i += 2) {
    EXPECT_EQ(blocks[i].p[blocks[i].bytes - 1], static_cast<std::byte>(i % 251)) << i;
  }
  for (const Block& b : blocks) release_host_memory(b.p, b.bytes);
}

TEST(HostMemory, MediumAndLargeBlocksAreAdvisedAsHugePages) {
  void* large = allocate_host_memory(size_t{8} << 20);
  const bool advice_shows = advised_huge(large);
  release_host_memory(large, size_t{8} << 20);
  if (!advice_shows) GTEST_SKIP() << "this kernel does not show MADV_HUGEPAGE in /proc/self/smaps";
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "under AddressSanitizer medium blocks are separate allocations";
#endif
  for (size_t bytes : {size_t{64} << 10, size_t{2} << 20, (size_t{4} << 20) - 1}) {
    void* p = allocate_host_memory(bytes);
    EXPECT_TRUE(advised_huge(p)) << bytes << " bytes";
    release_host_memory(p, bytes);
  }
  void* small = allocate_host_memory(4096);  // below the slabs: the C library's heap
  EXPECT_FALSE(advised_huge(small));
  release_host_memory(small, 4096);
}

}  // namespace
}  // namespace qwen35
