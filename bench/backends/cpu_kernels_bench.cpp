// Google Benchmark micro-benchmarks of the CPU backend's kernels, launched
// through GpuBackend exactly as the forwards launch them. Each reports the
// bytes it must read as bytes_per_second, to compare with `qwen35 bench`'s
// read-bandwidth probe. Matrices exceed the last-level cache where it matters.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu/int8_activations.h"
#include "cpu/simd.h"
#include "host/kv_rows.h"
#include "qwen35/backend.h"
#include "qwen35/dense_weights.h"
#include "qwen35/dtype.h"
#include "qwen35/kernels.h"
#include "qwen35/mlx_affine.h"
#include "qwen35/tuning.h"

namespace qwen35 {
namespace {

// The pool's threads: all cores, or QWEN35_BENCH_THREADS. One thread is the
// steadier measure on a shared VM, and tells a kernel whose reads and
// arithmetic overlap (from DRAM as fast as the slower of the two) from one
// whose take turns.
unsigned bench_threads() {
  const char* threads = std::getenv("QWEN35_BENCH_THREADS");
  return threads ? static_cast<unsigned>(std::strtoul(threads, nullptr, 10)) : 0;
}

// QWEN35_BENCH_AB="KNOB=VALUE[,KNOB=VALUE...]" (qwen35/tuning.h): the
// benchmarks that take it (BM_Gemv, BM_MlxGemv, BM_AttentionDecode) launch in
// pairs, once with the backend's defaults and once with these tuning knobs
// set, which first alternating, as `qwen35 bench --ab` does for decode, and
// report the default's time over the tuned one's as the counter ab_speedup:
// on a shared VM whose memory speed drifts by a third within minutes,
// separate runs do not tell settings apart. Parsed once; empty without the
// variable; a malformed one is reported by each benchmark that takes it
// (run_with_ab).
const std::vector<TuningSetting>& bench_ab_settings() {
  static const std::vector<TuningSetting> settings = [] {
    const char* text = std::getenv("QWEN35_BENCH_AB");
    return text && *text ? parse_tuning_settings(text, "QWEN35_BENCH_AB") : std::vector<TuningSetting>{};
  }();
  return settings;
}

// Runs `launch_once` for each of the state's iterations: plainly, or with
// QWEN35_BENCH_AB, in default/tuned pairs timed apart (ab_speedup). Returns
// the launches per iteration, for the bytes processed.
template <typename Launch>
size_t run_with_ab(benchmark::State& state, GpuBackend& gpu, Launch launch_once) {
  const std::vector<TuningSetting>* ab = nullptr;
  try {
    ab = &bench_ab_settings();
    apply_tuning(gpu, *ab, true);  // refused here if the backend lacks a knob or the value
  } catch (const Error& e) {
    state.SkipWithError(e.what());
    return 1;
  }
  if (ab->empty()) {
    for (auto _ : state) launch_once();
    return 1;
  }
  double seconds[2] = {0, 0};
  size_t pair = 0;
  for (auto _ : state) {
    for (int k = 0; k < 2; ++k) {
      const bool tuned = (k == 0) == (pair % 2 == 1);
      apply_tuning(gpu, *ab, tuned);
      const auto start = std::chrono::steady_clock::now();
      launch_once();
      seconds[tuned] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    ++pair;
  }
  apply_tuning(gpu, *ab, false);
  state.counters["ab_speedup"] = seconds[1] > 0 ? seconds[0] / seconds[1] : 0;
  return 2;
}

// The SIMD target of every kernel: the CPU's best, or QWEN35_BENCH_SIMD (a
// name `qwen35 --simd` takes, e.g. AVX2), to time another target's kernels.
std::string bench_simd() {
  const char* target = std::getenv("QWEN35_BENCH_SIMD");
  return target ? target : "";
}

// The CPU backend by x's digits: 0, float x; 1, the one whose GGUF and MLX gemvs
// take x in 8 bits; 3, the one whose regrouped GGUF, Q6_K and MLX gemvs take it in 24.
GpuBackend& cpu(int64_t digits = 0) {
  const auto options = [](bool int8, bool int24) {
    return BackendOptions{
        .threads = bench_threads(), .int8_activations = int8, .int24_activations = int24, .simd_target = bench_simd()};
  };
  static std::unique_ptr<GpuBackend> backend = create_backend("cpu", options(false, false));
  static std::unique_ptr<GpuBackend> int8_backend = create_backend("cpu", options(true, false));
  static std::unique_ptr<GpuBackend> int24_backend = create_backend("cpu", options(false, true));
  return digits == 0 ? *backend : digits == 1 ? *int8_backend : *int24_backend;
}

// " int8 x", " int24 x" or "" for x in that many 8-bit digits.
std::string x_label(int64_t digits) { return digits == 1 ? " int8 x" : digits == 3 ? " int24 x" : ""; }

DeviceBuffer filled(size_t bytes, uint8_t value, GpuBackend& gpu = cpu()) {
  DeviceBuffer b(gpu, bytes);
  gpu.fill(b.ptr(), value, bytes, gpu.default_stream());
  return b;
}

// How many copies of a benchmark's `bytes` of inputs to launch on in rotation:
// with cached, one, read again and again from the caches; otherwise enough for
// ~1 GB, far beyond the caches, so that each launch reads from DRAM as in decode.
size_t rotation_copies(bool cached, size_t bytes) {
  return cached ? 1 : std::max<size_t>(1, (size_t{1} << 30) / bytes);
}

// Args: rows, cols, dtype (0 f32, 1 bf16, 2 f16, 3 Q8_0, 4 Q4_K, 5 Q6_K, 6 Q4_0,
// 7 Q5_K; regrouped, x always in 8 bits: 8 Q4_0x16, 9 Q8_0x16, 10 Q4_Kx16,
// 11 Q5_Kx16, 12 Q6_Kx16), cached, int8
// (GGUF types: x quantized to 8 bits, integer dot products; 3 for Q6_K and the
// regrouped types: x in 24 bits, three 8-bit digits).
// With cached 0, several matrices in rotation so the working set (~1 GB) is far
// beyond the caches, as in decode; with cached 1, one matrix read again and again
// from the caches: the kernel's arithmetic ceiling, which tells a compute-bound
// format from a memory-bound one. Every byte 0x3c: finite weights in every format.
void BM_Gemv(benchmark::State& state) {
  const auto rows = static_cast<uint32_t>(state.range(0)), cols = static_cast<uint32_t>(state.range(1));
  constexpr DType kTypes[] = {DType::kF32,  DType::kBF16, DType::kF16,  DType::kQ8_0,
                              DType::kQ4_K, DType::kQ6_K, DType::kQ4_0, DType::kQ5_K, DType::kQ4_0x16,
                              DType::kQ8_0x16, DType::kQ4_Kx16, DType::kQ5_Kx16, DType::kQ6_Kx16};
  const DType type = kTypes[state.range(2)];
  GpuBackend& gpu = cpu(state.range(4));
  const size_t matrix_bytes = size_t{rows} * dtype_bytes(type, cols);
  const size_t copies = rotation_copies(state.range(3) != 0, matrix_bytes);
  std::vector<DeviceBuffer> w;
  for (size_t i = 0; i < copies; ++i) w.push_back(filled(matrix_bytes, 0x3c, gpu));
  DeviceBuffer x = filled(cols * 4, 0x3c, gpu), y(gpu, rows * 4);
  const auto kernel = resolve_kernel<GemvArgs>(gpu, "gemv_" + dtype_lower_name(type));
  size_t i = 0;
  const size_t launches = run_with_ab(state, gpu, [&] {
    launch(gpu, kernel, GemvArgs{.w = w[i++ % copies].ptr(), .x = x.ptr(), .y = y.ptr(), .rows = rows, .cols = cols},
           gpu.default_stream());
  });
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * matrix_bytes * launches));
  state.SetLabel(std::string(dtype_name(type)) + x_label(state.range(4)));
}
BENCHMARK(BM_Gemv)
    ->ArgNames({"rows", "cols", "dtype", "cached", "int8"})
    ->Args({3584, 1024, 1, 0, 0})
    ->Args({1024, 3584, 1, 0, 0})
    ->Args({6144, 1024, 1, 0, 0})
    ->Args({3584, 1024, 0, 0, 0})
    ->Args({3584, 1024, 2, 0, 0})
    ->ArgsProduct({{3584}, {1024}, {3, 4, 5, 6, 7}, {0, 1}, {0, 1}})
    ->ArgsProduct({{3584}, {1024}, {8, 9, 10, 11, 12}, {0, 1}, {1, 3}})
    ->ArgsProduct({{3584}, {1024}, {5}, {0, 1}, {3}})
    // The MLP's down projection (1024 rows of 3584): as many bytes in a
    // quarter of the rows, 64 groups of 16 for the regrouped kernels.
    ->ArgsProduct({{1024}, {3584}, {5, 10, 12}, {0}, {3}})
    ->Args({3584, 1024, 1, 1, 0})
    // The output projection (vocabulary 248320 rows): a third of a 4-bit
    // token's bytes in one call.
    ->Args({248320, 1024, 1, 0, 0})
    ->Args({248320, 1024, 10, 0, 1})
    ->Args({248320, 1024, 10, 0, 3})
    ->Args({248320, 1024, 8, 0, 3})
    ->Args({248320, 1024, 5, 0, 3})
    ->Args({248320, 1024, 12, 0, 3})
    ->UseRealTime();

// The fixed cost of one launch split across the pool's threads: an f32 gemv
// of range(0) rows of 16 columns (64 B each), launched again and again. 16
// rows already go to every thread (the scheduler keeps 8 light rows or fewer
// on the launching one), so the time is the threads' handoffs: the others waking,
// claiming and reporting back, each a cache line crossing cores. A decode
// launches ~270 times per token.
void BM_LaunchOverhead(benchmark::State& state) {
  const auto rows = static_cast<uint32_t>(state.range(0));
  constexpr uint32_t kCols = 16;
  DeviceBuffer w = filled(size_t{rows} * kCols * 4, 0x3c), x = filled(kCols * 4, 0x3c), y(cpu(), rows * 4);
  const auto kernel = resolve_kernel<GemvArgs>(cpu(), "gemv_f32");
  for (auto _ : state) {
    launch(cpu(), kernel, GemvArgs{.w = w.ptr(), .x = x.ptr(), .y = y.ptr(), .rows = rows, .cols = kCols},
           cpu().default_stream());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_LaunchOverhead)->ArgNames({"rows"})->Arg(8)->Arg(16)->Arg(1024)->UseRealTime();

// MLX affine matrices with bf16 scales and biases, group 64. Args: rows, cols,
// bits (4 or 8), cached, int8 (x quantized to 8 bits, integer dot products;
// 3: x in 24 bits, regrouped only), x16 (with int8: the layout regrouped 16
// rows at a time, as the CPU keeps such matrices, qwen35/mlx_affine.h);
// cached as in BM_Gemv. Bytes: codes, scales and biases (regrouped, all in
// the one array the kernel takes at codes).
void BM_MlxGemv(benchmark::State& state) {
  const auto rows = static_cast<uint32_t>(state.range(0)), cols = static_cast<uint32_t>(state.range(1));
  const auto bits = static_cast<uint32_t>(state.range(2));
  constexpr uint32_t kGroup = 64;
  GpuBackend& gpu = cpu(state.range(4));
  const size_t code_bytes = size_t{rows} * cols * bits / 8, scale_bytes = size_t{rows} * (cols / kGroup) * 2;
  const size_t matrix_bytes = code_bytes + 2 * scale_bytes;
  const size_t copies = rotation_copies(state.range(3) != 0, matrix_bytes);
  std::vector<DeviceBuffer> w;
  for (size_t i = 0; i < copies; ++i) w.push_back(filled(matrix_bytes, 0x3c, gpu));
  DeviceBuffer x = filled(cols * 4, 0x3c, gpu), y(gpu, rows * 4);
  const bool x16 = state.range(5) != 0;
  const std::string layout = "mlx" + std::to_string(bits) + (x16 ? "x16" : "");
  const auto kernel = resolve_kernel<MlxGemvArgs>(gpu, "gemv_" + layout + "_bf16");
  size_t i = 0;
  const size_t launches = run_with_ab(state, gpu, [&] {
    const DevicePtr codes = w[i++ % copies].ptr();
    const MlxMatrixRef m{
        .codes = codes, .scales = codes.offset(code_bytes), .biases = codes.offset(code_bytes + scale_bytes)};
    launch(gpu, kernel,
           MlxGemvArgs{.w = m, .x = x.ptr(), .y = y.ptr(), .rows = rows, .cols = cols, .group_size = kGroup},
           gpu.default_stream());
  });
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * matrix_bytes * launches));
  state.SetLabel(layout + x_label(state.range(4)));
}
BENCHMARK(BM_MlxGemv)
    ->ArgNames({"rows", "cols", "bits", "cached", "int8", "x16"})
    ->ArgsProduct({{3584}, {1024}, {4, 8}, {0, 1}, {0, 1}, {0}})
    ->ArgsProduct({{3584}, {1024}, {4, 8}, {0, 1}, {1, 3}, {1}})
    ->UseRealTime();

// Decode attention of the 0.8B shape (8 query heads, 2 KV heads of 256) over
// range(0) positions of a bf16 cache (range(2) = 1: an fp8 one). Several
// caches in rotation, ~1 GB in all, so the reads come from DRAM as in decode
// (six layers' bf16 caches at 4096 positions are already 96 MB); with range(1)
// = 1, one cache read again and again from the caches (the kernel's
// arithmetic ceiling).
void BM_AttentionDecode(benchmark::State& state) {
  const auto seq_len = static_cast<uint32_t>(state.range(0));
  const bool fp8 = state.range(2) != 0;
  const uint32_t n_q = 8, n_kv = 2, hd = 256;
  const size_t cache_bytes = size_t{seq_len} * kv_row_bytes(fp8 ? KvDtype::kFP8 : KvDtype::kBF16, n_kv * hd);
  const size_t copies = rotation_copies(state.range(1) != 0, 2 * cache_bytes);
  std::vector<DeviceBuffer> k, v;
  for (size_t i = 0; i < copies; ++i) {
    k.push_back(filled(cache_bytes, 0x3c));
    v.push_back(filled(cache_bytes, 0x3c));
  }
  DeviceBuffer q = filled(n_q * hd * 4, 0x3c);
  DeviceBuffer out(cpu(), n_q * hd * 4), step(cpu(), sizeof(DecodeStepParams));
  const DecodeStepParams params{.position = seq_len - 1, .cache_pos = seq_len - 1, .seq_len = seq_len, .reserved = 0};
  cpu().upload(step.ptr(), &params, sizeof(params), cpu().default_stream());
  const auto kernel =
      resolve_kernel<AttentionDecodeArgs>(cpu(), fp8 ? "attention_decode_fp8" : "attention_decode_bf16");
  size_t i = 0;
  const size_t launches = run_with_ab(state, cpu(), [&] {
    const size_t c = i++ % copies;
    launch(cpu(), kernel,
           AttentionDecodeArgs{.q = q.ptr(), .k_cache = k[c].ptr(), .v_cache = v[c].ptr(), .step = step.ptr(),
                               .out = out.ptr(), .n_heads_q = n_q, .n_heads_kv = n_kv, .head_dim = hd,
                               .scale = 0.0625f},
           cpu().default_stream());
  });
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 2 * cache_bytes * launches));
  state.SetLabel(fp8 ? "fp8 cache" : "bf16 cache");
}
BENCHMARK(BM_AttentionDecode)
    ->ArgNames({"positions", "cached", "fp8"})
    ->ArgsProduct({{256, 4096, 32768}, {0}, {0, 1}})
    ->ArgsProduct({{512, 4096}, {1}, {0, 1}})
    // Two blocks: mostly the launch's fixed costs (gemv_scheduler.cpp's kSoloBytes).
    ->ArgsProduct({{64}, {0, 1}, {0}})
    ->UseRealTime();

// Attention's two SIMD kernels on one block of 32 cached positions of the
// 0.8B shape (2 KV heads of 256, 4 query heads each), called directly on one
// thread: range(1) = 0 scores the block, 1 adds its weighted V rows. The
// block (32 KB in bf16, 18 KB in fp8) stays in L1/L2, so this is the
// arithmetic alone, steadier on a shared VM than BM_AttentionDecode's cached
// runs (L3, both threads). Random values as a decode writes them: bf16
// rounded, or quantized by the fp8 cache's own quantizer (range(0) = 1).
void BM_AttentionBlock(benchmark::State& state) {
  const bool fp8 = state.range(0) != 0, values = state.range(1) != 0;
  const size_t rows = 32, n_kv = 2, hd = 256, group = 4, kv_dim = n_kv * hd;
  const size_t row_bytes = kv_row_bytes(fp8 ? KvDtype::kFP8 : KvDtype::kBF16, kv_dim);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<uint8_t> block(rows * row_bytes);
  std::vector<float> row(kv_dim);
  for (size_t r = 0; r < rows; ++r) {
    for (float& x : row) x = normal(rng);
    uint8_t* out = block.data() + r * row_bytes;
    if (fp8) {
      quantize_fp8_kv(row.data(), kv_dim, out, reinterpret_cast<uint16_t*>(out + kv_dim));
    } else {
      for (size_t i = 0; i < kv_dim; ++i) {
        const uint16_t bits = f32_to_bf16(row[i]);
        std::memcpy(out + 2 * i, &bits, 2);
      }
    }
  }
  std::vector<float> queries(n_kv * group * hd), scores(n_kv * group * rows), accs(n_kv * group * hd);
  for (float& x : queries) x = normal(rng);
  for (float& x : scores) x = std::fabs(normal(rng));
  const simd::KvBlock kv{.rows = block.data(), .type = fp8 ? simd::WeightType::kF32 : simd::WeightType::kBF16,
                         .row_stride = fp8 ? row_bytes : kv_dim, .n_rows = rows, .n_heads = n_kv, .head_dim = hd,
                         .group = group, .prefetch_rows = 0, .fp8 = fp8};
  for (auto _ : state) {
    if (values) {
      simd::attention_values(kv, scores.data(), rows, accs.data(), hd);
      benchmark::DoNotOptimize(accs.data());
    } else {
      simd::attention_scores(kv, queries.data(), scores.data(), rows);
      benchmark::DoNotOptimize(scores.data());
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * block.size()));
  state.SetLabel(std::string(fp8 ? "fp8" : "bf16") + (values ? " values" : " scores"));
}
BENCHMARK(BM_AttentionBlock)->ArgNames({"fp8", "values"})->ArgsProduct({{0, 1}, {0, 1}});

// One Gated DeltaNet recurrent step of the 0.8B shape (16 heads of 128 x 128,
// a 1 MB state). With cached = 0, states in rotation (~1 GB) are read and
// written from DRAM, as decode's 18 layers' states are between tokens; with
// cached = 1, one state stays in the caches.
void BM_GdnRecurrent(benchmark::State& state) {
  const uint32_t nk = 16, nv = 16, dk = 128, dv = 128;
  const size_t state_bytes = size_t{nv} * dk * dv * 4;
  const size_t copies = rotation_copies(state.range(0) != 0, state_bytes);
  DeviceBuffer qkv = filled((2 * nk * dk + nv * dv) * 4, 0x3c), decay = filled(nv * 4, 0x3f);
  DeviceBuffer beta = filled(nv * 4, 0x3e), out(cpu(), nv * dv * 4);
  std::vector<DeviceBuffer> states;
  for (size_t i = 0; i < copies; ++i) states.push_back(filled(state_bytes, 0x3c));
  const auto kernel = resolve_kernel<GdnRecurrentArgs>(cpu(), "gdn_recurrent");
  size_t i = 0;
  for (auto _ : state) {
    launch(cpu(), kernel,
           GdnRecurrentArgs{.qkv = qkv.ptr(), .decay = decay.ptr(), .beta = beta.ptr(),
                            .state = states[i++ % copies].ptr(), .out = out.ptr(), .n_heads_k = nk, .n_heads_v = nv,
                            .head_dim_k = dk, .head_dim_v = dv, .tiled_value_heads = 0},
           cpu().default_stream());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 2 * state_bytes));  // read + write
}
BENCHMARK(BM_GdnRecurrent)->ArgNames({"cached"})->Arg(0)->Arg(1)->UseRealTime();

// One Gated DeltaNet conv update + SiLU + L2 norms of the 0.8B shape (6144
// channels: q and k 16 heads of 128 each, v 2048). With cached = 0, each
// launch gets its own layer's weights, state and input in rotation (~1 GB)
// from DRAM, as in decode; with cached = 1, one layer's stay in the caches.
void BM_ConvSiluL2Norm(benchmark::State& state) {
  const uint32_t nk = 16, dk = 128, conv_dim = 2 * nk * dk + 16 * 128, kernel = 4;
  const size_t layer_bytes = size_t{conv_dim} * (kernel + kernel - 1 + 1) * 4;
  const size_t copies = rotation_copies(state.range(0) != 0, layer_bytes);
  std::vector<DeviceBuffer> u, history, w;
  for (size_t i = 0; i < copies; ++i) {
    u.push_back(filled(conv_dim * 4, 0x3c));
    history.push_back(filled(size_t{conv_dim} * (kernel - 1) * 4, 0x3c));
    w.push_back(filled(size_t{conv_dim} * kernel * 4, 0x3c));
  }
  DeviceBuffer out(cpu(), conv_dim * 4);
  const auto launch_kernel = resolve_kernel<ConvSiluL2NormArgs>(cpu(), "conv_silu_l2norm");
  size_t i = 0;
  for (auto _ : state) {
    const size_t c = i++ % copies;
    launch(cpu(), launch_kernel,
           ConvSiluL2NormArgs{.u = u[c].ptr(), .state = history[c].ptr(), .weight = w[c].ptr(), .out = out.ptr(),
                              .conv_dim = conv_dim, .conv_kernel = kernel, .n_heads_k = nk, .head_dim_k = dk,
                              .q_scale = 0.088f},
           cpu().default_stream());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * layer_bytes));  // reads
}
BENCHMARK(BM_ConvSiluL2Norm)->ArgNames({"cached"})->Arg(0)->Arg(1)->UseRealTime();

// An activation vector of `cols` values uniform in [-1, 1).
std::vector<float> random_x(size_t cols) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> x(cols);
  for (float& v : x) v = uniform(rng);
  return x;
}

// x quantized to 8 bits per block of 32, as every integer gemv does on the
// launching thread before its rows are split. Args: cols, simd (0: the scalar
// twin, 1: the CPU's SIMD target). Bytes: x's floats.
void BM_QuantizeBlocks(benchmark::State& state) {
  const auto cols = static_cast<size_t>(state.range(0));
  const std::vector<float> x = random_x(cols);
  std::vector<float> scale(cols / 32), code_sums(cols / 16);
  std::vector<int8_t> q(cols);
  const auto quantize = state.range(1) ? cpu::quantize_blocks : cpu::quantize_blocks_scalar;
  for (auto _ : state) {
    quantize(x.data(), cols, q.data(), scale.data(), code_sums.data(), 1);
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * cols * sizeof(float)));
}
BENCHMARK(BM_QuantizeBlocks)->ArgNames({"cols", "simd"})->ArgsProduct({{1024, 3584}, {0, 1}});

// All of x's 8-bit form as the GGUF integer gemvs read it: the codes above,
// then the sums, the per-16 scales and the codes reordered for Q4_K/Q5_K; or
// with digits 3, its 24-bit form. Args: cols, digits.
void BM_QuantizeActivations(benchmark::State& state) {
  const auto cols = static_cast<size_t>(state.range(0)), digits = static_cast<size_t>(state.range(1));
  const std::vector<float> x = random_x(cols);
  std::vector<float> scratch(cpu::int8_activation_floats(cols, digits));
  for (auto _ : state) {
    benchmark::DoNotOptimize(cpu::quantize_activations(x.data(), cols, scratch.data(), digits));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * cols * sizeof(float)));
}
BENCHMARK(BM_QuantizeActivations)->ArgNames({"cols", "digits"})->ArgsProduct({{1024, 3584}, {1, 3}});

}  // namespace
}  // namespace qwen35

BENCHMARK_MAIN();
