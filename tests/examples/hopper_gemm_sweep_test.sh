#!/usr/bin/env bash
# hopper_gemm_sweep_test.sh SWEEP: runs the sweep example at its default size and checks the
# answer: 16 configurations, 2 launches each, each with a bound and an mma p95, and the
# partitioned dataset on disk. Fails (never skips) without the tables Python
# (run_tables_test.sh's: tools/setup.sh makes it).
set -euo pipefail
sweep="$1"
python="${WARPTRACE_TABLES_PYTHON:-/var/cache/warptrace-test/tablesvenv311/bin/python}"
"$python" -c 'import pyarrow, duckdb' || { echo "FAIL: no tables Python at $python: run tools/setup.sh"; exit 1; }
out="${TEST_TMPDIR:-/tmp}/sweep"
export WARPTRACE_CACHE_DIR="${TEST_TMPDIR:-/tmp}/cache"  # the host backend's compile cache
RUNFILES_DIR="$TEST_SRCDIR" "$sweep" --out="$out" > "$out.log" 2>&1 || { cat "$out.log"; exit 1; }
cat "$out.log"
grep -q '^16 configurations x 2 launches' "$out.log" || { echo "FAIL: not 16 x 2"; exit 1; }
rows=$(grep -cE '^ *(64|128) +[24] +[01] +[01] +0 +2 +(producer|consumer)-bound ' "$out.log" || true)
[[ $rows == 16 ]] || { echo "FAIL: $rows answer rows, not 16"; exit 1; }
files=$(find "$out/dataset/slices" -name '*.parquet' | wc -l)
[[ $files == 32 ]] || { echo "FAIL: $files slices files, not 32"; exit 1; }
[[ -d "$out/dataset/slices/bn=64/consumer_delay=0/persistent=1/pingpong=1/repeat=1/stages=4" ]] ||
  { echo "FAIL: no Hive partition directory for bn=64 ... stages=4"; exit 1; }
echo PASS
