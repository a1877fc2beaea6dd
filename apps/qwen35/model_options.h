// Options every model-running subcommand shares (--model, --backend, --threads,
// --kv-dtype, --ctx) and loading the model they name, or the built-in default:
// random weights in the real Qwen3.5-0.8B shape (or another preset), made on the fly.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "qwen35/backend.h"
#include "qwen35/mlx_affine.h"
#include "qwen35/model.h"

namespace qwen35::app {

// Whether the CPU's GGUF and MLX gemvs take x in 24 bits unless told
// otherwise (--float-activations): where that measured faster than float x
// (x86-64, 2026-12: 1.05-1.5 times the float kernels' decode on AVX-512 VNNI
// where the cores bind, alike where DRAM does; 1.0-1.2 on AVX2) at float32's precision
// (docs/accuracy.md). ARM64's integer kernels run ARMv8.0's widening
// multiplies (four instructions per 16 codes and digit, where SDOT would take
// one) and have not been timed on ARM hardware: float x there. The
// library's own default (BackendOptions) stays the float kernels, the
// reference every backend is compared with.
#if defined(__x86_64__) || defined(_M_X64)
inline constexpr bool kInt24ActivationsByDefault = true;
#else
inline constexpr bool kInt24ActivationsByDefault = false;
#endif

struct ModelOptions {
  std::string model_dir;  // empty: the built-in random-weight 0.8B model
  std::string backend = "cpu";
  unsigned threads = 0;
  int device = 0;
  std::string kv_dtype = "bf16";
  std::string simd_target;  // CPU: BackendOptions::simd_target ("" = the best this CPU has)
  bool int8_activations = false;   // CPU, GGUF or MLX weights: x in 8 bits for integer dot products
  // CPU, GGUF/MLX weights: x in 24 bits (BackendOptions::int24_activations);
  // --int24-activations / --float-activations
  bool int24_activations = kInt24ActivationsByDefault;
  bool regroup_rows = true;        // CPU with int8 or int24 activations: BackendOptions::regroup_rows
  uint32_t context = 4096;
  std::string preset = "0.8b";         // random weights only: the shape (Qwen35ForwardConfig::preset)
  uint64_t seed = 0;                   // random weights only
  DType weight_dtype = DType::kBF16;  // random weights only
  // Random weights only: quantized in memory to MLX affine (bench's --dtype mlx8|mlx4).
  std::optional<MlxAffineParams> random_mlx;
  // Random weights only: written to a temporary GGUF file in this block type and
  // loaded through the GGUF loader (bench's --dtype q8_0|q4_0|q4_k|q5_k|q6_k).
  std::optional<DType> random_gguf;

  // `seed_help` says what --seed seeds in this command (the random weights, and where
  // the command samples, the sampler too).
  void add_to(CLI::App& command, const std::string& seed_help = "seed of the built-in random weights");
  KvDtype parsed_kv_dtype() const;
  // What the GGUF and MLX gemvs take x as under these options: "int8",
  // "int24" or "float" (int8 wins over int24; backends other than the CPU,
  // whose options these are, always "float").
  std::string_view activations() const;
  // " (int8 activations)", " (int24 activations)" or "" (float): for descriptions.
  std::string activations_label() const;
};

struct LoadedModel {
  std::unique_ptr<GpuBackend> backend;
  std::unique_ptr<Model> model;
  std::string description;  // what was loaded, for the user
};

// Opens the checkpoint (or makes the default), prints what it is to stderr, with a
// progress bar on stderr while the weights load when stderr is a terminal.
LoadedModel load_model(const ModelOptions& options);

// "1,2,3" -> {1, 2, 3}; throws Error naming the bad item.
std::vector<int32_t> parse_token_list(const std::string& text);

}  // namespace qwen35::app
