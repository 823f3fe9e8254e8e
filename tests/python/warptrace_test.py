"""Tests of the Python package (python/warptrace) against the warptrace CLI.

    warptrace_test.py WRITE_TEST_TRACES WARPTRACE_CLI

WRITE_TEST_TRACES (tests/python/write_test_traces.cc) saves the synthesized traces this
test reads; the CLI (profiler/cli/warptrace_main.cc) is the reference every in-process
result is compared with.
"""
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import types
import unittest

import numpy as np

import warptrace
import warptrace.mosaic

WRITER, CLI = sys.argv[1], sys.argv[2]
DIR = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))


def cli(*args, check=True):
    p = subprocess.run([CLI, *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"warptrace {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p


def path(name):
    return os.path.join(DIR, name)


def read(p):
    with open(p, "rb") as f:
        return f.read()


def words_of(prefix):
    return np.fromfile(prefix + ".bin", dtype="<u4")


# A Mosaic GPU buffer as Mosaic's profiler writes it (profiler/imports/mosaic_import.h):
# per trace [start_lo, smid, traces_used, (tag, clock) pairs...], kernel { n x {load, mma} }.
MOSAIC_NAMES = ["kernel", "load", "mma"]


def mosaic_buffer(blocks, iterations, entries=None, overflow_trace=None):
    per_trace = 2 + 4 * iterations
    if entries is None:
        entries = 3 + 2 * per_trace
    traces = blocks * 2
    buf = np.zeros((traces, entries), dtype=np.uint32)
    for t in range(traces):
        ev, clock = [], 1000 + 37 * t

        def event(site, exit_, gap):
            nonlocal clock
            clock += gap
            ev.extend([site | (1 << 31 if exit_ else 0), clock])

        event(0, False, 40)
        for i in range(iterations):
            event(1, False, 8)
            event(1, True, 300 + (t * 13 + i * 7) % 200)
            event(2, False, 6)
            event(2, True, 1000 + (t * 29 + i * 11) % 700)
        event(0, True, 12)
        used = len(ev)
        ev = ev[: entries - 3]
        buf[t, :3] = [1_000_000 + 150 * (t // 2), t // 2 % 132, used]
        buf[t, 3:3 + len(ev)] = ev
        if overflow_trace == t:
            buf[t, 2] = used + 20  # the device counted 10 events more than fit
    return buf, entries


def write_mosaic_prefix(prefix, buf, entries, grid, block, kernel_name):
    buf.astype("<u4").tofile(prefix + ".bin")
    with open(prefix + ".json", "w") as f:
        json.dump({"format": "mosaic-gpu", "grid": list(grid), "block": list(block),
                   "entries_per_warpgroup": entries, "trace_scope": "warpgroup",
                   "names": MOSAIC_NAMES, "kernel_name": kernel_name}, f)


class WarptraceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        subprocess.run([WRITER, DIR], check=True)
        with open(path("corruptions.txt")) as f:
            cls.corruptions = f.read().split()

    # --- byte-identical to the CLI -----------------------------------------------------
    def check_identical(self, ext):
        cli("dump", "--input=" + path("clean"), "--output=" + path("cli" + ext))
        result = warptrace.dump(path("clean"), output=path("py" + ext))
        self.assertEqual(result.paths, [path("py" + ext)])
        self.assertEqual(read(path("py" + ext)), read(path("cli" + ext)))
        layout = warptrace.Layout.load(path("clean.json"))
        warptrace.dump(words_of(path("clean")), layout, path("mem" + ext))
        self.assertEqual(read(path("mem" + ext)), read(path("cli" + ext)))
        # One thread or several (the CLI's --threads): the same bytes.
        for threads in (1, 3):
            warptrace.dump(path("clean"), output=path(f"t{threads}" + ext), threads=threads)
            self.assertEqual(read(path(f"t{threads}" + ext)), read(path("cli" + ext)))
        cli("dump", "--input=" + path("clean"), "--output=" + path("cli1" + ext), "--threads=1")
        self.assertEqual(read(path("cli1" + ext)), read(path("cli" + ext)))
        return result

    def test_perfetto_file_is_byte_identical_to_the_cli(self):
        self.assertEqual(self.check_identical(".pftrace").format, "perfetto")

    def test_json_file_is_byte_identical_to_the_cli(self):
        self.assertEqual(self.check_identical(".json").format, "json")

    def test_every_cli_dump_flag_is_a_keyword_of_dump(self):
        # One schema (warptrace_dump_settings): each setting the CLI has, python's dump() has.
        import inspect
        keywords = inspect.signature(warptrace.dump).parameters
        specs = warptrace._lib.dump_settings()
        self.assertIn("report", specs)
        for key, spec in specs.items():
            if spec["cli_flag"]:
                self.assertIn(key, keywords, f"--{spec['cli_flag']} has no dump({key}=...)")
                self.assertIsNone(keywords[key].default, f"dump({key}=...) states a default")

    def test_report_events_args_and_analysis_are_the_clis(self):
        cli("dump", "--input=" + path("pipeline"), "--output=" + path("cli_be.json"),
            "--events=be", "--json-args=full", "--report=" + path("cli_verdict.json"),
            "--analysis=" + path("cli_analysis.json"))
        warptrace.dump(path("pipeline"), output=path("py_be.json"), events="be",
                       json_args="full", report=path("py_verdict.json"),
                       analysis_output=path("py_analysis.json"))
        for cli_file, py_file in (("cli_be.json", "py_be.json"),
                                  ("cli_verdict.json", "py_verdict.json"),
                                  ("cli_analysis.json", "py_analysis.json")):
            self.assertEqual(read(path(py_file)), read(path(cli_file)), py_file)

    def test_format_overrides_the_extension_as_in_the_cli(self):
        cli("dump", "--input=" + path("clean"), "--output=" + path("cli_fmt.trace"),
            "--format=perfetto")
        warptrace.dump(path("clean"), output=path("py_fmt.trace"), format="perfetto")
        self.assertEqual(read(path("py_fmt.trace")), read(path("cli_fmt.trace")))

    # --- the result agrees with the CLI's summary, verdicts and analysis ----------------
    def test_result_agrees_with_the_cli_summary_report_and_analysis(self):
        p = cli("dump", "--input=" + path("clean"), "--summary",
                "--report=" + path("cli_report.json"), "--analysis=" + path("cli_an.json"))
        result = warptrace.dump(path("clean"), summary=True, analysis=True)
        self.assertEqual(result.summary_text, p.stdout)
        with open(path("cli_report.json")) as f:
            report = json.load(f)
        self.assertEqual(result.report, report)
        with open(path("cli_an.json")) as f:
            self.assertEqual(result.analysis, json.load(f))
        self.assertEqual(result.verdict_counts, report["verdicts"])
        self.assertEqual(result.kept_events, 2000)
        self.assertEqual(result.dropped_events, report["dropped_events"])
        self.assertEqual([u["verdict"] for u in result.units],
                         [u["verdict"] for u in report["units"]])
        self.assertIn(f"{len(result.units)} units", p.stderr)
        names = [r["name"] for r in result.summary["regions"]]
        # The synthetic kernel's four regions, by total time (never an empty table).
        self.assertEqual(names, ["kernel", "mainloop", "mma", "load"])
        for row in result.summary["regions"]:
            self.assertIn(row["name"], p.stdout)
        self.assertTrue(result.diagnosis)
        self.assertIn(result.diagnosis[0]["text"], p.stdout)

    def test_causal_profile_is_on_by_default_and_off_on_request_as_in_the_cli(self):
        on = cli("dump", "--input=" + path("pipeline"), "--summary")
        off = cli("dump", "--input=" + path("pipeline"), "--summary", "--causal-profile=false")
        result = warptrace.dump(path("pipeline"), summary=True)
        self.assertEqual(result.summary_text, on.stdout)
        self.assertIn("causal profile (predicted kernel time", result.summary_text)
        self.assertTrue(result.analysis["causal_profile"]["rows"])
        result = warptrace.dump(path("pipeline"), summary=True, causal_profile=False)
        self.assertEqual(result.summary_text, off.stdout)
        self.assertNotIn("causal profile", result.summary_text)
        self.assertNotIn("causal_profile", result.analysis)

    def test_diff_agrees_with_the_cli(self):
        cli("diff", "--before=" + path("clean"), "--after=" + path("clean_large"),
            "--json=" + path("cli_diff.json"))
        d = warptrace.diff(path("clean"), path("clean_large"))
        with open(path("cli_diff.json")) as f:
            self.assertEqual(d.data, json.load(f))
        for row in d.rows + d.kernel:
            self.assertIn("p_value", row)
            self.assertIn("significant", row)
        self.assertIn("(block)", d.table)

    def test_diff_against_a_what_if_agrees_with_the_cli(self):
        cli("diff", "--before=" + path("pipeline"), "--what-if=mma=0.5",
            "--json=" + path("cli_whatif_diff.json"))
        d = warptrace.diff(path("pipeline"), what_if="mma=0.5")
        with open(path("cli_whatif_diff.json")) as f:
            self.assertEqual(d.data, json.load(f))
        self.assertEqual(d.rows[0]["name"], "mma")
        self.assertLess(d.rows[0]["change"], 0)
        with self.assertRaises(warptrace.TraceError):
            warptrace.diff(path("pipeline"), path("pipeline"), what_if="mma=0.5")
        with self.assertRaises(warptrace.TraceError):
            warptrace.diff(path("pipeline"), what_if="nosuch=0.5")
        with self.assertRaises(TypeError):
            warptrace.diff(path("pipeline"))

    # --- no copy ------------------------------------------------------------------------
    def test_dumping_a_large_array_does_not_copy_it(self):
        words = words_of(path("big"))
        layout = warptrace.Layout.load(path("big.json"))
        self.assertGreater(words.nbytes, 12 << 20)
        # A first dump builds the result's Python objects (a dict per unit, ~10 MB here);
        # freed, their memory is reused by the next one, which then shows what the dump
        # itself allocates: a copy of the buffer would add its whole size to the peak.
        del warptrace.dump(words, layout).units[:]
        peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        result = warptrace.dump(words, layout)
        del result
        result = warptrace.dump(memoryview(words), layout)  # the buffer protocol, untyped
        peak_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        self.assertGreater(result.kept_events, 1_900_000)
        self.assertLess(peak_after - peak_before, words.nbytes // 2,
                        f"peak RSS grew {peak_after - peak_before} bytes for a "
                        f"{words.nbytes}-byte buffer")

    def test_bytes_and_a_uint8_view_are_read_as_words(self):
        layout = warptrace.Layout.load(path("clean.json"))
        raw = read(path("clean.bin"))
        self.assertEqual(warptrace.dump(raw, layout).kept_events, 2000)
        self.assertEqual(warptrace.dump(np.frombuffer(raw, np.uint8), layout).kept_events, 2000)

    # --- bad inputs ---------------------------------------------------------------------
    def test_bad_buffers_raise_with_what_to_change(self):
        layout = warptrace.Layout.load(path("clean.json"))
        w = words_of(path("clean"))
        with self.assertRaisesRegex(TypeError, "not a 32-bit or 8-bit integer"):
            warptrace.dump(w.astype(np.float32), layout)
        with self.assertRaisesRegex(ValueError, "not C-contiguous"):
            warptrace.dump(np.repeat(w, 2)[::2], layout)
        with self.assertRaisesRegex(ValueError, "big-endian"):
            warptrace.dump(w.astype(">u4"), layout)
        with self.assertRaisesRegex(ValueError, "aligned"):
            warptrace.dump(np.frombuffer(b"\0" + w.tobytes(), np.uint8)[1:], layout)
        with self.assertRaisesRegex(ValueError, "whole number of 32-bit words"):
            warptrace.dump(w.view(np.uint8)[:-1], layout)
        with self.assertRaises(warptrace.TraceError) as e:
            warptrace.dump(w[:-1], layout)
        self.assertEqual(e.exception.code, "INVALID_ARGUMENT")
        self.assertIn(f"needs {len(w)} words", str(e.exception))
        with self.assertRaises(TypeError):
            warptrace.dump(w, None)
        with self.assertRaises(TypeError):
            warptrace.dump(object(), layout)

    def test_bad_layouts_and_missing_files_raise(self):
        with self.assertRaises(warptrace.TraceError) as e:
            warptrace.Layout.from_json('{"format": "warptrace", "version": 1}')
        self.assertEqual(e.exception.code, "INVALID_ARGUMENT")
        with self.assertRaisesRegex(warptrace.TraceError, "line|column|JSON"):
            warptrace.Layout.from_json("{not json")
        with self.assertRaises(FileNotFoundError) as e:
            warptrace.dump(path("no_such_trace"))
        self.assertIsInstance(e.exception, warptrace.TraceError)
        self.assertIn("no_such_trace", str(e.exception))
        with self.assertRaises(FileNotFoundError):
            warptrace.Layout.load(path("no_such.json"))
        with self.assertRaisesRegex(warptrace.TraceError, "unknown format"):
            warptrace.dump(path("clean"), output=path("x.json"), format="svg")
        with self.assertRaisesRegex(warptrace.TraceError, "input"):
            warptrace.dump(path("clean"), output=path("clean.json"))

    def test_a_corrupted_buffer_raises_with_coordinates_and_keeps_the_verdicts(self):
        with self.assertRaises(RuntimeError) as e:
            warptrace.dump(path("corrupt_unknown_site"), output=path("never.json"))
        err = e.exception
        self.assertIsInstance(err, warptrace.TraceError)
        self.assertEqual(err.code, "DATA_LOSS")
        self.assertIn("block (1,0,0) warpgroup 0 event 0", str(err))
        bad = [u for u in err.result.units if u["verdict"] != "complete"]
        self.assertEqual([(u["block_index"], u["unit"]) for u in bad], [((1, 0, 0), 0)])
        self.assertEqual(err.result.findings[0]["kind"], "unknown_site")
        self.assertFalse(os.path.exists(path("never.json")))
        kept = warptrace.dump(path("corrupt_unknown_site"), allow_truncated=True)
        self.assertGreater(kept.warnings, 0)

    def test_fuzz_corruptions_and_flipped_bytes_never_crash(self):
        self.assertGreaterEqual(len(self.corruptions), 10)
        for name in self.corruptions:
            prefix = path("corrupt_" + name)
            code = cli("dump", "--input=" + prefix, "--report=" + path("r.json"),
                       check=False).returncode
            for allow in (False, True):
                try:
                    warptrace.dump(prefix, allow_truncated=allow, summary=True)
                    raised = False
                except warptrace.TraceError as e:
                    raised = True
                    self.assertTrue(str(e))
                if not allow:
                    self.assertEqual(raised, code != 0, f"{name}: CLI exit {code}")
        layout = warptrace.Layout.load(path("clean.json"))
        clean = words_of(path("clean")).view(np.uint8)
        rng = np.random.default_rng(22)
        outcomes = set()
        for _ in range(300):
            b = clean.copy()
            for i in rng.integers(0, len(b), size=rng.integers(1, 8)):
                b[i] ^= np.uint8(1 << rng.integers(0, 8))
            try:
                warptrace.dump(b, layout, summary=True, allow_truncated=bool(rng.integers(2)))
                outcomes.add("ok")
            except warptrace.TraceError as e:
                outcomes.add(e.code)
        self.assertIn("DATA_LOSS", outcomes)

    # --- warptrace.mosaic ---------------------------------------------------------------
    def test_mosaic_dump_matches_the_cli_on_the_same_buffer(self):
        buf, entries = mosaic_buffer(blocks=6, iterations=10)
        spec = warptrace.mosaic.Spec(entries, {n: i for i, n in enumerate(MOSAIC_NAMES)})
        write_mosaic_prefix(path("mos"), buf, entries, (6, 1, 1), (256, 1, 1), "mos")
        for ext in (".json", ".pftrace"):
            # The Chrome JSON is Mosaic's own events by default (the CLI's --events=mosaic).
            events = ["--events=mosaic"] if ext == ".json" else []
            cli("dump", "--input=" + path("mos"), "--output=" + path("mos_cli" + ext), *events)
            r = warptrace.mosaic.dump(spec, buf, path("mos_py" + ext), (6,), (256,),
                                      kernel_name="mos")
            self.assertEqual(read(path("mos_py" + ext)), read(path("mos_cli" + ext)), ext)
            self.assertEqual(r.kept_events, 12 * (2 + 4 * 10))
        # Mosaic's way: a text file object it opened; Chrome JSON goes into it.
        with open(path("mos_f.json"), "w") as f:
            f.write("")
            r = warptrace.mosaic.dump(spec, buf.reshape(-1), f, (6, 1, 1), (256, 1, 1),
                                      kernel_name="mos", perfetto=True)
        self.assertEqual(read(path("mos_f.json")), read(path("mos_cli.json")))
        self.assertEqual(read(path("mos_f.pftrace")), read(path("mos_cli.pftrace")))
        self.assertEqual(r.paths, [path("mos_f.json"), path("mos_f.pftrace")])
        sio = io.StringIO()
        warptrace.mosaic.dump(spec, buf, sio, (6,), (256,), kernel_name="mos")
        self.assertEqual(sio.getvalue().encode(), read(path("mos_cli.json")))

    def test_mosaic_overflow_raises_with_the_entries_that_fit(self):
        buf, entries = mosaic_buffer(blocks=4, iterations=10, overflow_trace=5)
        spec = warptrace.mosaic.Spec(entries, MOSAIC_NAMES)
        with self.assertRaises(RuntimeError) as e:
            warptrace.mosaic.dump(spec, buf, path("over.json"), (4,), (256,))
        err = e.exception
        self.assertIsInstance(err, warptrace.TraceError)
        self.assertEqual(err.code, "RESOURCE_EXHAUSTED")
        self.assertIn(f"entries_per_warpgroup >= {entries + 20}", str(err))
        self.assertIn("block (2,0,0) warpgroup 1", str(err))
        self.assertEqual([o["entries_needed"] for o in err.result.overflows], [entries + 20])
        self.assertFalse(os.path.exists(path("over.json")))
        r = warptrace.mosaic.dump(spec, buf, path("over.json"), (4,), (256,),
                                  allow_truncated=True)
        self.assertEqual(r.verdict_counts["overflowed"], 1)
        self.assertTrue(os.path.exists(path("over.json")))

    def test_mosaic_rejects_bad_specs_and_buffers(self):
        buf, entries = mosaic_buffer(blocks=2, iterations=2)
        with self.assertRaisesRegex(ValueError, "trace_scope"):
            warptrace.mosaic.dump(warptrace.mosaic.Spec(entries, MOSAIC_NAMES, "block"),
                                  buf, path("m.json"), (2,), (256,))
        with self.assertRaisesRegex(warptrace.TraceError, "words"):
            warptrace.mosaic.dump(warptrace.mosaic.Spec(entries + 1, MOSAIC_NAMES), buf,
                                  path("m.json"), (2,), (256,))
        with self.assertRaisesRegex(TypeError, "integer"):
            warptrace.mosaic.dump(warptrace.mosaic.Spec(entries, MOSAIC_NAMES),
                                  buf.astype(np.float64), path("m.json"), (2,), (256,))

    def test_install_routes_profiler_spec_dump_and_uninstall_restores_it(self):
        # A stand-in for jax.experimental.mosaic.gpu.profiler (the real one: see
        # tests/python/jax_test.py): install() must patch whatever ProfilerSpec it finds.
        calls = []

        class ProfilerSpec:
            def __init__(self, entries):
                self.entries_per_warpgroup = entries
                self.interned_names = {n: i for i, n in enumerate(MOSAIC_NAMES)}
                self.trace_scope = types.SimpleNamespace(name="WARPGROUP")

            def dump(self, buffer, f, grid, block):
                calls.append("mosaic")

        mods = {}
        for name in ["jax", "jax.experimental", "jax.experimental.mosaic",
                     "jax.experimental.mosaic.gpu", "jax.experimental.mosaic.gpu.profiler"]:
            mods[name] = types.ModuleType(name)
        mods["jax.experimental.mosaic.gpu.profiler"].ProfilerSpec = ProfilerSpec
        for parent, child in [("jax", "experimental"), ("jax.experimental", "mosaic"),
                              ("jax.experimental.mosaic", "gpu"),
                              ("jax.experimental.mosaic.gpu", "profiler")]:
            setattr(mods[parent], child, mods[parent + "." + child])
        saved = {k: sys.modules.get(k) for k in mods}
        sys.modules.update(mods)
        try:
            buf, entries = mosaic_buffer(blocks=2, iterations=3, overflow_trace=1)
            spec = ProfilerSpec(entries)
            warptrace.mosaic.install()
            warptrace.mosaic.install()  # idempotent
            self.assertTrue(warptrace.mosaic.is_installed())
            with self.assertRaisesRegex(RuntimeError, "entries_per_warpgroup >="):
                spec.dump(buf, path("inst.json"), grid=(2, 1, 1), block=(256, 1, 1))
            self.assertEqual(calls, [])
            warptrace.mosaic.uninstall()
            self.assertFalse(warptrace.mosaic.is_installed())
            spec.dump(buf, path("inst.json"), grid=(2, 1, 1), block=(256, 1, 1))
            self.assertEqual(calls, ["mosaic"])
            # The context manager: installed for the block (with its options), then restored.
            with warptrace.mosaic.installed(allow_truncated=True):
                self.assertTrue(warptrace.mosaic.is_installed())
                r = spec.dump(buf, path("inst_ctx.json"), grid=(2, 1, 1), block=(256, 1, 1))
                self.assertEqual(r.verdict_counts["overflowed"], 1)
            self.assertFalse(warptrace.mosaic.is_installed())
            spec.dump(buf, path("inst.json"), grid=(2, 1, 1), block=(256, 1, 1))
            self.assertEqual(calls, ["mosaic", "mosaic"])
            with self.assertRaisesRegex(TypeError, "unknown option.*colour"):
                warptrace.mosaic.install(colour="red")
        finally:
            warptrace.mosaic.uninstall()
            for k, v in saved.items():
                if v is None:
                    sys.modules.pop(k, None)
                else:
                    sys.modules[k] = v


class PackageTest(unittest.TestCase):
    """What a user of the package sees: version, typing marker, messages in Python's terms,
    the Mosaic dump into an open file without a temporary copy."""

    @classmethod
    def setUpClass(cls):
        subprocess.run([WRITER, DIR], check=True)

    def test_version_and_typing_marker(self):
        self.assertRegex(warptrace.__version__, r"^\d+\.\d+\.\d+$")
        here = os.path.dirname(warptrace.__file__)
        self.assertTrue(os.path.exists(os.path.join(here, "py.typed")))
        self.assertIn("return", warptrace.dump.__annotations__)

    def test_bad_arguments_name_the_argument(self):
        layout = warptrace.Layout.load(path("clean.json"))
        w = words_of(path("clean"))
        with self.assertRaisesRegex(TypeError, r"dtype is float32"):
            warptrace.dump(w.astype(np.float32), layout)
        with self.assertRaisesRegex(TypeError, r"dtype is float64"):
            warptrace.dump(w.astype(np.float64), layout)
        # Dates and durations are 8-byte numbers too (typestr "<M8[ns]"): a TypeError naming
        # the dtype, not a ValueError from parsing it (issue 55).
        for dtype in ("datetime64[ns]", "timedelta64[us]"):
            with self.assertRaisesRegex(TypeError, rf"dtype is {dtype.split('[')[0]}"):
                warptrace.dump(w.astype(np.uint64).view(dtype), layout)
        with self.assertRaisesRegex(TypeError, r"layout must be a warptrace.Layout"):
            warptrace.dump(w, "clean.json")
        # Bounds and types come from the library's one schema (warptrace_dump_settings).
        with self.assertRaisesRegex(ValueError, r"dump\(sm_clock_khz=...\) must be an integer "
                                                r"from 0 to 4294967295"):
            warptrace.dump(w, layout, sm_clock_khz=-1)
        with self.assertRaisesRegex(ValueError, r"dump\(threads=...\) must be an integer "
                                                r"from 0 to 4096"):
            warptrace.dump(w, layout, threads=-1)
        with self.assertRaisesRegex(TypeError, r"dump\(report=...\) must be a str"):
            warptrace.dump(w, layout, report=3)
        with self.assertRaisesRegex(TypeError, r"dump\(threads=...\) must be an int"):
            warptrace.dump(w, layout, threads=2.0)
        with self.assertRaisesRegex(warptrace.TraceError, r"unknown format 'xml'"):
            warptrace.dump(w, layout, path("x.trace"), format="xml")
        with self.assertRaisesRegex(TypeError, r"text must be str or bytes"):
            warptrace.Layout.from_json(42)
        with self.assertRaisesRegex(TypeError, r"Layout.load"):
            warptrace.Layout(None)
        buf, entries = mosaic_buffer(blocks=2, iterations=2)
        spec = warptrace.mosaic.Spec(entries, MOSAIC_NAMES)
        with self.assertRaisesRegex(ValueError, r"grid \(2, 0\) has a dimension <= 0"):
            warptrace.mosaic.dump(spec, buf, path("m.json"), (2, 0), (256,))
        with self.assertRaisesRegex(TypeError, r"grid must be an int or a sequence"):
            warptrace.mosaic.dump(spec, buf, path("m.json"), "two", (256,))
        with self.assertRaisesRegex(TypeError, r"f must be a file object"):
            warptrace.mosaic.dump(spec, buf, 42, (2,), (256,))

    def test_messages_name_no_cpp_types(self):
        # Every error a user can provoke from Python speaks Python, not C++.
        layout = warptrace.Layout.load(path("clean.json"))
        w = words_of(path("clean"))
        provoked = []
        for call in (lambda: warptrace.dump(w[:-1], layout),
                     lambda: warptrace.dump(path("does_not_exist")),
                     lambda: warptrace.Layout.from_json("{"),
                     lambda: warptrace.Layout.from_json('{"format": "other"}'),
                     lambda: warptrace.dump(path("corrupt_unknown_site"))):
            with self.assertRaises(warptrace.TraceError) as e:
                call()
            provoked.append(str(e.exception))
        for message in provoked:
            self.assertNotRegex(message, r"\w::\w|Options::|absl|std::", message)

    def test_mosaic_dump_into_an_open_text_file_writes_the_same_bytes_as_a_path(self):
        buf, entries = mosaic_buffer(blocks=3, iterations=4)
        spec = warptrace.mosaic.Spec(entries, MOSAIC_NAMES)
        warptrace.mosaic.dump(spec, buf, path("mf_path.json"), (3,), (256,))
        with open(path("mf_file.json"), "w") as f:
            r = warptrace.mosaic.dump(spec, buf, f, (3,), (256,), kernel_name="mf_path")
            self.assertEqual(r.paths, [path("mf_file.json")])
        # The result is read from its JSON when first used; what dump() set stays.
        self.assertEqual((r.format, r.paths, r.kernel), ("json", [path("mf_file.json")],
                                                         "mf_path"))
        self.assertEqual(len(r.units), 6)
        self.assertEqual(r.units[0]["block_index"], (0, 0, 0))
        self.assertIn("units=6", repr(r))
        self.assertEqual(read(path("mf_file.json")), read(path("mf_path.json")))
        text = io.StringIO()
        warptrace.mosaic.dump(spec, buf, text, (3,), (256,), kernel_name="mf_path")
        self.assertEqual(text.getvalue().encode(), read(path("mf_path.json")))
        # Something written before the dump stays in front of it (the file's position).
        with open(path("mf_prefixed.json"), "w") as f:
            f.write("")
            warptrace.mosaic.dump(spec, buf, f, (3,), (256,), kernel_name="mf_path")
        self.assertEqual(read(path("mf_prefixed.json")), read(path("mf_path.json")))


class WhatIfTest(unittest.TestCase):
    """warptrace.what_if over the C API: the CLI's `whatif` numbers, and bad input."""

    @classmethod
    def setUpClass(cls):
        subprocess.run([WRITER, DIR], check=True)

    def test_speeding_up_the_bottleneck_buys_time_and_the_other_side_does_not(self):
        load = warptrace.what_if(path("pipeline"), "load=0.5", output=path("pred.pftrace"))
        mma = warptrace.what_if(path("pipeline"), ["mma=0.5"])
        self.assertEqual(load["format"], "warptrace-whatif")
        self.assertLess(load["predicted_ns"], 0.8 * load["measured_ns"])
        self.assertGreater(mma["predicted_ns"], 0.95 * mma["measured_ns"])
        self.assertTrue(os.path.getsize(path("pred.pftrace")) > 0)
        cli("whatif", "--input=" + path("pipeline"), "--speedup=load=0.5",
            "--json=" + path("whatif_cli.json"))
        with open(path("whatif_cli.json")) as f:
            self.assertEqual(json.load(f)["predicted_ns"], load["predicted_ns"])

    def test_bad_input_is_a_clear_error(self):
        with self.assertRaisesRegex(warptrace.TraceError, "nosuch"):
            warptrace.what_if(path("pipeline"), "nosuch=0.5")
        with self.assertRaises(warptrace.TraceError) as e:
            warptrace.what_if(path("pipeline"), "load=0")
        self.assertEqual(e.exception.code, "INVALID_ARGUMENT")
        with self.assertRaisesRegex(warptrace.TraceError, "hand-off"):
            warptrace.what_if(path("clean"), "mma=0.5")
        with self.assertRaisesRegex(TypeError, "speedups must be"):
            warptrace.what_if(path("pipeline"), 0.5)


class MosaicProfileTest(unittest.TestCase):
    """warptrace.mosaic.profile: one relaunch with the exact entries_per_warpgroup, with a
    stand-in launcher that writes generated buffers through spec.dump as Mosaic's runtime
    does (the retry logic is the real one)."""

    class StandInSpec:
        def __init__(self, entries_per_warpgroup):
            self.entries_per_warpgroup = entries_per_warpgroup
            self.interned_names = {n: i for i, n in enumerate(MOSAIC_NAMES)}
            self.trace_scope = "warpgroup"

        def dump(self, buffer, f, grid, block):
            raise AssertionError("Mosaic's own dump ran inside warptrace.mosaic.profile")

    def launcher(self, iterations_of):
        launched = []

        def launch(spec):
            entries = spec.entries_per_warpgroup
            launched.append(entries)
            buf, _ = mosaic_buffer(blocks=2, iterations=iterations_of(entries), entries=entries)
            spec.dump(buf, path(f"profiled_{len(launched)}.json"), grid=(2,), block=(256,))
            return f"outputs of launch {len(launched)}"

        return launch, launched

    def test_an_overflow_relaunches_once_with_the_exact_size(self):
        launch, launched = self.launcher(lambda entries: 4)  # 18 events: 39 entries
        run = warptrace.mosaic.profile(launch, spec=self.StandInSpec(20), summary=True)
        self.assertEqual(launched, [20, 39])
        self.assertTrue(run.relaunched)
        self.assertEqual(run.spec.entries_per_warpgroup, 39)
        self.assertEqual(run.value, "outputs of launch 2")
        self.assertEqual(len(run.results), 1)
        self.assertEqual(run.results[0].verdict_counts["complete"], 4)
        self.assertIn("relaunched once with entries_per_warpgroup=39", run.note)
        self.assertIn("4 trace(s) of the first launch overflowed entries_per_warpgroup=20",
                      run.note)
        self.assertEqual(self.StandInSpec.__dict__["dump"].__name__, "dump")  # restored

    def test_a_launch_that_fits_runs_once(self):
        launch, launched = self.launcher(lambda entries: 4)
        run = warptrace.mosaic.profile(launch, spec=self.StandInSpec(39))
        self.assertEqual(launched, [39])
        self.assertFalse(run.relaunched)
        self.assertEqual(run.note, "")

    def test_a_relaunch_that_overflows_again_raises_naming_the_size(self):
        # A kernel whose event count grows with the buffer: the one relaunch is not enough.
        launch, launched = self.launcher(lambda entries: entries // 4)
        with self.assertRaisesRegex(warptrace.TraceError, "entries_per_warpgroup"):
            warptrace.mosaic.profile(launch, spec=self.StandInSpec(20))
        self.assertEqual(len(launched), 2)
        with self.assertRaisesRegex(TypeError, "allow_truncated"):
            warptrace.mosaic.profile(launch, spec=self.StandInSpec(20), allow_truncated=True)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
