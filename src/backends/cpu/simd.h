// The CPU backend's vector primitives, compiled by Highway for every target
// this build supports (scalar, SSE4, AVX2, AVX-512, NEON, ...) and chosen at run
// time for the CPU present, as the operating system enables it (Highway checks
// XCR0, so a CPUID flag alone never selects an instruction set).
// Each has a plain scalar twin in the reference backend that its tests use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace qwen35::simd {

enum class WeightType : uint8_t { kF32, kBF16, kF16 };

// y[r] = base[r] + W[r, :] . x for r in [row_begin, row_end); W rows of `cols`
// elements of `type`. base may be null (then 0); y may alias base.
void gemv_rows(WeightType type, const void* w, const float* x, const float* base, float* y, size_t row_begin,
               size_t row_end, size_t cols);

// a . b over n floats; and the same with `a` stored as `type`.
float dot(WeightType type, const void* a, const float* b, size_t n);
float sum_squares(const float* x, size_t n);
// y[i] = x[i] * scale * w[i].
void scale_mul(const float* x, float scale, const float* w, float* y, size_t n);
// y[i] = y[i] * keep + p * x[i], x stored as `type` (the online-softmax update).
void scale_add(WeightType type, const void* x, float keep, float p, float* y, size_t n);
// y[i] = silu(gate[i]) * up[i].
void silu_mul(const float* gate, const float* up, float* y, size_t n);
// One Gated DeltaNet head, state stored as S^T [dv, dk] (see GdnRecurrentArgs).
void gdn_head(float* state, const float* q, const float* k, const float* v, float decay, float beta, float* out,
              size_t dk, size_t dv);

// Sum of n floats read as `streams` (1..8) equal consecutive parts walked
// side by side, optionally prefetching `prefetch_bytes` ahead in each: the
// read-bandwidth probe's access patterns.
float read_streams(const float* p, size_t n, size_t streams, size_t prefetch_bytes);

// The target the dispatcher picks now ("AVX3", "AVX2", "NEON", "SCALAR", ...).
std::string current_target();
// For tests: every target compiled in and supported here, as Highway bit masks,
// and forcing one of them (0 restores normal dispatch).
std::vector<int64_t> available_targets();
std::string target_name(int64_t target);
void force_target(int64_t target);

}  // namespace qwen35::simd
