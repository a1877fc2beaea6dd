// MLX affine kernels on the CPU (layout in qwen35/mlx_affine.h): x is put in
// code order with its group sums once per launch (launch scratch), or in 8
// bits with BackendOptions::int8_activations, then rows are split across the
// thread pool as passes of bands (row_bands.h) and decoded by
// simd::mlx_gemv_bands, cpu::mlx_int8_bands or, a row at a time,
// cpu::mlx_int8_rows; matrices regrouped 16 rows at a time
// (CpuBackend::regroups_mlx_rows; kernels "gemv_mlx4x16_bf16", ...) always
// with x in 8 bits or 24, in groups of 16 rows, by cpu::mlx_x16_groups. Row
// dequantization (one embedding row per token) is the scalar specification,
// so it is bit-identical to the reference.
#include <algorithm>
#include <cstring>
#include <optional>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_math.h"
#include "cpu/gemv_scheduler.h"
#include "cpu/mlx_int8.h"
#include "cpu/mlx_x16.h"
#include "host/element_types.h"
#include "qwen35/mlx_affine.h"

namespace qwen35 {
namespace {

template <uint32_t Bits, typename E>
simd::MlxRows rows_of(const MlxMatrixRef& w, uint32_t cols, uint32_t group_size) {
  return simd::MlxRows{.codes = host_ptr<const uint32_t>(w.codes), .scales = host_ptr<const void>(w.scales),
                       .biases = host_ptr<const void>(w.biases), .scale_type = cpu::weight_type<E>(), .bits = Bits,
                       .cols = cols, .group_size = group_size};
}

// Floats of launch scratch that PreparedX takes, x in `digits` 8-bit digits (0: float).
size_t prepared_floats(size_t digits, uint32_t cols, uint32_t group_size) {
  return digits > 0 ? cpu::mlx_int8_activation_floats(cols, group_size, digits) : cols + cols / group_size;
}

// x as the rows' kernels read it: in code order with its group sums (float
// kernels), or in 8-bit digits (BackendOptions::int8_activations, and always
// for regrouped rows, in three with int24_activations; cpu/mlx_int8.h), in the
// launch scratch from `scratch` on.
class PreparedX {
 public:
  PreparedX(size_t digits, bool regrouped, uint32_t bits, const float* x, uint32_t cols, uint32_t group_size,
            float* scratch)
      : bits_(bits), regrouped_(regrouped) {
    if (digits > 0) {
      int8_ = cpu::quantize_mlx_activations(x, cols, bits, group_size, scratch, digits);
    } else {
      simd::mlx_prepare_x(bits, x, cols, group_size, scratch, scratch + cols);
      coded_ = scratch;
      sums_ = scratch + cols;
    }
  }
  // How a launch splits `rows` rows of `row_bytes` across threads: in rows,
  // or for regrouped rows in groups of 16.
  struct Walk {
    size_t units, bands, unit_bytes;
  };
  Walk walk(size_t rows, size_t row_bytes) const {
    if (regrouped_) return Walk{rows / kMlxGroupedRows, cpu::mlx_x16_bands(), kMlxGroupedRows * row_bytes};
    return Walk{rows, bands(row_bytes), row_bytes};
  }

  // Bands per share (row_bands.h) for rows of `row_bytes`. Fewer bands than
  // these read DRAM as if the kernels' arithmetic and their reads took turns
  // (twenty-fifth session, Xeon host, alternating runs). The integer kernels
  // read short rows of 8-bit codes two at a time, of 4-bit codes as many as
  // the host reads fastest (cpu::heavy_int8_gemv_bands), long ones one after
  // another: on the Xeon host four made mlx4 3584 x 1024 from DRAM 108-111 ->
  // 90-99 us and int8 decode 37.5-42.1 -> 46.5-46.8 tok/s (on the Zen 5 host
  // two are faster), where mlx8 measured the same in two and four (144-156
  // against 144-162 us). The float kernels, one row after another until
  // then, read short rows four at a time: mlx4 from DRAM 166-178 -> 113-121
  // us, mlx8 261-290 -> 177-190, decode 23.5-28.2 -> 33.0-39.9 and 16.5-16.6
  // -> 24.0-25.4 tok/s (on the Zen 5 host too four beat two for mlx4: 71-77
  // against 82-84 us); long rows two at a time, as the dense gemvs read
  // theirs (no long MLX rows measured: none at 0.8B).
  size_t bands(size_t row_bytes) const {
    const bool short_rows = row_bytes <= cpu::kShortRowMaxBytes;
    if (!int8_) return short_rows ? 4 : 2;
    if (!short_rows) return 1;
    return bits_ == 4 ? cpu::heavy_int8_gemv_bands() : 2;
  }

  // y[r] = base[r] (0 if null) + row r of w . x for the rows of passes p.
  void rows(const simd::MlxRows& w, const float* base, float* y, const cpu::RowPasses& p) const {
    if (regrouped_) return cpu::mlx_x16_groups(w, *int8_, base, y, p);
    if (!int8_) return simd::mlx_gemv_bands(w, coded_, sums_, base, y, p);
    if (p.bands > 1) return cpu::mlx_int8_bands(w, *int8_, base, y, p);
    cpu::mlx_int8_rows(w, *int8_, base, y, p.begin + p.first, p.begin + p.last);
  }

 private:
  uint32_t bits_;
  bool regrouped_;
  const float* coded_ = nullptr;
  const float* sums_ = nullptr;
  std::optional<cpu::MlxInt8Activations> int8_;
};

// The kernels of one layout: Bits-bit codes with scales and biases of E,
// row-major or (Regrouped) regrouped 16 rows at a time.
template <uint32_t Bits, typename E, bool Regrouped>
struct MlxKernels {
  // x's 8-bit digits for the kernels (CpuBackend::x_digits; 0: float).
  static size_t digits(const CpuBackend& cpu) { return cpu.x_digits(Regrouped); }
  // x for a launch with `cols` columns, in `scratch` (prepared_floats(digits(cpu), ...)).
  static PreparedX prepare(CpuBackend& cpu, const float* x, uint32_t cols, uint32_t group_size, float* scratch) {
    return PreparedX(digits(cpu), Regrouped, Bits, x, cols, group_size, scratch);
  }

  static void gemv(CpuBackend& cpu, const MlxGemvArgs& a) {
    const PreparedX x = prepare(cpu, host_ptr<const float>(a.x), a.cols, a.group_size,
                                cpu.launch_scratch(prepared_floats(digits(cpu), a.cols, a.group_size)));
    const simd::MlxRows w = rows_of<Bits, E>(a.w, a.cols, a.group_size);
    float* y = host_ptr<float>(a.y);
    const auto walk = x.walk(a.rows, size_t{a.cols} * Bits / 8);
    const size_t segments[] = {walk.units};
    cpu::parallel_row_passes(cpu.pool(), segments, walk.bands, walk.unit_bytes,
                             [&](size_t, const cpu::RowPasses& p) { x.rows(w, nullptr, y, p); });
  }

  static void gemv_pair(CpuBackend& cpu, const MlxGemvPairArgs& a) {
    const PreparedX x = prepare(cpu, host_ptr<const float>(a.x), a.cols, a.group_size,
                                cpu.launch_scratch(prepared_floats(digits(cpu), a.cols, a.group_size)));
    const simd::MlxRows w0 = rows_of<Bits, E>(a.w0, a.cols, a.group_size);
    const simd::MlxRows w1 = rows_of<Bits, E>(a.w1, a.cols, a.group_size);
    float* y0 = host_ptr<float>(a.y0);
    float* y1 = host_ptr<float>(a.y1);
    // Both matrices split across all threads.
    const size_t row_bytes = size_t{a.cols} * Bits / 8;
    const auto walk0 = x.walk(a.rows0, row_bytes), walk1 = x.walk(a.rows1, row_bytes);
    const size_t segments[] = {walk0.units, walk1.units};
    cpu::parallel_row_passes(cpu.pool(), segments, walk0.bands, walk0.unit_bytes,
                             [&](size_t segment, const cpu::RowPasses& p) {
                               x.rows(segment == 0 ? w0 : w1, nullptr, segment == 0 ? y0 : y1, p);
                             });
  }

  static void gemv_silu_gate(CpuBackend& cpu, const MlxGemvSiluGateArgs& a) {
    float* act = cpu.launch_scratch(a.cols + prepared_floats(digits(cpu), a.cols, a.group_size));
    simd::silu_mul(host_ptr<const float>(a.gate), host_ptr<const float>(a.up), act, a.cols);
    const PreparedX x = prepare(cpu, act, a.cols, a.group_size, act + a.cols);
    const simd::MlxRows w = rows_of<Bits, E>(a.w, a.cols, a.group_size);
    const float* residual = a.residual.is_null() ? nullptr : host_ptr<const float>(a.residual);
    float* y = host_ptr<float>(a.y);
    const auto walk = x.walk(a.rows, size_t{a.cols} * Bits / 8);
    const size_t segments[] = {walk.units};
    cpu::parallel_row_passes(cpu.pool(), segments, walk.bands, walk.unit_bytes,
                             [&](size_t, const cpu::RowPasses& p) { x.rows(w, residual, y, p); });
  }

  static void row_to_f32(const MlxRowToF32Args& a) {
    float* y = host_ptr<float>(a.y);
    if constexpr (Regrouped) {
      const auto* grouped = host_ptr<const std::byte>(a.w.codes);
      const MlxRegroupedLayout layout({.bits = Bits, .group_size = a.group_size}, sizeof(typename E::Storage), a.cols);
      const auto load = [&](size_t at) {
        typename E::Storage v;
        std::memcpy(&v, grouped + at, sizeof(v));
        return E::load(v);
      };
      for (uint32_t c = 0; c < a.cols; ++c) {
        const size_t group = c / a.group_size;
        y[c] = mlx_dequantize(load(layout.scale_byte(a.row, group)), mlx_regrouped_code(grouped, layout, a.row, c),
                              load(layout.bias_byte(a.row, group)));
      }
    } else {
      const size_t groups = a.cols / a.group_size;
      const uint32_t* row_codes = host_ptr<const uint32_t>(a.w.codes) + size_t{a.row} * (a.cols * Bits / 32);
      const auto* scales = host_ptr<const typename E::Storage>(a.w.scales);
      const auto* biases = host_ptr<const typename E::Storage>(a.w.biases);
      for (uint32_t c = 0; c < a.cols; ++c) {
        const size_t g = size_t{a.row} * groups + c / a.group_size;
        y[c] = mlx_dequantize(E::load(scales[g]), mlx_code(row_codes, c, Bits), E::load(biases[g]));
      }
    }
  }

  static void register_in(CpuBackend& cpu) {
    const std::string s =
        "mlx" + std::to_string(Bits) + (Regrouped ? "x16" : "") + "_" + std::string(E::kSuffix);
    cpu.register_kernel<MlxGemvArgs>("gemv_" + s, [&cpu](const MlxGemvArgs& a) { gemv(cpu, a); });
    cpu.register_kernel<MlxGemvPairArgs>("gemv_pair_" + s, [&cpu](const MlxGemvPairArgs& a) { gemv_pair(cpu, a); });
    cpu.register_kernel<MlxGemvSiluGateArgs>("gemv_silu_gate_" + s,
                                             [&cpu](const MlxGemvSiluGateArgs& a) { gemv_silu_gate(cpu, a); });
    cpu.register_kernel<MlxRowToF32Args>("row_to_f32_" + s, row_to_f32);
  }
};

template <typename E>
void register_for(CpuBackend& cpu) {
  MlxKernels<4, E, false>::register_in(cpu);
  MlxKernels<8, E, false>::register_in(cpu);
  MlxKernels<4, E, true>::register_in(cpu);
  MlxKernels<8, E, true>::register_in(cpu);
}

}  // namespace

void register_cpu_mlx_kernels(CpuBackend& cpu) {
  register_for<F32Element>(cpu);
  register_for<BF16Element>(cpu);
  register_for<F16Element>(cpu);
}

}  // namespace qwen35
