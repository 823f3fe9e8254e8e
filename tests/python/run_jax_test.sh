#!/usr/bin/env bash
# Runs jax_test.py with a CPython 3.11 where `jax` imports (the extension is built for 3.11):
# $WARPTRACE_JAX_PYTHON, else /tmp/jaxvenv311/bin/python when it exists. Without one the
# test says how to make it and passes as a visible SKIP (CI sets WARPTRACE_JAX_PYTHON, and
# then a missing jax is a failure):
#   /usr/bin/python3 -m venv /tmp/jaxvenv311 && /tmp/jaxvenv311/bin/pip install jax==0.10.2 jaxlib==0.10.2 absl-py==2.5.1
#   bazel test //tests/python:jax_test --test_env=WARPTRACE_JAX_PYTHON=/tmp/jaxvenv311/bin/python
# (about 1 minute of pip from PyPI; jax 0.10.2 is the newest for Python 3.11; Mosaic GPU's
# profiler module needs absl-py, which jax does not pull in.)
set -euo pipefail
python="${WARPTRACE_JAX_PYTHON:-}"
if [[ -z "$python" ]]; then
  if [[ -x /tmp/jaxvenv311/bin/python ]]; then
    python=/tmp/jaxvenv311/bin/python
  else
    echo "SKIP: no Python with jax: make one with"
    echo "  /usr/bin/python3 -m venv /tmp/jaxvenv311 && /tmp/jaxvenv311/bin/pip install jax==0.10.2 jaxlib==0.10.2 absl-py==2.5.1"
    echo "and run bazel test //tests/python:jax_test --test_env=WARPTRACE_JAX_PYTHON=/tmp/jaxvenv311/bin/python"
    exit 0
  fi
fi
export PYTHONPATH="${TEST_SRCDIR}/${TEST_WORKSPACE}/python"
"$python" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' || {
  echo "FAIL: $python is not CPython 3.11, which the extension is built for"; exit 1; }
exec "$python" "$1"
