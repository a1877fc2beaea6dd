// `qwen35 quantize`: write an MLX-layout affine-quantized checkpoint (8 or 4
// bits, groups of 32, 64 or 128) from any checkpoint directory this program
// opens. The rules (what is quantized, what is copied) are in
// src/formats/mlx_quantizer.h; the result loads back with --model.
#include <fmt/format.h>

#include <memory>

#include "commands.h"
#include "formats/mlx_quantizer.h"
#include "qwen35/error.h"

namespace {

struct QuantizeOptions {
  std::string model_dir;
  std::string out_dir;
  std::string format = "mlx8";
  uint32_t group_size = 64;
};

void run_quantize(const QuantizeOptions& options) {
  using namespace qwen35;
  if (options.format != "mlx8" && options.format != "mlx4") {
    fail("--format must be mlx8 or mlx4, got '{}'", options.format);
  }
  const MlxAffineParams params{.bits = options.format == "mlx8" ? 8u : 4u, .group_size = options.group_size};
  write_mlx_checkpoint(open_hf_checkpoint(options.model_dir), options.out_dir, params);
  fmt::print(stderr, "qwen35: wrote {} ({}-bit, group size {}) to {}\n", options.format, params.bits,
             params.group_size, options.out_dir);
}

}  // namespace

void add_quantize_command(CLI::App& app) {
  auto options = std::make_shared<QuantizeOptions>();
  CLI::App* command = app.add_subcommand("quantize", "write an MLX affine-quantized copy of a checkpoint");
  command->add_option("--model", options->model_dir, "checkpoint directory to read")->required();
  command->add_option("--out", options->out_dir, "directory to write (must not hold a checkpoint)")->required();
  command->add_option("--format", options->format, "mlx8 or mlx4")->capture_default_str();
  command->add_option("--group-size", options->group_size, "values per scale/bias: 32, 64 or 128")
      ->capture_default_str();
  command->callback([options] { run_quantize(*options); });
}
