#!/usr/bin/env bash
# The GPU check, where Bazel is at hand: makes the GPU bundle (tools/make_gpu_bundle.sh) and
# runs it (the bundle's run.sh). On a machine without a GPU the GPU parts say SKIPPED and the
# host parts run from the bundle, which shows it is self-contained. A machine with a GPU but
# no Bazel gets the bundle made elsewhere and runs only its run.sh (docs/gpu_bundle.md).
#
#   bash tools/gpu_check.sh [OUTDIR]     (default: warptrace_out/gpu_check)
#
# Environment: BAZEL, BAZEL_FLAGS (make_gpu_bundle.sh); WARPTRACE_FORCE_NO_GPU=1, REPEAT,
# GEMM_SIZE, WARPTRACE_DEADLINE_S, WARPTRACE_NVRTC_DIR (run.sh).
# Exit status: run.sh's (0 when nothing failed; results in OUTDIR/results.txt), or the
# bundle's build failure.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
OUTDIR=${1:-$ROOT/warptrace_out/gpu_check}
bash tools/make_gpu_bundle.sh "$ROOT/warptrace_gpu_bundle"
echo
exec bash "$ROOT/warptrace_gpu_bundle/run.sh" "$OUTDIR"
