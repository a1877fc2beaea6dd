// x in 8 bits as the MLX integer kernels read it, and their scalar twin.
#include "cpu/int8_activations.h"
#include "cpu/mlx_int8.h"
#include "qwen35/dtype.h"
#include "qwen35/mlx_affine.h"

namespace qwen35::cpu {

namespace {

// Where the MLX arrays start in the scratch: after the GGUF form (codes and
// block scales), on a cache line of their own if the scratch starts one.
size_t mlx_part(size_t cols, size_t digits) { return (int8_activation_floats(cols, digits) + 15) / 16 * 16; }

}  // namespace

size_t mlx_int8_activation_floats(size_t cols, size_t group_size, size_t digits) {
  // the reordered 4-bit codes of each digit (4 per float), lane scales, group sums, quad scales
  return mlx_part(cols, digits) + digits * (cols / 4) + cols / 4 + cols / group_size + cols / 32;
}

MlxInt8Activations quantize_mlx_activations(const float* x, size_t cols, unsigned bits, size_t group_size,
                                            float* scratch, size_t digits) {
  const Int8Activations q = quantize_activations(x, cols, scratch, digits);
  float* rest = scratch + mlx_part(cols, digits);
  auto* codes = reinterpret_cast<int8_t*>(rest);
  float* lane_scales = rest + digits * (cols / 4);
  float* group_sums = lane_scales + cols / 4;
  float* quad_scales = group_sums + cols / group_size;
  for (size_t d = 0; bits == 4 && d < digits; ++d) {
    const int8_t* from = q.q + d * cols;
    int8_t* to = codes + d * cols;
    for (size_t k = 0; k < cols / 2; ++k) {
      to[k] = from[2 * k];
      to[cols / 2 + k] = from[2 * k + 1];
    }
  }
  // Lane i (bytes [4 i, 4 i + 4) of a row's codes) holds elements [i * 32 / bits, +32 / bits): all in
  // block i / bits of x.
  const size_t lanes = cols * bits / 32;
  for (size_t i = 0; i < lanes; ++i) lane_scales[i] = q.scale[i / bits];
  // The sums of x as quantized (q.sums, per block), so that a row's dot is
  // exactly its dot with x quantized: a group's codes times its scale are
  // w - bias, which for weights centred on zero are about |bias| each, so
  // float sums here would add bias times the group's rounding errors of x
  // (doubling the deviation of the tiny golden's mlx8 logits from those of
  // float x).
  const size_t blocks_per_group = group_size / 32;
  for (size_t g = 0; g < cols / group_size; ++g) {
    float s = 0;
    for (size_t b = g * blocks_per_group; b < (g + 1) * blocks_per_group; ++b) s += q.sums[b];
    group_sums[g] = s;
  }
  // A quad's 16 blocks of 16 code bytes (4 bits: 32 elements, one block of
  // x) lie in 4 vectors v of 4 blocks c each: block 4 v + c goes to lane 4 c + v.
  if (bits == 4) {
    for (size_t quad = 0; quad < cols / 512; ++quad) {
      for (size_t v = 0; v < 4; ++v) {
        for (size_t c = 0; c < 4; ++c) quad_scales[16 * quad + 4 * c + v] = q.scale[16 * quad + 4 * v + c];
      }
    }
  }
  // 8-bit codes meet x's codes in order: q's own.
  return MlxInt8Activations{.codes = bits == 4 ? codes : q.q,
                            .lane_scales = lane_scales,
                            .group_sums = group_sums,
                            .quad_scales = quad_scales,
                            .digits = digits,
                            .cols = cols};
}

namespace {

float scale_at(const void* values, simd::WeightType type, size_t i) {
  switch (type) {
    case simd::WeightType::kF32: return static_cast<const float*>(values)[i];
    case simd::WeightType::kBF16: return bf16_to_f32(static_cast<const uint16_t*>(values)[i]);
    case simd::WeightType::kF16: return f16_to_f32(static_cast<const uint16_t*>(values)[i]);
  }
  return 0;
}

}  // namespace

double mlx_int8_row_dot(const simd::MlxRows& w, size_t row, const MlxInt8Activations& x) {
  const size_t groups = w.cols / w.group_size;
  const uint32_t* codes = w.codes + row * (w.cols * w.bits / 32);
  double y = 0;
  for (size_t g = 0; g < groups; ++g) {
    double dot = 0;  // the group's blocks of 32: exact integer sums, each times x's block scale
    for (size_t block = g * w.group_size; block < (g + 1) * w.group_size; block += 32) {
      double digit_dot = 0;  // each digit's exact integer sum times its weight
      for (size_t d = 0; d < x.digits; ++d) {
        const int8_t* xd = x.codes + d * w.cols;
        int64_t sum = 0;
        for (size_t c = block; c < block + 32; ++c) {
          const int8_t xq = w.bits == 4 ? xd[c % 2 * (w.cols / 2) + c / 2] : xd[c];
          sum += int64_t{mlx_code(codes, static_cast<uint32_t>(c), w.bits)} * xq;
        }
        digit_dot += double{kDigitWeight[d]} * static_cast<double>(sum);
      }
      // The lane scale of the block's first code bytes: 4 bytes hold 32 / bits elements.
      dot += double{x.lane_scales[block * w.bits / 32]} * digit_dot;
    }
    y += double{scale_at(w.scales, w.scale_type, row * groups + g)} * dot +
         double{scale_at(w.biases, w.scale_type, row * groups + g)} * x.group_sums[g];
  }
  return y;
}

}  // namespace qwen35::cpu
