// What the files implementing simd.h share, once per Highway target: the
// float vector type, the storage loads (float_loads-inl.h) and a lane sum.
// Included by each target's pass of a foreach_target file, hence the toggle
// guard instead of #pragma once.
#if defined(QWEN35_CPU_SIMD_COMMON_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QWEN35_CPU_SIMD_COMMON_INL_H_
#undef QWEN35_CPU_SIMD_COMMON_INL_H_
#else
#define QWEN35_CPU_SIMD_COMMON_INL_H_
#endif

#include "hwy/highway.h"
#include "cpu/float_loads-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qwen35::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

using cpu::HWY_NAMESPACE::load_f32;
using cpu::HWY_NAMESPACE::to_f32;

HWY_INLINE float sum(DF df, VF v) { return hn::GetLane(hn::SumOfLanes(df, v)); }

}  // namespace qwen35::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // QWEN35_CPU_SIMD_COMMON_INL_H_
