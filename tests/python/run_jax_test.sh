#!/usr/bin/env bash
# Runs a test script (run_jax_test.sh [--optional-venv=DIR] SCRIPT ARGS...) with a Python
# where `jax` and Mosaic GPU's profiler module import.
#
# Without --optional-venv: a CPython 3.11, $WARPTRACE_JAX_PYTHON, else
# /var/cache/warptrace-test/jaxvenv311/bin/python, which tools/setup.sh makes:
#   /usr/bin/python3 -m venv /var/cache/warptrace-test/jaxvenv311 && \
#     /var/cache/warptrace-test/jaxvenv311/bin/pip install jax==0.10.2 jaxlib==0.10.2 absl-py==2.5.1
# (jax 0.10.2 is the newest for Python 3.11; Mosaic GPU's profiler module needs absl-py, which
# jax does not pull in.) Without one the test FAILS, saying how to make it: a test of parity
# with the real JAX that did not run must not pass.
#
# With --optional-venv=DIR: DIR/bin/python, one of the venvs tools/setup.sh makes where this
# machine has the interpreter (pyenv's 3.12: the newest JAX, 0.12.1; 3.10 and 3.9: JAX 0.6.2
# and 0.4.30, which write Mosaic's older header form). Without it the test FAILS, saying how
# to make it, as above.
set -euo pipefail
optional=""
if [[ ${1:-} == --optional-venv=* ]]; then
  optional=${1#--optional-venv=}
  shift
fi
if [[ -n $optional ]]; then
  python="$optional/bin/python"
  if [[ ! -x "$python" ]] ||
     ! "$python" -c 'from jax.experimental.mosaic.gpu import profiler' >/dev/null 2>&1; then
    echo "FAIL: no venv with jax at $optional: run tools/setup.sh (it makes them with pyenv's"
    echo "  CPython 3.12 and 3.10)"
    exit 1
  fi
else
  python="${WARPTRACE_JAX_PYTHON:-/var/cache/warptrace-test/jaxvenv311/bin/python}"
  if [[ ! -x "$python" ]] ||
     ! "$python" -c 'from jax.experimental.mosaic.gpu import profiler' >/dev/null 2>&1; then
    echo "FAIL: no Python with jax and Mosaic GPU's profiler at '$python': run tools/setup.sh, or"
    echo "  /usr/bin/python3 -m venv /var/cache/warptrace-test/jaxvenv311 && /var/cache/warptrace-test/jaxvenv311/bin/pip install jax==0.10.2 jaxlib==0.10.2 absl-py==2.5.1"
    echo "(or point WARPTRACE_JAX_PYTHON at one: bazel test --test_env=WARPTRACE_JAX_PYTHON=...)"
    exit 1
  fi
  "$python" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' || {
    echo "FAIL: $python is not CPython 3.11"; exit 1; }
fi
"$python" -c 'import sys, jax; print("python", sys.version.split()[0], "jax", jax.__version__)'
export PYTHONPATH="${TEST_SRCDIR}/${TEST_WORKSPACE}/python"
exec "$python" "$@"
