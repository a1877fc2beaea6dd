#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite. With --sanitize it does so in a
# separate build with AddressSanitizer and UndefinedBehaviorSanitizer (without
# the CUDA backend: its kernels cannot run without a GPU, and the normal build
# already compiles it). With --arm64, on an x86-64 machine, it cross-compiles
# for ARM64 (cmake/toolchains/aarch64-linux-gnu.cmake) and runs the suite under
# qemu's user-mode emulator, so the NEON kernels run too; on an ARM64 machine
# the plain suite already does that.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  --sanitize)
    ./scripts/setup.sh
    BUILD_DIR=build-sanitize BUILD_TYPE=RelWithDebInfo ./scripts/build.sh -DQWEN35_SANITIZE=ON -DQWEN35_BUILD_BENCH=OFF -DQWEN35_CUDA=OFF
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --test-dir build-sanitize --output-on-failure -j "$(nproc)"
    ;;
  --arm64)
    if [ "$(dpkg --print-architecture)" = arm64 ]; then
      echo "test: this machine is ARM64; ./scripts/test.sh runs the NEON kernels natively"
      exit 0
    fi
    ./scripts/setup.sh --arm64
    # GPU backends off: the emulator runs CPU code only.
    BUILD_DIR=build-arm64 ./scripts/build.sh -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
      -DQWEN35_VULKAN=OFF -DQWEN35_CUDA=OFF -DQWEN35_BUILD_BENCH=OFF
    ctest --test-dir build-arm64 --output-on-failure -j "$(nproc)"
    ;;
  "")
    ./scripts/setup.sh
    ./scripts/build.sh
    ctest --test-dir build --output-on-failure -j "$(nproc)"
    ;;
  *)
    echo "usage: $0 [--sanitize | --arm64]" >&2
    exit 2
    ;;
esac
