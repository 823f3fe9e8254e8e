#!/usr/bin/env bash
# Compares what two builds of warptrace write for the same saved traces: the CLI's files,
# stdout, stderr and exit status for a set of dump flag combinations, and the Python
# package's (through the C API) files and results. For refactors that must not change any
# output ("byte-identical to the tree before").
#
#   tools/compare_dump_outputs.sh BEFORE_ROOT AFTER_ROOT INPUT_DIR...
#
# Each ROOT is a workspace whose bazel-bin holds profiler/cli/warptrace and the wheel
# (python/warptrace-*.whl, unpacked here), built with
#   bazel build //profiler/cli:warptrace //python/...
# Every PREFIX.json under the INPUT_DIRs is dumped. Prints one line per difference and a
# count; exit 1 when anything differs. --threads=1 throughout: thread counts are tested to
# give the same bytes elsewhere (dump_threads_test), and this compares trees, not threads.
set -uo pipefail
if [[ $# -lt 3 ]]; then
  sed -n '2,/^set/p' "$0" | sed 's/^# \{0,1\}//;/^set/d' >&2
  exit 2
fi
before=$(cd "$1" && pwd -P)/bazel-bin
after=$(cd "$2" && pwd -P)/bazel-bin
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for side in before after; do
  root=${!side}
  wheel=$(ls "$root"/python/warptrace-*.whl | head -1)
  python3 -m zipfile -e "$wheel" "$work/$side-py" || { echo "no wheel under $root/python" >&2; exit 2; }
done

combos=(
  "--output=OUT/t.json"
  "--output=OUT/t.pftrace"
  "--output=OUT/t.json --events=be --json-args=full"
  "--output=OUT/t.json --summary --analysis=OUT/a.json --report=OUT/r.json"
  "--output=OUT/t.pftrace --allow-truncated --report=OUT/r.json"
  "--output=OUT/t.json --compensate-overhead --causal-profile=false --summary"
  "--output=OUT/t.json --sm-clock-khz=1500000 --analysis=OUT/a.json"
  "--output=OUT/t.json --events=mosaic --mosaic-overhead=false"
)

differences=0
compared=0
differ() {
  echo "DIFFERS: $*"
  differences=$((differences + 1))
}

# Runs one side: its files under $work/SIDE/N, its stdout/stderr/status beside them, with
# the side's directory replaced by OUT so the two sides' texts compare.
run_cli() {
  local side=$1 bin=$2 n=$3 prefix=$4 flags=$5
  local out=$work/$side/$n
  mkdir -p "$out/files"
  # shellcheck disable=SC2086
  "$bin/profiler/cli/warptrace" dump --input="$prefix" --threads=1 ${flags//OUT/$out/files} \
    >"$out/stdout" 2>"$out/stderr"
  echo $? >"$out/status"
  sed -i "s#$out/files#OUT#g" "$out/stdout" "$out/stderr"
}

run_python() {
  local side=$1 bin=$2 n=$3 prefix=$4
  local out=$work/$side/$n
  mkdir -p "$out/files"
  PYTHONPATH=$work/$side-py python3 - "$prefix" "$out/files" >"$out/stdout" 2>"$out/stderr" <<'EOF'
import json, sys, warptrace
prefix, out = sys.argv[1:]
for i, kw in enumerate([{"output": f"{out}/p.json"}, {"output": f"{out}/p.pftrace"},
                        {"output": f"{out}/s.json", "summary": True, "analysis": True}]):
    try:
        r = warptrace.dump(prefix, threads=1, **kw)
        print(i, r.ok, r.summary_text, json.dumps(r.analysis, sort_keys=True),
              json.dumps(r.units, sort_keys=True))
    except warptrace.TraceError as e:
        print(i, type(e).__name__, str(e).replace(out, "OUT"))
EOF
  echo $? >"$out/status"
}

compare_dirs() {
  local what=$1 n=$2
  local a=$work/before/$n b=$work/after/$n
  compared=$((compared + 1))
  for f in status stdout stderr; do
    cmp -s "$a/$f" "$b/$f" || differ "$what: $f"
  done
  local names
  names=$( (cd "$a/files" && ls; cd "$b/files" && ls) | sort -u)
  for f in $names; do
    cmp -s "$a/files/$f" "$b/files/$f" || differ "$what: $f"
  done
}

n=0
for dir in "$@"; do
  while IFS= read -r sidecar; do
    prefix=${sidecar%.json}
    for flags in "${combos[@]}"; do
      n=$((n + 1))
      run_cli before "$before" "$n" "$prefix" "$flags"
      run_cli after "$after" "$n" "$prefix" "$flags"
      compare_dirs "cli $(basename "$prefix") $flags" "$n"
    done
    n=$((n + 1))
    run_python before "$before" "$n" "$prefix"
    run_python after "$after" "$n" "$prefix"
    compare_dirs "python $(basename "$prefix")" "$n"
  done < <(find "$dir" -name '*.json' -exec grep -l '"format": *"\(warptrace\|mosaic-gpu\)"' {} + |
           sort)
done
echo "compared $compared runs: $differences differences"
[[ $differences -eq 0 ]]
