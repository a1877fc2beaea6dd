#!/usr/bin/env bash
# Installs what qwen35 needs to build and test on Debian 12 (apt packages by
# name), skipping what is already there. Runs apt as root, or through sudo.
set -euo pipefail
packages=(
  cmake g++ make pkg-config
  libfmt-dev nlohmann-json3-dev libcli11-dev libhwy-dev
  libpcre2-dev libutf8proc-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  glslc libvulkan-dev mesa-vulkan-drivers
)
# The ARM64 compile check of the SIMD kernels needs an aarch64 compiler: a cross
# compiler here, the native one on arm64.
[ "$(dpkg --print-architecture)" = arm64 ] || packages+=(g++-aarch64-linux-gnu)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
