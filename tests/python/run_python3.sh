#!/usr/bin/env bash
# Runs a Python test script with Debian's python3 (the interpreter the extension is built
# for), with the package from the runfiles on sys.path: run_python3.sh SCRIPT ARGS...
set -euo pipefail
export PYTHONPATH="${TEST_SRCDIR}/${TEST_WORKSPACE}/python${PYTHONPATH:+:${PYTHONPATH}}"
exec /usr/bin/python3 "$@"
