// Google Benchmark of a GPU backend's gemvs (QWEN35_BENCH_BACKEND: cuda, the
// default, or vulkan) on the decode shapes, in every weight format they take
// as plain matrices. Each iteration launches one gemv on each of several copies
// of the matrix (about 1 GiB in all, far beyond the L2, as in decode) and waits
// for them; bytes_per_second counts the weights read, to compare with the
// device's read bandwidth (`qwen35 bench --backend cuda` measures it).
// Weights are random codes with finite random scales, never zeros.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "qwen35/backend.h"
#include "qwen35/dense_weights.h"
#include "qwen35/dtype.h"
#include "qwen35/gguf_quants.h"
#include "qwen35/kernels.h"

namespace qwen35 {
namespace {

GpuBackend* gpu() {
  static std::unique_ptr<GpuBackend> backend = []() -> std::unique_ptr<GpuBackend> {
    const char* name = std::getenv("QWEN35_BENCH_BACKEND");
    try {
      return create_backend(name != nullptr ? name : "cuda");
    } catch (const std::exception&) {
      return nullptr;
    }
  }();
  return backend.get();
}

// Random bytes; the blocks' fp16 scales (or every bf16 weight) random and finite.
std::vector<uint8_t> random_matrix(DType type, uint32_t rows, uint32_t cols) {
  std::vector<uint8_t> bytes(size_t{rows} * dtype_bytes(type, cols));
  std::mt19937_64 rng(size_t{rows} * cols + static_cast<size_t>(type));
  for (size_t i = 0; i + 8 <= bytes.size(); i += 8) {
    const uint64_t r = rng();
    std::memcpy(bytes.data() + i, &r, 8);
  }
  std::uniform_real_distribution<float> value(-0.05f, 0.05f);
  const auto put_half = [&](size_t at) {
    const uint16_t h = type == DType::kBF16 ? f32_to_bf16(value(rng)) : f32_to_f16(value(rng));
    std::memcpy(bytes.data() + at, &h, 2);
  };
  if (type == DType::kBF16) {
    for (size_t at = 0; at < bytes.size(); at += 2) put_half(at);
    return bytes;
  }
  for (size_t block = 0; block < bytes.size() / dtype_size(type); ++block) {
    const size_t at = block * dtype_size(type);
    if (type == DType::kQ6_K) {
      put_half(at + offsetof(GgufBlockQ6K, d));
    } else {
      put_half(at);
      if (type == DType::kQ4_K || type == DType::kQ5_K) put_half(at + 2);
    }
  }
  return bytes;
}

// Args: rows, cols, dtype (0 bf16, 1 Q8_0, 2 Q4_0, 3 Q4_K, 4 Q5_K, 5 Q6_K).
void BM_GpuGemv(benchmark::State& state) {
  GpuBackend* backend = gpu();
  if (backend == nullptr) {
    state.SkipWithError("no usable GPU backend (QWEN35_BENCH_BACKEND: cuda or vulkan)");
    return;
  }
  constexpr DType kTypes[] = {DType::kBF16, DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K};
  const auto rows = static_cast<uint32_t>(state.range(0)), cols = static_cast<uint32_t>(state.range(1));
  const DType type = kTypes[state.range(2)];
  const std::string name = "gemv_" + dtype_lower_name(type);
  if (!backend->find_kernel(name, GemvArgs::kTypeName)) {
    state.SkipWithError((backend->name() + " has no " + name).c_str());
    return;
  }
  const Stream stream = backend->default_stream();
  const std::vector<uint8_t> host = random_matrix(type, rows, cols);
  const size_t copies = std::max<size_t>(1, (size_t{1} << 30) / host.size());
  std::vector<DeviceBuffer> w;
  for (size_t i = 0; i < copies; ++i) {
    w.emplace_back(*backend, host.size());
    if (i == 0) {
      backend->upload(w[0].ptr(), host.data(), host.size(), stream);
    } else {
      backend->copy(w[i].ptr(), w[0].ptr(), host.size(), stream);
    }
  }
  std::vector<float> x_host(cols);
  std::mt19937 rng(cols);
  std::uniform_real_distribution<float> x_value(-1.0f, 1.0f);
  for (float& v : x_host) v = x_value(rng);
  DeviceBuffer x(*backend, cols * sizeof(float)), y(*backend, rows * sizeof(float));
  backend->upload(x.ptr(), x_host.data(), x_host.size() * sizeof(float), stream);
  const auto kernel = resolve_kernel<GemvArgs>(*backend, name);
  const auto run_all = [&] {
    for (const DeviceBuffer& m : w) {
      launch(*backend, kernel, GemvArgs{.w = m.ptr(), .x = x.ptr(), .y = y.ptr(), .rows = rows, .cols = cols}, stream);
    }
    backend->synchronize(stream);
  };
  run_all();  // warm-up: module load, first-touch
  for (auto _ : state) run_all();
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * copies * host.size()));
  state.SetLabel(backend->name() + " " + std::string(dtype_name(type)) + " x" + std::to_string(copies));
}

// The 9B shape's gate/up and down projections, the 0.8B shape's output
// projection (one long matrix) and its gate/up (small: launch-bound).
BENCHMARK(BM_GpuGemv)
    ->ArgNames({"rows", "cols", "dtype"})
    ->ArgsProduct({{12288}, {4096}, {0, 1, 2, 3, 4, 5}})
    ->ArgsProduct({{4096}, {12288}, {0, 1, 2, 3, 4, 5}})
    ->ArgsProduct({{248320}, {1024}, {0, 1, 3, 5}})
    ->ArgsProduct({{3584}, {1024}, {0, 3}})
    ->UseRealTime()
    ->MinTime(0.2);

}  // namespace
}  // namespace qwen35

BENCHMARK_MAIN();
