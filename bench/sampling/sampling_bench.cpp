// argmax and Sampler::sample over Qwen3.5's 248320 logits on one core, in GB/s
// of logits read: the host's share of each token. The logits stay in the
// caches between iterations (a decode's were just written by the output
// projection); for argmax the largest sits near the end, and few chunks beat
// the best before it, so nearly every chunk is only scanned.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "qwen35/sampling.h"

namespace {

// n logits drawn from a normal distribution of s.d. 3, the same every run.
std::vector<float> normal_logits(size_t n) {
  std::vector<float> logits(n);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (float& l : logits) l = normal(rng);
  return logits;
}

void BM_Argmax(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  std::vector<float> logits = normal_logits(n);
  logits[n - 100] = 100.0f;
  for (auto _ : state) benchmark::DoNotOptimize(qwen35::argmax(logits));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * sizeof(float)));
}
BENCHMARK(BM_Argmax)->ArgName("vocab")->Arg(248320)->Arg(151936);

// Sampler::sample on 248320 logits: 0 greedy, 1 the qwen35 command's defaults
// (temperature 0.8, top-k 40, top-p 0.95, min-p 0.05), 2 top-p 0.95 alone,
// 3 temperature alone.
void BM_Sample(benchmark::State& state) {
  constexpr size_t kVocab = 248320;
  const std::vector<float> logits = normal_logits(kVocab);
  qwen35::SamplerParams params[] = {
      {.temperature = 0.0f},
      {.temperature = 0.8f, .top_k = 40, .top_p = 0.95f, .min_p = 0.05f},
      {.temperature = 0.8f, .top_p = 0.95f},
      {.temperature = 0.8f},
  };
  qwen35::Sampler sampler(params[state.range(0)]);
  for (auto _ : state) benchmark::DoNotOptimize(sampler.sample(logits));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kVocab * sizeof(float)));
}
BENCHMARK(BM_Sample)->ArgName("params")->DenseRange(0, 3);

}  // namespace

BENCHMARK_MAIN();
