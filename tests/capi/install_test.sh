#!/usr/bin/env bash
# The install tree (//:install) used by another build system: install into a fresh PREFIX,
# compile capi_test.c with plain `cc $(pkg-config --cflags --libs warptrace)` outside Bazel,
# run it on saved traces with an empty environment.  install_test.sh INSTALL CAPI_TEST_C WRITER
set -euo pipefail
installer="$PWD/$1"  # not realpath: the sh_binary finds its files through its runfiles
source=$(realpath "$2")
writer=$(realpath "$3")
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/install.XXXXXX")
"$installer" "$work/prefix"
for f in include/warptrace/warptrace.h lib/libwarptrace.so lib/pkgconfig/warptrace.pc bin/warptrace; do
  [[ -f $work/prefix/$f ]] || { echo "FAIL: the install tree has no $f"; exit 1; }
done
exported=$(nm -D --defined-only "$work/prefix/lib/libwarptrace.so" | awk '{print $3}' | grep -c '^warptrace_')
[[ $exported -ge 17 ]] || { echo "FAIL: libwarptrace.so exports $exported warptrace_* functions"; exit 1; }
flags=$(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs warptrace)
echo "cc $flags"
cc -std=c11 -Wall -Wextra -Werror -o "$work/capi_test" "$source" $flags
"$writer" "$work" >/dev/null
env -i "$work/capi_test" "$work"
env -i "$work/prefix/bin/warptrace" dump --input="$work/clean" --output="$work/cli.json"
