#!/usr/bin/env bash
# The wheel (//python:wheel) as a user installs it: one file, into fresh virtual environments
# of every interpreter the machine has — Debian's CPython 3.11 and PyPy 3.9 (tools/setup.sh
# installs them: required), and pyenv's CPython 3.9 to 3.13 where pyenv has them (each one
# missing is a SKIP line) — with `pip install --no-index`,
# and used there away from the source tree with an empty environment (env -i: no PYTHONPATH,
# no LD_LIBRARY_PATH): import, a dump of a buffer-protocol object (array.array, bytes: no
# numpy in these venvs), a saved prefix, warptrace.mosaic.dump into an open file,
# install()/uninstall() on a stand-in ProfilerSpec, and the `warptrace` CLI on PATH.
# `auditwheel show` must name a manylinux tag.  wheel_test.sh WHEEL WRITE_TEST_TRACES
set -euo pipefail
wheel=$(realpath "$1")
writer=$(realpath "$2")
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/wheel.XXXXXX")
cd "$work"
"$writer" "$work" >/dev/null

name=$(basename "$wheel")
[[ $name == warptrace-*-py3-none-manylinux_2_28_x86_64.whl ]] || {
  echo "FAIL: $name is not a py3-none-manylinux_2_28 wheel"; exit 1; }
show=$(/usr/bin/python3 -m auditwheel show "$wheel")
echo "$show" | head -4
# auditwheel names the oldest policy the wheel's symbols allow: manylinux_2_28 or older.
tag=$(grep -oE '"manylinux_2_[0-9]+_x86_64"' <<<"$show" | head -1 | tr -d '"')
grep -q 'is consistent with' <<<"$show" && [[ -n $tag ]] && (( ${tag:12:2} <= 28 )) || {
  echo "FAIL: auditwheel show does not find the wheel consistent with manylinux_2_28"; exit 1; }
if unzip -l "$wheel" | grep 'warptrace.libs/' >/dev/null; then
  echo "FAIL: the wheel bundles libraries (warptrace.libs/): it should need only glibc"; exit 1
fi

interpreters=(/usr/bin/python3 /usr/bin/pypy3)
for minor in 9 10 11 12 13; do
  found=""
  for p in "${PYENV_ROOT:-/root/.pyenv}"/versions/3."$minor".*/bin/python; do
    [[ -x $p ]] && found=$p
  done
  if [[ -n $found ]]; then interpreters+=("$found"); else
    echo "SKIP: no pyenv CPython 3.$minor on this machine"; fi
done
n=0
for interpreter in "${interpreters[@]}"; do
  [[ -x $interpreter ]] || { echo "FAIL: $interpreter is missing (run tools/setup.sh)"; exit 1; }
  n=$((n + 1))
  venv="$work/venv-$n"
  "$interpreter" -m venv "$venv"
  env -i "$venv/bin/python" -m pip install -q --no-index "$wheel"
  env -i PATH="$venv/bin:/usr/bin:/bin" "$venv/bin/python" - "$work" <<'PY'
import array, io, json, os, subprocess, sys, types
import warptrace, warptrace.mosaic
work = sys.argv[1]
where = os.path.dirname(warptrace.__file__)
assert where.startswith(work), f"imported from {where}, not the venv"
assert "LD_LIBRARY_PATH" not in os.environ and "PYTHONPATH" not in os.environ
print(sys.implementation.name, sys.version.split()[0], "(" + sys.base_prefix + ")", "warptrace",
      warptrace.__version__)

# A saved prefix, then the same buffer as buffer-protocol objects (no numpy here).
r = warptrace.dump(os.path.join(work, "clean"), output=os.path.join(work, "t.pftrace"),
                   summary=True)
assert r.kept_events == 2000 and r.verdict_counts["complete"] == 10, r
assert r.summary_text.startswith("kernel synthetic_gemm"), r.summary_text[:80]
layout = warptrace.Layout.load(os.path.join(work, "clean.json"))
with open(os.path.join(work, "clean.bin"), "rb") as f:
    raw = f.read()
words = array.array("I")
words.frombytes(raw)
for buffer in (words, raw, bytearray(raw), memoryview(raw)):
    out = os.path.join(work, "buf.json")
    assert warptrace.dump(buffer, layout, out).kept_events == 2000
try:
    warptrace.dump(array.array("d", [1.0, 2.0]), layout)
    raise AssertionError("a float buffer did not raise")
except TypeError as e:
    assert "not a 32-bit or 8-bit integer" in str(e), e
try:
    warptrace.dump(os.path.join(work, "corrupt_unknown_site"))
    raise AssertionError("a corrupted trace did not raise")
except warptrace.TraceError as e:
    assert "block (1,0,0)" in str(e) and e.result is not None, e

# The CLI on PATH writes what the package writes.
subprocess.run(["warptrace", "dump", "--input=" + os.path.join(work, "clean"),
                "--output=" + os.path.join(work, "cli.json")], check=True,
               stderr=subprocess.DEVNULL)
warptrace.dump(os.path.join(work, "clean"), output=os.path.join(work, "pkg.json"))
with open(os.path.join(work, "cli.json"), "rb") as a, open(os.path.join(work, "pkg.json"), "rb") as b:
    assert a.read() == b.read(), "the CLI and the package wrote different traces"

# Mosaic: a buffer of 2 blocks x 2 warpgroups, each kernel > 3 x load, into an open file.
names = ["kernel", "load"]
entries = 3 + 2 * 8
mosaic = array.array("I")
for trace in range(4):
    body = [0, 100, 1, 110, 1 | 1 << 31, 150, 1, 160, 1 | 1 << 31, 190, 1, 200,
            1 | 1 << 31, 240, 0 | 1 << 31, 250]
    mosaic.extend([1000 + trace, trace // 2, len(body)] + body + [0] * (entries - 3 - len(body)))
spec = warptrace.mosaic.Spec(entries, names)
with open(os.path.join(work, "mosaic.json"), "w") as f:
    m = warptrace.mosaic.dump(spec, mosaic, f, (2,), (256,))
assert m.verdict_counts["complete"] == 4, m
with open(os.path.join(work, "mosaic.json")) as f:
    events = json.load(f)["traceEvents"]
assert sum(1 for e in events if e.get("name") == "load") >= 12, len(events)

# install() / uninstall() on a stand-in jax.experimental.mosaic.gpu.profiler.
calls = []
class ProfilerSpec:
    entries_per_warpgroup, interned_names, trace_scope = entries, {"kernel": 0, "load": 1}, "warpgroup"
    def dump(self, buffer, f, grid, block):
        calls.append("mosaic")
mods = {n: types.ModuleType(n) for n in ["jax", "jax.experimental", "jax.experimental.mosaic",
                                         "jax.experimental.mosaic.gpu",
                                         "jax.experimental.mosaic.gpu.profiler"]}
mods["jax.experimental.mosaic.gpu.profiler"].ProfilerSpec = ProfilerSpec
sys.modules.update(mods)
with warptrace.mosaic.installed():
    ProfilerSpec().dump(mosaic, os.path.join(work, "inst.json"), (2,), (256,))
ProfilerSpec().dump(mosaic, os.path.join(work, "inst.json"), (2,), (256,))
assert calls == ["mosaic"], calls

# The tables are the `tables` extra: declared in the metadata; without it, a clear error.
from importlib import metadata
meta = metadata.metadata("warptrace")
assert "tables" in meta.get_all("Provides-Extra"), meta.get_all("Provides-Extra")
assert any("pyarrow" in r and 'extra == "tables"' in r for r in meta.get_all("Requires-Dist"))
try:
    warptrace.tables(os.path.join(work, "clean"))
    raise AssertionError("tables() without pyarrow did not raise")
except warptrace.MissingExtraError as e:
    assert "pip install warptrace[tables]" in str(e), e
print("wheel ok:", where)
PY
done
