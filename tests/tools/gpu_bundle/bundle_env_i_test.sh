#!/usr/bin/env bash
# The GPU bundle is self-contained: unpacked into a fresh directory and run under `env -i`
# with only PATH=/usr/bin:/bin and HOME (and WARPTRACE_FORCE_NO_GPU=1), run.sh passes its
# host parts, says SKIPPED for the GPU parts, writes results.txt + two archives within the
# GPU machine's limits, and every binary's libraries resolve inside the bundle (glibc and
# NVRTC excepted).
#
#   bundle_env_i_test.sh BUNDLE.tar
set -euo pipefail

tar_file=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ -f $tar_file ]] || fail "no bundle tar at $tar_file"

fresh=$(mktemp -d "${TEST_TMPDIR:-/tmp}/fresh.XXXXXX")
tar -C "$fresh" -xf "$tar_file"
bundle=$fresh/warptrace_gpu_bundle
[[ -x $bundle/run.sh || -f $bundle/run.sh ]] || fail "the bundle has no run.sh"
size=$(du -sb "$bundle" | cut -f1)
mode=$(sed -n 's/^compilation mode: //p' "$bundle/MANIFEST.txt")
echo "bundle: $size bytes, $(find "$bundle" -type f | wc -l) files, built with -c ${mode:-?}"
# The 48 MiB limit is the GPU bundle's, built with -c opt (tools/make_gpu_bundle.sh checks it
# too); a fastbuild bundle (bazel test's default) carries unoptimized binaries and libraries.
if [[ $mode == opt ]]; then
  ((size <= 48 * 1024 * 1024)) || fail "the -c opt bundle is $size bytes, over 48 MiB"
fi

# Every library of every binary resolves inside the bundle, except glibc's and NVRTC (the
# GPU machine's own) — with the bundle's lib/ and lib/cxx/ as the only LD_LIBRARY_PATH.
outside=()
for binary in "$bundle"/bin/*; do
  while read -r line; do
    [[ -n $line ]] || continue
    [[ $line == *"not found"* ]] && outside+=("$(basename "$binary"): $line")
    if [[ $line =~ ^([^[:space:]]+)[[:space:]]+=\>[[:space:]]+([^[:space:]]+) ]]; then
      soname=${BASH_REMATCH[1]} path=${BASH_REMATCH[2]}
      case $soname in
        libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | librt.so.* | \
          libresolv.so.* | libutil.so.* | ld-linux*) continue ;;
        libnvrtc*) continue ;;
      esac
      [[ $path == "$bundle"/* ]] || outside+=("$(basename "$binary"): $soname => $path")
    fi
  done < <(env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$bundle/lib:$bundle/lib/cxx" ldd "$binary")
done
((${#outside[@]} == 0)) || fail "libraries resolved outside the bundle: $(printf '\n  %s' "${outside[@]}")"
echo "ldd: every bundled binary's libraries resolve inside the bundle (glibc, NVRTC excepted)"

# The big-kernel parts (GPU sizes, vs PyTorch): present, syntactically valid, and the vendor
# script runs to a clear skip here. (The GPU sizes themselves never run on the host.)
for binary in hopper_gemm ampere_gemm flash_attention; do
  [[ -x $bundle/bin/$binary ]] || fail "the bundle has no bin/$binary (the big kernels run it)"
done
[[ -f $bundle/vendor_compare.py ]] || fail "the bundle has no vendor_compare.py"
bash -n "$bundle/run.sh" || fail "run.sh does not parse (bash -n)"
PYTHONPYCACHEPREFIX=$fresh/pycache python3 -m py_compile "$bundle/vendor_compare.py" "$bundle/anchors.py" \
  "$bundle/wheel_mosaic.py" ||
  fail "vendor_compare.py, anchors.py or wheel_mosaic.py does not compile (python3 -m py_compile)"
# shellcheck disable=SC2016,SC1003  # the parts are run.sh's text, quoted as it is
for part in 'big_row "hopper_gemm cooperative" gemm' '--pingpong --persistent --blocks="$sms"' \
            'big_row "ampere_gemm" gemm' 'big_row "flash_attention" attention' \
            '--heads="$heads" --seq="$seq" --head_dim=128' 'BIG_SEQ=${BIG_SEQ:-4096}' \
            'vendor_compare.py" sms' 'vendor_compare.py" \' '--json="$OUTDIR/big_kernels.json"' \
            'BIG_SIZE=${BIG_SIZE:-4096}' '--profile="$profile" --repeat="$BIG_REPEAT"' \
            'big_row "hopper_gemm cluster $shape" gemm' '--cluster="$shape"'; do
  grep -qF -- "$part" "$bundle/run.sh" || fail "run.sh lacks the big-kernel part '$part'"
done
have_driver=0
{ /sbin/ldconfig -p 2>/dev/null || true; } | grep 'libcuda\.so\.1' >/dev/null && have_driver=1
vendor_rc=0
env -i PATH=/usr/bin:/bin HOME="$fresh/home" python3 "$bundle/vendor_compare.py" table \
  --examples=/dev/null --json="$fresh/vendor.json" --text="$fresh/vendor.txt" --repeat=3 \
  >"$fresh/vendor.log" 2>&1 || vendor_rc=$?
cat "$fresh/vendor.log"
if ((!have_driver)); then
  ((vendor_rc == 0)) || fail "vendor_compare.py table exited $vendor_rc without a GPU (expected 0, skipped)"
  grep -q '^skipped: no GPU (' "$fresh/vendor.log" || fail "vendor_compare.py did not say 'skipped: no GPU (why)'"
  grep -q '"vendor_status": "skipped: no GPU' "$fresh/vendor.json" || fail "vendor.json does not say skipped"
  sms_rc=0
  env -i PATH=/usr/bin:/bin python3 "$bundle/vendor_compare.py" sms >"$fresh/sms.log" 2>&1 || sms_rc=$?
  ((sms_rc == 3)) && grep -q '^skipped: no GPU' "$fresh/sms.log" ||
    fail "vendor_compare.py sms: exit $sms_rc, '$(cat "$fresh/sms.log")' (expected 3, skipped: no GPU)"
fi
echo "big kernels: binaries, run.sh parts and vendor_compare.py present; vendor_compare.py: $(head -1 "$fresh/vendor.log")"

out=$fresh/out
mkdir -p "$fresh/home"
rc=0
env -i PATH=/usr/bin:/bin HOME="$fresh/home" WARPTRACE_FORCE_NO_GPU=1 \
  bash "$bundle/run.sh" "$out" >"$fresh/run.log" 2>&1 || rc=$?
cat "$fresh/run.log"
((rc == 0)) || fail "run.sh exited $rc"

results=$out/results.txt
[[ -f $results ]] || fail "no results.txt"
grep -q '^overall: PASS' "$results" || fail "results.txt does not say overall: PASS"
! grep -q '^FAIL' "$results" || fail "results.txt has FAIL lines"
for host_part in "example tiled_gemm host" "example warp_specialized_pipeline host" \
                 "example reduction host" "example cluster_reduction host" \
                 "example first_kernel host" \
                 "example hopper_gemm host" "example ampere_gemm host" \
                 "example hopper_gemm cluster 2x1 host" "example hopper_gemm cluster 1x2 host" \
                 "example flash_attention host" \
                 "big kernels vs vendor (vendor_compare.py)" \
                 "warptrace dump of a host trace" "warptrace dump of the synthetic Mosaic buffer" \
                 "anchors.py selftest" "libraries" "nvrtc" \
                 "wheel install (pip --no-index --no-deps)" \
                 "gpu_test cuda_device_gpu_test (no GPU" "gpu_test run_gpu_test (no GPU" \
                 "compile cost tiled_gemm (NVRTC" "compile cost warp_specialized_pipeline (NVRTC" \
                 "compile cost hopper_gemm (NVRTC" "compile cost flash_attention (NVRTC"; do
  grep -q "^PASS    $host_part" "$results" || fail "results.txt has no PASS line for '$host_part'"
done
for gpu_part in "examples with --device=cuda" "record cost" "anchor torch" "anchor Mosaic GPU" \
                "anchor warptrace.mosaic.install()" "big kernels at GPU sizes"; do
  grep -q "^SKIPPED $gpu_part.*WARPTRACE_FORCE_NO_GPU=1" "$results" ||
    fail "results.txt does not say SKIPPED for '$gpu_part'"
done
# The compile cost of each of the four kernels, split by NVRTC phase (this project's NVRTC
# writes time traces), and nothing flagged.
for example in tiled_gemm warp_specialized_pipeline hopper_gemm flash_attention; do
  grep -q "number: compile_cost $example compile ms by phase off/on (extra): front end " \
    "$results" || fail "results.txt has no compile phases for $example"
  grep -q "number: compile_cost $example perturbation: none" "$results" ||
    fail "results.txt does not say $example's profiled code is unperturbed"
done
grep -q 'from /usr/local/cuda\|from \$CUDA\|from ldconfig\|from python3' "$results" ||
  fail "results.txt does not say which NVRTC it used"

for f in big_kernels.txt big_kernels.json; do
  [[ -f $out/$f ]] || fail "run.sh wrote no $f"
done
grep -q 'skipped: no GPU (WARPTRACE_FORCE_NO_GPU=1)' "$out/big_kernels.txt" ||
  fail "big_kernels.txt does not say why its vendor columns are empty"
grep -q 'number: skipped: no GPU (WARPTRACE_FORCE_NO_GPU=1)' "$results" ||
  fail "results.txt does not carry vendor_compare.py's skip"

# What comes back from the GPU machine: at most 8 files of at most 16 MiB each.
files=$(find "$out" -type f | wc -l)
((files <= 8)) || fail "run.sh left $files files in its output directory (at most 8 come back)"
for f in "$out"/*; do
  ((($(stat -c %s "$f")) <= 16 * 1024 * 1024)) || fail "$f is over 16 MiB"
done
# (Listed to files first: grep -q closing a pipe early would fail tar under pipefail.)
tar -tzf "$out/traces.tgz" >"$fresh/traces.list"
tar -tzf "$out/logs.tgz" >"$fresh/logs.list"
grep -q '^traces/host/tiled_gemm.bin$' "$fresh/traces.list" || fail "traces.tgz lacks the host trace"
grep -q '^traces/mosaic_synthetic/mosaic_synthetic.bin$' "$fresh/traces.list" ||
  fail "traces.tgz lacks the synthetic Mosaic buffer"
grep -q '^logs/run_gpu_test.xml$' "$fresh/logs.list" || fail "logs.tgz lacks the gtest XML"
# The bundled wheel, installed with the machine's python3 into scratch, dumped a synthetic
# Mosaic buffer and named the entries_per_warpgroup of an overflowed one.
grep -q '^PASS    wheel install (pip --no-index --no-deps).*installed into .*entries_per_warpgroup >= [0-9]' \
  "$results" || fail "results.txt's wheel install line does not say where and what it named"
grep -q '^traces/wheel_check/synthetic.json$' "$fresh/traces.list" ||
  fail "traces.tgz lacks the installed wheel's dump of the synthetic Mosaic buffer"
# On the GPU machine, the JAX part of wheel_mosaic.py: present, and it skips cleanly here.
jax_rc=0
env -i PATH=/usr/bin:/bin HOME="$fresh/home" python3 "$bundle/wheel_mosaic.py" jax \
  --target="$fresh/no_site" --out="$fresh/jax_out" >"$fresh/jax.log" 2>&1 || jax_rc=$?
((jax_rc == 3)) && grep -q '^skipped: ' "$fresh/jax.log" ||
  fail "wheel_mosaic.py jax without JAX/GPU: exit $jax_rc, '$(cat "$fresh/jax.log")' (expected 3, skipped: ...)"
echo "PASS: run.sh from a fresh copy of the bundle under env -i"
