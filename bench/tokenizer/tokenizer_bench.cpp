// Encode throughput of the real Qwen3.5 tokenizer (the qwen35-regex test data) in MB of
// UTF-8 input per second on one core. The target is >= 5 MB/s on ordinary text; the
// "NoCache" runs show the cost when every word goes through BPE merging.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bench_paths.h"
#include "qwen35/tokenizer.h"

namespace {

std::filesystem::path shared_dir() {
  const char* env = std::getenv("QWEN35_SHARED_DIR");
  return env ? env : kDefaultSharedDir;
}

std::filesystem::path tokenizer_path() { return shared_dir() / "testdata/tokenizer/qwen35-regex/tokenizer.json"; }

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Repeats text up to about `bytes` so every run encodes a comparable amount.
std::string repeat_to(const std::string& text, size_t bytes) {
  std::string out;
  while (!text.empty() && out.size() < bytes) out += text;
  return out;
}

const std::string& english_text() {
  // The GPL is on every Debian system (base-files): 35 KB of ordinary English prose.
  static const std::string text = [] {
    std::string t = read_file("/usr/share/common-licenses/GPL-3");
    if (t.empty()) t = "The quick brown fox jumps over the lazy dog. It was the best of times. ";
    return repeat_to(t, 1 << 20);
  }();
  return text;
}

const std::string& code_text() {
  static const std::string text = [] {
    std::string t;
    for (const char* file : {"bpe.cpp", "tokenizer.cpp", "pre_tokenizer.cpp", "tokenizer_json.cpp"}) {
      t += read_file(std::filesystem::path(kSourceDir) / "src/tokenizer" / file);
    }
    return repeat_to(t, 1 << 20);
  }();
  return text;
}

const std::string& mixed_text() {
  // Every shared test case: CJK, Hangul, Arabic, Devanagari, emoji, combining marks.
  static const std::string text = [] {
    std::string t;
    for (const char* flavour : {"qwen3", "qwen35-regex"}) {
      std::ifstream in(shared_dir() / "testdata/tokenizer" / flavour / "encode_cases.json");
      for (const auto& c : nlohmann::json::parse(in)) t += c["text"].get<std::string>() + "\n";
    }
    return repeat_to(t, 1 << 20);
  }();
  return text;
}

const qwen35::Tokenizer& tokenizer(bool cached) {
  static const auto with_cache = std::make_unique<qwen35::Tokenizer>(tokenizer_path());
  static const auto without_cache =
      std::make_unique<qwen35::Tokenizer>(tokenizer_path(), qwen35::TokenizerOptions{.bpe_cache_entries = 0});
  return cached ? *with_cache : *without_cache;
}

void run(benchmark::State& state, const std::string& text, bool cached) {
  const qwen35::Tokenizer& tok = tokenizer(cached);
  size_t tokens = 0;
  for (auto _ : state) {
    const auto ids = tok.encode(text);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["bytes_per_token"] = static_cast<double>(text.size()) / static_cast<double>(tokens);
}

void BM_EncodeEnglish(benchmark::State& state) { run(state, english_text(), true); }
void BM_EncodeEnglishNoCache(benchmark::State& state) { run(state, english_text(), false); }
void BM_EncodeCode(benchmark::State& state) { run(state, code_text(), true); }
void BM_EncodeMixedScripts(benchmark::State& state) { run(state, mixed_text(), true); }
void BM_EncodeMixedScriptsNoCache(benchmark::State& state) { run(state, mixed_text(), false); }

void BM_DecodeEnglish(benchmark::State& state) {
  const qwen35::Tokenizer& tok = tokenizer(true);
  const auto ids = tok.encode(english_text());
  for (auto _ : state) benchmark::DoNotOptimize(tok.decode(ids));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * english_text().size()));
}

void BM_Load(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(qwen35::Tokenizer(tokenizer_path()).vocab_size());
}

BENCHMARK(BM_EncodeEnglish)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeEnglishNoCache)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeCode)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeMixedScripts)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeMixedScriptsNoCache)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeEnglish)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Load)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
