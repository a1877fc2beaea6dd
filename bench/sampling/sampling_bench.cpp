// argmax over Qwen3.5's 248320 logits on one core, in GB/s of logits read:
// the host's share of each greedy token. The logits stay in the caches between
// iterations (a decode's were just written by the output projection); the
// largest sits near the end, and few chunks beat the best before it, so
// nearly every chunk is only scanned.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "qwen35/sampling.h"

namespace {

void BM_Argmax(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  std::vector<float> logits(n);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (float& l : logits) l = normal(rng);
  logits[n - 100] = 100.0f;
  for (auto _ : state) benchmark::DoNotOptimize(qwen35::argmax(logits));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * sizeof(float)));
}
BENCHMARK(BM_Argmax)->ArgName("vocab")->Arg(248320)->Arg(151936);

}  // namespace

BENCHMARK_MAIN();
