// compare_f32 ACTUAL EXPECTED TOLERANCE: exits 0 when two raw float32 files have
// the same length and max|a - e| / max|e| <= TOLERANCE (used by the CLI tests).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

static std::vector<float> read(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> out(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.begin() + static_cast<long>(out.size() * sizeof(float)),
            reinterpret_cast<char*>(out.data()));
  return out;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: compare_f32 ACTUAL EXPECTED TOLERANCE\n");
    return 2;
  }
  const std::vector<float> a = read(argv[1]), e = read(argv[2]);
  if (a.empty() || a.size() != e.size()) {
    std::fprintf(stderr, "size mismatch: %zu vs %zu floats\n", a.size(), e.size());
    return 1;
  }
  double max_err = 0, max_ref = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double err = std::fabs(double{a[i]} - e[i]);
    max_err = std::isnan(err) ? INFINITY : std::max(max_err, err);
    max_ref = std::max(max_ref, std::fabs(double{e[i]}));
  }
  const double relative = max_err / max_ref;
  std::printf("relative error %.3g (tolerance %s)\n", relative, argv[3]);
  return relative <= std::atof(argv[3]) ? 0 : 1;
}
