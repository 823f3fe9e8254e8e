#!/usr/bin/env python3
"""The warptrace wheel in the GPU machine's own Python, and Mosaic GPU through it.

Run by the bundle's run.sh with the machine's python3, each part in its own process:

    wheel_mosaic.py install --wheel=WHEEL --target=DIR
    wheel_mosaic.py jax     --target=DIR --out=OUT
    wheel_mosaic.py jax-selftest --target=DIR --out=OUT

install: `python3 -m pip install --no-index --no-deps --target=DIR WHEEL` (nothing is
  downloaded: the wheel carries its libraries), then, in a fresh interpreter with only DIR
  added to sys.path, `import warptrace` must come from DIR and `warptrace.mosaic.dump` must
  turn a synthetic Mosaic GPU buffer into Mosaic's Chrome trace (one B/E pair per region),
  refuse an overflowed one with a TraceError naming the entries_per_warpgroup that fits,
  and accept the buffer recorded at that size. Needs no GPU and no JAX.
jax: with DIR's warptrace, a real Mosaic GPU kernel (nested named regions) profiled by JAX
  with `warptrace.mosaic.install()` in effect. Every dump Mosaic's runtime makes is done
  twice from the same buffer: by Mosaic's own ProfilerSpec.dump (OUT/NAME.mosaic_own.json)
  and by warptrace's (the file Mosaic opened), and the two Chrome traces are compared event
  by event (name, phase, pid, tid, ts). Then a spec too small for the kernel's events:
  Mosaic's own dump says "Insufficient space", warptrace's TraceError names
  `entries_per_warpgroup >= N`, and a relaunch with N passes both dumps. Prints "skipped:
  ..." and exits 3 where JAX, its Mosaic GPU profiler or a GPU is absent.
jax-selftest: the same dumps and checks with JAX's real ProfilerSpec on synthetic buffers
  (no kernel, no GPU: Mosaic's dump is Python and NumPy); exits 3 without JAX.

Exit status: 0 ok, 1 a check failed, 2 bad arguments, 3 skipped.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import traceback

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_SKIPPED = 0, 1, 2, 3
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import anchors  # noqa: E402  (the bundle's own: synthetic buffers, ProfilerSpec keywords)

NEEDED = re.compile(r"entries_per_warpgroup >= (\d+)")


# --- install: pip into a target directory, then the package from there ------------------------

CHECK = r'''
import json, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(1, sys.argv[3])  # the bundle's anchors.py
import re
import anchors
import warptrace, warptrace.mosaic as wm
target = os.path.realpath(sys.argv[1])
where = os.path.realpath(warptrace.__file__)
assert where.startswith(target + os.sep), f"warptrace imported from {where}, not {target}"
names = ["kernel", "load", "compute"]
spec = wm.Spec(64, names)
words = anchors.synthetic_buffer(4, 64, len(names))
out = sys.argv[2]
buf = bytes(b for w in words for b in w.to_bytes(4, "little"))
wm.dump(spec, buf, os.path.join(out, "synthetic.json"), (2, 1, 1), (256, 1, 1))
with open(os.path.join(out, "synthetic.json")) as f:
    events = json.load(f)["traceEvents"]
begins = sum(e.get("ph") == "B" for e in events)
assert begins == 4 * len(names), f"{begins} B events, expected {4 * len(names)}"
# An overflow: 4 traces of 6 events (3 regions) in 3 + 2 * 2 words each.
small = [w for t in range(4) for w in
         anchors.synthetic_buffer(1, 64, len(names), start=1000 + t)[:7]]
buf = bytes(b for w in small for b in w.to_bytes(4, "little"))
try:
    wm.dump(wm.Spec(7, names), buf, os.path.join(out, "overflow.json"), (2, 1, 1), (256, 1, 1))
    raise AssertionError("an overflowed buffer was dumped without an error")
except warptrace.TraceError as e:
    message = str(e)
print("overflow:", message.splitlines()[0][:400])
needed = int(re.search(r"entries_per_warpgroup >= (\d+)", message).group(1))
words = anchors.synthetic_buffer(4, needed, len(names))
buf = bytes(b for w in words for b in w.to_bytes(4, "little"))
wm.dump(wm.Spec(needed, names), buf, os.path.join(out, "fits.json"), (2, 1, 1), (256, 1, 1))
print("fits:", needed)
print("version:", warptrace.__version__ if hasattr(warptrace, "__version__") else "?", where)
print("events:", begins, "regions")
'''


def run_install(wheel, target, out):
    if not os.path.isfile(wheel):
        print(f"wheel_mosaic.py install: error: no wheel at {wheel}", file=sys.stderr)
        return EXIT_FAILED
    pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True,
                         text=True)
    if pip.returncode != 0:
        print(f"skipped: {sys.executable} has no pip ({(pip.stderr or pip.stdout).strip()[:200]})")
        return EXIT_SKIPPED
    os.makedirs(target, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
           "--disable-pip-version-check", "--no-cache-dir", "--upgrade",
           f"--target={target}", wheel]
    print("$", " ".join(cmd))
    p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(p.stdout[-4000:])
    if p.returncode != 0:
        sys.stdout.write(p.stderr[-4000:])
        print(f"wheel: FAILED: pip install exited {p.returncode}")
        return EXIT_FAILED
    os.makedirs(out, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    check = subprocess.run([sys.executable, "-c", CHECK, target, out, HERE],
                           capture_output=True, text=True, env=env, cwd=out)
    sys.stdout.write(check.stdout)
    sys.stdout.write(check.stderr[-4000:])
    if check.returncode != 0:
        print(f"wheel: FAILED: the installed package's check exited {check.returncode}")
        return EXIT_FAILED
    overflow = next((l for l in check.stdout.splitlines() if l.startswith("overflow:")), "")
    m = NEEDED.search(overflow)
    if not m:
        print(f"wheel: FAILED: the overflow error names no entries_per_warpgroup: {overflow}")
        return EXIT_FAILED
    print(f"wheel: ok: {os.path.basename(wheel)} installed into {target} with "
          f"{os.path.basename(sys.executable)} {sys.version.split()[0]} (pip --no-index "
          f"--no-deps); the overflow names entries_per_warpgroup >= {m.group(1)}")
    return EXIT_OK


# --- jax: a real Mosaic GPU kernel through warptrace.mosaic.install() --------------------------

def chrome_events(path):
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    return sorted((str(e.get("name")), e.get("ph"), e.get("pid"), e.get("tid"),
                   round(float(e.get("ts", 0)), 3))
                  for e in events if e.get("ph") in ("B", "E"))


class BothDumps:
    """ProfilerSpec.dump as Mosaic's runtime calls it, done by Mosaic and by warptrace."""

    def __init__(self, cls, mosaic_own, out):
        self.cls, self.mosaic_own, self.out = cls, mosaic_own, out
        self.records = []
        self.name = None

    def __enter__(self):
        self.installed = self.cls.__dict__["dump"]
        hook = self

        def dump(spec, buffer, f, grid, block):
            import numpy as np
            rec = {"name": hook.name, "warptrace": getattr(f, "name", None),
                   "mosaic": os.path.join(hook.out, f"{hook.name}.mosaic_own.json")}
            words = np.array(buffer, copy=True)  # Mosaic's dump may not leave it as it was
            with open(rec["mosaic"], "w") as g:
                try:
                    hook.mosaic_own(spec, words, g, grid=grid, block=block)
                except Exception as e:
                    rec["mosaic_error"] = f"{type(e).__name__}: {e}"
            try:
                hook.installed(spec, buffer, f, grid, block)
            except Exception as e:
                rec["warptrace_error"] = f"{type(e).__name__}: {e}"
            hook.records.append(rec)

        self.cls.dump = dump
        return self

    def __exit__(self, *exc):
        self.cls.dump = self.installed


def run_jax(target, out):
    sys.path.insert(0, target)
    try:
        import numpy as np
        import jax
        import jax.numpy as jnp
        from jax._src.interpreters import mlir
        from jaxlib.mlir import ir
        import jax.experimental.mosaic.gpu as mgpu
        from jax.experimental.mosaic.gpu import profiler
    except Exception as e:
        print(f"skipped: JAX's Mosaic GPU does not import here ({type(e).__name__}: {e})")
        return EXIT_SKIPPED
    try:
        platform = jax.devices()[0].platform
    except Exception as e:
        print(f"skipped: JAX has no device ({type(e).__name__}: {e})")
        return EXIT_SKIPPED
    if platform != "gpu":
        print(f"skipped: JAX's default device is {jax.devices()[0]} (platform {platform}), "
              "not a GPU")
        return EXIT_SKIPPED
    import warptrace
    import warptrace.mosaic as wm
    where = os.path.realpath(warptrace.__file__)
    if not where.startswith(os.path.realpath(target) + os.sep):
        print(f"jax: FAILED: warptrace imported from {where}, not the wheel's {target}")
        return EXIT_FAILED
    print(f"jax: JAX {jax.__version__} on {jax.devices()[0]}; warptrace from {where}")
    os.makedirs(out, exist_ok=True)
    x = (np.arange(64 * 64, dtype=np.float32).reshape(64, 64) % 97) / 97.0

    def body(ctx, src, dst, scratch):
        del scratch
        with ctx.named_region("kernel"):
            with ctx.named_region("load"):
                a = mgpu.FragmentedArray.load_strided(src)
            with ctx.named_region("compute"):
                b = a * a + a
            with ctx.named_region("store"):
                b.store_untiled(dst)

    params = inspect_params(profiler.ProfilerSpec)
    mosaic_own = profiler.ProfilerSpec.__dict__["dump"]
    wm.install()
    failed = 0
    try:
        with BothDumps(profiler.ProfilerSpec, mosaic_own, out) as both:
            def launch(name, entries, bounds):
                both.name = name
                spec = profiler.ProfilerSpec(
                    entries, **anchors.spec_kwargs(profiler.ProfilerSpec, out, None, bounds))
                shape = jax.ShapeDtypeStruct(x.shape, jnp.float32)
                with mlir.make_ir_context(), ir.Location.unknown():
                    f = mgpu.as_gpu_kernel(body, (2, 1, 1), (128, 1, 1), shape, shape, (),
                                           prof_spec=spec, kernel_name=name)
                    y = jax.block_until_ready(f(x))
                jax.effects_barrier()  # the dump runs in a host callback
                if not np.allclose(np.asarray(y), x * x + x, rtol=1e-6, atol=1e-6):
                    raise AssertionError(f"{name}: wrong result")
                return both.records[-1] if both.records and both.records[-1]["name"] == name \
                    else None

            failed += not check_same(launch("wheel_mosaic", 64, None))
            if "bounds_check" in params:
                failed += not check_overflow(launch, anchors.MOSAIC_HEADER_WORDS + 2 * 5)
            else:
                print("jax: overflow case SKIPPED: this JAX's ProfilerSpec has no bounds_check")
    except Exception as e:
        traceback.print_exc()
        print(f"jax: FAILED: {type(e).__name__}: {str(e)[:300]}")
        failed += 1
    finally:
        wm.uninstall()
    return EXIT_FAILED if failed else EXIT_OK


def run_jax_selftest(target, out):
    """The jax part without a kernel: JAX's real ProfilerSpec, its dump called as Mosaic's
    runtime calls it on synthetic buffers (CPU only), through BothDumps and install()."""
    sys.path.insert(0, target)
    try:
        import numpy as np
        from jax.experimental.mosaic.gpu import profiler
    except Exception as e:
        print(f"skipped: JAX's Mosaic GPU profiler does not import here ({type(e).__name__}: {e})")
        return EXIT_SKIPPED
    import warptrace.mosaic as wm
    os.makedirs(out, exist_ok=True)
    names = ["kernel", "load", "compute"]
    mosaic_own = profiler.ProfilerSpec.__dict__["dump"]
    wm.install()
    failed = 0
    try:
        with BothDumps(profiler.ProfilerSpec, mosaic_own, out) as both:
            def launch(name, entries, bounds):
                del bounds
                both.name = name
                spec = profiler.ProfilerSpec(
                    entries, **anchors.spec_kwargs(profiler.ProfilerSpec, out, None, None))
                for n in names:
                    spec.intern_name(n)
                full = anchors.synthetic_buffer(4, 64, len(names))
                words = [w for t in range(4) for w in
                         (full[t * 64:t * 64 + entries] + [0] * max(0, entries - 64))]
                buffer = np.asarray(words, dtype=np.uint32)
                with open(os.path.join(out, name + ".json"), "w") as f:
                    spec.dump(buffer, f, grid=(2, 1, 1), block=(256, 1, 1))
                return both.records[-1]

            failed += not check_same(launch("selftest", 64, None))
            failed += not check_overrun(launch, anchors.MOSAIC_HEADER_WORDS + 2 * 2)
    finally:
        wm.uninstall()
    return EXIT_FAILED if failed else EXIT_OK


def inspect_params(cls):
    import inspect
    return inspect.signature(cls).parameters


def check_same(rec):
    if rec is None:
        print("jax: FAILED: Mosaic's runtime made no dump")
        return False
    for key in ("mosaic_error", "warptrace_error"):
        if key in rec:
            print(f"jax: FAILED: {rec['name']}: {key}: {rec[key][:300]}")
            return False
    ours, theirs = chrome_events(rec["warptrace"]), chrome_events(rec["mosaic"])
    if ours != theirs:
        diff = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b),
                    min(len(ours), len(theirs)))
        print(f"jax: FAILED: {rec['name']}: warptrace's {len(ours)} events differ from "
              f"Mosaic's {len(theirs)} at #{diff}: {ours[diff:diff + 1]} vs "
              f"{theirs[diff:diff + 1]}")
        return False
    print(f"jax: ok: {rec['name']}: warptrace.mosaic.install()'s dump has exactly Mosaic's "
          f"{len(ours)} events (name, ph, pid, tid, ts)")
    return True


def check_overflow(launch, entries):
    """ProfilerSpec(bounds_check=True) with too few entries (JAX 0.12.1's semantics: the device
    stops recording and counting at capacity; Mosaic's dump closes the regions left open):
    neither dump fails, warptrace's events are exactly Mosaic's (its synthetic ends
    included), and a launch at the size warptrace names at least records every event."""
    rec = launch("wheel_mosaic_overflow", entries, True)
    if rec is None:
        print("jax: FAILED: the overflowing launch made no dump")
        return False
    print(f"jax: bounds_check at entries_per_warpgroup={entries}: Mosaic: "
          f"{rec.get('mosaic_error', '')[:200] or 'no error'}; warptrace: "
          f"{rec.get('warptrace_error', '').splitlines()[0][:300] if rec.get('warptrace_error') else 'no error'}")
    if not check_same(rec):
        return False
    ok = check_same(launch("wheel_mosaic_fits", 64, True))
    if ok:
        print("jax: ok: entries_per_warpgroup=64 holds the whole trace with bounds_check")
    return ok


def check_overrun(launch, entries):
    """A trace that overran its slots (a JAX without bounds_check, or the selftest's buffer):
    Mosaic refuses the buffer, warptrace names the entries_per_warpgroup that fits, and a
    launch at that size matches."""
    rec = launch("wheel_mosaic_overflow", entries, True)
    if rec is None:
        print("jax: FAILED: the overflowing launch made no dump")
        return False
    mosaic, ours = rec.get("mosaic_error", ""), rec.get("warptrace_error", "")
    print(f"jax: overflow at entries_per_warpgroup={entries}: Mosaic: {mosaic[:200] or 'no error'}; "
          f"warptrace: {ours.splitlines()[0][:300] if ours else 'no error'}")
    m = NEEDED.search(ours)
    if "Insufficient space" not in mosaic or not m:
        print("jax: FAILED: expected Mosaic's 'Insufficient space' and warptrace's "
              "'entries_per_warpgroup >= N'")
        return False
    needed = int(m.group(1))
    if needed <= entries:
        print(f"jax: FAILED: warptrace names {needed}, not more than {entries}")
        return False
    ok = check_same(launch("wheel_mosaic_fits", needed, True))
    if ok:
        print(f"jax: ok: entries_per_warpgroup={needed}, as warptrace named it, fits")
    return ok


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", choices=["install", "jax", "jax-selftest"])
    parser.add_argument("--wheel", help="install: the wheel file")
    parser.add_argument("--target", help="the directory the wheel is installed into")
    parser.add_argument("--out", help="directory for the outputs (created)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else EXIT_OK
    if not args.target or (args.part == "install" and not args.wheel) or \
            (args.part != "install" and not args.out):
        print(f"wheel_mosaic.py {args.part}: error: needs --target and "
              f"{'--wheel' if args.part == 'install' else '--out'}", file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.part == "install":
            out = args.out or tempfile.mkdtemp(prefix="wheel_check.")
            return run_install(os.path.abspath(args.wheel), os.path.abspath(args.target), out)
        if args.part == "jax-selftest":
            return run_jax_selftest(os.path.abspath(args.target), os.path.abspath(args.out))
        return run_jax(os.path.abspath(args.target), os.path.abspath(args.out))
    except Exception as e:
        traceback.print_exc()
        print(f"wheel_mosaic.py {args.part}: error: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
