#!/usr/bin/env python3
"""The big-kernel table of warptrace's GPU check: each example kernel at GPU sizes against the
vendor library on the same problem, in the same run.

Run by the bundle's run.sh with the GPU machine's own python3 (its PyTorch):

    vendor_compare.py sms
        The SM count of GPU 0 (the CUDA driver through ctypes, no torch), for --blocks of a
        persistent kernel. Prints the number; exit 3 with "skipped: no GPU (why)" without one.
    vendor_compare.py table --examples=FILE --json=PATH --text=PATH [--repeat=N]
        FILE: one line per example run by run.sh, tab-separated:
            label  kind  dims  unprofiled_us  profiled_us  note
        kind "gemm" with dims MxNxK[:bt] (":bt": C = A B^T, both K-major, else C = A B), or
        "attention" with dims BxHxSxD[:causal]; the times are the examples' --repeat medians
        (CUDA events), empty where a run failed, the note says why.
        For each distinct problem, PyTorch's bf16 matmul (cuBLAS) or
        scaled_dot_product_attention (flash / cuDNN, whichever PyTorch picks) is checked
        against an fp32 reference and timed with CUDA events (median of --repeat launches
        after a warm-up). Writes one table, as JSON and as text: per example TFLOP/s
        unprofiled and profiled, the slowdown (profiled / unprofiled time), the vendor's
        TFLOP/s and the example's share of it (example TFLOP/s / vendor TFLOP/s).
        Without a GPU or without torch the vendor columns say "skipped: ..." and the table is
        still written; the script prints "skipped: no GPU (why)" / "skipped: no torch (why)"
        and exits 0 (run.sh decides whether a missing GPU is a failure).

FLOPs: a GEMM 2 M N K; attention 4 B H S^2 D (Q K^T and P V), half that when causal.
Exit status: 0 ok or skipped, 1 a vendor check failed, 2 bad arguments, 3 (sms) no GPU.
"""
import argparse
import ctypes
import ctypes.util
import json
import math
import os
import statistics
import sys

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_GPU = 0, 1, 2, 3
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16


def gpu_or_reason():
    """(SM count of GPU 0, None) or (None, why there is no GPU), via the CUDA driver only."""
    if os.environ.get("WARPTRACE_FORCE_NO_GPU") == "1":
        return None, "WARPTRACE_FORCE_NO_GPU=1"
    names = ["libcuda.so.1", "libcuda.so"]
    found = ctypes.util.find_library("cuda")
    if found:
        names.append(found)
    lib = None
    for name in names:
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    if lib is None:
        return None, "no CUDA driver (libcuda.so.1 does not load)"
    rc = lib.cuInit(0)
    if rc != 0:
        return None, f"cuInit failed with CUDA error {rc}"
    count = ctypes.c_int(0)
    rc = lib.cuDeviceGetCount(ctypes.byref(count))
    if rc != 0 or count.value == 0:
        return None, f"the driver lists no GPU (cuDeviceGetCount: error {rc}, {count.value} devices)"
    device = ctypes.c_int(0)
    sms = ctypes.c_int(0)
    if lib.cuDeviceGet(ctypes.byref(device), 0) != 0 or lib.cuDeviceGetAttribute(
            ctypes.byref(sms), CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device) != 0:
        return None, "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT) failed"
    return sms.value, None


def parse_problem(kind, dims):
    """('gemm', (m, n, k), bt) or ('attention', (b, h, s, d), causal); ValueError if bad."""
    text, _, flag = dims.partition(":")
    values = tuple(int(x) for x in text.split("x"))
    if kind == "gemm" and len(values) == 3 and flag in ("", "bt"):
        return kind, values, flag == "bt"
    if kind == "attention" and len(values) == 4 and flag in ("", "causal"):
        return kind, values, flag == "causal"
    raise ValueError(f"bad problem {kind} {dims!r}: expected gemm MxNxK[:bt] or "
                     "attention BxHxSxD[:causal]")


def flops(kind, values, flag):
    if kind == "gemm":
        m, n, k = values
        return 2.0 * m * n * k
    b, h, s, d = values
    return 4.0 * b * h * s * s * d / (2.0 if flag else 1.0)


def tflops(flop, us):
    return flop / (us * 1e6) if us and us > 0 else None


def read_examples(path):
    rows = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) < 5:
                raise ValueError(f"{path}:{number}: expected label, kind, dims, unprofiled_us, "
                                 f"profiled_us[, note], got {line!r}")
            label, kind, dims, off, on = fields[:5]
            note = fields[5] if len(fields) > 5 else ""
            kind, values, flag = parse_problem(kind, dims)
            rows.append({"label": label, "kind": kind, "dims": dims, "values": values,
                         "flag": flag, "unprofiled_us": float(off) if off else None,
                         "profiled_us": float(on) if on else None, "note": note})
    return rows


def time_cuda(torch, fn, repeat, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)  # ms -> us
    return statistics.median(times)


def vendor_gemm(torch, values, bt, repeat):
    m, n, k = values
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=gen) if bt else \
        torch.randn(k, n, device="cuda", dtype=torch.bfloat16, generator=gen)
    rhs = b.t() if bt else b
    c = torch.matmul(a, rhs)
    ref = torch.matmul(a.float(), rhs.float())
    # bf16 output: |error| <= 2^-8 |C| plus the fp32 sums' rounding (K 2^-22 with |a b| <= 16)
    err = (c.float() - ref).abs()
    bound = ref.abs() * 2.0 ** -8 + k * 2.0 ** -22 * 16
    if not bool((err <= bound).all()):
        raise RuntimeError(f"torch.matmul differs from the fp32 reference by up to "
                           f"{err.max().item():.3g}")
    us = time_cuda(torch, lambda: torch.matmul(a, rhs, out=c), repeat)
    return us, "torch.matmul bf16 (cuBLAS)" + (", B^T" if bt else "")


def vendor_attention(torch, values, causal, repeat):
    import torch.nn.functional as F
    b, h, s, d = values
    gen = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, generator=gen)
               for _ in range(3))
    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    # The fp32 reference of one head (softmax(Q K^T / sqrt(D)) V), the whole S x S scores.
    q0, k0, v0 = (x[0, 0].float() for x in (q, k, v))
    scores = q0 @ k0.t() / math.sqrt(d)
    if causal:
        scores = scores.masked_fill(
            torch.ones(s, s, device="cuda", dtype=torch.bool).triu(1), float("-inf"))
    ref = torch.softmax(scores, dim=-1) @ v0
    err = (o[0, 0].float() - ref).abs().max().item()
    if not err <= 2e-2:
        raise RuntimeError(f"scaled_dot_product_attention differs from the fp32 reference of "
                           f"head 0 by {err:.3g} (> 2e-2)")
    us = time_cuda(torch, lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                   repeat)
    return us, "torch scaled_dot_product_attention bf16" + (" causal" if causal else "")


def fmt(value, spec):
    """value in `spec` (e.g. "8.1f"), or "-" right-aligned to the same width."""
    width = int(spec.split(".")[0]) if spec[0].isdigit() else 0
    return "-".rjust(width) if value is None else format(value, spec)


def table(args):
    rows = read_examples(args.examples)
    skipped = None
    torch = None
    sms, why = gpu_or_reason()
    if why is not None:
        skipped = f"skipped: no GPU ({why})"
    else:
        try:
            import torch as torch_module
            torch = torch_module
        except ImportError as e:
            skipped = f"skipped: no torch ({e})"
        if torch is not None and not torch.cuda.is_available():
            skipped = "skipped: no GPU (torch.cuda.is_available() is False)"
            torch = None
    if skipped:
        print(skipped)

    failed = False
    vendor = {}
    for row in rows:
        key = (row["kind"], row["values"], row["flag"])
        if skipped or key in vendor:
            continue
        try:
            if row["kind"] == "gemm":
                us, what = vendor_gemm(torch, row["values"], row["flag"], args.repeat)
            else:
                us, what = vendor_attention(torch, row["values"], row["flag"], args.repeat)
            vendor[key] = {"us": us, "what": what, "error": None}
            print(f"vendor: {what} {row['dims']}: median {us:.3f} us, "
                  f"{tflops(flops(*key), us):.1f} TFLOP/s")
        except Exception as e:  # a failed vendor check fails the table, not the run
            failed = True
            vendor[key] = {"us": None, "what": None, "error": f"{type(e).__name__}: {e}"}
            print(f"FAIL vendor {row['kind']} {row['dims']}: {type(e).__name__}: {e}")
        if torch is not None:
            torch.cuda.empty_cache()

    out = {"device": None, "sms": sms, "vendor_status": skipped or "ran", "rows": []}
    if torch is not None:
        out["device"] = torch.cuda.get_device_name()
        out["torch"] = torch.__version__
        out["torch_cuda"] = torch.version.cuda
    lines = []
    header = (f"{'kernel':<44} {'problem':<22} {'unprof':>8} {'prof':>8} {'slowdown':>8} "
              f"{'vendor':>8} {'unprof/vendor':>13} {'prof/vendor':>11}")
    lines.append("big kernels at GPU sizes: TFLOP/s from the --repeat median (CUDA events); "
                 "vendor = PyTorch (cuBLAS matmul, scaled_dot_product_attention), same problem, "
                 "same run")
    lines.append(header)
    for row in rows:
        key = (row["kind"], row["values"], row["flag"])
        flop = flops(*key)
        off, on = tflops(flop, row["unprofiled_us"]), tflops(flop, row["profiled_us"])
        slowdown = (row["profiled_us"] / row["unprofiled_us"]
                    if row["profiled_us"] and row["unprofiled_us"] else None)
        v = vendor.get(key, {})
        vt = tflops(flop, v.get("us"))
        entry = {"label": row["label"], "kind": row["kind"], "problem": row["dims"],
                 "flops": flop, "unprofiled_us": row["unprofiled_us"],
                 "profiled_us": row["profiled_us"], "unprofiled_tflops": off,
                 "profiled_tflops": on, "slowdown": slowdown,
                 "vendor": v.get("what"), "vendor_us": v.get("us"), "vendor_tflops": vt,
                 "unprofiled_vs_vendor": off / vt if off and vt else None,
                 "profiled_vs_vendor": on / vt if on and vt else None,
                 "vendor_status": skipped or v.get("error") or "ran", "note": row["note"]}
        out["rows"].append(entry)
        lines.append(f"{row['label'][:44]:<44} {row['dims'][:22]:<22} {fmt(off, '8.4g')} "
                     f"{fmt(on, '8.4g')} {(fmt(slowdown, '.3f') + 'x') if slowdown else '-':>8} "
                     f"{fmt(vt, '8.4g')} {fmt(entry['unprofiled_vs_vendor'], '13.3f')} "
                     f"{fmt(entry['profiled_vs_vendor'], '11.3f')}")
        if row["note"]:
            lines.append(f"    {row['note']}")
        if entry["vendor_status"] != "ran" and not skipped:
            lines.append(f"    vendor: {entry['vendor_status']}")
    if skipped:
        lines.append(f"vendor columns: {skipped}")
    if not rows:
        lines.append("(no example runs: none was started)")
    text = "\n".join(lines) + "\n"
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)
    with open(args.text, "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return EXIT_FAILED if failed else EXIT_OK


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="part", required=True)
    sub.add_parser("sms")
    t = sub.add_parser("table")
    t.add_argument("--examples", required=True)
    t.add_argument("--json", required=True)
    t.add_argument("--text", required=True)
    t.add_argument("--repeat", type=int, default=50)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else EXIT_OK
    if args.part == "sms":
        sms, why = gpu_or_reason()
        if why is not None:
            print(f"skipped: no GPU ({why})")
            return EXIT_NO_GPU
        print(sms)
        return EXIT_OK
    if args.repeat < 1:
        print("vendor_compare.py: --repeat must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    try:
        return table(args)
    except (OSError, ValueError) as e:
        print(f"vendor_compare.py: {e}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
