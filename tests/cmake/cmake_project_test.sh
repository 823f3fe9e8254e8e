#!/usr/bin/env bash
# cmake_project_test.sh EXTRACT_CODE_BLOCKS_PY CMAKE_MD: installs warptrace into a fresh
# prefix, configures / builds / ctests docs/cmake.md's project against it with CMake, checks
# the trace it wrote, and builds a C program against warptrace::warptrace. Prints every
# step's output (the configure, build and ctest lines are what the docs promise).
set -euo pipefail
extract=$1 page=$2
work="${TEST_TMPDIR:-$(mktemp -d)}/cmake_project"
rm -rf "$work"
mkdir -p "$work/project" "$work/c_project"
prefix="$work/prefix"
# The host backend caches compiled kernels; Bazel's test environment has no HOME.
export WARPTRACE_CACHE_DIR="$work/cache"

command -v cmake >/dev/null || { echo "FAIL: no cmake on PATH (run tools/setup.sh)"; exit 1; }
install_sh="$TEST_SRCDIR/$TEST_WORKSPACE/install"
[[ -x $install_sh ]] || { echo "FAIL: //:install is not in the runfiles ($install_sh)"; exit 1; }

echo "== bazel run //:install -- PREFIX"
"$install_sh" "$prefix"
for f in lib/libwarptrace_jit.a lib/libwarptrace.so lib/cmake/warptrace/warptraceConfig.cmake \
         include/warptrace/jit/builder/kernel_builder.h include/warptrace/jit/run/run.h \
         include/warptrace/jit/host/host_device.h include/warptrace/jit/cuda/cuda_device.h \
         include/warptrace/warptrace.h; do
  [[ -f $prefix/$f ]] || { echo "FAIL: the install tree has no $f"; exit 1; }
done

python3 "$extract" --cmake-project "$work/project" "$page"
echo "== the project (docs/cmake.md): $(cd "$work/project" && ls | tr '\n' ' ')"
cd "$work/project"
echo "== cmake -S . -B build -DCMAKE_PREFIX_PATH=PREFIX"
cmake -S . -B build -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
echo "== cmake --build build"
cmake --build build
echo "== ctest --test-dir build --output-on-failure -V"
ctest --test-dir build --output-on-failure -V
trace="$work/project/build/smooth.trace.json"
python3 - "$trace" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    trace = json.load(f)
events = trace["traceEvents"]
regions = [e for e in events if e.get("ph") == "X" and e.get("name") == "scale"]
assert regions, f"no 'scale' slices in {sys.argv[1]}: {events[:5]}"
print(f"trace: {len(events)} events, {len(regions)} 'scale' slices")
PY

echo "== warptrace::warptrace from C"
cat > "$work/c_project/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(c_api LANGUAGES C)
find_package(warptrace CONFIG REQUIRED)
add_executable(c_api main.c)
target_link_libraries(c_api PRIVATE warptrace::warptrace)
CMAKE
cat > "$work/c_project/main.c" <<'C'
#include <stdio.h>
#include <warptrace/warptrace.h>
int main(void) {
  printf("warptrace %s\n", warptrace_version());
  return 0;
}
C
cd "$work/c_project"
cmake -S . -B build -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build build >/dev/null
./build/c_api
echo "PASS"
