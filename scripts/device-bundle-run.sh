#!/usr/bin/env bash
# Runs on the GPU machine inside the bundle that scripts/device-bundle.sh made:
# the CUDA tests, the GGUF kernels against their specification, the conformance
# suite and the goldens on `cuda`, compute-sanitizer over the GGUF and
# conformance checks, the same tests on `vulkan` through NVIDIA's Vulkan driver
# (where its loader is carried), the GPU gemv bench, then the decode bench in
# every weight format.
# Each step runs under a deadline and a summary
# closes the output.
#   usage: .devbundle/device-bundle-run.sh [SECONDS]   (default 300)
# Subsets, to fit a short lease: BENCH_DTYPES and BENCH_9B_DTYPES (weight formats
# of the 0.8B and 9B decode benches), VULKAN=0, MEMCHECK=0 (both memchecks),
# MEMCHECK_CONFORMANCE=0, GEMV_EXACT=0, GEMV_FILTER (the gemv bench's cases),
# BENCH_FLAGS (default "-n 64 --profile").
# Comparisons in one lease: BENCH_VARIANTS runs the gemv bench and every decode
# bench once per variant, each a set of environment settings (variants apart by
# spaces, settings within one by commas; "default" sets none), e.g.
# BENCH_VARIANTS="QWEN35_CUDA_PDL=1 default". TEST_SETTINGS sets the test steps' environment.
set -uo pipefail
cd "$(dirname "$0")"
deadline=$((SECONDS + ${1:-300}))
source ./steps.sh
export LD_LIBRARY_PATH=$PWD/lib QWEN35_SHARED_DIR=$PWD/shared PATH=$PATH:/usr/local/cuda/bin
logs=$(mktemp -d)  # the whole output is the log; these only feed the skip check

# gtest LOG COMMAND...: a test binary whose output goes to $logs/LOG.log too; with
# a device nothing may skip, so a skipped test fails the step.
gtest() {
  local log=$logs/$1.log
  shift
  "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  if grep -q '^\[  SKIPPED \]' "$log"; then
    echo "tests were skipped: no usable device?"
    return 3
  fi
  return "$rc"
}
export -f gtest
export logs
# TEST_SETTINGS: environment settings (apart by commas) for the test steps, e.g. QWEN35_CUDA_PDL=1.
IFS=, read -ra test_settings <<<"${TEST_SETTINGS:-}"
t() { local name=$1 limit=$2 log=$3; shift 3; step "$name" "$limit" env "${test_settings[@]}" bash -c 'gtest "$@"' _ "$log" "$@"; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader

t "cuda_tests" 60 cuda_tests bin/cuda_tests --gtest_brief=1
t "GGUF and MLX on cuda" 60 gguf_cuda bin/format_tests --gtest_filter='*GgufGpuBackend*/cuda:*OnGpu*/cuda' --gtest_brief=1
t "GGUF kernels on cuda, exact path" 60 gguf_cuda_exact env QWEN35_CUDA_GGUF_EXACT=1 \
  bin/format_tests --gtest_filter='*GgufGpuBackend*/cuda' --gtest_brief=1
t "conformance on cuda" 90 conformance_cuda bin/backend_tests --gtest_filter='*/cuda' --gtest_brief=1
t "goldens on cuda" 90 goldens_cuda bin/model_tests --gtest_filter='*cuda*' --gtest_brief=1
[ "${MEMCHECK:-1}" = 1 ] && step "memcheck GGUF kernels" 60 compute-sanitizer --tool memcheck --print-limit 20 --error-exitcode 1 \
  bin/format_tests --gtest_filter='*GgufGpuBackend*/cuda' --gtest_brief=1
[ "${MEMCHECK:-1}" = 1 ] && [ "${MEMCHECK_CONFORMANCE:-1}" = 1 ] && step "memcheck conformance" 75 compute-sanitizer --tool memcheck --print-limit 20 --error-exitcode 1 \
  bin/backend_tests --gtest_filter='*/cuda' --gtest_brief=1

# NVIDIA's Vulkan driver, where the device page's loader packages were carried
# in .gl (the bundle's libvulkan is the build machine's loader).
icd=$(ls /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
  /etc/vulkan/icd.d/nvidia_icd.json 2>/dev/null | head -1)
if [ -n "$icd" ] && [ "${VULKAN:-1}" = 1 ]; then
  export VK_DRIVER_FILES=$icd
  t "vulkan_tests" 60 vulkan_tests bin/vulkan_tests --gtest_brief=1
  t "GGUF and MLX on vulkan" 60 gguf_vulkan bin/format_tests --gtest_filter='*GgufGpuBackend*/vulkan:*OnGpu*/vulkan' --gtest_brief=1
  t "conformance on vulkan" 90 conformance_vulkan bin/backend_tests --gtest_filter='*/vulkan' --gtest_brief=1
  t "goldens on vulkan" 60 goldens_vulkan bin/model_tests --gtest_filter='*vulkan*' --gtest_brief=1
else
  summary+=("note    no NVIDIA Vulkan driver (nvidia_icd.json) found: the Vulkan steps did not run")
fi

read -ra variants <<<"${BENCH_VARIANTS:-default}"
# vstep NAME LIMIT COMMAND...: step once per variant, under that variant's settings.
vstep() {
  local name=$1 limit=$2 v
  shift 2
  for v in "${variants[@]}"; do
    local settings=()
    [ "$v" != default ] && IFS=, read -ra settings <<<"$v"
    step "$name [$v]" "$limit" env "${settings[@]}" "$@"
  done
}

# The gemvs alone on the 9B and 0.8B shapes, GGUF through both paths.
if [ -x bin/gpu_gemv_bench ]; then
  vstep "gemv bench" 90 bin/gpu_gemv_bench --benchmark_filter="${GEMV_FILTER:-.}"
  [ "${GEMV_EXACT:-1}" = 1 ] && step "gemv bench, GGUF exact path" 90 env QWEN35_CUDA_GGUF_EXACT=1 bin/gpu_gemv_bench --benchmark_filter='dtype:[1-5]/'
fi

read -ra flags <<<"${BENCH_FLAGS:--n 64 --profile}"
bench=(bin/qwen35 bench --backend cuda "${flags[@]}")
for dtype in ${BENCH_DTYPES:-bf16 q8_0 q6_k q5_k q4_k q4_0}; do
  vstep "bench 0.8b $dtype" 60 "${bench[@]}" --preset 0.8b --dtype "$dtype"
done
for dtype in ${BENCH_9B_DTYPES:-q4_k}; do
  vstep "bench 9b $dtype" 150 "${bench[@]}" --preset 9b --dtype "$dtype"
done
[ -n "$icd" ] && [ "${VULKAN:-1}" = 1 ] && step "bench 0.8b bf16 on vulkan" 60 bin/qwen35 bench --backend vulkan -n 64 --preset 0.8b --dtype bf16
finish
