"""warptrace.mosaic.dump against Mosaic GPU's own ProfilerSpec.dump, in one process, both
writing a file, on a Mosaic buffer of about 1e6 events:

    bazel build -c opt //python:wheel
    /var/cache/warptrace-test/jaxvenv311/bin/pip install --no-index --force-reinstall bazel-bin/python/warptrace-*.whl
    /var/cache/warptrace-test/jaxvenv311/bin/python tests/python/mosaic_benchmark.py [EVENTS]

(/var/cache/warptrace-test/jaxvenv311: any Python with `jax` and `absl-py`, which Mosaic GPU's profiler module
imports; tools/setup.sh makes one.) Prints seconds per dump (best of 3 for warptrace, 1 run
of Mosaic's) and the speedups, for Chrome JSON (into the text file object Mosaic passes, as
install() does: written through its descriptor, and to a path) and Perfetto.
"""
import os
import sys
import tempfile
import time

import numpy as np
from jax.experimental.mosaic.gpu import profiler

ITERATIONS = 40
NAMES = ["kernel", "mainloop", "load", "mma"]


def make_buffer(spec, events):
    ids = [spec.intern_name(n) for n in NAMES]
    per_trace = 2 + 6 * ITERATIONS
    traces = max(2, -(-events // per_trace))
    traces += traces % 2
    exit_ = profiler.ProfilerSpec.EXIT
    tags = [ids[0]]
    gaps = [40]
    for _ in range(ITERATIONS):
        tags += [ids[1], ids[2], ids[2] | exit_, ids[3], ids[3] | exit_, ids[1] | exit_]
        gaps += [8, 4, 300, 6, 1000, 5]
    tags.append(ids[0] | exit_)
    gaps.append(12)
    t = np.arange(traces, dtype=np.int64)[:, None]
    jitter = (t * 13 + np.arange(len(gaps))[None, :] * 7) % 200
    clocks = 1000 + 37 * t + np.cumsum(np.asarray(gaps)[None, :] + jitter, axis=1)
    buf = np.zeros((traces, spec.entries_per_warpgroup), dtype=np.uint32)
    buf[:, 0] = (1_000_000 + 150 * (t[:, 0] // 2)).astype(np.uint32)
    buf[:, 1] = (t[:, 0] // 2 % 132).astype(np.uint32)
    buf[:, 2] = 2 * per_trace
    buf[:, 3::2] = np.asarray(tags, dtype=np.uint32)[None, :]
    buf[:, 4::2] = clocks.astype(np.uint32)
    return buf, traces // 2, traces * per_trace


def best(f, n=3):
    times = []
    for _ in range(n):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    import warptrace  # here, so that make_buffer serves a Python without warptrace too
    import warptrace.mosaic

    events = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    spec = profiler.ProfilerSpec(entries_per_warpgroup=3 + 2 * (2 + 6 * ITERATIONS))
    buf, blocks, n = make_buffer(spec, events)
    grid, block = (blocks, 1, 1), (256, 1, 1)
    d = tempfile.mkdtemp()
    print(f"buffer: {n} events, {blocks} blocks x 2 warpgroups, {buf.nbytes / 1e6:.1f} MB; "
          f"jax {__import__('jax').__version__}, warptrace from {warptrace.__file__}")

    def mosaic():
        with open(os.path.join(d, "mosaic.json"), "w") as f:
            spec.dump(buf, f, grid=grid, block=block)

    def ours_file_object():
        with open(os.path.join(d, "wt_f.json"), "w") as f:
            warptrace.mosaic.dump(spec, buf, f, grid, block)

    def ours_json():
        warptrace.mosaic.dump(spec, buf, os.path.join(d, "wt.json"), grid, block)

    def ours_perfetto():
        warptrace.mosaic.dump(spec, buf, os.path.join(d, "wt.pftrace"), grid, block)

    t_mosaic = best(mosaic, 1)
    print(f"Mosaic ProfilerSpec.dump (Chrome JSON):            {t_mosaic:8.3f} s  "
          f"{os.path.getsize(os.path.join(d, 'mosaic.json')) / 1e6:.1f} MB")
    for name, f, out in [("warptrace.mosaic.dump, JSON into Mosaic's file", ours_file_object,
                          "wt_f.json"),
                         ("warptrace.mosaic.dump, JSON to a path", ours_json, "wt.json"),
                         ("warptrace.mosaic.dump, Perfetto", ours_perfetto, "wt.pftrace")]:
        t = best(f)
        print(f"{name + ':':50s} {t:8.3f} s  {os.path.getsize(os.path.join(d, out)) / 1e6:.1f}"
              f" MB  {t_mosaic / t:6.1f}x")


if __name__ == "__main__":
    main()
