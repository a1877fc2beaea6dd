# The CUDA backend: host code in qwen35_backends plus the kernels (*.cu) in a
# static library of their own, compiled by nvcc with its own warning flags
# (qwen35_warnings holds GCC flags that nvcc does not take). The CUDA runtime
# is linked statically, so binaries start on machines without libcudart; with
# no driver or no GPU the backend's constructor throws DeviceUnavailable.
# Included from src/backends/CMakeLists.txt.
string(TOUPPER "${QWEN35_CUDA}" qwen35_cuda_mode)
if(NOT qwen35_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "QWEN35_CUDA must be AUTO, ON or OFF, not '${QWEN35_CUDA}'")
endif()
if(qwen35_cuda_mode STREQUAL "OFF")
  message(STATUS "qwen35: CUDA backend disabled (QWEN35_CUDA=OFF)")
  return()
endif()

# nvcc from CMAKE_CUDA_COMPILER, CUDACXX or PATH; else the toolkit's usual home.
if(NOT CMAKE_CUDA_COMPILER)
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "CUDA compiler" FORCE)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)  # check_language also left a normal variable
  endif()
endif()
if(NOT CMAKE_CUDA_COMPILER)
  if(qwen35_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "QWEN35_CUDA=ON but no nvcc found (set CMAKE_CUDA_COMPILER or put nvcc on PATH)")
  endif()
  message(STATUS "qwen35: CUDA backend not built (no nvcc found; QWEN35_CUDA=ON to require)")
  return()
endif()

# Ampere and Hopper by default: batch-1 decode needs nothing newer than sm_80.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
  set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures to compile for" FORCE)
endif()
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)
message(STATUS "qwen35: CUDA backend enabled (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")

add_library(qwen35_cuda_kernels STATIC
  cuda/cuda_attention.cu
  cuda/cuda_elementwise.cu
  cuda/cuda_gdn.cu
  cuda/cuda_gemv.cu
  cuda/cuda_gguf.cu
  cuda/cuda_mlx.cu
  cuda/cuda_norm.cu
  cuda/cuda_probe.cu
)
# C++20 as the rest of the project (the headers use it). CMake 3.25 does not
# know nvcc's C++20 flag yet (nvcc has taken -std=c++20 since CUDA 12.0).
if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()
set_target_properties(qwen35_cuda_kernels PROPERTIES
  CUDA_STANDARD 20
  CUDA_STANDARD_REQUIRED ON
  CUDA_EXTENSIONS OFF
  POSITION_INDEPENDENT_CODE ON)
target_include_directories(qwen35_cuda_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(qwen35_cuda_kernels PUBLIC qwen35_headers CUDA::cudart_static)
# fmt 9 turns its constexpr off when it sees __NVCC__ but still calls those
# functions from constexpr ones, which nvcc's host pass rejects under C++20;
# the kernels format nothing, so turning it back on only restores fmt's default.
target_compile_definitions(qwen35_cuda_kernels PRIVATE FMT_USE_CONSTEXPR=1)
target_compile_options(qwen35_cuda_kernels PRIVATE
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)

target_sources(qwen35_backends PRIVATE cuda/cuda_backend.cpp)
target_link_libraries(qwen35_backends PRIVATE qwen35_cuda_kernels CUDA::cudart_static)
target_compile_definitions(qwen35_backends PRIVATE QWEN35_HAVE_CUDA)
set_property(GLOBAL PROPERTY QWEN35_CUDA_BUILT TRUE)  # tests/backends adds the CUDA-only tests
