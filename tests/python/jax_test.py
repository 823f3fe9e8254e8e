"""warptrace.mosaic against the real JAX: Mosaic GPU's own ProfilerSpec and its own dump.

    jax_test.py   (run by tests/python/run_jax_test.sh with a Python where `jax` imports)

Builds a ProfilerSpec, interns its names, makes a Mosaic-format buffer, dumps it with
Mosaic's own ProfilerSpec.dump, then install()s warptrace and calls spec.dump(...) exactly
as Mosaic's runtime does (jax/experimental/mosaic/gpu/core.py): per trace, the regions
(name and nesting depth, in the order they open) are the same; an overflowing buffer raises
a RuntimeError naming the entries_per_warpgroup that fits, where Mosaic raises
"Insufficient space to capture a full trace".
"""
import collections
import json
import os
import sys
import tempfile
import unittest

import numpy as np

from jax.experimental.mosaic.gpu import profiler

import warptrace
import warptrace.mosaic

DIR = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
NAMES = ["kernel", "mainloop", "load", "mma"]


def make_buffer(spec, blocks, iterations, overflow=None):
    ids = {n: spec.intern_name(n) for n in NAMES}
    e = spec.entries_per_warpgroup
    buf = np.zeros((blocks * 2, e), dtype=np.uint32)
    for t in range(blocks * 2):
        ev, clock = [], 5000 + 97 * t

        def event(name, exit_, gap):
            nonlocal clock
            clock += gap
            ev.extend([ids[name] | (profiler.ProfilerSpec.EXIT if exit_ else 0), clock])

        event("kernel", False, 30)
        for i in range(iterations):
            event("mainloop", False, 8)
            event("load", False, 5)
            event("load", True, 200 + (t * 7 + i * 13) % 90)
            event("mma", False, 6)
            event("mma", True, 700 + (t * 11 + i * 5) % 300)
            event("mainloop", True, 4)
        event("kernel", True, 9)
        used = len(ev)
        buf[t, :3] = [2_000_000 + 300 * (t // 2), t // 2, used]
        ev = ev[: e - 3]
        buf[t, 3:3 + len(ev)] = ev
        if overflow == t:
            buf[t, 2] = used + 2 * 7
    return buf


def mosaic_regions(trace):
    """Mosaic's B/E events -> {tid: [(name, depth), ...]} in begin order."""
    out, depth = collections.defaultdict(list), collections.Counter()
    for e in trace["traceEvents"]:
        if e["ph"] == "B":
            out[e["tid"] - 1].append((e["name"], depth[e["tid"]]))
            depth[e["tid"]] += 1
        elif e["ph"] == "E":
            depth[e["tid"]] -= 1
    return dict(out)


def warptrace_regions(trace):
    """warptrace's X slices -> {thread index: [(name, depth), ...]} in begin order."""
    slices = collections.defaultdict(list)
    for e in trace["traceEvents"]:
        if e["ph"] == "X":
            slices[e["tid"]].append((e["ts"], -e["dur"], e["name"]))
    out = {}
    for tid, s in slices.items():
        stack, regions = [], []
        for ts, neg_dur, name in sorted(s):
            while stack and stack[-1] <= ts:
                stack.pop()
            regions.append((name, len(stack)))
            stack.append(ts - neg_dur)
        out[tid] = regions
    return out


class RealJaxTest(unittest.TestCase):
    def tearDown(self):
        warptrace.mosaic.uninstall()

    def test_install_routes_the_real_profiler_spec_and_matches_mosaic_dump(self):
        spec = profiler.ProfilerSpec(entries_per_warpgroup=3 + 2 * (2 + 6 * 12))
        grid, block = (5, 1, 1), (256, 1, 1)
        buf = make_buffer(spec, blocks=5, iterations=12)
        mosaic_path = os.path.join(DIR, "mosaic.json")
        with open(mosaic_path, "w") as f:
            spec.dump(buf, f, grid=grid, block=block)  # Mosaic's own
        warptrace.mosaic.install()
        self.assertIsNot(profiler.ProfilerSpec.dump, warptrace.mosaic._original)
        ours_path = os.path.join(DIR, "ours.json")
        with open(ours_path, "w") as f:
            result = spec.dump(buf, f, grid=grid, block=block)  # as Mosaic's runtime calls it
        self.assertIsInstance(result, warptrace.DumpResult)
        with open(mosaic_path) as f:
            theirs = json.load(f)
        with open(ours_path) as f:
            ours = json.load(f)
        # By default install() changes nothing a user sees: the same events, event by event.
        a, b = theirs["traceEvents"], ours["traceEvents"]
        self.assertEqual(len(mosaic_regions(theirs)), 10)
        self.assertEqual(len(b), len(a))
        for i, (m, w) in enumerate(zip(a, b)):
            for key in ("name", "ph", "pid", "tid"):
                self.assertEqual(w[key], m[key], f"event {i} {key}: {w} vs {m}")
            self.assertLessEqual(abs(w["ts"] - m["ts"]) * 1e3, 1.0, f"event {i}: {w} vs {m}")
        self.assertEqual(list(ours), list(theirs))
        # The opt-in: warptrace's own timeline, the same regions.
        with open(os.path.join(DIR, "ours_x.json"), "w") as f:
            warptrace.mosaic.dump(spec, buf, f, grid, block, events="x")
        with open(os.path.join(DIR, "ours_x.json")) as f:
            self.assertEqual(warptrace_regions(json.load(f)), mosaic_regions(theirs))
        warptrace.mosaic.uninstall()
        with open(os.path.join(DIR, "again.json"), "w") as f:
            self.assertIsNone(spec.dump(buf, f, grid=grid, block=block))  # Mosaic's again

    def test_a_jax_array_is_read_like_the_numpy_array(self):
        import jax.numpy as jnp
        spec = profiler.ProfilerSpec(entries_per_warpgroup=3 + 2 * (2 + 6 * 3))
        buf = make_buffer(spec, blocks=2, iterations=3)
        paths = [os.path.join(DIR, n) for n in ("np.pftrace", "jnp.pftrace")]
        for b, p in zip((buf, jnp.asarray(buf)), paths):
            warptrace.mosaic.dump(spec, b, p, (2,), (256,), kernel_name="k")
        with open(paths[0], "rb") as a, open(paths[1], "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_overflow_raises_with_the_entries_that_fit(self):
        spec = profiler.ProfilerSpec(entries_per_warpgroup=3 + 2 * (2 + 6 * 4))
        buf = make_buffer(spec, blocks=3, iterations=4, overflow=3)
        with self.assertRaisesRegex(RuntimeError, "Insufficient space"):
            with open(os.path.join(DIR, "m_over.json"), "w") as f:
                spec.dump(buf, f, grid=(3, 1, 1), block=(256, 1, 1))
        warptrace.mosaic.install()
        needed = spec.entries_per_warpgroup + 14
        with self.assertRaisesRegex(RuntimeError, f"entries_per_warpgroup >= {needed}") as e:
            with open(os.path.join(DIR, "w_over.json"), "w") as f:
                spec.dump(buf, f, grid=(3, 1, 1), block=(256, 1, 1))
        self.assertIsInstance(e.exception, warptrace.TraceError)
        self.assertIn("block (1,0,0) warpgroup 1", str(e.exception))

    def test_install_reads_the_header_form_of_the_running_jax(self):
        # Word 2 counts event words since JAX 0.8.0 (jax commit 794de7abdb, 2025-10-06), and
        # the 3 header words too before it.
        form = warptrace.mosaic.traces_used_of_jax
        self.assertEqual(form("0.7.2"), "with_header")
        self.assertEqual(form("0.4.30"), "with_header")
        self.assertEqual(form("0.8.0.dev20251001"), "with_header")
        self.assertEqual(form("0.8.0.dev20251010"), "event_words")
        self.assertEqual(form("0.8.0"), "event_words")
        self.assertEqual(form("0.10.2"), "event_words")
        with self.assertRaises(ValueError):
            form("jax")
        import jax
        warptrace.mosaic.install()
        self.assertEqual(warptrace.mosaic._options["traces_used"], form(jax.__version__))
        warptrace.mosaic.uninstall()

        # Under a JAX 0.7.2, install() reads the older form: the same buffer with word 2 + 3
        # dumps to exactly Mosaic's own dump of the newer one.
        spec = profiler.ProfilerSpec(entries_per_warpgroup=3 + 2 * (2 + 6 * 3) + 2)
        grid, block = (2, 1, 1), (256, 1, 1)
        buf = make_buffer(spec, blocks=2, iterations=3)
        with open(os.path.join(DIR, "mosaic_newer.json"), "w") as f:
            spec.dump(buf, f, grid=grid, block=block)
        with open(os.path.join(DIR, "mosaic_newer.json")) as f:
            theirs = json.load(f)
        old = buf.copy()
        old[:, 2] += 3
        real = jax.__version__
        try:
            jax.__version__ = "0.7.2"
            warptrace.mosaic.install()
        finally:
            jax.__version__ = real
        self.assertEqual(warptrace.mosaic._options["traces_used"], "with_header")
        with open(os.path.join(DIR, "ours_older.json"), "w") as f:
            spec.dump(old, f, grid=grid, block=block)
        with open(os.path.join(DIR, "ours_older.json")) as f:
            self.assertEqual(json.load(f), theirs)
        # And a buffer of the newer form under it says which form it reads as.
        with self.assertRaisesRegex(RuntimeError, '"traces_used": "event_words"'):
            with open(os.path.join(DIR, "ours_wrong.json"), "w") as f:
                spec.dump(buf, f, grid=grid, block=block)

    def test_bounds_check_spec_is_dumped_not_refused(self):
        # ProfilerSpec(bounds_check=True) (JAX 0.12.1): the device keeps the first 10 events
        # of each trace and stops counting there; every trace here is cut with regions open.
        spec = warptrace.mosaic.Spec(3 + 2 * 10, NAMES, bounds_check=True)
        full = make_buffer(profiler.ProfilerSpec(entries_per_warpgroup=3 + 2 * 20), blocks=2,
                           iterations=3)
        buf = np.ascontiguousarray(full[:, :spec.entries_per_warpgroup])
        buf[:, 2] = 2 * 10
        path = os.path.join(DIR, "bounds.json")
        result = warptrace.mosaic.dump(spec, buf, path, (2,), (256,))
        self.assertEqual(len(result.overflows), 4)
        for o in result.overflows:
            self.assertTrue(o["bounds_checked"])
            self.assertFalse(o["entries_needed_exact"])
            self.assertEqual(o["words_past_slice"], 0)
            self.assertGreater(o["entries_needed"], spec.entries_per_warpgroup)
        self.assertEqual(result.verdict_counts.get("truncated"), 4)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
        # Mosaic's synthetic ends: every region closed.
        self.assertEqual(sum(e["ph"] == "B" for e in events), sum(e["ph"] == "E" for e in events))

if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
