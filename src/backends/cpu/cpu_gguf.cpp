// GGUF block-weight kernels on the CPU (layouts in qwen35/gguf_quants.h):
// gemv, the gate/up pair and the SwiGLU-down with residual, rows split across
// the thread pool. Highway (compiled per target, chosen at run time): four rows
// (from four bands of a thread's share of the rows; row_bands.h) walk side by
// side so each load of x serves four; codes are widened
// u8/i8 -> i32 -> f32 in registers (Q8_0, Q4_0, Q4_K) or first assembled on
// whole byte vectors into a small per-block buffer (Q5_K, Q6_K), then one
// accumulator per (sub-)block is scaled once at its end; the K-quant mins use
// sums of x per 32 computed once per launch. The K-quants' per-block scales
// are decoded and converted on vectors too: done a scalar at a time they took
// a third of the Q4_K gemv and half of the Q6_K one. Row dequantization
// (embedding lookup) is the scalar specification, bit-identical to the reference.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/cpu_gguf.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "cpu/gguf_blocks-inl.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_math.h"
#include "cpu/gemv_scheduler.h"
#include "cpu/gguf_x16.h"
#include "cpu/row_bands.h"
#include "cpu/simd.h"
#include "qwen35/dense_weights.h"
#include "qwen35/gguf_quants.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::gguf_cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Each kernel walks R rows side by side, so that every load of x serves R
// rows and R independent accumulator chains are in flight; out[r] = row r . x.
template <size_t R>
void rows_q8_0(const GgufBlockQ8_0* const* b, const float* x, size_t blocks, float* out) {
  const DF df;
  const size_t n = hn::Lanes(df);
  hn::Vec<DF> total[R];
  for (size_t r = 0; r < R; ++r) total[r] = hn::Zero(df);
  for (size_t i = 0; i < blocks; ++i, x += 32) {
    prefetch_next_rows<R>(b, blocks, i);
    hn::Vec<DF> acc[R];
    for (size_t r = 0; r < R; ++r) acc[r] = hn::Zero(df);
    for (size_t k = 0; k < 32; k += n) {
      const auto xv = hn::LoadU(df, x + k);
      for (size_t r = 0; r < R; ++r) {
        acc[r] = hn::MulAdd(hn::ConvertTo(df, hn::PromoteTo(DI(), hn::LoadU(DI8(), b[r][i].qs + k))), xv, acc[r]);
      }
    }
    HWY_ALIGN float d[4];
    block_scales<R>(b, i, d);
    for (size_t r = 0; r < R; ++r) total[r] = hn::MulAdd(acc[r], hn::Set(df, d[r]), total[r]);
  }
  lane_sums<R>(df, total, out);
}

template <size_t R>
void rows_q4_0(const GgufBlockQ4_0* const* b, const float* x, size_t blocks, float* out) {
  const DF df;
  const size_t n = hn::Lanes(df);
  const auto table = nibble_table<-8>();
  hn::Vec<DF> total[R];
  for (size_t r = 0; r < R; ++r) total[r] = hn::Zero(df);
  for (size_t i = 0; i < blocks; ++i, x += 32) {
    prefetch_next_rows<R>(b, blocks, i);
    hn::Vec<DF> acc[R];
    for (size_t r = 0; r < R; ++r) acc[r] = hn::Zero(df);
    for (size_t k = 0; k < 16; k += n) {
      const auto x_lo = hn::LoadU(df, x + k);
      const auto x_hi = hn::LoadU(df, x + 16 + k);
      for (size_t r = 0; r < R; ++r) {
        const auto codes = bytes_at(b[r][i].qs + k);
        acc[r] = hn::MulAdd(nibble_values<-8>(codes, table), x_lo, acc[r]);
        acc[r] = hn::MulAdd(nibble_values<-8>(hn::ShiftRight<4>(codes), table), x_hi, acc[r]);
      }
    }
    HWY_ALIGN float d[4];
    block_scales<R>(b, i, d);
    for (size_t r = 0; r < R; ++r) total[r] = hn::MulAdd(acc[r], hn::Set(df, d[r]), total[r]);
  }
  lane_sums<R>(df, total, out);
}

template <size_t R>
void rows_q4_k(const GgufBlockQ4K* const* b, const float* x, const float* x_sums, size_t blocks, float* out) {
  const DF df;
  const size_t n = hn::Lanes(df);
  const auto table = nibble_table<0>();
  hn::Vec<DF> total[R], mins[R];
  for (size_t r = 0; r < R; ++r) total[r] = mins[r] = hn::Zero(df);
  for (size_t i = 0; i < blocks; ++i, x += 256, x_sums += 8) {
    prefetch_next_rows<R>(b, blocks, i);
    // Per row, the eight sub-block scales d * sc and the block's min term, once per block.
    HWY_ALIGN float scale[R][16];  // d * sc, then dmin * m
    k4_float_terms<R>(b, i, x_sums, scale, mins);
    for (int c = 0; c < 4; ++c) {
      hn::Vec<DF> acc_lo[R], acc_hi[R];
      for (size_t r = 0; r < R; ++r) acc_lo[r] = acc_hi[r] = hn::Zero(df);
      for (size_t l = 0; l < 32; l += n) {
        const auto x_lo = hn::LoadU(df, x + 64 * c + l);
        const auto x_hi = hn::LoadU(df, x + 64 * c + 32 + l);
        for (size_t r = 0; r < R; ++r) {
          const auto codes = bytes_at(b[r][i].qs + 32 * c + l);
          acc_lo[r] = hn::MulAdd(nibble_values<0>(codes, table), x_lo, acc_lo[r]);
          acc_hi[r] = hn::MulAdd(nibble_values<0>(hn::ShiftRight<4>(codes), table), x_hi, acc_hi[r]);
        }
      }
      for (size_t r = 0; r < R; ++r) {
        total[r] = hn::MulAdd(acc_lo[r], hn::Set(df, scale[r][2 * c]), total[r]);
        total[r] = hn::MulAdd(acc_hi[r], hn::Set(df, scale[r][2 * c + 1]), total[r]);
      }
    }
  }
  k4_results<R>(total, mins, out);
}

// Q5_K in two steps per block: the 256 five-bit codes assembled on whole byte
// vectors, then the Q4_K-style product with sub-block scales and mins.
template <size_t R>
void rows_q5_k(const GgufBlockQ5K* const* b, const float* x, const float* x_sums, size_t blocks, float* out) {
  const DF df;
  const size_t n = hn::Lanes(df);
  hn::Vec<DF> total[R], mins[R];
  for (size_t r = 0; r < R; ++r) total[r] = mins[r] = hn::Zero(df);
  HWY_ALIGN uint8_t q[R][256];
  for (size_t i = 0; i < blocks; ++i, x += 256, x_sums += 8) {
    prefetch_next_rows<R>(b, blocks, i);
    HWY_ALIGN float scale[R][16];  // d * sc, then dmin * m
    for (size_t r = 0; r < R; ++r) {
      decode_q5_k_chunk<0>(b[r][i], q[r]);
      decode_q5_k_chunk<1>(b[r][i], q[r]);
      decode_q5_k_chunk<2>(b[r][i], q[r]);
      decode_q5_k_chunk<3>(b[r][i], q[r]);
    }
    k4_float_terms<R>(b, i, x_sums, scale, mins);
    for (size_t j = 0; j < 8; ++j) {
      hn::Vec<DF> acc[R];
      for (size_t r = 0; r < R; ++r) acc[r] = hn::Zero(df);
      for (size_t l = 32 * j; l < 32 * j + 32; l += n) {
        const auto xv = hn::LoadU(df, x + l);
        for (size_t r = 0; r < R; ++r) acc[r] = hn::MulAdd(to_float(bytes_at(q[r] + l)), xv, acc[r]);
      }
      for (size_t r = 0; r < R; ++r) total[r] = hn::MulAdd(acc[r], hn::Set(df, scale[r][j]), total[r]);
    }
  }
  k4_results<R>(total, mins, out);
}

template <size_t R>
void rows_q6_k(const GgufBlockQ6K* const* b, const float* x, size_t blocks, float* out) {
  const DF df;
  const size_t n = hn::Lanes(df);
  hn::Vec<DF> total[R];
  for (size_t r = 0; r < R; ++r) total[r] = hn::Zero(df);
  HWY_ALIGN int8_t q[R][256];
  for (size_t i = 0; i < blocks; ++i, x += 256) {
    prefetch_next_rows<R>(b, blocks, i);
    HWY_ALIGN float scale[R][16];  // d * scales[g], once per block
    HWY_ALIGN float d[4];
    block_scales<R>(b, i, d);
    for (size_t r = 0; r < R; ++r) {
      decode_q6_k<32>(b[r][i], reinterpret_cast<uint8_t*>(q[r]));
      for (size_t g = 0; g < 16; g += n) {
        const auto scales = hn::PromoteTo(DI(), hn::LoadU(DI8(), b[r][i].scales + g));
        hn::StoreU(hn::Mul(hn::Set(df, d[r]), hn::ConvertTo(df, scales)), df, scale[r] + g);
      }
    }
    for (size_t g = 0; g < 16; ++g) {
      hn::Vec<DF> acc[R];
      for (size_t r = 0; r < R; ++r) acc[r] = hn::Zero(df);
      for (size_t l = 16 * g; l < 16 * g + 16; l += n) {
        const auto xv = hn::LoadU(df, x + l);
        for (size_t r = 0; r < R; ++r) {
          acc[r] = hn::MulAdd(hn::ConvertTo(df, hn::PromoteTo(DI(), hn::LoadU(DI8(), q[r] + l))), xv, acc[r]);
        }
      }
      for (size_t r = 0; r < R; ++r) total[r] = hn::MulAdd(acc[r], hn::Set(df, scale[r][g]), total[r]);
    }
  }
  lane_sums<R>(df, total, out);
}

void RowsQ8_0(const Rows& m, const float* base, float* y, const cpu::RowPasses& p) {
  rows_t<GgufBlockQ8_0, kFloatRowBands>(m, base, y, p, [&](auto rows_n, const GgufBlockQ8_0* const* b, float* out) {
    rows_q8_0<decltype(rows_n)::value>(b, m.x, m.cols / 32, out);
  });
}
void RowsQ4_0(const Rows& m, const float* base, float* y, const cpu::RowPasses& p) {
  rows_t<GgufBlockQ4_0, kFloatRowBands>(m, base, y, p, [&](auto rows_n, const GgufBlockQ4_0* const* b, float* out) {
    rows_q4_0<decltype(rows_n)::value>(b, m.x, m.cols / 32, out);
  });
}
void RowsQ4K(const Rows& m, const float* base, float* y, const cpu::RowPasses& p) {
  rows_t<GgufBlockQ4K, kFloatRowBands>(m, base, y, p, [&](auto rows_n, const GgufBlockQ4K* const* b, float* out) {
    rows_q4_k<decltype(rows_n)::value>(b, m.x, m.x_sums, m.cols / 256, out);
  });
}
void RowsQ5K(const Rows& m, const float* base, float* y, const cpu::RowPasses& p) {
  rows_t<GgufBlockQ5K, kFloatRowBands>(m, base, y, p, [&](auto rows_n, const GgufBlockQ5K* const* b, float* out) {
    rows_q5_k<decltype(rows_n)::value>(b, m.x, m.x_sums, m.cols / 256, out);
  });
}
void RowsQ6K(const Rows& m, const float* base, float* y, const cpu::RowPasses& p) {
  rows_t<GgufBlockQ6K, kFloatRowBands>(m, base, y, p, [&](auto rows_n, const GgufBlockQ6K* const* b, float* out) {
    rows_q6_k<decltype(rows_n)::value>(b, m.x, m.cols / 256, out);
  });
}

}  // namespace qwen35::gguf_cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qwen35 {
namespace gguf_cpu {

HWY_EXPORT(RowsQ8_0);
HWY_EXPORT(RowsQ4_0);
HWY_EXPORT(RowsQ4K);
HWY_EXPORT(RowsQ5K);
HWY_EXPORT(RowsQ6K);

namespace {

// How a launch splits a matrix across threads: in rows, or for the regrouped
// layouts (Q4_0x16, Q8_0x16, Q4_Kx16, Q5_Kx16, Q6_Kx16) in groups of 16 rows.
struct Schedule {
  size_t units, bands, unit_bytes;
};
Schedule schedule(DType type, size_t digits, uint32_t rows, uint32_t cols) {
  if (is_regrouped_dtype(type)) return Schedule{rows / 16u, x16_bands(type, digits), 16 * dtype_bytes(type, cols)};
  return Schedule{rows, row_bands(type, digits > 0), dtype_bytes(type, cols)};
}

// y[r] = base[r] + W[r, :] . m.x for the rows of passes p (in
// row_bands(type, m.int8) bands; for the regrouped layouts passes of
// groups), by the target's kernel for `type`.
void run_rows(DType type, const Rows& m, const float* base, float* y, const cpu::RowPasses& p) {
  if (is_regrouped_dtype(type)) return run_x16_groups(type, m.w, *m.int8, m.cols, base, y, p);
  if (m.int8) return run_int8_rows(type, m, base, y, p);
  switch (type) {
    case DType::kQ8_0: return HWY_DYNAMIC_DISPATCH(RowsQ8_0)(m, base, y, p);
    case DType::kQ4_0: return HWY_DYNAMIC_DISPATCH(RowsQ4_0)(m, base, y, p);
    case DType::kQ4_K: return HWY_DYNAMIC_DISPATCH(RowsQ4K)(m, base, y, p);
    case DType::kQ5_K: return HWY_DYNAMIC_DISPATCH(RowsQ5K)(m, base, y, p);
    default: return HWY_DYNAMIC_DISPATCH(RowsQ6K)(m, base, y, p);
  }
}

// The matrices whose kernels take x in 24 bits: the regrouped layouts and
// Q6_K, row-major (cpu_gguf_int8.cpp). The other row-major ones take float x
// (odd row counts, --no-regroup, and Q8_0, whose float kernel is the faster).
bool takes_int24(DType type) { return is_regrouped_dtype(type) || type == DType::kQ6_K; }

bool needs_sums(DType type) { return type == DType::kQ4_K || type == DType::kQ5_K; }

// sums[g] = sum of x[32 g, 32 g + 32), added in order, for g < cols / 32: the
// K-quants' min terms.
void sums_per_32(const float* x, size_t cols, float* sums) {
  for (size_t g = 0; g < cols / 32; ++g) {
    float s = 0;
    for (size_t k = 0; k < 32; ++k) s += x[32 * g + k];
    sums[g] = s;
  }
}

// What a launch computes from x once for all its rows: x in 8 bits when the
// backend runs integer kernels, else the sums of x per 32 where the type uses them.
class PreparedX {
 public:
  // digits: 0 for float x, else x's 8-bit digits (cpu/int8_activations.h).
  static size_t floats(size_t digits, uint32_t cols) {
    return digits > 0 ? cpu::int8_activation_floats(cols, digits) : cols / 32;
  }

  PreparedX(DType type, size_t digits, const float* x, uint32_t cols, float* scratch) : x_(x) {
    if (digits > 0) {
      int8_ = cpu::quantize_activations(x, cols, scratch, digits);
    } else if (needs_sums(type)) {
      sums_per_32(x, cols, scratch);
      sums_ = scratch;
    }
  }

  Rows rows(DType type, DevicePtr w, uint32_t cols) const {
    return Rows{.w = host_ptr<const std::byte>(w), .row_bytes = dtype_bytes(type, cols), .cols = cols, .x = x_,
                .x_sums = sums_, .int8 = int8_ ? &*int8_ : nullptr};
  }

 private:
  const float* x_;
  const float* sums_ = nullptr;
  std::optional<cpu::Int8Activations> int8_;
};


void gemv(CpuBackend& cpu, DType type, const GemvArgs& a) {
  const size_t digits = cpu.x_digits(takes_int24(type));
  float* scratch = cpu.launch_scratch(PreparedX::floats(digits, a.cols));
  const PreparedX x(type, digits, host_ptr<const float>(a.x), a.cols, scratch);
  const Rows m = x.rows(type, a.w, a.cols);
  float* y = host_ptr<float>(a.y);
  const Schedule s = schedule(type, digits, a.rows, a.cols);
  const size_t segments[] = {s.units};
  cpu::parallel_row_passes(cpu.pool(), segments, s.bands, s.unit_bytes,
                           [&](size_t, const cpu::RowPasses& p) { run_rows(type, m, nullptr, y, p); });
}

void gemv_pair(CpuBackend& cpu, DType type, const GemvPairArgs& a) {
  const size_t digits = cpu.x_digits(takes_int24(type));
  float* scratch = cpu.launch_scratch(PreparedX::floats(digits, a.cols));
  const PreparedX x(type, digits, host_ptr<const float>(a.x), a.cols, scratch);
  const Rows m0 = x.rows(type, a.w0, a.cols);
  const Rows m1 = x.rows(type, a.w1, a.cols);
  float* y0 = host_ptr<float>(a.y0);
  float* y1 = host_ptr<float>(a.y1);
  // Both matrices split across all threads.
  const Schedule s0 = schedule(type, digits, a.rows0, a.cols), s1 = schedule(type, digits, a.rows1, a.cols);
  const size_t segments[] = {s0.units, s1.units};
  cpu::parallel_row_passes(cpu.pool(), segments, s0.bands, s0.unit_bytes,
                           [&](size_t segment, const cpu::RowPasses& p) {
                             run_rows(type, segment == 0 ? m0 : m1, nullptr, segment == 0 ? y0 : y1, p);
                           });
}

void gemv_silu_gate(CpuBackend& cpu, DType type, const GemvSiluGateArgs& a) {
  const size_t digits = cpu.x_digits(takes_int24(type));
  float* act = cpu.launch_scratch(size_t{a.cols} + PreparedX::floats(digits, a.cols));
  simd::silu_mul(host_ptr<const float>(a.gate), host_ptr<const float>(a.up), act, a.cols);
  const PreparedX x(type, digits, act, a.cols, act + a.cols);
  const Rows m = x.rows(type, a.w, a.cols);
  const float* residual = a.residual.is_null() ? nullptr : host_ptr<const float>(a.residual);
  float* y = host_ptr<float>(a.y);
  const Schedule s = schedule(type, digits, a.rows, a.cols);
  const size_t segments[] = {s.units};
  cpu::parallel_row_passes(cpu.pool(), segments, s.bands, s.unit_bytes,
                           [&](size_t, const cpu::RowPasses& p) { run_rows(type, m, residual, y, p); });
}

}  // namespace
}  // namespace gguf_cpu

void register_cpu_gguf_kernels(CpuBackend& cpu) {
  for (DType type : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kQ4_0x16,
                     DType::kQ8_0x16, DType::kQ4_Kx16, DType::kQ5_Kx16, DType::kQ6_Kx16}) {
    const std::string s = dtype_lower_name(type);
    cpu.register_kernel<GemvArgs>("gemv_" + s, [&cpu, type](const GemvArgs& a) { gguf_cpu::gemv(cpu, type, a); });
    cpu.register_kernel<GemvPairArgs>("gemv_pair_" + s,
                                      [&cpu, type](const GemvPairArgs& a) { gguf_cpu::gemv_pair(cpu, type, a); });
    cpu.register_kernel<GemvSiluGateArgs>(
        "gemv_silu_gate_" + s, [&cpu, type](const GemvSiluGateArgs& a) { gguf_cpu::gemv_silu_gate(cpu, type, a); });
    cpu.register_kernel<RowToF32Args>("row_to_f32_" + s, [type](const RowToF32Args& a) {
      if (is_regrouped_dtype(type)) {
        return gguf_dequantize_regrouped_row(type, host_ptr<const std::byte>(a.w), a.cols / dtype_block_size(type),
                                             a.row, host_ptr<float>(a.y));
      }
      gguf_dequantize_row(type, host_ptr<const std::byte>(a.w) + size_t{a.row} * dtype_bytes(type, a.cols),
                          host_ptr<float>(a.y), a.cols);
    });
  }
}

}  // namespace qwen35
#endif  // HWY_ONCE
