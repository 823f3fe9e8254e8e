#!/usr/bin/env bash
# warptrace's GPU check, run from the bundle (tools/make_gpu_bundle.sh makes it): no Bazel, no
# network, nothing installed.
#
#   bash warptrace_gpu_bundle/run.sh [OUTDIR]        (default: $OUT, else ./warptrace_gpu_out)
#
# On a machine with a GPU, GPU steps first (the minutes that matter):
#   1. the GPU test binaries (gtest XML; a skipped case is a failure there);
#   2. every example with --device=cuda over unit/placement combinations, unprofiled, the
#      warp-specialized pipeline's variants (bulk copies where the GPU is sm_90+), and one
#      saved trace re-read by the warptrace CLI; every result is checked by the example;
#   3. the big kernels at GPU sizes (big_kernels below): hopper_gemm cooperative,
#      --pingpong --persistent --blocks=<SM count> and the 2-CTA cluster GEMMs --cluster=2x1
#      (B multicast) and --cluster=1x2 (A multicast), ampere_gemm (GEMM BIG_SIZE^3, default
#      4096^3) and flash_attention (sequence 4096, 16 heads, head dim 128) where the bundle
#      has it, each unprofiled and profiled with --repeat=BIG_REPEAT (the median launch, CUDA
#      events), its result checked by the example; vendor_compare.py times PyTorch's bf16
#      matmul (cuBLAS) and scaled_dot_product_attention on the same problems in the same run
#      and writes the table: TFLOP/s unprofiled and profiled, the slowdown, the share of the
#      vendor's TFLOP/s (big_kernels.txt + big_kernels.json in OUTDIR);
#   4. SM cycles per recorded event (record_cost_gpu), profiled vs unprofiled launch time
#      (median of REPEAT launches, CUDA events) for every example; the pipeline what-if (a
#      planted consumer delay predicted away, against the measured run without it);
#   5. anchors (anchors.py, the machine's python3): PyTorch bf16 matmul (cuBLAS) on the
#      examples' GEMM shapes and scaled_dot_product_attention; a JAX Mosaic GPU kernel with
#      Mosaic's own profiler, its raw buffer + grid/block/names saved and dumped by warptrace;
#      the bundled wheel pip-installed (--no-index --no-deps) into a scratch target for the
#      machine's python3 and a Mosaic GPU kernel profiled through its
#      warptrace.mosaic.install(), compared event by event with Mosaic's own dump, plus the
#      "Insufficient space" case and the entries_per_warpgroup warptrace names (wheel_mosaic.py);
#   6. the host-backend parts (also what runs where there is no GPU), the wheel's install
#      and its check on a synthetic Mosaic buffer among them, and what profiling costs the
#      compile of four examples (--cost: compile time by NVRTC phase, SASS, perturbation).
# Without a GPU (or with WARPTRACE_FORCE_NO_GPU=1) the GPU steps say SKIPPED and the host
# parts run from the bundle, which shows it is self-contained.
#
# OUTDIR receives at most five files (the GPU machine brings back at most 8):
#   results.txt      device, driver, clocks, every PASS/FAIL/SKIPPED, every number; written
#                    line by line, so a run killed from outside still reports what it did;
#   traces.tgz       traces, raw buffers + sidecars, verdicts, Mosaic buffers and dumps,
#                    anchor JSON (kept under 15 MiB: the big Chrome traces go first);
#   logs.tgz         every step's log and gtest XML;
#   big_kernels.txt  the big-kernel table (step 3; without a GPU, its vendor columns say
#   big_kernels.json "skipped: no GPU (why)" and it has no rows), as text and as JSON.
# Scratch goes to a temporary directory (printed), not OUTDIR.
#
# Time: every step runs under `timeout`; the whole run stops starting steps after
# WARPTRACE_DEADLINE_S seconds (default 450) and then packs up, so it ends before 9 minutes
# whatever hangs. Expected: 4-6 minutes with an H200, about a minute without a GPU.
#
# Environment: WARPTRACE_EXPECT_GPU=1 (no usable GPU is a failure, not a skip: use it on the
#   GPU machine), WARPTRACE_FORCE_NO_GPU=1 (take the no-GPU path), WARPTRACE_DEADLINE_S,
#   WARPTRACE_STEP_LIMIT_S (no step runs longer, whatever its own limit: bounds a hang on a
#   device time budget), WARPTRACE_NVRTC_DIR (a directory holding libnvrtc.so.N; else CUDA_HOME, /usr/local/cuda,
#   the NVIDIA wheels in python3's site-packages, ldconfig), REPEAT (launches per timing,
#   default 200), GEMM_SIZE (tiled_gemm timing M = N = K, default 512), BIG_SIZE (the big
#   GEMMs' M = N = K, default 4096), BIG_SEQ (the big attention's sequence, default 4096),
#   BIG_REPEAT (the big kernels' launches per timing, default 30),
#   PYTHON (python3),
#   WARPTRACE_BUNDLED_GLIBC=1 (use lib/glibc even where the machine's glibc would do),
#   WARPTRACE_KEEP_SCRATCH=1 (keep the scratch directory), WARPTRACE_SIMULATE_GPU=1 (the GPU
#   path on the host backend, for checking this script without a GPU; its GPU-only checks fail).
# Exit status: 0 when nothing failed and every step ran, 1 otherwise (results.txt says what).
set -uo pipefail

START=$(date +%s)
DEADLINE=$((START + ${WARPTRACE_DEADLINE_S:-450}))
BUNDLE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=$BUNDLE/bin
OUTDIR=${1:-${OUT:-$PWD/warptrace_gpu_out}}
REPEAT=${REPEAT:-200}
GEMM_SIZE=${GEMM_SIZE:-512}
BIG_SIZE=${BIG_SIZE:-4096}
BIG_REPEAT=${BIG_REPEAT:-30}
BIG_SEQ=${BIG_SEQ:-4096}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUTDIR" || { echo "run.sh: cannot create $OUTDIR" >&2; exit 1; }
OUTDIR=$(cd "$OUTDIR" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/warptrace_gpu_run.XXXXXX") || exit 1
LOGS=$WORK/logs
TRACES=$WORK/traces
mkdir -p "$LOGS" "$TRACES" "$WORK/cache" "$WORK/home"
# A copy that lost its modes (some transfers do) still runs.
chmod +x "$BIN"/* "$BUNDLE"/lib/glibc/ld-linux* 2>/dev/null
RESULTS=$OUTDIR/results.txt
: >"$RESULTS"
PASSED=0 FAILED=0 SKIPPED=0 OUT_OF_TIME=0

say() { echo "$*" | tee -a "$RESULTS"; }
record() {  # record PASS|FAIL|SKIPPED NAME DETAIL
  local verdict=$1 name=$2 detail=${3:-}
  case $verdict in
    PASS) PASSED=$((PASSED + 1)) ;;
    FAIL) FAILED=$((FAILED + 1)) ;;
    SKIPPED) SKIPPED=$((SKIPPED + 1)) ;;
  esac
  say "$(printf '%-7s %s%s' "$verdict" "$name" "${detail:+: $detail}")"
}
number() { say "  number: $*"; }  # number KEY VALUE [UNIT / context]
elapsed() { echo $(($(date +%s) - START)); }
log_name() { tr -c 'A-Za-z0-9_.=-' '_' <<<"$1" | sed 's/_*$//'; }

# step NAME LIMIT_S CMD...: runs CMD, its output in logs/NAME.log, under a timeout that never
# passes the deadline. Records PASS or FAIL (with the log's last line) unless the caller
# asked to judge the log itself (STEP_QUIET=1); returns the command's status, 124 on a
# timeout, 125 when the time budget left no room to start.
STEP_QUIET=0
STEP_LOG=
step() {
  local name=$1 limit=$2
  shift 2
  STEP_LOG=$LOGS/$(log_name "$name").log
  local left=$((DEADLINE - $(date +%s)))
  if ((left < 10)); then
    record SKIPPED "$name" "the run's time budget (WARPTRACE_DEADLINE_S) is spent"
    OUT_OF_TIME=$((OUT_OF_TIME + 1))
    return 125
  fi
  ((limit > left)) && limit=$left
  local cap=${WARPTRACE_STEP_LIMIT_S:-0}
  ((cap > 0 && limit > cap)) && limit=$cap
  local t0 rc=0
  t0=$(date +%s%N)
  timeout -k 5 "$limit" "$@" >"$STEP_LOG" 2>&1 </dev/null || rc=$?
  local ms=$((($(date +%s%N) - t0) / 1000000))
  STEP_SECONDS=$(awk -v ms="$ms" 'BEGIN { printf "%.1f", ms / 1000 }')
  if ((STEP_QUIET)); then return $rc; fi
  if ((rc == 0)); then
    record PASS "$name" "${STEP_SECONDS} s"
  elif ((rc == 124 || rc == 137)); then
    record FAIL "$name" "timed out after ${limit} s (log: logs/$(basename "$STEP_LOG"))"
  else
    record FAIL "$name" "exit $rc after ${STEP_SECONDS} s: $(grep -v '^\s*$' "$STEP_LOG" | tail -1 | cut -c1-300) (log: logs/$(basename "$STEP_LOG"))"
  fi
  return $rc
}
first_line() { grep -m1 "$1" "$STEP_LOG" 2>/dev/null | sed 's/^[[:space:]]*//'; }

# Packs traces.tgz (under 15 MiB: the Chrome traces of the timing runs go first, then every
# Chrome/Perfetto trace; raw buffers + sidecars regenerate them with the warptrace CLI) and
# logs.tgz. Called after each phase, so a run killed later still leaves archives behind.
pack() {
  local limit=$((15 * 1024 * 1024)) size
  tar -C "$WORK" -czf "$OUTDIR/logs.tgz" logs 2>/dev/null
  tar -C "$WORK" -czf "$OUTDIR/traces.tgz" traces 2>/dev/null
  size=$(stat -c %s "$OUTDIR/traces.tgz" 2>/dev/null || echo 0)
  if ((size > limit)); then
    tar -C "$WORK" -czf "$OUTDIR/traces.tgz" --exclude='traces/timing_*/*.trace.json' \
      --exclude='traces/timing_*/*.pftrace' traces 2>/dev/null
    size=$(stat -c %s "$OUTDIR/traces.tgz")
  fi
  if ((size > limit)); then
    tar -C "$WORK" -czf "$OUTDIR/traces.tgz" --exclude='*.trace.json' --exclude='*.pftrace' \
      traces 2>/dev/null
    size=$(stat -c %s "$OUTDIR/traces.tgz")
  fi
  if ((size > limit)); then
    tar -C "$WORK" -czf "$OUTDIR/traces.tgz" --exclude='*.trace.json' --exclude='*.pftrace' \
      --exclude='traces/timing_*' traces 2>/dev/null
  fi
}

# ---------------------------------------------------------------------------------------------
say "warptrace GPU check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname 2>/dev/null || cat /etc/hostname)"
say "bundle: $BUNDLE ($(head -1 "$BUNDLE/VERSION" 2>/dev/null || echo 'no VERSION file'))"
say "scratch: $WORK; outputs: $OUTDIR"
say "machine: $(uname -srm); $(grep -m1 '^PRETTY_NAME=' /etc/os-release 2>/dev/null | cut -d= -f2 | tr -d '"'); $(nproc) cores"

# What the bundle needs of the machine (MANIFEST.txt, written when the bundle was made).
needs=$(grep -m1 '^needs: ' "$BUNDLE/MANIFEST.txt" 2>/dev/null | cut -d' ' -f2-)
NEED_GLIBC=$(grep -o 'GLIBC_[0-9.]*' <<<"$needs" | head -1 | sed 's/GLIBC_//')
NEED_GLIBCXX=$(grep -o 'GLIBCXX_[0-9.]*' <<<"$needs" | head -1 | sed 's/GLIBCXX_//')
NEED_CXXABI=$(grep -o 'CXXABI_[0-9.]*' <<<"$needs" | head -1 | sed 's/CXXABI_//')
NVRTC_SONAME=$(grep -m1 '^nvrtc: ' "$BUNDLE/MANIFEST.txt" 2>/dev/null | awk '{ print $2 }')
[[ $NVRTC_SONAME == libnvrtc* ]] || NVRTC_SONAME=libnvrtc.so.13

version_at_least() { [[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" == "$2" ]]; }

# glibc: the machine's own; where it is older than the binaries need (GLIBC_2.36 when made on
# Debian 12: LLVM and libstdc++ call arc4random), the bundle's copy (lib/glibc) through its own
# loader, with the bundle's C++ runtime. WARPTRACE_BUNDLED_GLIBC=1 forces that path.
glibc=$(ldd --version 2>/dev/null | head -1 | grep -o '[0-9][0-9.]*$')
LOADER=$BUNDLE/lib/glibc/ld-linux-x86-64.so.2
GLIBC_FALLBACK=0
if [[ ${WARPTRACE_BUNDLED_GLIBC:-0} == 1 ]] ||
   { [[ -n $NEED_GLIBC && -n $glibc ]] && ! version_at_least "$glibc" "$NEED_GLIBC"; }; then
  if [[ -x $LOADER ]]; then
    GLIBC_FALLBACK=1
    record PASS "glibc" "this machine has ${glibc:-unknown}, the binaries need GLIBC_${NEED_GLIBC:-?}: running them with the bundle's glibc through $LOADER"
  else
    record FAIL "glibc" "this machine has $glibc, the binaries need GLIBC_$NEED_GLIBC and the bundle has no lib/glibc fallback"
  fi
else
  record PASS "glibc" "${glibc:-unknown} (the binaries need GLIBC_${NEED_GLIBC:-unknown})"
fi

# The C++ runtime: the machine's own when it has every symbol version the bundle needs (a
# kernel the host backend compiles here links against it), else the bundled one.
LIBPATH=$BUNDLE/lib
system_cxx=
for candidate in $( (/sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null) |
                    awk '/libstdc\+\+\.so\.6 .*x86-64/ { print $NF }') \
                 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /usr/lib64/libstdc++.so.6; do
  [[ -e $candidate ]] && { system_cxx=$candidate; break; }
done
if ((!GLIBC_FALLBACK)) && [[ -n $system_cxx ]] && grep -aq "GLIBCXX_${NEED_GLIBCXX:-none}" "$system_cxx" &&
   grep -aq "CXXABI_${NEED_CXXABI:-none}" "$system_cxx"; then
  say "C++ runtime: the machine's ($system_cxx has GLIBCXX_$NEED_GLIBCXX)"
else
  LIBPATH=$LIBPATH:$BUNDLE/lib/cxx
  if ((GLIBC_FALLBACK)); then
    say "C++ runtime: the bundle's lib/cxx (it goes with the bundle's glibc)"
  else
    say "C++ runtime: the bundle's lib/cxx (the machine's ${system_cxx:-libstdc++ (none found)} lacks GLIBCXX_${NEED_GLIBCXX:-?} or CXXABI_${NEED_CXXABI:-?})"
  fi
fi

# NVRTC: the machine's own, of the major version the binaries were linked against.
NVRTC_DIR= NVRTC_FROM=
try_nvrtc() {  # try_nvrtc DIR ORIGIN
  [[ -z $NVRTC_DIR && -n $1 && -e $1/$NVRTC_SONAME ]] && { NVRTC_DIR=$1; NVRTC_FROM=$2; }
  return 0
}
try_nvrtc "${WARPTRACE_NVRTC_DIR:-}" "WARPTRACE_NVRTC_DIR"
for home_var in CUDA_HOME CUDA_PATH; do
  home=${!home_var:-}
  [[ -n $home ]] || continue
  try_nvrtc "$home/lib64" "\$$home_var/lib64"
  try_nvrtc "$home/lib" "\$$home_var/lib"
  try_nvrtc "$home/targets/x86_64-linux/lib" "\$$home_var/targets/x86_64-linux/lib"
done
try_nvrtc /usr/local/cuda/lib64 "/usr/local/cuda/lib64"
try_nvrtc /usr/local/cuda/targets/x86_64-linux/lib "/usr/local/cuda/targets/x86_64-linux/lib"
for dir in /usr/local/cuda-*/lib64; do try_nvrtc "$dir" "$dir"; done
if [[ -z $NVRTC_DIR ]] && command -v "$PYTHON" >/dev/null; then
  # PyTorch's NVIDIA wheels: nvidia/cuda_nvrtc/lib (CUDA 12 layout), nvidia/cu13/lib (13).
  while read -r dir; do try_nvrtc "$dir" "python3's NVIDIA wheel ($dir)"; done < <(
    timeout 30 "$PYTHON" -c '
import glob, os, sys
for p in sys.path:
    for lib in sorted(glob.glob(os.path.join(p or ".", "nvidia", "*", "lib", sys.argv[1]))):
        print(os.path.dirname(os.path.abspath(lib)))' "$NVRTC_SONAME" 2>/dev/null)
fi
if [[ -z $NVRTC_DIR ]]; then
  lib=$( (/sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null) | awk -v so="$NVRTC_SONAME" '$1 == so { print $NF; exit }')
  [[ -n $lib ]] && try_nvrtc "$(dirname "$lib")" "ldconfig ($lib)"
fi
if [[ -n $NVRTC_DIR ]]; then
  LIBPATH=$LIBPATH:$NVRTC_DIR
  record PASS "nvrtc" "$NVRTC_SONAME from $NVRTC_FROM ($NVRTC_DIR)"
else
  record FAIL "nvrtc" "no $NVRTC_SONAME in WARPTRACE_NVRTC_DIR, CUDA_HOME, /usr/local/cuda, python3's nvidia wheels or ldconfig; set WARPTRACE_NVRTC_DIR"
fi
say "LD_LIBRARY_PATH for the bundle's binaries: $LIBPATH"
# Every bundled binary runs as "${RUN_ENV[@]}" [VAR=value...] "${RUN_LOADER[@]}" BINARY
# (python3, for the anchors, does not: it keeps its own libraries).
RUN_ENV=(env "LD_LIBRARY_PATH=$LIBPATH" "WARPTRACE_CACHE_DIR=$WORK/cache" "HOME=${HOME:-$WORK/home}")
RUN_LOADER=()
LDD=("${RUN_ENV[@]}" ldd)
if ((GLIBC_FALLBACK)); then
  RUN_LOADER=("$LOADER" --library-path "$LIBPATH:$BUNDLE/lib/glibc")
  LDD=("${RUN_LOADER[@]}" --list)
fi
RUN=("${RUN_ENV[@]}" "${RUN_LOADER[@]}")

# Self-containment: every library of every binary resolves, and none from a build tree.
unresolved=()
for binary in "$BIN"/*; do
  while read -r line; do
    [[ $line == *"not found"* ]] && unresolved+=("$(basename "$binary"): ${line%% *}")
  done < <("${LDD[@]}" "$binary" 2>&1)
done
if ((${#unresolved[@]})); then
  record FAIL "libraries" "not found: ${unresolved[*]}"
else
  record PASS "libraries" "every library of the $(ls "$BIN" | wc -l) binaries in bin/ resolves"
fi

# The GPU, if any.
GPU=0 NO_GPU_REASON= CUDA_DEVICE=cuda
if [[ ${WARPTRACE_SIMULATE_GPU:-0} == 1 ]]; then
  # For checking this script where there is no GPU: the GPU path, on the host backend.
  GPU=1 CUDA_DEVICE=host
  say "WARPTRACE_SIMULATE_GPU=1: the GPU path runs with --device=host (its GPU-only checks fail)"
elif [[ ${WARPTRACE_FORCE_NO_GPU:-0} == 1 ]]; then
  NO_GPU_REASON="WARPTRACE_FORCE_NO_GPU=1"
elif ! { (/sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null) | grep 'libcuda\.so\.1' >/dev/null ||
         ls /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 /usr/lib/wsl/lib/libcuda.so.1 >/dev/null 2>&1; }; then
  NO_GPU_REASON="no CUDA driver (libcuda.so.1 not found)"
elif ! command -v nvidia-smi >/dev/null; then
  GPU=1  # a driver without nvidia-smi: let the binaries decide
  say "nvidia-smi: not found (the driver is there; the GPU steps decide)"
elif ! timeout 30 nvidia-smi -L 2>/dev/null | grep '^GPU' >/dev/null; then
  NO_GPU_REASON="nvidia-smi lists no GPU"
  # A driver but no GPU: on a GPU machine that is a broken setup, not a reason to pass.
  record FAIL "GPU" "libcuda.so.1 is installed but nvidia-smi lists no GPU ($(timeout 30 nvidia-smi -L 2>&1 | head -1 | cut -c1-200)); set WARPTRACE_FORCE_NO_GPU=1 on a machine that has none"
else
  GPU=1
fi
if ((!GPU)) && [[ ${WARPTRACE_EXPECT_GPU:-0} == 1 ]]; then
  record FAIL "GPU" "WARPTRACE_EXPECT_GPU=1 but no GPU to use: $NO_GPU_REASON"
fi
COMPUTE_CAP= SM_CLOCK_KHZ=
if ((GPU)) && [[ $CUDA_DEVICE == cuda ]] && command -v nvidia-smi >/dev/null; then
  timeout 30 nvidia-smi >"$LOGS/nvidia-smi.log" 2>&1
  timeout 30 nvidia-smi -q -d CLOCK >"$LOGS/nvidia-smi-clocks.log" 2>&1
  query=name,driver_version,compute_cap,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,memory.total,pstate,power.limit,temperature.gpu
  line=$(timeout 30 nvidia-smi --query-gpu=$query --format=csv,noheader 2>/dev/null | head -1)
  if [[ -z $line ]]; then  # a field this nvidia-smi does not know fails the whole query
    query=name,driver_version,compute_cap,clocks.sm,clocks.max.sm
    line=$(timeout 30 nvidia-smi --query-gpu=$query --format=csv,noheader 2>/dev/null | head -1)
  fi
  say "device: ${line:-unknown (nvidia-smi --query-gpu failed)}"
  say "  ($query)"
  COMPUTE_CAP=$(timeout 30 nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
  max_mhz=$(timeout 30 nvidia-smi --query-gpu=clocks.max.sm --format=csv,noheader,nounits 2>/dev/null | head -1 | tr -dc 0-9)
  [[ -n $max_mhz ]] && SM_CLOCK_KHZ=$((max_mhz * 1000))
  [[ -e /proc/driver/nvidia/version ]] && say "driver: $(head -1 /proc/driver/nvidia/version)"
  command -v nvcc >/dev/null && say "nvcc: $(nvcc --version 2>/dev/null | tail -2 | head -1)"
elif ((!GPU)); then
  say "device: none ($NO_GPU_REASON)"
fi
HAVE_CXX=0
for cxx in ${WARPTRACE_HOST_CXX:-} g++ clang++ c++; do command -v "$cxx" >/dev/null && { HAVE_CXX=1; break; }; done
say ""

# ---------------------------------------------------------------------------------------------
# The GPU test binaries, directly. Without a GPU they must start and skip (that proves they
# link and load); with one, a skipped case is a failure (a broken device setup).
run_gpu_tests() {
  local test xml tests failures skipped errors
  for test in cuda_device_gpu_test tma_gpu_test tensor_core_gpu_test wgmma_gpu_test \
      run_gpu_test; do
    xml=$LOGS/$test.xml
    mkdir -p "$WORK/test_tmp/$test"
    local extra=()
    # wgmma_gpu_test is wgmma_test built for CudaDevice: only its checks a GPU can run (its
    # BUILD args, which a bundled binary does not get).
    [[ $test == wgmma_gpu_test ]] && extra=("--gtest_filter=*WgmmaLayoutTest.*:WgmmaGemmTest.*:SetmaxnregTest.ProducerDecAndConsumerIncRun:WgmmaMisuseTest.CorrectUse*:WgmmaMisuseTest.Chained*:WgmmaMisuseTest.EmptyCommit*")
    STEP_QUIET=1 step "gpu_test $test" 240 "${RUN_ENV[@]}" TEST_TMPDIR="$WORK/test_tmp/$test" \
      "${RUN_LOADER[@]}" "$BIN/$test" --gtest_output="xml:$xml" --gtest_color=no "${extra[@]}"
    local rc=$?
    ((rc == 125)) && continue
    if [[ ! -f $xml ]]; then
      record FAIL "gpu_test $test" "exit $rc after ${STEP_SECONDS} s, no gtest XML: $(tail -1 "$STEP_LOG" | cut -c1-200) (log: logs/$(basename "$STEP_LOG"))"
      continue
    fi
    tests=$(grep -m1 -o '<testsuites [^>]*tests="[0-9]*"' "$xml" | grep -o 'tests="[0-9]*"' | tr -dc 0-9)
    failures=$(grep -m1 -o '<testsuites [^>]*failures="[0-9]*"' "$xml" | grep -o 'failures="[0-9]*"' | tr -dc 0-9)
    errors=$(grep -m1 -o '<testsuites [^>]*errors="[0-9]*"' "$xml" | grep -o 'errors="[0-9]*"' | tr -dc 0-9)
    skipped=$(grep -c 'result="skipped"' "$xml")
    local summary="${tests:-?} tests, ${failures:-?} failed, $skipped skipped, ${STEP_SECONDS} s"
    if ((rc != 0)) || [[ ${failures:-1} != 0 || ${errors:-0} != 0 ]]; then
      record FAIL "gpu_test $test" "$summary, exit $rc (log: logs/$(basename "$STEP_LOG")); failed: $(grep -o '<testcase name="[^"]*"[^>]*>[[:space:]]*<failure' "$xml" | grep -o 'name="[^"]*"' | head -5 | tr '\n' ' ')"
    elif ((GPU && skipped > 0)); then
      record FAIL "gpu_test $test" "$summary: on a GPU machine a skip is a failure: $(grep -m1 -A2 '<skipped' "$xml" | tr -s ' \n' ' ' | cut -c1-300)"
    elif ((!GPU)); then
      record PASS "gpu_test $test (no GPU: started, linked, skipped)" "$summary"
    else
      record PASS "gpu_test $test" "$summary"
    fi
  done
}

# An example run, judged by its exit status (0 only when the result matched the CPU
# reference and the trace verified) and its "result:" line. OUT_SUBDIR is under traces/
# unless it is an absolute path; EXAMPLE_LIMIT_S (default 120) bounds the run.
EXAMPLE_LIMIT_S=120
run_example() {  # run_example LABEL OUT_SUBDIR BINARY ARGS...
  local label=$1 sub=$2 binary=$3
  shift 3
  [[ $sub == /* ]] || sub=$TRACES/$sub
  STEP_QUIET=1 step "$label" "$EXAMPLE_LIMIT_S" "${RUN[@]}" "$BIN/$binary" --out="$sub" "$@"
  local rc=$?
  ((rc == 125)) && return $rc
  local result
  result=$(first_line '^result: ')
  if ((rc == 0)) && [[ -n $result ]]; then
    record PASS "$label" "${result#result: } (${STEP_SECONDS} s)"
  elif ((rc == 124 || rc == 137)); then
    record FAIL "$label" "timed out (log: logs/$(basename "$STEP_LOG"))"
  else
    record FAIL "$label" "exit $rc: $(grep -v '^\s*$' "$STEP_LOG" | tail -1 | cut -c1-300) (log: logs/$(basename "$STEP_LOG"))"
  fi
  return $rc
}

EXAMPLES=(tiled_gemm warp_specialized_pipeline reduction cluster_reduction)
# The pipeline's variants (after --unit=warp); "bulk" ones need sm_90.
PIPELINE_VARIANTS=(
  "--copy=cp_async --stages=3"
  "--copy=cp_async --stages=4 --persistent"
  "--copy=bulk --stages=3 --arch=sm_90"
  "--copy=bulk --stages=2 --persistent --arch=sm_90"
  "--copy=bulk --stages=4 --persistent --k=1024 --producer_delay=20000 --arch=sm_90"
  "--copy=cp_async --stages=4 --persistent --k=1024 --consumer_delay=20000"
)
run_pipeline_variants() {  # run_pipeline_variants DEVICE
  local device=$1 i=0 variant
  for variant in "${PIPELINE_VARIANTS[@]}"; do
    i=$((i + 1))
    if [[ $device == cuda && $variant == *--copy=bulk* ]] && [[ -n $COMPUTE_CAP ]] &&
       ! awk -v cc="${COMPUTE_CAP:-0}" 'BEGIN { exit !(cc + 0 >= 9.0) }'; then
      record SKIPPED "pipeline $device $variant" "bulk copies need sm_90 (compute capability $COMPUTE_CAP)"
      continue
    fi
    # shellcheck disable=SC2086  # the variant is a list of flags
    run_example "pipeline $device $variant" "${device}_pipeline_$i" warp_specialized_pipeline \
      --device="$device" --unit=warp $variant
    grep -A1 '^diagnosis:' "$STEP_LOG" 2>/dev/null | tail -1 | sed 's/^ */    diagnosis: /' | tee -a "$RESULTS"
  done
}

# The warptrace CLI on a saved buffer: decode, verify, Chrome trace, summary, verdicts.
dump_saved() {  # dump_saved LABEL PREFIX [FLAGS...]
  local label=$1 prefix=$2
  shift 2
  if [[ ! -f $prefix.bin ]]; then
    record FAIL "$label" "no saved buffer $prefix.bin (the run that writes it failed)"
    return 1
  fi
  step "$label" 60 "${RUN[@]}" "$BIN/warptrace" dump --input="$prefix" \
    --output="$prefix.cli.trace.json" --summary --report="$prefix.cli.verdict.json" "$@"
}

gpu_examples() {
  local example combo unit placement
  for example in "${EXAMPLES[@]}"; do
    if [[ $example == cluster_reduction ]] && [[ -n $COMPUTE_CAP ]] &&
       ! awk -v cc="${COMPUTE_CAP:-0}" 'BEGIN { exit !(cc + 0 >= 9.0) }'; then
      record SKIPPED "example $example cuda" "thread-block clusters need sm_90 (compute capability $COMPUTE_CAP)"
      continue
    fi
    for combo in "warpgroup auto" "warp global" "warp shared" "block shared" "block global"; do
      read -r unit placement <<<"$combo"
      run_example "example $example cuda $unit/$placement" "cuda_${unit}_${placement}" \
        "$example" --device="$CUDA_DEVICE" --unit="$unit" --placement="$placement"
    done
    run_example "example $example cuda unprofiled" "cuda_unprofiled" "$example" \
      --device="$CUDA_DEVICE" --profile=false
    [[ $example == tiled_gemm ]] && say "  $(first_line '^device: ')"
  done
  run_example "example first_kernel cuda" "cuda_first_kernel" first_kernel --device="$CUDA_DEVICE"
  # A program of two kernels (partition, reduce) with one pipeline timeline, at a GPU size.
  run_example "example split_softmax cuda" "cuda_split_softmax" split_softmax \
    --device="$CUDA_DEVICE" --rows=64 --max_len=16384
  dump_saved "warptrace dump of a GPU trace (tiled_gemm warp/global)" \
    "$TRACES/cuda_warp_global/tiled_gemm"
}

record_cost() {
  step "record cost (SM cycles per recorded event)" 120 "${RUN[@]}" "$BIN/record_cost_gpu" \
    --device="$CUDA_DEVICE" --iterations=1000 --runs=15 || return
  grep -E '^placement ' "$STEP_LOG" | while read -r line; do number "record_cost $line"; done
}

# What-if on real hardware: the pipeline with a planted consumer delay and without; the
# prediction from the first (each consumer mma shortened by the delay's time, at the trace's
# own SM clock) against the second's measured kernel time. No threshold: it is the first
# measurement of how much the graph's blind spots (bandwidth, tensor-core contention, clock
# changes) matter on a GPU.
WHATIF_DELAY=${WHATIF_DELAY:-20000}
what_if_pipeline() {
  local flags="--m=128 --n=256 --k=1024 --stages=4 --persistent --copy=auto"
  local planted=$TRACES/whatif_planted/warp_specialized_pipeline
  local plain=$TRACES/whatif_plain/warp_specialized_pipeline
  # shellcheck disable=SC2086
  run_example "what-if pipeline cuda consumer_delay=$WHATIF_DELAY" whatif_planted \
    warp_specialized_pipeline --device="$CUDA_DEVICE" --consumer_delay="$WHATIF_DELAY" $flags || return
  local mhz
  mhz=$(grep -m1 -oE 'mean [0-9.]+ MHz' "$STEP_LOG" | tr -dc '0-9.')
  # shellcheck disable=SC2086
  run_example "what-if pipeline cuda consumer_delay=0" whatif_plain \
    warp_specialized_pipeline --device="$CUDA_DEVICE" --consumer_delay=0 $flags || return
  if [[ -z $mhz ]]; then
    record FAIL "what-if pipeline" "no SM clock (mean ... MHz) in the planted run's summary"
    return
  fi
  local cut
  cut=$(awk -v c="$WHATIF_DELAY" -v mhz="$mhz" 'BEGIN { printf "%d", c * 1000 / mhz }')
  step "what-if pipeline predict (consumer:mma=-${cut}ns)" 120 "${RUN[@]}" "$BIN/warptrace" whatif \
    --input="$planted" --speedup="consumer:mma=-${cut}ns" --causal-profile=false \
    --json="$planted.whatif.json" || return
  step "what-if pipeline measure (no delay)" 120 "${RUN[@]}" "$BIN/warptrace" whatif \
    --input="$plain" --speedup="consumer:mma=1" --causal-profile=false \
    --json="$plain.whatif.json" || return
  local predicted measured planted_ns
  predicted=$(grep -oE '"predicted_ns":[0-9]+' "$planted.whatif.json" | head -1 | tr -dc 0-9)
  planted_ns=$(grep -oE '"measured_ns":[0-9]+' "$planted.whatif.json" | head -1 | tr -dc 0-9)
  measured=$(grep -oE '"measured_ns":[0-9]+' "$plain.whatif.json" | head -1 | tr -dc 0-9)
  number "what-if pipeline: planted consumer_delay=$WHATIF_DELAY cycles measured ${planted_ns:-?} ns; shortened by $cut ns per mma (at $mhz MHz) predicted ${predicted:-?} ns; the run without the delay measured ${measured:-?} ns; $(awk -v p="${predicted:-0}" -v m="${measured:-0}" 'BEGIN { if (m > 0) printf "prediction / measured = %.3f", p / m; else print "no ratio" }')"
}

# Profiled vs unprofiled: median of REPEAT launches each (CUDA events), every example.
timing() {
  local example flags profile median on off
  for example in "${EXAMPLES[@]}"; do
    case $example in
      tiled_gemm) flags="--m=$GEMM_SIZE --n=$GEMM_SIZE --k=$GEMM_SIZE --tile=16" ;;
      warp_specialized_pipeline) flags="--m=128 --n=256 --k=1024 --stages=4 --persistent --copy=auto" ;;
      reduction) flags="--n=1048576 --blocks=264 --threads=256" ;;
      cluster_reduction) flags="--n=1048576 --blocks=264 --threads=256 --cluster=2" ;;
    esac
    on= off=
    for profile in true false; do
      # shellcheck disable=SC2086
      run_example "timing $example profile=$profile ($flags)" "timing_${example}_$profile" \
        "$example" --device="$CUDA_DEVICE" --profile="$profile" --repeat="$REPEAT" $flags || continue
      median=$(first_line '^timing: ' | sed -E 's/.*median ([0-9.]+) us.*/\1/')
      number "timing $example profile=$profile: $(first_line '^timing: ' | sed 's/^timing: //')"
      [[ $profile == true ]] && on=$median || off=$median
    done
    if [[ -n $on && -n $off ]]; then
      number "slowdown $example (median profiled / median unprofiled): $(awk -v on="$on" -v off="$off" 'BEGIN { if (off > 0) printf "%.3fx", on / off; else print "n/a" }')"
    fi
  done
}

# The wheel (bundled, built with the bundle) in the machine's own python3: pip install
# --no-index --no-deps into the scratch directory, then a check from there (wheel_mosaic.py
# install: the package imports from that directory, dumps a synthetic Mosaic buffer, names
# the entries_per_warpgroup an overflowed one needed). Once per run; WHEEL_SITE is set when
# it passed (the JAX anchor below uses it). Exit 3 (no pip) is a SKIPPED.
WHEEL_SITE= WHEEL_TRIED=0
wheel_site() {
  ((WHEEL_TRIED)) && return
  WHEEL_TRIED=1
  local wheel
  wheel=$(ls "$BUNDLE"/warptrace-*.whl 2>/dev/null | head -1)
  if [[ -z $wheel ]]; then
    record FAIL "wheel install (pip --no-index --no-deps)" "the bundle has no warptrace-*.whl"
    return
  fi
  STEP_QUIET=1 step "wheel install (pip --no-index --no-deps)" 120 "$PYTHON" \
    "$BUNDLE/wheel_mosaic.py" install --wheel="$wheel" --target="$WORK/wheel_site" \
    --out="$TRACES/wheel_check"
  local rc=$?
  case $rc in
    0) record PASS "wheel install (pip --no-index --no-deps)" "$(first_line '^wheel: ok' | cut -c1-300)"
       WHEEL_SITE=$WORK/wheel_site ;;
    3) record SKIPPED "wheel install (pip --no-index --no-deps)" "$(first_line '^skipped: ' | cut -c1-300)" ;;
    125) ;;
    *) record FAIL "wheel install (pip --no-index --no-deps)" "exit $rc: $(grep -v '^\s*$' "$STEP_LOG" | tail -1 | cut -c1-300) (log: logs/$(basename "$STEP_LOG"))" ;;
  esac
}

# A real Mosaic GPU kernel profiled with JAX through the wheel's warptrace.mosaic.install():
# the dump compared event by event with Mosaic's own on the same buffer, then the
# "Insufficient space" case and a relaunch at the entries_per_warpgroup warptrace named.
mosaic_install_anchor() {
  local name="anchor warptrace.mosaic.install() (JAX Mosaic GPU kernel, the wheel)"
  wheel_site
  if [[ -z $WHEEL_SITE ]]; then
    record SKIPPED "$name" "the wheel did not install (see 'wheel install' above)"
    return
  fi
  STEP_QUIET=1 step "$name" 200 "$PYTHON" "$BUNDLE/wheel_mosaic.py" jax \
    --target="$WHEEL_SITE" --out="$TRACES/anchors/wheel_mosaic"
  local rc=$?
  grep -E '^jax: ' "$STEP_LOG" 2>/dev/null | sed 's/^/  /' | tee -a "$RESULTS"
  case $rc in
    0) record PASS "$name" "${STEP_SECONDS} s" ;;
    3) record SKIPPED "$name" "$(first_line '^skipped: ' | cut -c1-300)" ;;
    125) ;;
    *) record FAIL "$name" "exit $rc (log: logs/$(basename "$STEP_LOG"))" ;;
  esac
}

anchors() {
  local dir=$TRACES/anchors
  mkdir -p "$dir"
  if ! command -v "$PYTHON" >/dev/null; then
    record FAIL "anchors" "no $PYTHON"
    return
  fi
  # The GEMM problems of the examples (tiled_gemm's and the pipeline's defaults, the shapes
  # timed above), and one large one.
  step "anchor torch (bf16 matmul, SDPA)" 150 "$PYTHON" "$BUNDLE/anchors.py" torch --out="$dir" \
    --gemm=64x64x128 --gemm=32x64x256 --gemm="${GEMM_SIZE}x${GEMM_SIZE}x${GEMM_SIZE}" \
    --gemm=128x256x1024 --gemm=4096x4096x4096 \
    --sdpa=1x16x1024x64 --sdpa=4x16x4096x128 --repeat="$REPEAT"
  grep '^anchor: ' "$STEP_LOG" 2>/dev/null | while read -r line; do number "${line#anchor: }"; done
  step "anchor Mosaic GPU (ProfilerSpec raw buffer)" 200 "$PYTHON" "$BUNDLE/anchors.py" mosaic \
    --out="$dir/mosaic"
  grep '^anchor: ' "$STEP_LOG" 2>/dev/null | while read -r line; do say "  ${line#anchor: }"; done
  # warptrace's dump of each buffer Mosaic's profiler wrote (an overflowed one is expected to
  # be refused by Mosaic and shown, truncated, by warptrace), compared with Mosaic's own dump.
  local prefix extra
  for prefix in "$dir"/mosaic/*.bin; do
    [[ -e $prefix ]] || break
    prefix=${prefix%.bin}
    extra=()
    [[ $prefix == *overflow* ]] && extra=(--allow-truncated)
    dump_saved "warptrace dump of Mosaic's buffer $(basename "$prefix")" "$prefix" \
      ${SM_CLOCK_KHZ:+--sm-clock-khz=$SM_CLOCK_KHZ} "${extra[@]}"
    grep -m2 -E '^verdicts:|overflow' "$STEP_LOG" 2>/dev/null | sed 's/^/    /' | tee -a "$RESULTS"
    [[ -f $prefix.cli.trace.json ]] || continue
    step "Mosaic vs warptrace regions $(basename "$prefix")" 60 "$PYTHON" "$BUNDLE/anchors.py" \
      compare --prefix="$prefix" --trace="$prefix.cli.trace.json"
    grep -m1 '^compare ' "$STEP_LOG" 2>/dev/null | sed 's/^/    /' | tee -a "$RESULTS"
  done
  mosaic_install_anchor
}

# The big kernels at GPU sizes: each unprofiled and profiled, the median of BIG_REPEAT
# launches, the result checked by the example (its reference on sampled rows at these
# sizes), then vendor_compare.py's table against PyTorch on the same problems. Their traces
# (millions of events) stay in the scratch directory; their verdict reports go to traces/big.
BIG_TABLE=
big_row() {  # big_row LABEL KIND DIMS BINARY FLAGS...: two runs, one row of the table
  local label=$1 kind=$2 dims=$3 binary=$4
  shift 4
  local profile median on='' off='' note='' sub
  for profile in false true; do
    sub=$WORK/big/$(log_name "$label")_$profile
    EXAMPLE_LIMIT_S=240 run_example "big $label profile=$profile" "$sub" "$binary" \
      --device="$CUDA_DEVICE" --profile="$profile" --repeat="$BIG_REPEAT" "$@"
    local rc=$?
    if ((rc != 0)); then
      note="${note:+$note; }profile=$profile: $( ((rc == 125)) && echo 'not run (time budget spent)' || echo "failed (log: logs/$(basename "$STEP_LOG"))")"
      continue
    fi
    median=$(first_line '^timing: ' | sed -E 's/.*median ([0-9.]+) us.*/\1/')
    [[ $median =~ ^[0-9.]+$ ]] || { note="${note:+$note; }profile=$profile: no timing line"; continue; }
    number "big $label profile=$profile: $(first_line '^timing: ' | sed 's/^timing: //')"
    [[ $profile == true ]] && on=$median || off=$median
    mkdir -p "$TRACES/big"
    [[ $profile == true && -f $sub/$binary.verdict.json ]] &&
      cp "$sub/$binary.verdict.json" "$TRACES/big/$(log_name "$label").verdict.json"
  done
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$kind" "$dims" "$off" "$on" "$note" >>"$BIG_TABLE"
}

big_kernels() {
  BIG_TABLE=$WORK/big_kernels.tsv
  : >"$BIG_TABLE"
  if [[ $CUDA_DEVICE != cuda ]] && ((BIG_SIZE > 256)); then
    # GPU sizes on the host backend take hours: never there (WARPTRACE_SIMULATE_GPU=1 with
    # BIG_SIZE=256 or less checks this part of the script on the host).
    record SKIPPED "big kernels at GPU sizes" "--device=$CUDA_DEVICE: $BIG_SIZE^3 GEMMs are hours on the host backend (BIG_SIZE <= 256 runs them there)"
  else
    local s=$BIG_SIZE sms
    local gemm="--m=$s --n=$s --k=$s"
    if [[ -n $COMPUTE_CAP ]] && ! awk -v cc="$COMPUTE_CAP" 'BEGIN { exit !(cc + 0 >= 9.0) }'; then
      record SKIPPED "big hopper_gemm" "wgmma and TMA need sm_90 (compute capability $COMPUTE_CAP)"
    else
      # shellcheck disable=SC2086
      big_row "hopper_gemm cooperative" gemm "${s}x${s}x${s}:bt" hopper_gemm $gemm
      if [[ $CUDA_DEVICE == cuda ]]; then
        sms=$(timeout 30 "$PYTHON" "$BUNDLE/vendor_compare.py" sms 2>&1 | tail -1)
      else
        sms=3  # the simulation's "SM count": an uneven split of the tiles
      fi
      if [[ $sms =~ ^[0-9]+$ ]]; then
        # shellcheck disable=SC2086
        big_row "hopper_gemm pingpong persistent blocks=$sms" gemm "${s}x${s}x${s}:bt" \
          hopper_gemm $gemm --pingpong --persistent --blocks="$sms"
      else
        record FAIL "big hopper_gemm pingpong persistent" "no SM count for --blocks: $sms"
      fi
      # 2-CTA clusters sharing an operand by TMA multicast (CUTLASS's sm90 2x1 and 1x2):
      # cuLaunchKernelEx's cluster launch, multicast and remote mbarrier arrivals on the GPU.
      local shape
      for shape in 2x1 1x2; do
        # shellcheck disable=SC2086
        big_row "hopper_gemm cluster $shape" gemm "${s}x${s}x${s}:bt" hopper_gemm $gemm \
          --cluster="$shape"
      done
    fi
    # shellcheck disable=SC2086
    big_row "ampere_gemm" gemm "${s}x${s}x${s}" ampere_gemm $gemm
    # Attention: sequence BIG_SEQ (4096), 16 heads, head dim 128 (the simulation: one head of
    # BIG_SIZE).
    local seq=$BIG_SEQ heads=16
    [[ $CUDA_DEVICE == cuda ]] || { seq=$s; heads=1; }
    if [[ ! -e $BIN/flash_attention ]]; then
      record SKIPPED "big flash_attention" "not in this bundle (no bin/flash_attention)"
    elif [[ -n $COMPUTE_CAP ]] && ! awk -v cc="$COMPUTE_CAP" 'BEGIN { exit !(cc + 0 >= 9.0) }'; then
      record SKIPPED "big flash_attention" "wgmma and TMA need sm_90 (compute capability $COMPUTE_CAP)"
    else
      big_row "flash_attention" attention "1x${heads}x${seq}x128" flash_attention \
        --batch=1 --heads="$heads" --seq="$seq" --head_dim=128
    fi
  fi
  vendor_table
}

# vendor_compare.py's table (PyTorch on the same problems) into OUTDIR; its lines into
# results.txt. Without a GPU or torch it says "skipped: ..." and still writes the table.
vendor_table() {
  if ! command -v "$PYTHON" >/dev/null; then
    record FAIL "big kernels vs vendor (vendor_compare.py)" "no $PYTHON"
    return
  fi
  step "big kernels vs vendor (vendor_compare.py)" 150 "$PYTHON" "$BUNDLE/vendor_compare.py" \
    table --examples="$BIG_TABLE" --json="$OUTDIR/big_kernels.json" \
    --text="$OUTDIR/big_kernels.txt" --repeat="$BIG_REPEAT"
  grep -E '^(skipped|vendor|FAIL vendor): ' "$STEP_LOG" 2>/dev/null | while read -r line; do number "$line"; done
  [[ -f $OUTDIR/big_kernels.txt ]] && sed 's/^/  /' "$OUTDIR/big_kernels.txt" | tee -a "$RESULTS"
}

# What profiling costs each kernel's compile and code (the examples' --cost: registers,
# SASS, the perturbation line, and the compile time with its NVRTC phases, profiled against
# unprofiled), on this machine's CPUs with its NVRTC: no GPU needed, so it runs everywhere.
# The kept sources and cubins go to scratch, not to traces.tgz.
compile_cost() {
  local example
  for example in tiled_gemm warp_specialized_pipeline hopper_gemm flash_attention; do
    if step "compile cost $example (NVRTC, $(nproc) CPUs)" 120 "${RUN[@]}" "$BIN/$example" \
         --cost --cost_repeats=5 --out="$WORK/compile_cost"; then
      grep -E "^$example |^  $example(\.[a-z_]+)? (perturbation:|compile ms by phase)" "$STEP_LOG" |
        while read -r line; do number "compile_cost $line"; done
    fi
  done
}

host_parts() {
  if ((!HAVE_CXX)); then
    local verdict=SKIPPED
    ((GPU)) || verdict=FAIL
    record $verdict "host backend parts" "no C++ compiler (g++, clang++, c++ or WARPTRACE_HOST_CXX) for the host backend"
    return
  fi
  local example
  for example in "${EXAMPLES[@]}"; do
    run_example "example $example host" "host" "$example" --device=host
  done
  # The tensor-core kernels at their host defaults (the GPU sizes are the GPU's: big_kernels).
  run_example "example hopper_gemm host" "host" hopper_gemm --device=host
  run_example "example hopper_gemm cluster 2x1 host" "host_cluster_2x1" hopper_gemm \
    --device=host --cluster=2x1
  run_example "example hopper_gemm cluster 1x2 host" "host_cluster_1x2" hopper_gemm \
    --device=host --cluster=1x2
  run_example "example ampere_gemm host" "host" ampere_gemm --device=host
  run_example "example flash_attention host" "host" flash_attention --device=host
  run_pipeline_variants host
  run_example "example first_kernel host" "host_first_kernel" first_kernel --device=host
  run_example "example split_softmax host" "host" split_softmax --device=host
  step "record cost host (host clock ticks, not SM cycles)" 120 "${RUN[@]}" "$BIN/record_cost_gpu" \
    --device=host --iterations=200 --runs=3 &&
    grep -E '^placement ' "$STEP_LOG" | while read -r line; do number "record_cost host $line"; done
  dump_saved "warptrace dump of a host trace (tiled_gemm)" "$TRACES/host/tiled_gemm"
  compile_cost
  mkdir -p "$TRACES/mosaic_synthetic"
  if step "synthetic Mosaic GPU buffer" 60 "$PYTHON" "$BUNDLE/make_mosaic_buffer.py" \
       "$TRACES/mosaic_synthetic/mosaic_synthetic" 24000; then
    dump_saved "warptrace dump of the synthetic Mosaic buffer" "$TRACES/mosaic_synthetic/mosaic_synthetic"
  fi
  step "anchors.py selftest (pure Python: spec, buffer, sidecar)" 60 "$PYTHON" "$BUNDLE/anchors.py" selftest \
    --out="$TRACES/anchors_selftest"
  wheel_site
}

# Killed from outside (SIGTERM, ^C): pack what there is first.
trap 'say "run.sh: stopped by a signal after $(elapsed) s"; pack; exit 143' TERM INT

if ((GPU)); then
  say "== GPU test binaries"; run_gpu_tests; pack
  say "== examples on the GPU"; gpu_examples; run_pipeline_variants "$CUDA_DEVICE"; pack
  say "== big kernels at GPU sizes (vs PyTorch)"; big_kernels; pack
  say "== measurements"; record_cost; timing; what_if_pipeline; pack
  say "== anchors"; anchors; pack
  say "== host backend"; host_parts
else
  say "== host backend (no GPU: $NO_GPU_REASON)"
  host_parts
  say "== GPU test binaries (no GPU: they must start, link and skip)"; run_gpu_tests
  for part in "GPU tests with a GPU" "examples with --device=cuda (every unit/placement, unprofiled, first_kernel)" \
              "pipeline variants with --device=cuda" "record cost (SM cycles per event)" \
              "profiled vs unprofiled timing (CUDA events)" \
              "what-if pipeline (planted consumer delay: predicted vs measured without it)" \
              "anchor torch (bf16 matmul, SDPA)" \
              "anchor Mosaic GPU (ProfilerSpec raw buffer)" \
              "anchor warptrace.mosaic.install() (JAX Mosaic GPU kernel, the wheel)" \
              "big kernels at GPU sizes (hopper_gemm, ampere_gemm, flash_attention)"; do
    record SKIPPED "$part" "$NO_GPU_REASON"
  done
  # The vendor script still runs: it must say "skipped: no GPU" and write an empty table.
  BIG_TABLE=$WORK/big_kernels.tsv
  : >"$BIG_TABLE"
  vendor_table
fi
pack
trap - TERM INT
say ""
verdict=PASS
((OUT_OF_TIME)) && verdict="INCOMPLETE ($OUT_OF_TIME steps not run for lack of time)"
((FAILED)) && verdict=FAIL
say "overall: $verdict ($PASSED passed, $FAILED failed, $SKIPPED skipped) in $(elapsed) s"
say "outputs: $OUTDIR/results.txt, traces.tgz ($(stat -c %s "$OUTDIR/traces.tgz" 2>/dev/null || echo 0) bytes), logs.tgz ($(stat -c %s "$OUTDIR/logs.tgz" 2>/dev/null || echo 0) bytes)"
if [[ ${WARPTRACE_KEEP_SCRATCH:-0} == 1 ]]; then
  say "scratch kept: $WORK"
else
  rm -rf "$WORK"
fi
((FAILED == 0 && OUT_OF_TIME == 0))
