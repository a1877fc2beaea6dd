#!/usr/bin/env bash
# Runs on the GPU machine inside the bundle that scripts/device-bundle.sh made:
# the CUDA tests, the conformance suite and the goldens on `cuda`, the decode
# bench, and compute-sanitizer over the conformance suite, each under a
# deadline; logs go to $OUT (or /tmp) and a summary closes the output.
#   usage: .devbundle/device-bundle-run.sh [SECONDS]   (default 300)
set -uo pipefail
cd "$(dirname "$0")"
deadline=$((SECONDS + ${1:-300}))
source ./steps.sh
logs=${OUT:-/tmp}
export LD_LIBRARY_PATH=$PWD/lib QWEN35_SHARED_DIR=$PWD/shared PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader

# The HBM ceiling: a large device-to-device copy, bytes read plus written.
step "copy bandwidth (torch)" 40 python3 - <<'PY'
import torch
n = 4 << 30
a = torch.empty(n, dtype=torch.uint8, device="cuda"); a.random_(0, 255)
b = torch.empty_like(a)
for _ in range(3): b.copy_(a)
times = []
for _ in range(10):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); b.copy_(a); e.record(); e.synchronize(); times.append(s.elapsed_time(e) / 1e3)
times.sort()
print(f"device copy: {2 * n / times[len(times)//2] / 1e9:.0f} GB/s (read + write, median of 10)")
PY

step "cuda_tests" 60 bin/cuda_tests --gtest_brief=1
step "conformance on cuda" 90 bin/backend_tests --gtest_filter='*/cuda' --gtest_brief=1
step "goldens on cuda" 90 bin/model_tests --gtest_filter='*cuda*' --gtest_brief=1
step "memcheck conformance" 75 compute-sanitizer --tool memcheck --print-limit 20 \
  bin/backend_tests --gtest_filter='*/cuda' --gtest_brief=1
# The gemv kernels split rows over more warps as QWEN35_CUDA_GEMV_WARPS grows:
# the conformance suite under the extremes, the 9B benches under a sweep.
for warps in 2048 131072; do
  step "conformance, gemv warps $warps" 60 env QWEN35_CUDA_GEMV_WARPS=$warps \
    bin/backend_tests --gtest_filter='*Gemv*/cuda' --gtest_brief=1
done
bench=(bin/qwen35 bench --backend cuda -n 64 --profile)
step "bench 0.8b bf16" 60 "${bench[@]}" --preset 0.8b --dtype bf16
step "bench 0.8b bf16 context 4096" 60 "${bench[@]}" --preset 0.8b --dtype bf16 --context 4096
step "bench 0.8b bf16 context 4096, fp8 KV" 60 "${bench[@]}" --preset 0.8b --dtype bf16 --context 4096 --kv-dtype fp8
step "bench 0.8b mlx8" 60 "${bench[@]}" --preset 0.8b --dtype mlx8
for warps in ${GEMV_WARPS_SWEEP:-4096 8192}; do
  step "bench 9b mlx8, gemv warps $warps" 120 env QWEN35_CUDA_GEMV_WARPS=$warps "${bench[@]}" --preset 9b --dtype mlx8
  step "bench 9b bf16, gemv warps $warps" 90 env QWEN35_CUDA_GEMV_WARPS=$warps "${bench[@]}" --preset 9b --dtype bf16
done
finish
