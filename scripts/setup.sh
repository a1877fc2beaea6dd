#!/usr/bin/env bash
# Installs what qwen35 needs to build and test on Debian 12 (apt packages by
# name), skipping what is already there. Runs apt as root, or through sudo.
# With --arm64 (on an x86-64 machine) it also installs what the ARM64 cross
# build and its emulated test run need (scripts/test.sh --arm64): the arm64
# architecture's libraries, and qemu's user-mode emulator.
set -euo pipefail
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
packages=(
  cmake g++ make pkg-config
  libfmt-dev nlohmann-json3-dev libcli11-dev libhwy-dev
  libpcre2-dev libutf8proc-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  glslc libvulkan-dev mesa-vulkan-drivers
)
# The ARM64 compile check of the SIMD kernels needs an aarch64 cross compiler
# (on an arm64 machine the build itself compiles them for ARM64).
[ "$(dpkg --print-architecture)" = arm64 ] || packages+=(g++-aarch64-linux-gnu)
if [ "${1:-}" = "--arm64" ] && [ "$(dpkg --print-architecture)" != arm64 ]; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "setup: adding the arm64 architecture to apt"
    $sudo dpkg --add-architecture arm64
  fi
  packages+=(qemu-user libfmt-dev:arm64 libhwy-dev:arm64 libpcre2-dev:arm64 libutf8proc-dev:arm64
             libgtest-dev:arm64 libgmock-dev:arm64)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
