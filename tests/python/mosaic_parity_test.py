"""`warptrace dump --events=mosaic` against the real JAX: Mosaic GPU's own ProfilerSpec.dump.

    mosaic_parity_test.py WARPTRACE_CLI   (run by run_mosaic_parity_test.sh with a Python
                                           where jax imports; a missing jax FAILS)

For each generated Mosaic buffer (warp and warpgroup scope, several warpgroups per block,
a 3-D grid, a globaltimer low word that wraps, a %clock that wraps, a zero step, empty
traces), Mosaic's own dump and warptrace's CLI in its Mosaic mode write a trace; the two
are compared event by event: name, ph, pid, tid equal and ts within 1 ns (in fact equal as
doubles), and the top-level keys equal. An overflowing buffer makes Mosaic raise
"Insufficient space" and warptrace fail naming the entries_per_warpgroup that fits.

Every header form: JAX <= 0.7.2's buffers (word 2 counts the 3 header words; the sidecar's
"traces_used": "with_header") and ProfilerSpec(bounds_check=True) buffers (JAX 0.12.1, after
0.10.2: the device stops recording a trace at its capacity, and the dump closes the regions
left open with synthetic ends) are compared with `restated_dump`, Mosaic's dump restated with
the same numpy expressions for each form (JAX 0.7.2's and 0.12.1's profiler.py), which is
itself checked against the real JAX's dump wherever they coincide, and against the real
bounds_check dump where the JAX running the test has it (mosaic_parity_newest_jax_test).
"""
import inspect
import json
import os
import subprocess
import sys
import tempfile
import unittest
import warnings

import numpy as np

import jax
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


def restated_dump(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's uint32 overflow notes
        return _restated_dump(*args, **kwargs)


def _restated_dump(names, buf, grid, block, per_block, entries, *, traces_used="event_words",
                   close_open=False):
    """Mosaic's ProfilerSpec.dump restated for every form, as parsed JSON.

    traces_used="event_words" (JAX >= 0.8.0): word 2 counts event words, and the dump refuses
    `traces_used + 3 > entries`; "with_header" (JAX <= 0.7.2): word 2 is 3 + event words, and
    the dump refused `word 2 > entries - 2`. close_open (the dump of JAX 0.12.1, with jax
    commit 61f14009ec's bounds_check): each trace's regions still open after its last event
    get synthetic "E" events -- a copy of the open "B" with ph "E" and the trace's last ts --
    innermost first. Everything else is the dump of JAX 0.8.0 to 0.12.1, expression for
    expression (numpy uint32 arithmetic included)."""
    buffer = np.asarray(buf)
    num_blocks = int(np.prod(grid))
    entries_arr = buffer.reshape(num_blocks, per_block, entries)
    start_times = entries_arr[..., 0]
    sm_ids = entries_arr[..., 1]
    if traces_used == "with_header":
        if np.any(entries_arr[..., 2] > entries - 2):
            raise RuntimeError("Insufficient space to capture a full trace")
        used = entries_arr[..., 2] - 3
    else:
        used = entries_arr[..., 2]
        if np.any(used + 3 > entries):
            raise RuntimeError("Insufficient space to capture a full trace")
    traces = entries_arr[..., 3:]
    time_events = traces[:, :, 1::2]
    valid_times_mask = np.arange(traces.shape[-1])[1::2] < used[..., None]
    profiling_overhead = (time_events[:, :, 1:] - time_events[:, :, :-1]).min(
        where=valid_times_mask[:, :, 1:], initial=12)
    profiling_overhead = max(0, profiling_overhead - 1)
    events = []
    for block_idx, trace_idx in np.ndindex(num_blocks, per_block):
        valid_entries = used[block_idx, trace_idx]
        local_clock_offset = None
        if valid_entries % 2:
            raise RuntimeError("Profiler collected an odd number of trace events.")
        start_time = start_times[block_idx, trace_idx]
        block_events = []
        last_time = float("-inf")
        for i in range(0, valid_entries, 2):
            tag = traces[block_idx, trace_idx, i]
            time = traces[block_idx, trace_idx, i + 1]
            if local_clock_offset is None:
                local_clock_offset = time
            time -= local_clock_offset
            time -= (i // 2) * profiling_overhead
            if time < 0:
                break
            name_id = tag
            begin = True
            if name_id & profiler.ProfilerSpec.EXIT:
                name_id = name_id ^ profiler.ProfilerSpec.EXIT
                begin = False
            name = names[name_id]
            if last_time >= time:
                time = last_time + 1
            last_time = time
            block_events.append({"name": name, "ph": "B" if begin else "E",
                                 "ts": float(start_time + time) / 1e3,
                                 "pid": 1 + int(sm_ids[block_idx, trace_idx]),
                                 "tid": 1 + trace_idx + per_block * block_idx})
        else:
            if block_events:
                if close_open:
                    open_stack = []
                    for event in block_events:
                        if event["ph"] == "B":
                            open_stack.append(event)
                        else:
                            open_stack.pop()
                    last_ts = block_events[-1]["ts"]
                    for event in reversed(open_stack):
                        block_events.append({**event, "ph": "E", "ts": last_ts})
                events.append(block_events)
    events = sorted(events, key=lambda x: x[0]["ts"])
    flat = [e for trace in events for e in trace]
    return json.loads(json.dumps({"displayTimeUnit": "ns", "traceEvents": flat}))


def add_sidecar_fields(prefix, **fields):
    with open(prefix + ".json") as f:
        sidecar = json.load(f)
    sidecar.update(fields)
    with open(prefix + ".json", "w") as f:
        json.dump(sidecar, f)


def names_of(spec):
    return sorted(spec.interned_names, key=spec.interned_names.get)


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
        # The restatement the older form and bounds_check are compared with is Mosaic's own
        # dump wherever they coincide.
        self.assertEqual(restated_dump(names_of(spec), buf, grid, block,
                                       spec._num_traces((), block), spec.entries_per_warpgroup),
                         theirs)
        restated = restated_dump(names_of(spec), buf, grid, block, spec._num_traces((), block),
                                 spec.entries_per_warpgroup, close_open=True)
        self.assertEqual(restated, theirs)
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


class HeaderFormsTest(unittest.TestCase):
    """Every form of Mosaic's buffer, each equal to Mosaic's own dump of it."""

    def compare(self, name, prefix, theirs, *extra):
        run = warptrace_dump(prefix, prefix + ".warptrace.json", *extra)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(prefix + ".warptrace.json") as f:
            ours = json.load(f)
        self.assertGreater(len(theirs["traceEvents"]), 0)
        self.assertEqual(ours, theirs)
        print(f"{name}: {len(ours['traceEvents'])} events equal to Mosaic's dump of the form")
        for m, w in list(zip(theirs["traceEvents"], ours["traceEvents"]))[-2:]:
            print(f"  mosaic    {json.dumps(m)}\n  warptrace {json.dumps(w)}")
        return run

    def test_older_header_form_equals_jax_0_7_2s_dump(self):
        grid, block = (3, 2, 1), (256, 1, 1)
        spec, buf, prefix = make_case("older_form", grid, block,
                                      profiler.ThreadSubset.WARPGROUP, 11, empty={2}, slack=2)
        newer = mosaic_dump(spec, buf, grid, block, prefix + ".mosaic_newer.json")
        old = buf.copy()
        old[:, 2] += 3  # JAX <= 0.7.2: word 2 counts the 3 header words
        old.tofile(prefix + ".bin")
        per_block = spec._num_traces((), block)
        theirs = restated_dump(names_of(spec), old, grid, block, per_block,
                               spec.entries_per_warpgroup, traces_used="with_header")
        self.assertEqual(theirs, newer)  # the same events as the newer form's, from the real JAX
        # Read as the newer form, it is refused, naming the form it reads as.
        run = warptrace_dump(prefix, prefix + ".warptrace.json")
        self.assertNotEqual(run.returncode, 0)
        self.assertIn('every trace of the buffer reads as the other form, "with_header" '
                      '(JAX <= 0.7.2)', run.stderr)
        print("older form read as the newer:", run.stderr.strip().splitlines()[0][:300])
        add_sidecar_fields(prefix, traces_used="with_header")
        self.compare("older_form", prefix, theirs)

    def test_a_buffer_that_fits_neither_form_says_so(self):
        grid, block = (2, 1, 1), (256, 1, 1)
        spec, buf, prefix = make_case("neither_form", grid, block,
                                      profiler.ThreadSubset.WARPGROUP, 12)
        buf[0, 2] += 3  # one trace in the older form, the others in the newer
        buf.tofile(prefix + ".bin")
        for form in ("event_words", "with_header"):
            add_sidecar_fields(prefix, traces_used=form)
            run = warptrace_dump(prefix, prefix + ".warptrace.json")
            self.assertNotEqual(run.returncode, 0)
            self.assertIn("the buffer fits neither form of Mosaic's header", run.stderr)
        print("neither form:", run.stderr.strip().splitlines()[0][:300])

    def test_bounds_check_truncated_traces_get_mosaics_synthetic_ends(self):
        grid, block = (2, 1, 1), (512, 1, 1)
        spec, full, prefix = make_case("bounds_check", grid, block,
                                       profiler.ThreadSubset.WARPGROUP, 13, regions=(6, 30))
        per_block = spec._num_traces((), block)
        used = full[:, 2].astype(np.int64)
        # The device with bounds_check (JAX 0.12.1's OnDeviceProfiler.record): an event is
        # stored only while offset + 2 <= E - 3, and the offset stops there too, so word 2
        # is what was kept.
        e = 3 + int(np.median(used)) + 1  # odd room: the slice's last word stays unused
        slots = (e - 3) // 2 * 2
        buf = np.zeros((full.shape[0], e), dtype=np.uint32)
        buf[:, :2] = full[:, :2]
        open_at_cut = {}
        for t in range(full.shape[0]):
            n = min(int(used[t]), slots)
            buf[t, 2] = n
            buf[t, 3:3 + n] = full[t, 3:3 + n]
            if used[t] > slots:
                depth = 0
                for tag in full[t, 3:3 + n:2]:
                    depth = depth + 1 if not tag & profiler.ProfilerSpec.EXIT else max(0, depth - 1)
                open_at_cut[t] = depth
        buf.tofile(prefix + ".bin")
        self.assertTrue(0 < len(open_at_cut) < full.shape[0], open_at_cut)
        self.assertTrue(all(v > 0 for v in open_at_cut.values()), open_at_cut)
        add_sidecar_fields(prefix, entries_per_warpgroup=e, bounds_check=True)
        theirs = restated_dump(names_of(spec), buf, grid, block, per_block, e, close_open=True)
        self.assertEqual(sum(ev["ph"] == "E" for ev in theirs["traceEvents"]),
                         sum(ev["ph"] == "B" for ev in theirs["traceEvents"]))
        if "bounds_check" in inspect.signature(profiler.ProfilerSpec).parameters:
            real = profiler.ProfilerSpec(e, trace_scope=profiler.ThreadSubset.WARPGROUP,
                                         bounds_check=True)
            for n in names_of(spec):
                real.intern_name(n)
            self.assertEqual(mosaic_dump(real, buf, grid, block, prefix + ".mosaic.json"), theirs)
            print(f"bounds_check: JAX {jax.__version__}'s own dump equals the restatement")
        else:
            print(f"bounds_check: JAX {jax.__version__}'s ProfilerSpec has no bounds_check "
                  "(jax commit 61f14009ec is after it): compared with the restatement of "
                  "JAX 0.12.1's dump (mosaic_parity_newest_jax_test compares with it)")
        run = self.compare("bounds_check", prefix, theirs)
        # Mosaic's events, and warptrace's verdict naming each truncated unit and the least
        # entries_per_warpgroup that could hold it (the device did not count what it lost).
        for t, depth in open_at_cut.items():
            b, w = divmod(t, per_block)
            self.assertIn(f"warning: block ({b},0,0) warpgroup {w} filled all {slots // 2} "
                          f"event slots", run.stderr)
            self.assertIn(f"set entries_per_warpgroup >= {3 + slots + 2 * depth} at least",
                          run.stderr)
        print("bounds_check verdicts:\n  " + "\n  ".join(
            l for l in run.stderr.splitlines() if "entries_per_warpgroup >=" in l))
        report = prefix + ".report.json"
        subprocess.run([CLI, "dump", f"--input={prefix}", f"--report={report}"], check=True,
                       capture_output=True)
        with open(report) as f:
            verdicts = json.load(f)
        truncated = [u for u in verdicts["units"] if u["verdict"] == "truncated"]
        self.assertEqual(len(truncated), len(open_at_cut))

if __name__ == "__main__":
    CLI = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0], "-v"])
