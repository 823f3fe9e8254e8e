#!/usr/bin/env bash
# libwarptrace.so exports exactly the functions capi/warptrace.h declares: no absl, LLVM or
# C++ runtime symbol (e.g. a weak std::string member instantiated under C++20) leaks into its
# dynamic symbol table, where it would interpose on a host process's own.
#   exports_test.sh LIBWARPTRACE_SO WARPTRACE_H
set -euo pipefail
lib=$1
header=$2
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/exports.XXXXXX")
nm -D --defined-only "$lib" | awk '{print $3}' | sort -u >"$work/exported"
# Declarations start a line: "RETURN_TYPE warptrace_name(".
grep -oE '^[a-z][a-z_0-9 *]*[ *]warptrace_[a-z0-9_]+\(' "$header" |
  sed -E 's/.*[ *](warptrace_[a-z0-9_]+)\($/\1/' | sort -u >"$work/declared"
[[ -s $work/declared ]] || { echo "FAIL: found no declarations in $header"; exit 1; }
if ! diff -u "$work/declared" "$work/exported" >"$work/diff"; then
  echo "FAIL: libwarptrace.so's exported symbols (+) differ from warptrace.h's functions (-):"
  cat "$work/diff"
  exit 1
fi
echo "PASS: libwarptrace.so exports exactly the $(wc -l <"$work/declared") functions of warptrace.h"
