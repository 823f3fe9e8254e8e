#!/usr/bin/env bash
# `bazel run //examples:hopper_gemm_sweep -- [flags]`: hopper_gemm_sweep.py with the package
# and the hopper_gemm example from the runfiles, on a Python with the tables extra:
# $WARPTRACE_TABLES_PYTHON, else the venv tools/setup.sh makes (/var/cache/warptrace-test/tablesvenv311), else
# python3 (which then needs `pip install warptrace[tables]`'s pyarrow and duckdb).
set -euo pipefail
runfiles="${RUNFILES_DIR:-$0.runfiles}/warptrace"
python="${WARPTRACE_TABLES_PYTHON:-/var/cache/warptrace-test/tablesvenv311/bin/python}"
[[ -x $python ]] || python=python3
export PYTHONPATH="$runfiles/python${PYTHONPATH:+:$PYTHONPATH}"
exec "$python" "$runfiles/examples/hopper_gemm_sweep.py" \
  --hopper_gemm="$runfiles/examples/hopper_gemm" "$@"
