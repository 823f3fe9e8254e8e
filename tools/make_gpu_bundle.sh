#!/usr/bin/env bash
# Makes the GPU bundle here: builds (bazel build -c opt) everything warptrace's GPU check runs
# — the gpu-tagged test binaries, the examples, record_cost_gpu, the warptrace CLI — with every
# shared library they load that is not glibc, the CUDA driver or the CUDA toolkit, plus run.sh
# and anchors.py (//tools/gpu_bundle, see bundle.bzl), and unpacks it into DIR.
#
#   bash tools/make_gpu_bundle.sh [DIR]      (default: warptrace_gpu_bundle in the repository
#                                             root, ignored by git)
# Then, on the GPU machine (no Bazel, no network needed):
#   WARPTRACE_EXPECT_GPU=1 bash warptrace_gpu_bundle/run.sh [OUTDIR]
#
# The binaries link warptrace's own libraries dynamically (--dynamic_mode=fully): each
# library goes to lib/ once instead of into every one of the ~16 binaries (statically linked,
# each example carried the whole builder, runtime and profiler: 53 MiB in all, over the limit).
#
# Environment: BAZEL (default "bazel"), BAZEL_FLAGS (extra build flags, default none).
# Prints the bundle's size and file list; fails when it is over 48 MiB (the GPU machine takes
# at most 64 MiB of working tree).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
DIR=${1:-$ROOT/warptrace_gpu_bundle}
read -r -a BAZEL <<<"${BAZEL:-bazel}"
read -r -a FLAGS <<<"${BAZEL_FLAGS:-}"
LIMIT=$((48 * 1024 * 1024))

MODE=(-c opt --dynamic_mode=fully)
"${BAZEL[@]}" build "${MODE[@]}" "${FLAGS[@]}" //tools/gpu_bundle:warptrace_gpu_bundle
tar_file=$("${BAZEL[@]}" info "${MODE[@]}" "${FLAGS[@]}" bazel-bin 2>/dev/null)/tools/gpu_bundle/warptrace_gpu_bundle.tar
[[ -f $tar_file ]] || { echo "make_gpu_bundle: no $tar_file after the build" >&2; exit 1; }

# Unpack into a fresh DIR (never over something that is not a previous bundle).
if [[ -e $DIR && ! -f $DIR/MANIFEST.txt ]]; then
  echo "make_gpu_bundle: $DIR exists and is not a bundle (no MANIFEST.txt); not replacing it" >&2
  exit 1
fi
parent=$(dirname "$DIR")
mkdir -p "$parent"
staging=$(mktemp -d "$parent/.gpu_bundle.XXXXXX")
trap 'rm -rf "$staging"' EXIT
tar -C "$staging" -xf "$tar_file"
{
  echo "warptrace $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(
    git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)'), bundled $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
  echo "branch: $(git -C "$ROOT" rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)"
} >"$staging/warptrace_gpu_bundle/VERSION"
rm -rf "$DIR"
mv "$staging/warptrace_gpu_bundle" "$DIR"

size=$(du -sb "$DIR" | cut -f1)
echo
sed -n '/^files (bytes):/,$p' "$DIR/MANIFEST.txt"
grep -E '^(needs|nvrtc): ' "$DIR/MANIFEST.txt"
echo "bundle: $DIR, $size bytes ($(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }') MiB)"
if ((size > LIMIT)); then
  echo "make_gpu_bundle: the bundle is over 48 MiB ($size bytes)" >&2
  exit 1
fi
echo "run it on the GPU machine: WARPTRACE_EXPECT_GPU=1 bash $(basename "$DIR")/run.sh   (results in \$OUT or ./warptrace_gpu_out)"
