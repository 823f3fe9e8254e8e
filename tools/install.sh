#!/usr/bin/env bash
# `bazel run //:install -- PREFIX`: an install tree for other build systems —
#   PREFIX/include/warptrace/warptrace.h   the C API (capi/warptrace.h)
#   PREFIX/lib/libwarptrace.so             the library (exports only warptrace_*)
#   PREFIX/lib/pkgconfig/warptrace.pc      cc $(pkg-config --cflags --libs warptrace) ...
#   PREFIX/bin/warptrace                   the CLI
#   PREFIX/include/warptrace/{base,format,jit,profiler,llvm}/...   the C++ builder's headers
#   PREFIX/lib/libwarptrace_jit.a          KernelBuilder, RunKernel, both backends (sdk/BUILD)
#   PREFIX/lib/cmake/warptrace/            find_package(warptrace): warptrace::jit (C++) and
#                                          warptrace::warptrace (C) (sdk/warptraceConfig.cmake)
# The library links this machine's (Debian 12's) absl, protobuf-lite, zlib and tinfo shared
# libraries; for another distribution use the wheel, which carries them. Files are written
# rw-r--r-- (the library and the CLI rwxr-xr-x); an existing tree is updated in place.
set -euo pipefail
if [[ $# -ne 1 || -z $1 ]]; then
  echo "usage: bazel run //:install -- PREFIX" >&2
  exit 1
fi
prefix=$1
if [[ $prefix != /* ]]; then prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix"; fi
runfiles=""
for root in "${RUNFILES_DIR:-}" "${TEST_SRCDIR:-}" "$0.runfiles"; do
  if [[ -n $root && -f $root/warptrace/capi/warptrace.h ]]; then runfiles="$root/warptrace"; break; fi
done
[[ -n $runfiles ]] || { echo "install: error: run it with bazel run //:install -- PREFIX" >&2; exit 1; }
version=$(sed -n 's/^constexpr char kVersion\[\] = "\(.*\)";/\1/p' "$runfiles/capi/warptrace.cc")
[[ -n $version ]] || { echo "install: error: cannot read the version from capi/warptrace.cc" >&2; exit 1; }
mkdir -p "$prefix/include/warptrace" "$prefix/lib/pkgconfig" "$prefix/bin"
# (cp + chmod, not install(1): inside Bazel's runfiles `install` is this script.)
put() { rm -f "$3"; cp "$2" "$3"; chmod "$1" "$3"; }
put 644 "$runfiles/capi/warptrace.h" "$prefix/include/warptrace/warptrace.h"
put 755 "$runfiles/capi/libwarptrace.so" "$prefix/lib/libwarptrace.so"
put 755 "$runfiles/profiler/cli/warptrace" "$prefix/bin/warptrace"
# The C++ builder: its archive, its headers at their workspace paths (the manifest lists
# "RUNFILES_PATH<TAB>PATH"), and the CMake package.
put 644 "$runfiles/sdk/libwarptrace_jit.a" "$prefix/lib/libwarptrace_jit.a"
rundir=$(dirname "$runfiles")
while IFS=$'\t' read -r from to; do
  [[ -n $from ]] || continue
  mkdir -p "$(dirname "$prefix/include/warptrace/$to")"
  put 644 "$rundir/$from" "$prefix/include/warptrace/$to"
done < "$runfiles/sdk/jit_headers.manifest"
mkdir -p "$prefix/lib/cmake/warptrace"
put 644 "$runfiles/sdk/warptraceConfig.cmake" "$prefix/lib/cmake/warptrace/warptraceConfig.cmake"
# The archive's own link flags (sdk/sdk.bzl): -l... after the objects, the rest as options.
{
  echo "# Written by tools/install.sh from libwarptrace_jit.a.linkopts (sdk/BUILD)."
  opts=() libs=()
  while IFS= read -r flag; do
    [[ -n $flag ]] || continue
    if [[ $flag == -l* ]]; then libs+=("$flag"); else opts+=("$flag"); fi
  done < "$runfiles/sdk/libwarptrace_jit.a.linkopts"
  echo "set(_warptrace_jit_link_options \"$(IFS=';'; echo "${opts[*]}")\")"
  echo "set(_warptrace_jit_link_libraries \"$(IFS=';'; echo "${libs[*]}")\")"
} > "$prefix/lib/cmake/warptrace/warptraceJitLinkFlags.cmake"
chmod 644 "$prefix/lib/cmake/warptrace/warptraceJitLinkFlags.cmake"
cat > "$prefix/lib/cmake/warptrace/warptraceConfigVersion.cmake" <<CMAKE
# warptrace $version: compatible with a request for any version up to it with the same major.
set(PACKAGE_VERSION "$version")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  string(REGEX MATCH "^[0-9]+" _major "\${PACKAGE_FIND_VERSION}")
  string(REGEX MATCH "^[0-9]+" _have "\${PACKAGE_VERSION}")
  if("\${PACKAGE_FIND_VERSION}" STREQUAL "" OR _major STREQUAL _have)
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
  else()
    set(PACKAGE_VERSION_COMPATIBLE FALSE)
  endif()
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
CMAKE
chmod 644 "$prefix/lib/cmake/warptrace/warptraceConfigVersion.cmake"
cat > "$prefix/lib/pkgconfig/warptrace.pc" <<PC
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: warptrace
Description: warptrace's C API: verified dumps of intra-kernel GPU trace buffers
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lwarptrace
PC
chmod 644 "$prefix/lib/pkgconfig/warptrace.pc"
echo "installed warptrace $version into $prefix (include/, lib/, lib/pkgconfig/warptrace.pc, lib/cmake/warptrace/, bin/)"
