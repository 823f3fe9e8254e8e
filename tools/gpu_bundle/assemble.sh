#!/usr/bin/env bash
# Assembles the GPU bundle (the action behind gpu_bundle in bundle.bzl; see there).
#
#   assemble.sh OUT.tar NAME COMPILATION_MODE bin=PATH... file=PATH...
#
# Writes OUT.tar holding one folder NAME/: bin/ (the binaries), lib/ (every shared library
# ldd resolves for them that is not glibc, the CUDA driver or the CUDA toolkit), lib/cxx/ (the
# C++ runtime: libstdc++, libgcc_s; run.sh uses it only where the machine's own is too old),
# lib/glibc/ (this machine's loader and the glibc libraries the binaries load: a fallback
# run.sh uses only where the machine's glibc is older than the binaries need), the files at
# the root, and MANIFEST.txt. Fails, naming the binary and the library, when ldd
# cannot resolve a library (the bundle would not start on the GPU machine either).
set -euo pipefail

out=$1
name=$2
mode=$3
shift 3

stage=$(mktemp -d "${TMPDIR:-/tmp}/gpu_bundle.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root=$stage/$name
mkdir -p "$root/bin" "$root/lib/cxx" "$root/lib/glibc"

binaries=()
for arg in "$@"; do
  case $arg in
    bin=*)
      src=${arg#bin=}
      binaries+=("$src")
      cp -L "$src" "$root/bin/"
      chmod 755 "$root/bin/$(basename "$src")"
      ;;
    file=*)
      src=${arg#file=}
      cp -L "$src" "$root/"
      chmod u+w "$root/$(basename "$src")"
      ;;
    *) echo "assemble.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done

# The libraries that stay behind. glibc: the loader and the libraries built from glibc's
# sources (a binary must use the machine's own). CUDA: the driver (dlopen'ed by jit/cuda)
# and toolkit libraries (NVRTC: the GPU machine's CUDA has its own of the same major).
is_glibc() {
  case $1 in
    ld-linux*.so* | linux-vdso.so* | libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | \
      libdl.so.* | librt.so.* | libresolv.so.* | libutil.so.* | libanl.so.* | libnsl.so.* | \
      libBrokenLocale.so.* | libthread_db.so.* | libc_malloc_debug.so.*) return 0 ;;
  esac
  return 1
}
is_cuda() {
  case $1 in
    libcuda.so* | libnvrtc.so* | libnvrtc.alt.so* | libnvrtc-builtins*.so* | libcudart.so* | \
      libnvJitLink.so* | libcublas*.so*) return 0 ;;
  esac
  case $2 in /usr/local/cuda* | */nvidia/*) return 0 ;; esac
  return 1
}

declare -A copied=() copied_glibc=()
left_behind=()
for binary in "${binaries[@]}"; do
  # Run from the binary's own path so that Bazel's $ORIGIN-relative rpaths (the _solib_*
  # libraries of a dynamically linked test) resolve the way they do under bazel-bin.
  if ! listing=$(ldd "$binary" 2>&1); then
    echo "assemble.sh: ldd $binary failed: $listing" >&2
    exit 1
  fi
  while read -r line; do
    [[ -n $line ]] || continue
    if [[ $line == *"=> not found"* ]]; then
      echo "assemble.sh: $(basename "$binary") needs ${line%% *}, which ldd cannot find" >&2
      exit 1
    fi
    if [[ $line =~ ^([^[:space:]]+)[[:space:]]+=\>[[:space:]]+([^[:space:]]+) ]]; then
      soname=${BASH_REMATCH[1]}
      path=${BASH_REMATCH[2]}
    elif [[ $line =~ ^([^[:space:]]+)[[:space:]]+\( ]]; then
      soname=$(basename "${BASH_REMATCH[1]}")
      path=${BASH_REMATCH[1]}
    else
      continue
    fi
    [[ $soname != linux-vdso.so* ]] || continue
    if is_glibc "$soname"; then
      # The fallback copy (lib/glibc/); the loader under its own name, ld-linux-x86-64.so.2.
      if [[ -z ${copied_glibc[$soname]:-} ]]; then
        cp -L "$path" "$root/lib/glibc/$soname"
        chmod 755 "$root/lib/glibc/$soname"
        copied_glibc[$soname]=$path
      fi
      continue
    fi
    if is_cuda "$soname" "$path"; then
      left_behind+=("$soname")
      continue
    fi
    [[ -z ${copied[$soname]:-} ]] || continue
    case $soname in
      libstdc++.so.* | libgcc_s.so.*) dest=$root/lib/cxx/$soname ;;
      *) dest=$root/lib/$soname ;;
    esac
    cp -L "$path" "$dest"
    chmod 644 "$dest"
    copied[$soname]=$path
  done <<<"$listing"
done

# An optimized bundle travels without symbol tables (-c opt binaries carry ~0.5 MB of them
# each; the bundle must fit the GPU machine's transfer with the repository beside it). Status
# messages, not symbolized backtraces, are what the GPU steps report.
if [[ $mode == opt ]] && command -v strip >/dev/null; then
  strip --strip-unneeded "$root"/bin/* "$root"/lib/*.so* "$root"/lib/cxx/*.so*
fi

# The newest symbol version of each runtime the bundle needs (run.sh compares them with the
# machine's own). objdump comes with binutils, which g++ brings; without it: "unknown".
newest_version() {
  local prefix=$1
  if command -v objdump >/dev/null; then
    { objdump -T "$root"/bin/* "$root"/lib/*.so* 2>/dev/null || true; } |
      grep -o "${prefix}_[0-9][0-9.]*" | sed "s/^${prefix}_//" | sort -u -V | tail -1
  else
    echo unknown
  fi
}
nvrtc_needed=$(
  { objdump -p "$root"/bin/* 2>/dev/null || true; } | awk '$1 == "NEEDED" && $2 ~ /^libnvrtc\.so/ { print $2 }' |
    sort -u | tr '\n' ' ')

{
  echo "warptrace GPU bundle: $name"
  echo "compilation mode: $mode"
  echo "needs: GLIBC_$(newest_version GLIBC) GLIBCXX_$(newest_version GLIBCXX) CXXABI_$(newest_version CXXABI)"
  echo "nvrtc: ${nvrtc_needed:-none} (not bundled: run.sh finds the machine's own)"
  if ((${#left_behind[@]})); then
    echo "left behind (CUDA): $(printf '%s\n' "${left_behind[@]}" | sort -u | tr '\n' ' ')"
  fi
  echo "glibc fallback (lib/glibc, used only where the machine's glibc is too old): $(printf '%s\n' "${!copied_glibc[@]}" | sort | tr '\n' ' ')"
  echo "bundled libraries (soname <- where it came from on the build machine):"
  for soname in $(printf '%s\n' "${!copied[@]}" | sort); do
    echo "  $soname <- ${copied[$soname]}"
  done
  echo "files (bytes):"
  (cd "$root" && find . -type f ! -name MANIFEST.txt | sort | while read -r f; do
     printf '  %10d %s\n' "$(stat -c %s "$f")" "${f#./}"
   done)
  printf 'total: %d bytes\n' "$(cd "$root" && find . -type f ! -name MANIFEST.txt -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')"
} >"$root/MANIFEST.txt"

tar -C "$stage" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$out" "$name"
