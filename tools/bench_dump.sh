#!/bin/bash
# Every "Must show" number of issue 34 for the CLI dump, in one go (rerun it on an idle machine):
#   tools/bench_dump.sh [REPS] [--1e8]
# Builds the opt CLI and the buffer generators, writes 1e6-event warptrace and Mosaic buffers
# under $BENCH (default /tmp/bench34), then per buffer, REPS (default 5) paired rounds of
#   floor: `cat` of the input to /dev/null + `cp` of a file the size of the output,
#   warptrace dump to Perfetto, warptrace dump to Chrome JSON (default threads: the cores),
#   and the same two with --threads=1,
# and prints medians, bytes per event, and the ratios; the --threads=1 and default outputs
# are compared byte for byte. Each timed command starts after a `sync` (untimed), so the
# previous one's dirty pages (44 MB of JSON) are not being written back during it. Mosaic's own dump (JAX's
# ProfilerSpec.dump, Chrome JSON, one run on the same-sized Mosaic buffer) is timed with
# /var/cache/warptrace-test/jaxvenv311 when it exists (tools/setup.sh makes it). --1e8 also dumps a 1e8-event
# buffer (~860 MB; needs ~3 GB in $BENCH, deleted after) under /usr/bin/time -v: time,
# peak RSS, bytes per event; and a 1e8-event Mosaic buffer the same way.
set -euo pipefail
REPS=${1:-5}
BIG=${2:-}
BENCH=${BENCH:-/tmp/bench34}
mkdir -p "$BENCH"
cd "$(dirname "$0")/.."
bazel build -c opt //profiler/cli:warptrace //tests/profiler/cli:make_synthetic_trace >/dev/null 2>&1
WT=$BENCH/warptrace
cp -f bazel-bin/profiler/cli/warptrace "$WT"
[ -f "$BENCH/wt1m.bin" ] || bazel-bin/tests/profiler/cli/make_synthetic_trace "$BENCH/wt1m" 1000000 >/dev/null
[ -f "$BENCH/mo1m.bin" ] || /usr/bin/python3 tests/profiler/cli/make_mosaic_buffer.py "$BENCH/mo1m" 1000000 >/dev/null
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; $(date -u)"

now() { echo "$EPOCHREALTIME"; }  # bash 5: no process spawned
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
events_of() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['otherData']['slices']*2)" "$1"; }

MOSAIC_S=""
if [ -x /var/cache/warptrace-test/jaxvenv311/bin/python ]; then
  MOSAIC_S=$(/var/cache/warptrace-test/jaxvenv311/bin/python - <<'PY' 2>/dev/null || true
import os, sys, tempfile, time
sys.path.insert(0, "tests/python")
from jax.experimental.mosaic.gpu import profiler
import mosaic_benchmark as mb
spec = profiler.ProfilerSpec(entries_per_warpgroup=3 + 2 * (2 + 6 * mb.ITERATIONS))
buf, blocks, n = mb.make_buffer(spec, 1_000_000)
d = tempfile.mkdtemp()
start = time.perf_counter()
with open(os.path.join(d, "m.json"), "w") as f:
    spec.dump(buf, f, grid=(blocks, 1, 1), block=(256, 1, 1))
print(f"{time.perf_counter() - start:.3f}")
PY
)
fi
echo "Mosaic ProfilerSpec.dump (1e6-event Mosaic buffer, Chrome JSON): ${MOSAIC_S:-not measured (no /var/cache/warptrace-test/jaxvenv311)} s"

for buf in wt1m mo1m; do
  in=$BENCH/$buf
  "$WT" dump --input="$in" --output="$in.out.pftrace" >/dev/null 2>&1
  "$WT" dump --input="$in" --output="$in.out.json" >/dev/null 2>&1
  events=$(events_of "$in.out.json")
  head -c "$(stat -c %s "$in.out.pftrace")" /dev/urandom > "$BENCH/same_pf"
  head -c "$(stat -c %s "$in.out.json")" /dev/urandom > "$BENCH/same_json"
  : > "$BENCH/t_floor_pf"; : > "$BENCH/t_floor_json"; : > "$BENCH/t_pf"; : > "$BENCH/t_json"
  : > "$BENCH/t_pf1"; : > "$BENCH/t_json1"
  for _ in $(seq "$REPS"); do
    sync; t0=$(now); "$WT" dump --input="$in" --output="$in.out1.pftrace" --threads=1 >/dev/null 2>&1; t1=$(now)
    echo "$t1 - $t0" | bc >> "$BENCH/t_pf1"
    sync; t0=$(now); "$WT" dump --input="$in" --output="$in.out1.json" --threads=1 >/dev/null 2>&1; t1=$(now)
    echo "$t1 - $t0" | bc >> "$BENCH/t_json1"
    sync; t0=$(now); cat "$in.bin" "$in.json" >/dev/null; cp "$BENCH/same_pf" "$BENCH/copy"; t1=$(now)
    echo "$t1 - $t0" | bc >> "$BENCH/t_floor_pf"
    sync; t0=$(now); "$WT" dump --input="$in" --output="$in.out.pftrace" >/dev/null 2>&1; t1=$(now)
    echo "$t1 - $t0" | bc >> "$BENCH/t_pf"
    sync; t0=$(now); cat "$in.bin" "$in.json" >/dev/null; cp "$BENCH/same_json" "$BENCH/copy"; t1=$(now)
    echo "$t1 - $t0" | bc >> "$BENCH/t_floor_json"
    sync; t0=$(now); "$WT" dump --input="$in" --output="$in.out.json" >/dev/null 2>&1; t1=$(now)
    echo "$t1 - $t0" | bc >> "$BENCH/t_json"
  done
  cmp -s "$in.out.pftrace" "$in.out1.pftrace" && cmp -s "$in.out.json" "$in.out1.json" \
    && same="byte-identical" || same="DIFFERENT"
  pf1=$(median < "$BENCH/t_pf1"); js1=$(median < "$BENCH/t_json1")
  fpf=$(median < "$BENCH/t_floor_pf"); pf=$(median < "$BENCH/t_pf")
  fjs=$(median < "$BENCH/t_floor_json"); js=$(median < "$BENCH/t_json")
  pfb=$(stat -c %s "$in.out.pftrace"); jsb=$(stat -c %s "$in.out.json")
  echo "$buf: $events events, $(stat -c %s "$in.bin") bytes in; medians of $REPS paired runs; --threads=1 and default outputs $same"
  printf "  Perfetto   %8.3f s  %10d B  %6.2f B/event  floor %.3f s  %5.1fx floor" \
    "$pf" "$pfb" "$(echo "$pfb / $events" | bc -l)" "$fpf" "$(echo "$pf / $fpf" | bc -l)"
  [ -n "$MOSAIC_S" ] && printf "  %6.1fx Mosaic" "$(echo "$MOSAIC_S / $pf" | bc -l)"
  echo
  printf "  JSON       %8.3f s  %10d B  %6.2f B/event  floor %.3f s  %5.1fx floor" \
    "$js" "$jsb" "$(echo "$jsb / $events" | bc -l)" "$fjs" "$(echo "$js / $fjs" | bc -l)"
  [ -n "$MOSAIC_S" ] && printf "  %6.1fx Mosaic" "$(echo "$MOSAIC_S / $js" | bc -l)"
  echo
  printf "  --threads=1: Perfetto %.3f s (%.1fx floor), JSON %.3f s (%.1fx floor)\n" \
    "$pf1" "$(echo "$pf1 / $fpf" | bc -l)" "$js1" "$(echo "$js1 / $fjs" | bc -l)"
  rm -f "$BENCH/same_pf" "$BENCH/same_json" "$BENCH/copy"
done

if [ "$BIG" = "--1e8" ]; then
  # A warptrace buffer and a Mosaic one (decoded where it lies: no converted copy).
  bazel-bin/tests/profiler/cli/make_synthetic_trace "$BENCH/wt1e8" 100000000 >/dev/null
  /usr/bin/python3 tests/profiler/cli/make_mosaic_buffer.py "$BENCH/mo1e8" 100000000 >/dev/null
  for big in "$BENCH/wt1e8" "$BENCH/mo1e8"; do
    for out in pftrace json; do
      # (not $big.json: that is the sidecar, which the dump refuses to overwrite)
      /usr/bin/time -v "$WT" dump --input="$big" --output="$big.out.$out" 2> "$BENCH/time_$out" >/dev/null
      events=$(grep -o '[0-9]* events' "$BENCH/time_$out" | head -1 | cut -d' ' -f1)
      printf "1e8 %-5s %-8s %s s wall, peak RSS %s KB, %d B out, %.2f B/event (%s events, input %d B)\n" \
        "$(basename "$big")" "$out" \
        "$(grep 'Elapsed' "$BENCH/time_$out" | awk '{print $NF}')" \
        "$(grep 'Maximum resident' "$BENCH/time_$out" | awk '{print $NF}')" \
        "$(stat -c %s "$big.out.$out")" "$(echo "$(stat -c %s "$big.out.$out") / $events" | bc -l)" \
        "$events" "$(stat -c %s "$big.bin")"
      rm -f "$big.out.$out"
    done
    rm -f "$big.bin" "$big.json"
  done
fi
