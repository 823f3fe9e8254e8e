#!/usr/bin/env bash
# link.sh shared|executable OUT STUB_DIR ARCHIVE ARCHIVE.linkopts PIC_SOURCE.cc...
#         [-- EXTRA_LINK_ARGS...]
# (in any order: ARCHIVE and its .linkopts come from sdk/sdk.bzl's static_archive, the .cc
# files from third_party/pic_sources)
#
# Links the wheel's libwarptrace.so (shared: every object of ARCHIVE, the C API exported by
# the EXTRA_LINK_ARGS' version script) or its CLI (executable: main from ARCHIVE) so that it
# runs on glibc 2.28 and later (manylinux_2_28):
#   * against glibc 2.28's symbols (STUB_DIR, make_glibc_stubs.py), with -z defs: every
#     glibc reference binds to a version <= GLIBC_2.28 or the link fails;
#   * the few newer functions the objects call from glibc_compat.c (and, for the CLI, the
#     start-up of start_compat.c);
#   * libstdc++, absl, protobuf-lite, LLVM Support, zlib and libdeflate linked in from
#     Debian's archives (no GLIBCXX_ requirement, nothing to bundle); libgcc_s stays shared
#     (every glibc system has it; a static unwinder would need _dl_find_object, glibc 2.35);
#   * libpthread.so.0, libdl.so.2 and librt.so.1 needed, where glibc < 2.34 keeps their
#     functions.
# Then checks the output: no GLIBC_ version newer than 2.28, no GLIBCXX_/CXXABI_, and only
# those libraries needed.
set -euo pipefail
mode=$1 out=$2 stubs=$3
shift 3
archive="" linkopts_file=""
pic_sources=()
pic_include=""
while [[ $# -gt 0 && $1 != -- ]]; do
  case $1 in
    *.linkopts) linkopts_file=$1 ;;
    *.a) archive=$1 ;;
    *.cc) pic_sources+=("$1") ;;
    */include/*.h) pic_include=${1%%/include/*}/include ;;
    *) echo "link.sh: error: unexpected argument $1" >&2; exit 1 ;;
  esac
  shift
done
[[ $# -gt 0 ]] && shift
[[ -n $archive && -n $linkopts_file ]] || { echo "link.sh: error: needs ARCHIVE and ARCHIVE.linkopts" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/warptrace-manylinux.XXXXXX")
trap 'rm -rf "$work"' EXIT
here=$(dirname "$0")
lib=/usr/lib/x86_64-linux-gnu

cflags=(-O2 -fPIC -fvisibility=hidden -Wall -Wextra -Werror)
gcc "${cflags[@]}" -c "$here/glibc_compat.c" -o "$work/glibc_compat.o"
objects=("$work/glibc_compat.o")
if [[ $mode == executable ]]; then
  gcc "${cflags[@]}" -c "$here/start_compat.c" -o "$work/start_compat.o"
  objects+=("$work/start_compat.o")
fi

# Debian's absl and protobuf-lite archives are -fPIE: the members that use thread-locals
# the local-exec way cannot go into a shared object. Their sources (third_party/pic_sources),
# rebuilt -fPIC against the same installed headers, stand in for them: each must define
# exactly its member's symbols, so that the linker never takes the member.
for src in "${pic_sources[@]}"; do
  name=$(basename "$src" .cc)
  case $name in
    sysinfo) member=libabsl_base.a:sysinfo.cc.o ;;
    cordz_functions) member=libabsl_cordz_functions.a:cordz_functions.cc.o ;;
    raw_hash_set) member=libabsl_raw_hash_set.a:raw_hash_set.cc.o ;;
    parser) member=libabsl_str_format_internal.a:parser.cc.o ;;
    arena) member=libprotobuf-lite.a:arena.o ;;
    common) member=libprotobuf-lite.a:common.o ;;
    *) echo "link.sh: error: no archive member for $src" >&2; exit 1 ;;
  esac
  flags=(-std=c++17 -O2 -fPIC -DNDEBUG -w)
  [[ $name == arena || $name == common ]] && flags+=(-DHAVE_PTHREAD -I"$pic_include")
  g++ "${flags[@]}" -c "$src" -o "$work/pic_$name.o"
  (cd "$work" && ar x "$lib/${member%%:*}" "${member#*:}" && mv "${member#*:}" "member_$name.o")
  if ! diff <(nm -g --defined-only "$work/member_$name.o" | awk '{print $3}' | sort) \
            <(nm -g --defined-only "$work/pic_$name.o" | awk '{print $3}' | sort) >&2; then
    echo "link.sh: error: $src does not define what ${member/:/(})) does: refresh it" \
         "(third_party/pic_sources/README.md)" >&2
    exit 1
  fi
  objects+=("$work/pic_$name.o")
done

# The archive's own link flags (sdk/sdk.bzl's .linkopts), less what is linked here anyway.
own=()
while IFS= read -r flag; do
  case $flag in
    ""|-pthread|-lpthread|-ldl|-lrt|-lm) ;;
    *) own+=("$flag") ;;
  esac
done < "$linkopts_file"

system_archives=()
for a in "$lib"/libabsl_*.a; do system_archives+=("$a"); done
system_archives+=("$lib/libprotobuf-lite.a" "$lib/libz.a" "$lib/libdeflate.a"
                  /usr/lib/llvm-14/lib/libLLVMSupport.a /usr/lib/llvm-14/lib/libLLVMDemangle.a
                  /usr/lib/gcc/x86_64-linux-gnu/12/libstdc++.a)

if [[ $mode == shared ]]; then
  inputs=(-shared -Wl,--whole-archive "$archive" -Wl,--no-whole-archive)
else
  # (This machine's libgcc_s.so.1 needs glibc 2.35's _dl_find_object; the one the program
  # loads is that of the machine it runs on.)
  inputs=(-pie "$archive" -Wl,--allow-shlib-undefined)
fi
g++ -o "$out" -nodefaultlibs "${inputs[@]}" "${objects[@]}" \
  -Wl,--start-group "${system_archives[@]}" -Wl,--end-group "${own[@]}" \
  -L"$stubs" -Wl,--as-needed -lm -lc -lgcc_s -lgcc \
  -Wl,--no-as-needed "$stubs/libpthread.so.0" "$stubs/libdl.so.2" "$stubs/librt.so.1" \
  -Wl,-z,defs -Wl,--gc-sections -Wl,-O1 -Wl,--hash-style=both "$@"

# The check: what the output needs of its system.
too_new=$(objdump -T "$out" | grep -oE '\((GLIBC_[0-9.]+|GLIBCXX_[0-9.]+|CXXABI_[0-9.]+)\)' |
          tr -d '()' | sort -u | python3 -c '
import sys
for v in sys.stdin.read().split():
    name, _, num = v.partition("_")
    if name != "GLIBC" or tuple(int(x) for x in num.split(".")) > (2, 28):
        print(v)')
if [[ -n $too_new ]]; then
  echo "link.sh: error: $out needs $too_new (more than glibc 2.28 offers)" >&2
  objdump -T "$out" | grep -E "$(echo "$too_new" | paste -sd'|')" | head -20 >&2
  exit 1
fi
needed=$(readelf -d "$out" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | paste -sd' ')
for n in $needed; do
  case $n in
    libc.so.6|libm.so.6|libgcc_s.so.1|libpthread.so.0|libdl.so.2|librt.so.1|ld-linux-x86-64.so.2) ;;
    *) echo "link.sh: error: $out needs $n, which manylinux_2_28 does not provide" >&2; exit 1 ;;
  esac
done
