#!/usr/bin/env bash
# `bazel run //examples:hopper_gemm_sweep -- [flags]`: hopper_gemm_sweep.py with the package
# and the hopper_gemm example from the runfiles, on a Python with the tables extra:
# $WARPTRACE_TABLES_PYTHON, else the venv tools/setup.sh makes (/tmp/tablesvenv311), else
# python3 (which then needs `pip install warptrace[tables]`'s pyarrow and duckdb).
set -euo pipefail
runfiles="${RUNFILES_DIR:-$0.runfiles}/warptrace"
python="${WARPTRACE_TABLES_PYTHON:-/tmp/tablesvenv311/bin/python}"
[[ -x $python ]] || python=python3
export PYTHONPATH="$runfiles/python${PYTHONPATH:+:$PYTHONPATH}"
exec "$python" "$runfiles/examples/hopper_gemm_sweep.py" \
  --hopper_gemm="$runfiles/examples/hopper_gemm" "$@"
