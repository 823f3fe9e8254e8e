"""The package under stress (issue 55): out of memory, Ctrl-C. A library never kills the
interpreter that loads it. (A buffer changed during the dump: tests/profiler/trace/
decode_test.cc, where the moment it changes can be chosen.)

    reliability_test.py MAKE_SYNTHETIC_TRACE

MAKE_SYNTHETIC_TRACE (tests/profiler/cli/make_synthetic_trace.cc) saves a large synthesized
trace (PREFIX.bin + PREFIX.json). Each case runs in a child interpreter, so that a crash
(SIGSEGV, SIGABRT) is seen as the child's signal instead of ending this test.
"""
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

MAKE_TRACE = sys.argv[1]
DIR = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))


def make_trace(name, events):
    prefix = os.path.join(DIR, name)
    if not os.path.exists(prefix + ".bin"):
        subprocess.run([MAKE_TRACE, prefix, str(events)], check=True, capture_output=True)
    return prefix


def child(script, *args, timeout=120, **kwargs):
    """Runs `script` in a child python3 with this one's sys.path; a CompletedProcess."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args],
                          capture_output=True, text=True, timeout=timeout, **kwargs)


class OutOfMemoryTest(unittest.TestCase):
    # Under an address-space limit set after the imports and the buffer's load (RLIMIT_AS,
    # the limit `ulimit -v` sets), dump() either succeeds or raises TraceMemoryError, a
    # TraceError and a MemoryError, and the interpreter goes on; it used to die with SIGSEGV
    # (a writer destroyed after its stream) or SIGABRT (std::terminate on a worker thread).
    SCRIPT = """
        import resource, sys
        import numpy as np
        import warptrace
        prefix, out, extra_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
        words = np.fromfile(prefix + ".bin", dtype="<u4")
        layout = warptrace.Layout.load(prefix + ".json")
        with open("/proc/self/status") as f:
            vm = next(int(l.split()[1]) for l in f if l.startswith("VmSize:")) * 1024
        limit = vm + extra_mb * (1 << 20)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        try:
            warptrace.dump(words, layout, out, summary=True, analysis=True, threads=2)
            print("ok")
        except MemoryError as e:
            assert isinstance(e, warptrace.TraceError), type(e)
            assert isinstance(e, warptrace.TraceMemoryError), type(e)
            assert e.code == "RESOURCE_EXHAUSTED", e.code
            print("memory:", e)
        # The interpreter goes on: a little more work after the failure.
        print("after:", sum(range(1000)))
    """

    def test_a_dump_under_a_memory_limit_succeeds_or_raises_memory_error_never_a_signal(self):
        prefix = make_trace("oom", 2_000_000)
        out = os.path.join(DIR, "oom-out")
        os.makedirs(out, exist_ok=True)
        outcomes = {"ok": 0, "memory": 0}
        for extra_mb in range(0, 200, 10):
            with self.subTest(extra_mb=extra_mb):
                p = child(self.SCRIPT, prefix, os.path.join(out, "trace.json"), str(extra_mb))
                self.assertGreaterEqual(p.returncode, 0,
                                        f"killed by signal {-p.returncode}: {p.stderr[-2000:]}")
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                kind = p.stdout.split(":")[0].split()[0]
                outcomes[kind] += 1
                self.assertIn("after: 499500", p.stdout)
                if kind == "memory":
                    self.assertIn("memory: out of memory", p.stdout)
                leftovers = [n for n in os.listdir(out) if ".tmp" in n]
                self.assertEqual(leftovers, [], "temporary files left beside the output")
        print(f"out of memory: {outcomes}", file=sys.stderr)
        self.assertGreater(outcomes["memory"], 0, "no limit ran out of memory: lower the sweep")
        self.assertGreater(outcomes["ok"], 0, "no limit let the dump succeed: raise the sweep")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
