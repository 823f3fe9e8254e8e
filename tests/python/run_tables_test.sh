#!/usr/bin/env bash
# Runs a tables test script (run_tables_test.sh SCRIPT ARGS...) with a CPython 3.11 that has
# the wheel's `tables` extra and the distributed engine: $WARPTRACE_TABLES_PYTHON, else
# /var/cache/warptrace-test/tablesvenv311/bin/python, which tools/setup.sh makes:
#   /usr/bin/python3 -m venv /var/cache/warptrace-test/tablesvenv311 && /var/cache/warptrace-test/tablesvenv311/bin/pip install \
#     pyarrow==26.0.1 duckdb==2.0.0 'dask[dataframe]==2026.8.0' distributed==2026.8.0 pandas==3.1.1
# Without one the test FAILS, saying how to make it: a tables test that did not run must not
# pass.
set -euo pipefail
python="${WARPTRACE_TABLES_PYTHON:-/var/cache/warptrace-test/tablesvenv311/bin/python}"
if [[ ! -x "$python" ]] ||
   ! "$python" -c 'import pyarrow, duckdb, dask.dataframe, distributed' >/dev/null 2>&1; then
  echo "FAIL: no Python with pyarrow, duckdb, dask and distributed at '$python': run"
  echo "  tools/setup.sh (or point WARPTRACE_TABLES_PYTHON at one: bazel test --test_env=...)"
  exit 1
fi
export PYTHONPATH="${TEST_SRCDIR}/${TEST_WORKSPACE}/python"
exec "$python" "$@"
