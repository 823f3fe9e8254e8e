#!/usr/bin/env bash
# anchors.py's pure-Python pieces, then warptrace's dump of the buffers they saved.
#
#   anchors_test.sh ANCHORS.py WARPTRACE
#
# `anchors.py selftest` saves a synthetic Mosaic GPU buffer through the ProfilerSpec.dump
# wrapper with a stand-in spec, and — when jax imports in the Python used ($WARPTRACE_JAX_PYTHON,
# else python3) — with JAX's real ProfilerSpec and Mosaic's real dump, for both trace scopes
# it has. Every saved PREFIX.bin + PREFIX.json must then decode and verify with `warptrace
# dump`, and where Mosaic's own dump exists, warptrace's Chrome trace must show the same
# number of regions per name.
set -euo pipefail

anchors=$1
warptrace=$2
python=${WARPTRACE_JAX_PYTHON:-python3}
out=$(mktemp -d "${TEST_TMPDIR:-/tmp}/anchors.XXXXXX")
fail() { echo "FAIL: $*" >&2; exit 1; }

"$python" "$anchors" selftest --out="$out" | tee "$out/selftest.log"
grep -q '^selftest: stand-in spec: .* ok$' "$out/selftest.log" || fail "the stand-in part did not pass"
if grep -q '^selftest: SKIPPED the real ProfilerSpec' "$out/selftest.log"; then
  echo "NOTE: jax's Mosaic GPU profiler is not importable with $python: only the stand-in spec was tested"
  echo "      (to test the real one: bazel test --test_env=WARPTRACE_JAX_PYTHON=/path/to/python-with-jax ...)"
fi

# A bad invocation is a usage error, not a crash.
rc=0
"$python" "$anchors" torch --out="$out/usage" --gemm=12x3 >/dev/null 2>&1 || rc=$?
((rc == 2)) || fail "a malformed --gemm exited $rc, expected 2"

dumped=0
for bin in "$out"/*.bin; do
  prefix=${bin%.bin}
  name=$(basename "$prefix")
  [[ -f $prefix.json ]] || fail "$name.bin has no sidecar"
  "$warptrace" dump --input="$prefix" --output="$prefix.warptrace.json" --summary \
    >"$prefix.dump.log" 2>&1 || { cat "$prefix.dump.log"; fail "warptrace dump of $name failed"; }
  if [[ $name == real_* ]]; then
    # Same regions per name in Mosaic's dump (B/E pairs) and warptrace's (X slices).
    "$python" "$anchors" compare --prefix="$prefix" --trace="$prefix.warptrace.json" ||
      fail "warptrace's trace of $name does not match Mosaic's dump"
    # ... and the comparison can fail: a trace without the regions differs.
    echo '{"traceEvents": []}' >"$out/empty.trace.json"
    rc=0
    "$python" "$anchors" compare --prefix="$prefix" --trace="$out/empty.trace.json" >/dev/null || rc=$?
    ((rc == 1)) || fail "compare of $name against an empty trace exited $rc, expected 1"
  fi
  dumped=$((dumped + 1))
done
((dumped >= 1)) || fail "selftest saved no buffer"
echo "PASS: $dumped saved buffers decode and verify with warptrace dump"
