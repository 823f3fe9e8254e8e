#!/usr/bin/env bash
# The Deflate fuzzer's generated large seeds (make_deflate_seed_corpus) through its entry
# point (deflate_fuzzer built without libFuzzer replays files): each round trips through zlib,
# compresses to the same bytes twice and fits Bound, or the entry point traps.
set -euo pipefail
make_seeds="$1"
fuzzer="$2"
dir="${TEST_TMPDIR}/deflate_seeds"
mkdir -p "${dir}"
"${make_seeds}" "${dir}"
"${fuzzer}" "${dir}"
