"""Predicted vs measured kernel times for the planted what-if cases (issue 32's table).

    bazel build //examples/... //profiler/cli:warptrace
    /usr/bin/python3 tools/whatif_table.py [BAZEL_BIN] [WORKDIR]

Each example runs on the host backend's deterministic clock (work costs only its planted
busy-work delays) planted (P, C) = (45000, 60000) cycles, and then (P, C/2) and (P/2, C).
`warptrace whatif` on the (P, C) trace predicts each of the other two runs: shortening each
consumer work instance by the time C/2 cycles take, and the producer's by P/2's. The measured
kernel time of a run is read the way the prediction measures one (`whatif` with a factor of 1).
Prints one Markdown row per prediction: predicted, measured, the error, and the bound sides
the prediction and the measured run name. Then the causal profile of the (P, C) hopper_gemm.
Mirrors tests/e2e/whatif_test.cc, which asserts the same within 5 %.
"""
import json
import os
import subprocess
import sys
import tempfile

P, C = 45000, 60000


def delay_ns(cycles):
    """The ns a delay of `cycles` adds to each instance (tests/e2e/whatif_test.cc)."""
    return (cycles + 2) // 3 * 2 + 2


KERNELS = [
    # example, extra args, consumer work, producer work, producer what-if by factor
    ("warp_specialized_pipeline", ["--k=512", "--stages=4"], "consumer:mma", "producer:load", False),
    ("hopper_gemm", ["--m=128", "--n=128", "--k=512"], "consumer:mma", "producer:load", False),
    ("flash_attention", [], "consumer:softmax", "producer:load", True),
]


def run_example(bazel_bin, work, example, args, producer, consumer):
    out = os.path.join(work, f"{example}_{producer}_{consumer}")
    os.makedirs(out, exist_ok=True)
    subprocess.run([os.path.join(bazel_bin, "examples", example), "--device=host",
                    f"--producer_delay={producer}", f"--consumer_delay={consumer}",
                    f"--out={out}"] + args, check=True, stdout=subprocess.DEVNULL)
    return os.path.join(out, example)


def whatif(bazel_bin, prefix, speedup, work, causal=False):
    path = os.path.join(work, "whatif.json")
    proc = subprocess.run([os.path.join(bazel_bin, "profiler", "cli", "warptrace"), "whatif",
                           f"--input={prefix}", f"--speedup={speedup}", f"--json={path}",
                           f"--causal-profile={'true' if causal else 'false'}"],
                          check=True, capture_output=True, text=True)
    with open(path) as f:
        return json.load(f), proc.stdout


def bound(prediction):
    for d in prediction["diagnosis"]:
        if d["kind"] in ("bound", "waiting"):
            return d["text"].split(":")[0]
    return "-"


def main():
    bazel_bin = sys.argv[1] if len(sys.argv) > 1 else "bazel-bin"
    work = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="whatif_table_")
    os.environ["WARPTRACE_HOST_CLOCK"] = "deterministic"
    print(f"planted (P, C) = ({P}, {C}) cycles; deterministic host clock\n")
    print("| kernel | what-if on the (P, C) run | predicted ns | planted run | measured ns "
          "| error | predicted bound | measured bound |")
    print("|---|---|---:|---|---:|---:|---|---|")
    hopper_pc = None
    for example, args, consumer, producer, by_factor in KERNELS:
        pc = run_example(bazel_bin, work, example, args, P, C)
        if example == "hopper_gemm":
            hopper_pc = pc
        cases = [
            (f"{consumer}=-{delay_ns(C) - delay_ns(C // 2)}ns", (P, C // 2), consumer),
            (f"{producer}=0.5" if by_factor else f"{producer}=-{delay_ns(P) - delay_ns(P // 2)}ns",
             (P // 2, C), producer),
        ]
        for spec, (p, c), region in cases:
            predicted, _ = whatif(bazel_bin, pc, spec, work)
            target = run_example(bazel_bin, work, example, args, p, c)
            measured, _ = whatif(bazel_bin, target, f"{region}=1", work)
            pred_ns, meas_ns = predicted["predicted_ns"], measured["measured_ns"]
            print(f"| {example} | `{spec}` | {pred_ns} | ({p}, {c}) | {meas_ns} | "
                  f"{100.0 * (pred_ns - meas_ns) / meas_ns:+.2f} % | {bound(predicted)} | "
                  f"{bound(measured)} |")
    _, text = whatif(bazel_bin, hopper_pc, "consumer:mma=1", work, causal=True)
    print(f"\nhopper_gemm (P, C) = ({P}, {C}): warptrace whatif --speedup=consumer:mma=1 "
          "--causal-profile=true\n")
    print(text)


if __name__ == "__main__":
    main()
