#!/usr/bin/env bash
# 1. The product tree's include order holds.
# 2. A planted back edge between two folders (a cycle) fails, naming both files.
# 3. A planted include of a package above fails, naming the file.
set -uo pipefail
ROOT="$TEST_SRCDIR/$TEST_WORKSPACE"
CHECK="$ROOT/tools/include_graph/include_graph.py"
fail() { echo "FAIL: $*"; exit 1; }

[[ -f "$ROOT/profiler/trace/decode.h" ]] || fail "product_sources lacks profiler/trace/decode.h"
[[ -f "$ROOT/jit/run/run.h" ]] || fail "product_sources lacks jit/run/run.h"

out=$(python3 "$CHECK" --root "$ROOT" 2>&1) || { echo "$out"; fail "the include order is broken"; }
echo "$out"

# A copy of the tree (real files, not runfiles links) to plant edges in.
COPY="$TEST_TMPDIR/tree"
rm -rf "$COPY"; mkdir -p "$COPY"
for p in base format profiler jit python examples; do
  [[ -d "$ROOT/$p" ]] && cp -RL "$ROOT/$p" "$COPY/$p"
done
chmod -R u+w "$COPY"
python3 "$CHECK" --root "$COPY" >/dev/null || fail "the copied tree should pass before planting"

# trace/ -> timeline/ while timeline/ -> trace/: a cycle between folders.
echo '#include "profiler/timeline/timeline.h"' >> "$COPY/profiler/trace/decode.h"
out=$(python3 "$CHECK" --root "$COPY" 2>&1); rc=$?
echo "$out"
[[ $rc -eq 1 ]] || fail "a planted cycle passed (rc=$rc)"
grep -q "folders include each other (a cycle): profiler/timeline <-> profiler/trace" <<<"$out" ||
  fail "the cycle report does not name both folders"
grep -q "profiler/trace/decode.h:[0-9]* includes profiler/timeline/timeline.h" <<<"$out" ||
  fail "the cycle report does not name the planted include"
grep -q "profiler/timeline/timeline.h:[0-9]* includes profiler/trace/" <<<"$out" ||
  fail "the cycle report does not name the edge back"

# dump/ -> analysis/ while analysis/ -> dump/ (its sinks implement dump/sink.h): a cycle.
cp "$ROOT/profiler/trace/decode.h" "$COPY/profiler/trace/decode.h"; chmod u+w "$COPY/profiler/trace/decode.h"
echo '#include "profiler/analysis/summary.h"' >> "$COPY/profiler/dump/sink.h"
out=$(python3 "$CHECK" --root "$COPY" 2>&1); rc=$?
[[ $rc -eq 1 ]] || fail "a planted dump -> analysis edge passed"
grep -q "profiler/dump/sink.h:[0-9]* includes profiler/analysis/summary.h" <<<"$out" ||
  { echo "$out"; fail "the dump -> analysis edge is not named"; }
cp "$ROOT/profiler/dump/sink.h" "$COPY/profiler/dump/sink.h"; chmod u+w "$COPY/profiler/dump/sink.h"

# profiler/ including jit/ (a package above it).
echo '#include "jit/run/run.h"' >> "$COPY/profiler/timeline/timeline.h"
out=$(python3 "$CHECK" --root "$COPY" 2>&1); rc=$?
echo "$out" | head -3
[[ $rc -eq 1 ]] || fail "profiler including jit passed"
grep -q "package profiler includes jit, which is above it: profiler/timeline/timeline.h:[0-9]* includes jit/run/run.h" <<<"$out" ||
  fail "the upward include is not named"
echo PASS
