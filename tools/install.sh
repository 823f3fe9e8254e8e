#!/usr/bin/env bash
# `bazel run //:install -- PREFIX`: an install tree for other build systems —
#   PREFIX/include/warptrace/warptrace.h   the C API (capi/warptrace.h)
#   PREFIX/lib/libwarptrace.so             the library (exports only warptrace_*)
#   PREFIX/lib/pkgconfig/warptrace.pc      cc $(pkg-config --cflags --libs warptrace) ...
#   PREFIX/bin/warptrace                   the CLI
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
echo "installed warptrace $version into $prefix (include/, lib/, lib/pkgconfig/warptrace.pc, bin/)"
