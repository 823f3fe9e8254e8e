#!/usr/bin/env bash
# The check to run on a machine with a GPU (it also runs, and says what it skipped, on one
# without):
#   1. builds everything (bazel build //...);
#   2. runs every example on the host backend (always), and the warp-specialized pipeline's
#      variants (cp.async and bulk copies, persistent, producer/consumer delays);
#   3. GPU only: the GPU tests (bazel test --test_tag_filters=gpu //...), every example with
#      --device=cuda for several trace units and placements, the pipeline's variants (the
#      bulk-copy ones where the GPU is sm_90 or newer), and two measurements:
#        (a) SM cycles per recorded event: //examples:record_cost_gpu, a tight loop with
#            records vs the same loop without (global and shared placement);
#        (b) the slowdown of tiled_gemm with profiling on vs off: the median of many
#            launches of each, timed with CUDA events (--repeat);
#      written to warptrace_out/gpu_results.txt.
#
# Usage: bash tools/gpu_check.sh          (from anywhere; runs in the repository root)
# Environment: BAZEL (default "bazel"; e.g. "bazel --output_base=/tmp/ob"),
#   GEMM_SIZE (default 512: M = N = K for the slowdown), REPEAT (default 200 launches),
#   RECORD_ITERATIONS (default 1000), WARPTRACE_FORCE_NO_GPU=1 (take the no-GPU path).
# Exit status: 0 when every part that ran passed (on a machine without a GPU the GPU parts
# are not run, and the output and results file say SKIPPED); non-zero, after a line
# "gpu_check: FAILED: <step>", otherwise — including when a GPU test case skipped itself on
# a GPU machine (a skip is not a pass).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
read -r -a BAZEL <<<"${BAZEL:-bazel}"
GEMM_SIZE=${GEMM_SIZE:-512}
REPEAT=${REPEAT:-200}
RECORD_ITERATIONS=${RECORD_ITERATIONS:-1000}
OUT=$ROOT/warptrace_out/gpu_check
RESULTS=$ROOT/warptrace_out/gpu_results.txt
EXAMPLES=(tiled_gemm warp_specialized_pipeline reduction)
# The pipeline's variants (flags after the common ones); "bulk" ones need sm_90.
PIPELINE_VARIANTS=(
  "--copy=cp_async --stages=3"
  "--copy=cp_async --stages=4 --persistent"
  "--copy=bulk --stages=3 --arch=sm_90"
  "--copy=bulk --stages=2 --persistent --arch=sm_90"
  "--copy=bulk --stages=4 --persistent --k=1024 --producer_delay=20000 --arch=sm_90"
  "--copy=cp_async --stages=4 --persistent --k=1024 --consumer_delay=20000"
)
mkdir -p "$OUT"

step() { echo; echo "== gpu_check: $*"; }
fail() { echo "gpu_check: FAILED: $*" >&2; exit 1; }
# Runs a target with `bazel run`, quietly; its own output is kept in $OUT/<log>.
run_target() {
  local log=$1; shift
  "${BAZEL[@]}" run --noshow_progress "$@" >"$OUT/$log" 2>&1 ||
    { tail -20 "$OUT/$log" >&2; return 1; }
}

have_gpu() {
  [[ ${WARPTRACE_FORCE_NO_GPU:-0} != 1 ]] || return 1
  if ! { [[ -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ]] ||
         ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; }; then
    return 1
  fi
  if command -v nvidia-smi >/dev/null; then nvidia-smi -L 2>/dev/null | grep -q '^GPU'; fi
}

step "building everything (${BAZEL[*]} build //...)"
"${BAZEL[@]}" build //... || fail "bazel build //..."

step "examples on the host backend"
for example in "${EXAMPLES[@]}"; do
  run_target "host_$example.log" "//examples:$example" -- --device=host --out="$OUT/host" ||
    fail "$example on the host backend (log: $OUT/host_$example.log)"
  echo "  $example: $(grep '^result: ' "$OUT/host_$example.log")"
done
# Runs every pipeline variant on device $1 ("host" or "cuda"); with $2 = "no_bulk" the
# bulk-copy variants are skipped (a GPU older than sm_90).
run_pipeline_variants() {
  local device=$1 no_bulk=${2:-} i=0 variant log
  for variant in "${PIPELINE_VARIANTS[@]}"; do
    i=$((i + 1))
    if [[ $no_bulk == no_bulk && $variant == *--copy=bulk* ]]; then
      echo "  pipeline $variant: SKIPPED (bulk copies need sm_90)"
      continue
    fi
    log="${device}_pipeline_variant_$i.log"
    # shellcheck disable=SC2086  # the variant is a list of flags
    run_target "$log" //examples:warp_specialized_pipeline -- --device="$device" \
      --unit=warp --out="$OUT/${device}_pipeline_$i" $variant ||
      fail "warp_specialized_pipeline $variant on $device (log: $OUT/$log)"
    echo "  pipeline $variant: $(grep '^result: ' "$OUT/$log")"
    grep -A1 '^diagnosis:' "$OUT/$log" | tail -1 | sed 's/^ */    diagnosis: /'
  done
}
step "warp-specialized pipeline variants on the host backend"
run_pipeline_variants host

if ! have_gpu; then
  reason="no CUDA driver (libcuda.so.1) or no GPU visible to nvidia-smi"
  [[ ${WARPTRACE_FORCE_NO_GPU:-0} == 1 ]] && reason="WARPTRACE_FORCE_NO_GPU=1"
  {
    echo "warptrace gpu_check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
    echo "SKIPPED the GPU parts: $reason."
    echo "Not run: GPU tests, examples with --device=cuda, record cost, tiled_gemm slowdown."
  } >"$RESULTS"
  step "SKIPPED the GPU parts: $reason"
  echo "  not run: the GPU tests (--test_tag_filters=gpu), the examples with --device=cuda,"
  echo "  the record-cost and tiled_gemm slowdown measurements. Host parts passed."
  echo "  results: $RESULTS"
  exit 0
fi

step "GPU tests (${BAZEL[*]} test --test_tag_filters=gpu //...)"
"${BAZEL[@]}" test --test_tag_filters=gpu --test_output=errors //... ||
  fail "the GPU tests"
# Bazel counts a suite whose cases all skipped as PASSED: read every GPU suite's XML and
# count skipped cases as not passed (on a GPU machine a skip means a broken device setup).
testlogs=$("${BAZEL[@]}" info bazel-testlogs 2>/dev/null)
skipped=()
for target in $("${BAZEL[@]}" query 'attr(tags, "\bgpu\b", tests(//...))' 2>/dev/null); do
  xml="$testlogs/$(sed -e 's|^//||' -e 's|:|/|' <<<"$target")/test.xml"
  [[ -f $xml ]] || fail "no test results for $target ($xml)"
  while read -r name; do skipped+=("$target: $name"); done < <(
    grep -o '<testcase name="[^"]*"[^>]*result="skipped"' "$xml" | sed -E 's/<testcase name="([^"]*)".*/\1/')
done
if ((${#skipped[@]})); then
  printf '  skipped: %s\n' "${skipped[@]}" >&2
  fail "${#skipped[@]} GPU test cases were skipped, not passed (see their test.log: why the device did not open)"
fi

step "examples on the GPU"
for example in "${EXAMPLES[@]}"; do
  for combo in "warpgroup auto" "warp global" "block shared"; do
    read -r unit placement <<<"$combo"
    log="cuda_${example}_${unit}_${placement}.log"
    run_target "$log" "//examples:$example" -- --device=cuda --unit="$unit" \
      --placement="$placement" --out="$OUT/cuda_${unit}_${placement}" ||
      fail "$example --device=cuda --unit=$unit --placement=$placement (log: $OUT/$log)"
    echo "  $example ($unit, $placement): $(grep '^result: ' "$OUT/$log")"
  done
  run_target "cuda_${example}_unprofiled.log" "//examples:$example" -- --device=cuda \
    --profile=false --out="$OUT/cuda_unprofiled" ||
    fail "$example --device=cuda --profile=false"
done
device_line=$(grep -m1 '^device: ' "$OUT/cuda_tiled_gemm_warpgroup_auto.log")

step "warp-specialized pipeline variants on the GPU"
compute_cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
if awk -v cc="${compute_cap:-0}" 'BEGIN { exit !(cc + 0 >= 9.0) }'; then
  run_pipeline_variants cuda
else
  run_pipeline_variants cuda no_bulk
fi

step "(a) SM cycles per recorded event"
run_target record_cost.log -c opt //examples:record_cost_gpu -- --device=cuda \
  --iterations="$RECORD_ITERATIONS" --runs=15 || fail "record_cost_gpu"
grep -E '^placement ' "$OUT/record_cost.log" | sed 's/^/  /'

step "(b) tiled_gemm ${GEMM_SIZE}^3: profiling on vs off, median of $REPEAT launches"
declare -A median
for profile in true false; do
  run_target "gemm_timing_$profile.log" -c opt //examples:tiled_gemm -- --device=cuda \
    --m="$GEMM_SIZE" --n="$GEMM_SIZE" --k="$GEMM_SIZE" --tile=16 --profile="$profile" \
    --repeat="$REPEAT" --out="$OUT/timing" || fail "tiled_gemm --profile=$profile --repeat"
  line=$(grep '^timing: ' "$OUT/gemm_timing_$profile.log") || fail "no timing line (--profile=$profile)"
  echo "  $line"
  median[$profile]=$(sed -E 's/.*median ([0-9.]+) us.*/\1/' <<<"$line")
done
slowdown=$(awk -v on="${median[true]}" -v off="${median[false]}" \
  'BEGIN { if (off > 0) printf "%.3f", on / off; else print "n/a" }')
echo "  slowdown (median profiled / median unprofiled): ${slowdown}x"

{
  echo "warptrace gpu_check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
  echo "$device_line"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null |
    sed 's/^/nvidia-smi: /' || true
  echo "GPU tests: passed; examples with --device=cuda: passed (warpgroup/auto, warp/global, block/shared, unprofiled)"
  echo "pipeline variants with --device=cuda: passed (compute capability ${compute_cap:-unknown}):"
  printf '  %s\n' "${PIPELINE_VARIANTS[@]}"
  echo
  echo "(a) record cost, ${RECORD_ITERATIONS}-iteration loop, 2 events per iteration, median of 15 runs:"
  grep -E '^(record cost|placement )' "$OUT/record_cost.log"
  echo
  echo "(b) tiled_gemm ${GEMM_SIZE}x${GEMM_SIZE}x${GEMM_SIZE} tile 16, $REPEAT launches each (CUDA events):"
  grep -h '^timing: ' "$OUT/gemm_timing_true.log" "$OUT/gemm_timing_false.log"
  echo "slowdown with profiling: ${slowdown}x"
} >"$RESULTS"
step "results written to $RESULTS"
cat "$RESULTS"
