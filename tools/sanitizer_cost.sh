#!/bin/bash
# The sanitizer's cost per example (docs/sanitizer.md "What it costs"): ROUNDS rounds, each
# running --sanitize=none, bounds,init and all one after the other (--repeat=10, the median
# launch; an example with several kernels: their medians added); prints per example the
# median over rounds of each mode's time and of its ratio to the same round's `none`.
# Usage (after `bazel build //examples:all`): tools/sanitizer_cost.sh ROUNDS EXAMPLE...
set -euo pipefail
rounds=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for e in "$@"; do
  for r in $(seq "$rounds"); do
    for s in none bounds,init all; do
      t=$("$root/bazel-bin/examples/$e" --device=host --sanitize="$s" --repeat=10 \
            --out="$out/$e" 2>&1 | grep '^timing' | sed 's/.*median \([0-9.]*\) us.*/\1/' |
          awk '{s += $1} END {printf "%.3f", s / 1000}')
      echo "$e $r $s $t"
    done
  done
done | python3 -c '
import collections, statistics, sys
runs = collections.defaultdict(dict)
order = []
for line in sys.stdin:
    e, r, s, t = line.split()
    runs[(e, r)][s] = float(t)
    if e not in order:
        order.append(e)
for e in order:
    rows = [v for (k, _), v in runs.items() if k == e]
    med = lambda f: statistics.median(f(x) for x in rows)
    print("| %s | %.1f | %.1f (%.2fx) | %.1f (%.2fx) |" % (
        e, med(lambda x: x["none"]), med(lambda x: x["bounds,init"]),
        med(lambda x: x["bounds,init"] / x["none"]), med(lambda x: x["all"]),
        med(lambda x: x["all"] / x["none"])))
'
