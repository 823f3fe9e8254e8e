#!/usr/bin/env bash
# Runs a Python test script with the system python3 (where tools/setup.sh installs the
# test-only packages): run_python3.sh SCRIPT ARGS...
set -euo pipefail
exec python3 "$@"
