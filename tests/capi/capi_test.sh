#!/usr/bin/env bash
# capi_test.c as Bazel built it (capi_test_program, in this build's configuration) on saved
# traces; the program must load libwarptrace.so, not hold the library in itself.
#   capi_test.sh CAPI_TEST_PROGRAM WRITE_TEST_TRACES
set -euo pipefail
program="$1"
writer="$2"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/capi.XXXXXX")
# ldd's whole output first: `ldd | grep -q` under pipefail fails whenever grep's early exit
# makes ldd die of SIGPIPE (it did, once in a full run).
libs=$(ldd "$program")
if ! grep -q 'libwarptrace\.so => .*libwarptrace\.so' <<<"$libs"; then
  echo "FAIL: $program does not load libwarptrace.so:"
  echo "$libs"
  exit 1
fi
"$writer" "$work" >/dev/null
"$program" "$work"
