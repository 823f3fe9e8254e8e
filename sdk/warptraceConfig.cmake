# warptraceConfig.cmake: `find_package(warptrace CONFIG REQUIRED)` for the install tree of
# `bazel run //:install -- PREFIX` (point CMAKE_PREFIX_PATH or warptrace_DIR at it). Targets:
#
#   warptrace::jit        C++: KernelBuilder, RunKernel, the host and CUDA backends, the dump
#                         and its writers (lib/libwarptrace_jit.a, include/warptrace/). C++20.
#   warptrace::warptrace  C: the C API for dumping saved buffers (lib/libwarptrace.so,
#                         include/warptrace/warptrace.h), as pkg-config's warptrace.pc.
#
# warptrace::jit's dependencies are found the way CMake finds them: absl's own CMake package,
# LLVM 14's (Support only; its config needs the C language, enabled here if the project has
# not), the CUDA toolkit's NVRTC (FindCUDAToolkit: CUDAToolkit_ROOT, else nvcc on PATH, else
# /usr/local/cuda), protobuf-lite (FindProtobuf), threads; the link flags the archive's own
# libraries carry in Bazel (warptraceJitLinkFlags.cmake, written by tools/install.sh from
# sdk/BUILD's libwarptrace_jit.a.linkopts: the host runtime's exported symbols, which kernels
# built at run time bind to, -ldl, libdeflate). At run time the host backend compiles
# kernels with the system C++ compiler (g++ or clang++ on PATH).
# docs/cmake.md is the user's page.
cmake_policy(PUSH)
cmake_policy(VERSION 3.17)

get_filename_component(_warptrace_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

include(CMakeFindDependencyMacro)
if(NOT CMAKE_C_COMPILER_LOADED)
  enable_language(C)  # LLVM's config runs C checks (FFI, Terminfo)
endif()
find_dependency(Threads)
find_dependency(absl CONFIG)
find_dependency(LLVM 14 CONFIG HINTS /usr/lib/llvm-14/lib/cmake/llvm)
find_dependency(CUDAToolkit)
find_dependency(Protobuf)
include("${CMAKE_CURRENT_LIST_DIR}/warptraceJitLinkFlags.cmake")

if(NOT TARGET warptrace::jit)
  add_library(warptrace::jit STATIC IMPORTED)
  set_target_properties(warptrace::jit PROPERTIES
    IMPORTED_LOCATION "${_warptrace_prefix}/lib/libwarptrace_jit.a"
    IMPORTED_LINK_INTERFACE_LANGUAGES CXX
    # include/warptrace first: its llvm/Support/JSON.h is the one the library was built with.
    INTERFACE_INCLUDE_DIRECTORIES "${_warptrace_prefix}/include/warptrace;${LLVM_INCLUDE_DIRS}"
    INTERFACE_COMPILE_FEATURES cxx_std_20
    INTERFACE_LINK_OPTIONS "${_warptrace_jit_link_options}"
    INTERFACE_LINK_LIBRARIES
      "absl::status;absl::statusor;absl::strings;absl::str_format;absl::span;absl::flat_hash_map;absl::flat_hash_set;absl::synchronization;absl::time;absl::hash;absl::cord;LLVMSupport;CUDA::nvrtc;protobuf::libprotobuf-lite;Threads::Threads;${_warptrace_jit_link_libraries}")
endif()

if(NOT TARGET warptrace::warptrace)
  add_library(warptrace::warptrace SHARED IMPORTED)
  set_target_properties(warptrace::warptrace PROPERTIES
    IMPORTED_LOCATION "${_warptrace_prefix}/lib/libwarptrace.so"
    IMPORTED_SONAME "libwarptrace.so"
    INTERFACE_INCLUDE_DIRECTORIES "${_warptrace_prefix}/include")
endif()

unset(_warptrace_prefix)
unset(_warptrace_jit_link_options)
unset(_warptrace_jit_link_libraries)
cmake_policy(POP)
