"""warptrace.mosaic against a real JAX from before 0.8.0, whose Mosaic GPU profiler writes the
older header form (word 2 = the 3 header words + the event words) and dumps it with its own
older ProfilerSpec.dump.

    mosaic_older_jax_test.py   (run by run_jax_test.sh --optional-venv=... with a venv of
                                JAX 0.6.2 or 0.4.30, which tools/setup.sh makes where pyenv
                                has Python 3.10 or 3.9)

install() must read the older form because of the running JAX's version alone, and every
buffer that JAX's own dump accepts must give exactly its events; where it refuses one
("Insufficient space"), warptrace names the entries_per_warpgroup its dump accepts.
"""
import json
import math
import os
import sys
import tempfile
import unittest
import warnings

import numpy as np

import jax
from jax.experimental.mosaic.gpu import profiler

import warptrace
import warptrace.mosaic

DIR = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
NAMES = ["kernel", "load", "mma", "store"]
EXIT = 1 << 31


def nested_events(rng, ids, clock, loops):
    out = [(ids["kernel"], clock)]
    for _ in range(loops):
        for name in ("load", "mma", "store"):
            clock += int(rng.integers(5, 300))
            out.append((ids[name], clock))
            clock += int(rng.integers(20, 900))
            out.append((ids[name] | EXIT, clock))
    out.append((ids["kernel"] | EXIT, clock + 7))
    return out


def older_buffer(spec, blocks, per_block, seed, empty=(), overflow=None):
    """An older-form buffer: word 2 = 3 + event words, as JAX <= 0.7.2's finalize writes."""
    rng = np.random.default_rng(seed)
    ids = {n: spec.intern_name(n) for n in NAMES}
    traces = [[] if t in empty else nested_events(rng, ids, 10_000 + 31 * t,
                                                  int(rng.integers(1, 6)))
              for t in range(blocks * per_block)]
    e = 3 + 2 * max(len(t) for t in traces) + 2  # JAX <= 0.7.2 refuses word 2 > E - 2
    spec.entries_per_warpgroup = e
    buf = np.zeros((blocks * per_block, e), dtype=np.uint32)
    for t, ev in enumerate(traces):
        buf[t, 0] = 1_000_000 + int(rng.integers(0, 40_000))
        buf[t, 1] = int(rng.integers(0, 132))
        buf[t, 2] = 3 + 2 * len(ev)
        for i, (tag, clock) in enumerate(ev):
            buf[t, 3 + 2 * i] = tag
            buf[t, 4 + 2 * i] = clock % 2**32
    if overflow is not None:
        buf[overflow, 2] = e + 2 * 6  # recorded 6 events more than its E - 3 words hold
    return buf


def new_spec(entries=8):
    return profiler.ProfilerSpec(entries_per_warpgroup=entries)


def dump_both(spec, buf, grid, block, name):
    mosaic_path = os.path.join(DIR, name + ".mosaic.json")
    ours_path = os.path.join(DIR, name + ".warptrace.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with open(mosaic_path, "w") as f:
            spec.dump(buf, f, grid=grid, block=block)  # JAX's own, older dump
    with warptrace.mosaic.installed():
        with open(ours_path, "w") as f:
            result = spec.dump(buf, f, grid=grid, block=block)  # as Mosaic's runtime calls it
    with open(mosaic_path) as a, open(ours_path) as b:
        return json.load(a), json.load(b), result


class OlderJaxTest(unittest.TestCase):
    def test_this_jax_writes_the_older_form(self):
        self.assertEqual(warptrace.mosaic.traces_used_of_jax(jax.__version__), "with_header")
        warptrace.mosaic.install()
        try:
            self.assertEqual(warptrace.mosaic._options["traces_used"], "with_header")
        finally:
            warptrace.mosaic.uninstall()

    def test_older_form_equals_this_jaxs_own_dump(self):
        for name, grid, block, empty in [("older_1wg", (3, 1, 1), (128, 1, 1), ()),
                                         ("older_2wg", (2, 2, 1), (256, 1, 1), {3}),
                                         ("older_3d", (2, 1, 2), (384, 1, 1), {0, 7})]:
            spec = new_spec()
            per_block = math.prod(block) // 128
            buf = older_buffer(spec, math.prod(grid), per_block, len(name), empty=empty)
            theirs, ours, result = dump_both(spec, buf, grid, block, name)
            self.assertGreater(len(theirs["traceEvents"]), 0)
            self.assertEqual(ours, theirs, name)
            self.assertEqual(result.verdict_counts["complete"], math.prod(grid) * per_block)
            print(f"{name}: {len(ours['traceEvents'])} events equal to JAX {jax.__version__}'s "
                  f"own dump of the older form")
            for m, w in list(zip(theirs["traceEvents"], ours["traceEvents"]))[-2:]:
                print(f"  mosaic    {json.dumps(m)}\n  warptrace {json.dumps(w)}")

    def test_overflow_names_the_size_this_jaxs_dump_accepts(self):
        spec = new_spec()
        buf = older_buffer(spec, 2, 2, 5, overflow=2)
        with self.assertRaisesRegex(RuntimeError, "Insufficient space"):
            with open(os.path.join(DIR, "over.mosaic.json"), "w") as f:
                spec.dump(buf, f, grid=(2, 1, 1), block=(256, 1, 1))
        needed = int(buf[2, 2]) + 2  # its dump accepts word 2 <= E - 2
        with warptrace.mosaic.installed():
            with self.assertRaisesRegex(RuntimeError,
                                        f"entries_per_warpgroup >= {needed}") as e:
                with open(os.path.join(DIR, "over.warptrace.json"), "w") as f:
                    spec.dump(buf, f, grid=(2, 1, 1), block=(256, 1, 1))
        self.assertIsInstance(e.exception, warptrace.TraceError)
        print("overflow: JAX raises 'Insufficient space'; warptrace:",
              [l for l in str(e.exception).splitlines() if "entries_per_warpgroup >=" in l][0])


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
