#!/usr/bin/env bash
# The wheel (//python:wheel) installs into a fresh virtual environment of Debian's python3
# and imports there, away from the source tree: wheel_test.sh WHEEL WRITE_TEST_TRACES
set -euo pipefail
wheel=$(realpath "$1")
writer=$(realpath "$2")
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/wheel.XXXXXX")
cd "$work"
# --system-site-packages: numpy (Requires-Dist) from Debian's python3-numpy; nothing is
# downloaded (--no-index).
/usr/bin/python3 -m venv --system-site-packages venv
venv/bin/python -m pip install -q --no-index "$wheel"
"$writer" "$work"
unset PYTHONPATH
venv/bin/python - "$work" <<'PY'
import os, sys, numpy as np
import warptrace, warptrace.mosaic
work = sys.argv[1]
where = os.path.dirname(warptrace.__file__)
assert where.startswith(os.path.join(work, "venv")), f"imported from {where}, not the venv"
r = warptrace.dump(os.path.join(work, "clean"), output=os.path.join(work, "t.pftrace"),
                   summary=True)
assert r.kept_events == 2000 and r.verdict_counts["complete"] == 10, r
assert os.path.getsize(os.path.join(work, "t.pftrace")) > 0
try:
    warptrace.dump(os.path.join(work, "corrupt_unknown_site"))
    raise AssertionError("a corrupted trace did not raise")
except RuntimeError as e:
    assert "block (1,0,0)" in str(e), e
print("wheel ok:", where, r)
PY
venv/bin/python -m pip show warptrace > show.txt
grep -q "^Version: 0.1.0" show.txt
