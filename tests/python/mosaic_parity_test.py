"""`warptrace dump --events=mosaic` against the real JAX: Mosaic GPU's own ProfilerSpec.dump.

    mosaic_parity_test.py WARPTRACE_CLI   (run by run_mosaic_parity_test.sh with a Python
                                           where jax imports; a missing jax FAILS)

For each generated Mosaic buffer (warp and warpgroup scope, several warpgroups per block,
a 3-D grid, a globaltimer low word that wraps, a %clock that wraps, a zero step, empty
traces), Mosaic's own dump and warptrace's CLI in its Mosaic mode write a trace; the two
are compared event by event: name, ph, pid, tid equal and ts within 1 ns (in fact equal as
doubles), and the top-level keys equal. An overflowing buffer makes Mosaic raise
"Insufficient space" and warptrace fail naming the entries_per_warpgroup that fits.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
import warnings

import numpy as np

from jax.experimental.mosaic.gpu import profiler

CLI = None
DIR = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
NAMES = ["kernel", "mainloop", "load", "mma", "epilogue", "wait"]


def trace_events(rng, ids, clock, n_regions, min_gap, max_gap, zero_step=False):
    """A properly nested random trace: [(tag, clock)], clocks as uint32 (they may wrap)."""
    out, stack = [], []

    def emit(tag, gap):
        nonlocal clock
        clock = (clock + gap) % 2**32
        out.append((tag, clock))

    emit(ids["kernel"], 0)
    stack.append("kernel")
    opened = 0
    while stack:
        gap = int(rng.integers(min_gap, max_gap + 1))
        if opened < n_regions and (len(stack) < 4 and rng.random() < 0.6):
            name = NAMES[1 + int(rng.integers(0, len(NAMES) - 1))]
            emit(ids[name], gap)
            stack.append(name)
            opened += 1
        elif len(stack) > 1 or opened >= n_regions:
            emit(ids[stack.pop()] | profiler.ProfilerSpec.EXIT, gap)
    if zero_step:
        out[2] = (out[2][0], out[1][1])  # a step of 0 cycles (the next steps stay > 0)
    return out


def make_case(name, grid, block, scope, seed, *, starts=None, first_clock=None,
              regions=(4, 30), gaps=(3, 400), empty=(), zero_step=False, slack=0,
              overflow=None):
    """A Mosaic buffer, its ProfilerSpec and the sidecar warptrace reads."""
    rng = np.random.default_rng(seed)
    spec = profiler.ProfilerSpec(entries_per_warpgroup=8, trace_scope=scope)
    ids = {n: spec.intern_name(n) for n in NAMES}
    per_block = spec._num_traces((), block)
    traces = int(np.prod(grid)) * per_block
    all_events = []
    for t in range(traces):
        if t in empty:
            all_events.append([])
            continue
        clock = (first_clock(t) if first_clock else 10_000 + 131 * t) % 2**32
        n = int(rng.integers(regions[0], regions[1] + 1))
        all_events.append(trace_events(rng, ids, clock, n, gaps[0], gaps[1],
                                       zero_step=zero_step and t == 1))
    e = 3 + 2 * max(len(ev) for ev in all_events) + slack
    spec.entries_per_warpgroup = e
    buf = np.zeros((traces, e), dtype=np.uint32)
    for t, ev in enumerate(all_events):
        start = starts(t) if starts else 1_000_000 + int(rng.integers(0, 50_000))
        buf[t, 0] = start % 2**32
        buf[t, 1] = int(rng.integers(0, 132))
        buf[t, 2] = 2 * len(ev)
        for i, (tag, c) in enumerate(ev):
            buf[t, 3 + 2 * i] = tag
            buf[t, 4 + 2 * i] = c
    if overflow is not None:
        buf[overflow, 2] += 2 * 5  # recorded 5 events more than the slice held
    prefix = os.path.join(DIR, name)
    buf.tofile(prefix + ".bin")
    by_id = sorted(spec.interned_names, key=spec.interned_names.get)
    with open(prefix + ".json", "w") as f:
        json.dump({"format": "mosaic-gpu", "grid": list(grid), "block": list(block),
                   "entries_per_warpgroup": e,
                   "trace_scope": "warp" if scope == profiler.ThreadSubset.WARP
                   else "warpgroup", "names": by_id}, f)
    return spec, buf, prefix


def mosaic_dump(spec, buf, grid, block, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's uint32 overflow notes
        with open(path, "w") as f:
            spec.dump(buf, f, grid=grid, block=block)
    with open(path) as f:
        return json.load(f)


def warptrace_dump(prefix, path, *extra):
    return subprocess.run([CLI, "dump", f"--input={prefix}", f"--output={path}",
                           "--events=mosaic", *extra], capture_output=True, text=True)


class MosaicParityTest(unittest.TestCase):
    def check(self, name, grid, block, scope, seed, **kw):
        spec, buf, prefix = make_case(name, grid, block, scope, seed, **kw)
        theirs = mosaic_dump(spec, buf, grid, block, prefix + ".mosaic.json")
        run = warptrace_dump(prefix, prefix + ".warptrace.json")
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(prefix + ".warptrace.json") as f:
            ours = json.load(f)
        self.assertEqual(list(ours), list(theirs))  # top-level keys, in order
        self.assertEqual(ours["displayTimeUnit"], theirs["displayTimeUnit"])
        a, b = theirs["traceEvents"], ours["traceEvents"]
        self.assertGreater(len(a), 0)
        self.assertEqual(len(b), len(a), f"{name}: event counts")
        exact = 0
        for i, (m, w) in enumerate(zip(a, b)):
            self.assertEqual(list(w), list(m), f"{name} event {i}: keys")
            for key in ("name", "ph", "pid", "tid"):
                self.assertEqual(w[key], m[key], f"{name} event {i} {key}: {w} vs {m}")
            self.assertLessEqual(abs(w["ts"] - m["ts"]) * 1e3, 1.0,
                                 f"{name} event {i} ts: {w} vs {m}")
            exact += w["ts"] == m["ts"]
        self.assertEqual(ours, theirs)  # the whole document, equal as parsed
        print(f"{name}: {len(a)} events, {len({e['tid'] for e in a})} traces: name, ph, pid, "
              f"tid equal; ts equal as doubles for {exact}/{len(a)}")
        for m, w in list(zip(a, b))[:2] + [(a[-1], b[-1])]:
            print(f"  mosaic    {json.dumps(m)}\n  warptrace {json.dumps(w)}")
        return a

    def test_warpgroup_scope_several_blocks_and_an_empty_trace(self):
        self.check("warpgroup", (3, 2, 1), (256, 1, 1), profiler.ThreadSubset.WARPGROUP, 1,
                   empty={4})

    def test_warp_scope_on_a_3d_grid_numbers_blocks_x_major(self):
        events = self.check("warp", (2, 1, 2), (128, 1, 1), profiler.ThreadSubset.WARP, 2)
        self.assertEqual({e["tid"] for e in events}, set(range(1, 17)))

    def test_four_warpgroups_per_block(self):
        self.check("warpgroups", (4, 1, 1), (512, 1, 1), profiler.ThreadSubset.WARPGROUP, 3,
                   regions=(40, 120), gaps=(5, 2000))

    def test_globaltimer_low_word_wraps(self):
        self.check("globaltimer_wrap", (4, 1, 1), (256, 1, 1),
                   profiler.ThreadSubset.WARPGROUP, 4,
                   starts=lambda t: 2**32 - 40_000 + 9_000 * t, gaps=(100, 3000))

    def test_clock_wraps_inside_a_trace(self):
        self.check("clock_wrap", (2, 1, 1), (256, 1, 1), profiler.ThreadSubset.WARPGROUP, 5,
                   first_clock=lambda t: 2**32 - 2_000 - 300 * t, gaps=(20, 500))

    def test_a_zero_cycle_step_makes_mosaics_overhead_wrap(self):
        self.check("zero_step", (2, 1, 1), (256, 1, 1), profiler.ThreadSubset.WARPGROUP, 6,
                   zero_step=True)

    def test_a_clock_that_goes_back_fails_verification_with_coordinates(self):
        # Mosaic clamps it to the previous time + 1 with a warning; warptrace's verify fails
        # naming the event, and with --allow-truncated (a warning) writes Mosaic's events.
        grid, block = (1, 1, 1), (256, 1, 1)
        spec, buf, prefix = make_case("backwards", grid, block,
                                      profiler.ThreadSubset.WARPGROUP, 9)
        buf[0, 3 + 2 * 3 + 1] = buf[0, 3 + 2 * 2 + 1] - 5  # event 3: 5 cycles before event 2
        buf.tofile(prefix + ".bin")
        theirs = mosaic_dump(spec, buf, grid, block, prefix + ".mosaic.json")
        run = warptrace_dump(prefix, prefix + ".warptrace.json")
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("block (0,0,0) warpgroup 0 event 3: %clock goes back 5 cycles",
                      run.stderr)
        run = warptrace_dump(prefix, prefix + ".warptrace.json", "--allow-truncated")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("warning: block (0,0,0) warpgroup 0 event 3", run.stderr)
        with open(prefix + ".warptrace.json") as f:
            self.assertEqual(json.load(f), theirs)

    def test_overflow_fails_naming_the_entries_that_fit(self):
        grid, block = (2, 1, 1), (256, 1, 1)
        spec, buf, prefix = make_case("overflow", grid, block,
                                      profiler.ThreadSubset.WARPGROUP, 7, overflow=1)
        with self.assertRaisesRegex(RuntimeError, "Insufficient space"):
            mosaic_dump(spec, buf, grid, block, prefix + ".mosaic.json")
        run = warptrace_dump(prefix, prefix + ".warptrace.json")
        self.assertNotEqual(run.returncode, 0)
        needed = 3 + int(buf[1, 2])
        self.assertIn(f"entries_per_warpgroup >= {needed}", run.stderr)
        self.assertIn("block (0,0,0) warpgroup 1", run.stderr)
        self.assertFalse(os.path.exists(prefix + ".warptrace.json"))
        print(f"overflow: Mosaic raises 'Insufficient space'; warptrace: "
              f"{[l for l in run.stderr.splitlines() if 'entries_per_warpgroup >=' in l][0]}")


if __name__ == "__main__":
    CLI = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0], "-v"])
