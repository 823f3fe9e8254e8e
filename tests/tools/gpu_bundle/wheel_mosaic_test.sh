#!/usr/bin/env bash
# tools/gpu_bundle/wheel_mosaic.py as the GPU bundle runs it, minus the GPU:
#   install: the wheel pip-installed (--no-index --no-deps) into a fresh target by
#     /usr/bin/python3, imported from there, a synthetic Mosaic buffer dumped, an overflowed
#     one refused naming entries_per_warpgroup >= N, the buffer recorded at N dumped;
#   jax-selftest: that target's warptrace.mosaic.install() under the real JAX (the venv
#     tools/setup.sh makes, or $WARPTRACE_JAX_PYTHON): Mosaic's own ProfilerSpec.dump and
#     warptrace's on the same buffers give the same events (name, ph, pid, tid, ts), and the
#     "Insufficient space" case names the entries_per_warpgroup that fits;
#   jax: without a GPU it says "skipped: ..." and exits 3.
#   wheel_mosaic_test.sh WHEEL WHEEL_MOSAIC_PY
set -euo pipefail
wheel=$(realpath "$1")
script=$(realpath "$2")
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/wheel_mosaic.XXXXXX")
export HOME=$work/home PYTHONPYCACHEPREFIX=$work/pycache
mkdir -p "$HOME"

rc=0
/usr/bin/python3 "$script" install --wheel="$wheel" --target="$work/site" --out="$work/check" \
  >"$work/install.log" 2>&1 || rc=$?
cat "$work/install.log"
((rc == 0)) || fail "install exited $rc"
grep -q "^wheel: ok: .* installed into $work/site .*entries_per_warpgroup >= 15$" "$work/install.log" ||
  fail "install did not report the target and the entries_per_warpgroup that fits (15)"
[[ -f $work/site/warptrace/__init__.py && -f $work/check/synthetic.json && -f $work/check/fits.json ]] ||
  fail "install left no package in the target or no dumps"

python="${WARPTRACE_JAX_PYTHON:-/var/cache/warptrace-test/jaxvenv311/bin/python}"
[[ -x $python ]] || fail "no Python with JAX at $python (tools/setup.sh makes /var/cache/warptrace-test/jaxvenv311; or --test_env=WARPTRACE_JAX_PYTHON=...)"
rc=0
"$python" "$script" jax-selftest --target="$work/site" --out="$work/selftest" \
  >"$work/selftest.log" 2>&1 || rc=$?
cat "$work/selftest.log"
((rc == 0)) || fail "jax-selftest exited $rc"
[[ $(grep -c "^jax: ok: .*exactly Mosaic's 24 events" "$work/selftest.log") == 2 ]] ||
  fail "jax-selftest did not find warptrace's events equal to Mosaic's twice"
grep -q "^jax: overflow at entries_per_warpgroup=7: Mosaic: RuntimeError: Insufficient space" "$work/selftest.log" ||
  fail "Mosaic's own dump did not refuse the overflowed buffer"
grep -q "^jax: ok: entries_per_warpgroup=15, as warptrace named it, fits" "$work/selftest.log" ||
  fail "the entries_per_warpgroup warptrace named did not fit"

rc=0
"$python" "$script" jax --target="$work/site" --out="$work/jax" >"$work/jax.log" 2>&1 || rc=$?
cat "$work/jax.log"
if grep -q '^skipped: ' "$work/jax.log"; then
  ((rc == 3)) || fail "jax said skipped but exited $rc (expected 3)"
else
  ((rc == 0)) || fail "jax on a GPU exited $rc"
fi
echo "PASS: the wheel installs with pip --no-index --no-deps and warptrace.mosaic.install() matches Mosaic's dump"
