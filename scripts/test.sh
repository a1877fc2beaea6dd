#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite. With --sanitize it does so in a
# separate build with AddressSanitizer and UndefinedBehaviorSanitizer (without
# the CUDA backend: its kernels cannot run without a GPU, and the normal build
# already compiles it).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
if [ "${1:-}" = "--sanitize" ]; then
  BUILD_DIR=build-sanitize BUILD_TYPE=RelWithDebInfo ./scripts/build.sh -DQWEN35_SANITIZE=ON -DQWEN35_BUILD_BENCH=OFF -DQWEN35_CUDA=OFF
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-sanitize --output-on-failure -j "$(nproc)"
else
  ./scripts/build.sh
  ctest --test-dir build --output-on-failure -j "$(nproc)"
fi
