// Helpers shared by the test suites: where the shared data lives, seeded random
// vectors that are never all zeros, and comparisons that report the worst index.
#pragma once

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace qwen35::testing {

// ../shared (golden/, testdata/), from QWEN35_SHARED_DIR; fails the test if absent.
std::filesystem::path shared_dir();

// Uniform in [lo, hi); the seed is printed by the caller's SCOPED_TRACE.
std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);

std::vector<float> read_f32_file(const std::filesystem::path& path);
// A golden folder's tokens.txt: comma-separated ids.
std::vector<int32_t> read_tokens(const std::filesystem::path& path);

// max_i |a_i - b_i|, and max_i |b_i| (the scale of the reference).
struct Deviation {
  double max_abs_error = 0;
  size_t worst_index = 0;
  double max_abs_reference = 0;
  bool has_nan = false;
  double relative() const { return max_abs_reference > 0 ? max_abs_error / max_abs_reference : max_abs_error; }
};
Deviation deviation(const float* actual, const float* expected, size_t n);

// A fresh temporary directory removed at scope exit.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace qwen35::testing
