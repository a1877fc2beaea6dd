// Shared test helpers (see test_support.h).
#include "support/test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

namespace qwen35::testing {

std::filesystem::path shared_dir() {
  const char* env = std::getenv("QWEN35_SHARED_DIR");
  std::filesystem::path dir = env ? env : QWEN35_DEFAULT_SHARED_DIR;
  if (!std::filesystem::exists(dir / "golden")) {
    ADD_FAILURE() << "shared data not found at " << dir << " (set QWEN35_SHARED_DIR)";
  }
  return dir;
}

std::vector<float> random_floats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(n);
  for (float& v : out) v = dist(rng);
  return out;
}

std::vector<float> read_f32_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot open " << path;
    return {};
  }
  in.seekg(0, std::ios::end);
  const auto bytes = static_cast<size_t>(in.tellg());
  in.seekg(0);
  std::vector<float> out(bytes / sizeof(float));
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size() * sizeof(float)));
  return out;
}

std::vector<int32_t> read_tokens(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) ADD_FAILURE() << "cannot open " << path;
  std::vector<int32_t> tokens;
  std::string item;
  while (std::getline(in, item, ',')) tokens.push_back(std::stoi(item));
  return tokens;
}

Deviation deviation(const float* actual, const float* expected, size_t n) {
  Deviation d;
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(actual[i]) || std::isnan(expected[i])) d.has_nan = true;
    const double err = std::fabs(static_cast<double>(actual[i]) - expected[i]);
    if (err > d.max_abs_error) {
      d.max_abs_error = err;
      d.worst_index = i;
    }
    d.max_abs_reference = std::max(d.max_abs_reference, std::fabs(static_cast<double>(expected[i])));
  }
  return d;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "qwen35-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace qwen35::testing
