#!/usr/bin/env bash
# One pass on a GPU machine (NVIDIA, CUDA 13, possibly no network): builds the
# CUDA backend for sm_90 in build-cuda, runs every test that touches it (the
# CUDA-only tests, the conformance suite and the goldens on `cuda`), then the
# decode bench on `cuda`. Each step runs under `timeout`, so the whole script
# ends within 8 minutes (a deadline caps every step; setup 45 s, configure 60,
# build 210, tests 120, benches 40-120 each); a summary closes the output.
#   usage: scripts/device-check.sh [CMAKE_CUDA_ARCHITECTURES]   (default 90)
set -uo pipefail
cd "$(dirname "$0")/.."
arch=${1:-90}
jobs=$(nproc)
deadline=$((SECONDS + 470))  # the whole script: under 8 minutes
source scripts/steps.sh

echo "=== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "nvidia-smi: not available"
nproc

# Tools: install what scripts/setup.sh names where apt works (it skips what is
# installed); without a network, carry on with whatever is already here.
if command -v apt-get >/dev/null 2>&1; then
  if timeout --kill-after=5 45 ./scripts/setup.sh; then
    summary+=("ok      setup.sh")
  else
    summary+=("note    setup.sh failed (offline?): continued with the installed packages")
  fi
fi
nvcc=$(command -v nvcc || true)
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
for tool in cmake g++ make "$nvcc"; do
  if [ -z "$tool" ] || ! command -v "$tool" >/dev/null 2>&1; then
    summary+=("MISSING ${tool:-nvcc}")
    failed=1
  fi
done
[ "$failed" -ne 0 ] && finish
"$nvcc" --version | tail -1

# The team's golden/ and testdata/: ../shared beside the checkout, or shared/ inside it.
shared_dir=$(cd .. && pwd)/shared
[ -d shared ] && shared_dir=$PWD/shared
[ -d "$shared_dir/golden" ] || summary+=("note    no golden data in ${shared_dir}: the golden tests will fail")

# Vulkan and the Google benchmarks are left out: they are not what this checks
# and they cost build time.
step "configure" 60 cmake -S . -B build-cuda -DCMAKE_BUILD_TYPE=Release -DQWEN35_CUDA=ON \
  -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$arch" -DQWEN35_VULKAN=OFF -DQWEN35_BUILD_BENCH=OFF \
  -DQWEN35_SHARED_DIR="$shared_dir" || finish
step "build" 210 cmake --build build-cuda -j "$jobs" --target qwen35 backend_tests model_tests cuda_tests format_tests || finish

# Test names carry the backend: cuda_tests.*, .../Conformance.*/cuda, Golden ..._cuda_<kv>,
# format_tests .../GgufGpuBackend.*/cuda and .../*OnGpu.*/cuda.
step "ctest -R cuda" 120 bash -c \
  'ctest --test-dir build-cuda -R cuda --output-on-failure -j 4 --timeout 100 2>&1 | tee build-cuda/ctest-cuda.log
   exit "${PIPESTATUS[0]}"'
# With a device nothing may skip: a skip here means the backend found no usable GPU.
skipped=$(grep -c '(Skipped)' build-cuda/ctest-cuda.log 2>/dev/null)
if [ "${skipped:-0}" -gt 0 ]; then
  summary+=("SKIPPED ${skipped} CUDA tests (no usable device?)")
  failed=1
fi
./build-cuda/tests/backends/cuda_tests --gtest_filter='*NamesItsDevice*' 2>/dev/null | grep '\[ device' || true

bin=./build-cuda/apps/qwen35/qwen35
step "bench 0.8b bf16, context 0" 40 "$bin" bench --backend cuda --preset 0.8b --dtype bf16 --json
step "bench 0.8b bf16, context 4096" 40 "$bin" bench --backend cuda --preset 0.8b --dtype bf16 --context 4096 --json
step "bench 0.8b bf16 --profile" 40 "$bin" bench --backend cuda --preset 0.8b --dtype bf16 --profile
# Quantized presets, where this build's bench has them.
bench_help=$("$bin" bench --help 2>&1)
if grep -q mlx8 <<<"$bench_help"; then
  step "bench 0.8b mlx8" 60 "$bin" bench --backend cuda --preset 0.8b --dtype mlx8 --json
  if grep -q '9b' <<<"$bench_help"; then
    step "bench 9b mlx8" 120 "$bin" bench --backend cuda --preset 9b --dtype mlx8 --json
  fi
fi
finish
