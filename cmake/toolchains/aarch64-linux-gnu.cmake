# Cross build for ARM64 Linux from an x86-64 Debian machine, its tests run
# under qemu's user-mode emulator (./scripts/test.sh --arm64; scripts/setup.sh
# --arm64 installs the compiler, the arm64 libraries and qemu).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# No -L sysroot: it made qemu load the cross toolchain's glibc next to the
# arm64 architecture's, and programs hung creating their first thread.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
# pkg-config (PCRE2, utf8proc) reads the arm64 packages' .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
