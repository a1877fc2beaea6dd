#!/usr/bin/env bash
# Packs binaries built here (with the CUDA backend) into .devbundle/ for a GPU
# machine that has the CUDA driver but not this project's libraries: the CLI,
# the test binaries that touch CUDA and the GPU gemv bench, stripped, the shared libraries they need
# beyond glibc, and the golden checkpoints. scripts/device-bundle-run.sh runs it.
#   usage: scripts/device-bundle.sh [BUILD_DIR]   (default: build)
# On the GPU machine (.devpack is git-ignored: name it in the device tool's carry):
#   tar -xJf .devpack/bundle.tar.xz -C /tmp/b && /tmp/b/device-bundle-run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shared=${QWEN35_SHARED_DIR:-$(cd .. && pwd)/shared}
out=.devbundle
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib" "$out/shared/golden"
binaries=("$build/apps/qwen35/qwen35" "$build/tests/backends/cuda_tests" "$build/tests/backends/vulkan_tests"
          "$build/tests/backends/backend_tests" "$build/tests/model/model_tests" "$build/tests/formats/format_tests")
[ -x "$build/bench/backends/gpu_gemv_bench" ] && binaries+=("$build/bench/backends/gpu_gemv_bench")
for b in "${binaries[@]}"; do strip -o "$out/bin/$(basename "$b")" "$b"; done
# Everything ldd resolves outside glibc and the loader travels along.
for b in "${binaries[@]}"; do ldd "$b"; done | awk '/=> \//{print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so' | xargs -r -I{} cp -L {} "$out/lib/"
cp -r "$shared/golden/tiny" "$shared/golden/tied-flat-sharded" "$out/shared/golden/"
cp scripts/device-bundle-run.sh scripts/device-ncu.sh scripts/steps.sh "$out/"
du -sh "$out"
# The device tool carries at most 64 MiB: the bundle travels compressed.
mkdir -p .devpack
tar -cf - -C "$out" . | xz -T0 -6 > .devpack/bundle.tar.xz
ls -la .devpack/bundle.tar.xz
