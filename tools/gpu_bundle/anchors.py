#!/usr/bin/env python3
"""Anchors for warptrace's GPU check: what the vendor libraries and Mosaic GPU do on the same GPU.

Run by the bundle's run.sh with the GPU machine's own python3 (its PyTorch, its JAX), each
part in its own process under its own timeout:

    anchors.py torch    --out=DIR [--gemm=MxNxK ...] [--sdpa=BxHxSxD ...] [--repeat=N]
    anchors.py mosaic   --out=DIR
    anchors.py selftest --out=DIR      (no GPU, no torch: the pure-Python pieces)
    anchors.py compare  --prefix=DIR/NAME --trace=WARPTRACE_TRACE.json

torch: bf16 `torch.matmul` (cuBLAS) on each GEMM shape and bf16
  `scaled_dot_product_attention` on each attention shape, each checked against an fp32
  reference, timed with CUDA events (median and min of --repeat launches after a warm-up).
  Prints one "anchor: ..." line per problem and writes DIR/anchors_torch.json.
mosaic: small JAX Mosaic GPU kernels (jax.experimental.mosaic.gpu.as_gpu_kernel) with
  nested named regions, profiled by Mosaic's own profiler (ProfilerSpec). ProfilerSpec.dump,
  which Mosaic calls with the raw buffer after the kernel, is wrapped so that before Mosaic
  decodes it the raw buffer is saved as DIR/NAME.bin with the warptrace sidecar DIR/NAME.json
  ({"format": "mosaic-gpu", grid, block, entries_per_warpgroup, trace_scope, names}, see
  profiler/imports/mosaic_import.h) and DIR/NAME.meta.json (JAX version, the dump Mosaic
  wrote or the error it raised). Mosaic's own Chrome trace goes to DIR/NAME.mosaic_dump.json,
  so `warptrace dump --input=DIR/NAME` can be compared with it anywhere.
selftest: the saving and wrapping above on a synthetic buffer, with a stand-in spec and,
  when `jax` imports, with the real ProfilerSpec and Mosaic's real dump (both are pure
  Python and NumPy: no GPU needed).
compare: the regions per name in Mosaic's own dump (NAME.mosaic_dump.json, B/E pairs) and in
  warptrace's Chrome trace of the same buffer (X slices): equal, or exit 1 saying how they
  differ. Where Mosaic's dump refused the buffer (NAME.meta.json says why), says so and
  prints warptrace's counts.

Every import of torch / jax is inside its part: a machine without them fails that part
with a message, never the others. Exit status: 0 ok, 1 a check failed, 2 bad arguments.
"""
import argparse
import array
import collections
import inspect
import json
import math
import os
import shutil
import statistics
import sys
import traceback

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
MOSAIC_HEADER_WORDS = 3  # start globaltimer (low 32 bits), smid, traces_used


# --- Mosaic GPU buffers: pure Python ---------------------------------------------------------

def entries_of(spec):
    """ProfilerSpec's per-trace entry count (named entries_per_warpgroup since JAX 0.4.3x)."""
    for attr in ("entries_per_warpgroup", "entries_per_trace"):
        value = getattr(spec, attr, None)
        if isinstance(value, int):
            return value
    raise ValueError(f"{type(spec).__name__} has no entries_per_warpgroup: this JAX's "
                     "ProfilerSpec is not the one profiler/imports/mosaic_import.h reads")


def scope_of(spec):
    """'warp' or 'warpgroup': what one trace covers (ThreadSubset.WARP / .WARPGROUP)."""
    scope = getattr(spec, "trace_scope", None)
    if scope is None:
        return "warpgroup"  # before ProfilerSpec had trace_scope, a trace was a warpgroup
    name = str(getattr(scope, "name", scope)).upper()
    if name.endswith("WARPGROUP"):
        return "warpgroup"
    if name.endswith("WARP"):
        return "warp"
    raise ValueError(f"unsupported ProfilerSpec.trace_scope {scope!r}")


def names_of(spec):
    """The interned region names, indexed by name id."""
    interned = dict(getattr(spec, "interned_names", {}))
    names = [None] * len(interned)
    for name, name_id in interned.items():
        if not 0 <= name_id < len(names) or names[name_id] is not None:
            raise ValueError(f"interned name ids are not 0..{len(names) - 1}: {interned}")
        names[name_id] = name
    return names


def spec_kwargs(spec_cls, dump_path, trace_scope=None, bounds_check=None):
    """Keyword arguments after entries_per_warpgroup that this JAX's ProfilerSpec accepts."""
    params = inspect.signature(spec_cls).parameters
    kwargs = {}
    if "dump_path" in params:
        kwargs["dump_path"] = dump_path
    if trace_scope is not None:
        if "trace_scope" not in params:
            raise ValueError("this JAX's ProfilerSpec has no trace_scope")
        kwargs["trace_scope"] = trace_scope
    if bounds_check is not None:
        if "bounds_check" not in params:
            raise ValueError("this JAX's ProfilerSpec has no bounds_check")
        kwargs["bounds_check"] = bounds_check
    return kwargs


def buffer_bytes(buffer):
    """The buffer as little-endian uint32 bytes (a jax/NumPy array, or any sequence of ints)."""
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None:
        if hasattr(buffer, "dtype"):  # a jax or NumPy array: its words as they are
            words = np.asarray(buffer)
        else:  # a sequence of Python ints
            words = np.asarray([int(w) & 0xFFFFFFFF for w in buffer], dtype=np.uint32)
        if words.dtype.kind not in "ui" or words.dtype.itemsize != 4:
            raise ValueError(f"the profiler buffer is {words.dtype}, expected 32-bit words")
        return np.ascontiguousarray(words.reshape(-1).view(np.uint32)).astype("<u4").tobytes()
    words = array.array("I", (int(w) & 0xFFFFFFFF for w in buffer))
    if words.itemsize != 4:
        raise ValueError("array('I') is not 32-bit on this platform")
    if sys.byteorder == "big":
        words.byteswap()
    return words.tobytes()


def dims(value):
    dims = [int(d) for d in (value if isinstance(value, (tuple, list)) else (value,))]
    if not 1 <= len(dims) <= 3 or any(d <= 0 for d in dims):
        raise ValueError(f"a grid or block must have 1 to 3 positive dimensions, got {value!r}")
    return dims


def save_mosaic_buffer(prefix, buffer, grid, block, spec, kernel_name, meta=None):
    """Writes PREFIX.bin (raw words), PREFIX.json (warptrace's mosaic-gpu sidecar) and
    PREFIX.meta.json (what else is known). Returns the sidecar. ValueError when the buffer's
    size does not match grid x block x entries (the sidecar would describe another buffer)."""
    grid, block = dims(grid), dims(block)
    scope = scope_of(spec)
    entries = entries_of(spec)
    threads = math.prod(block)
    scope_threads = 32 if scope == "warp" else 128
    if threads % scope_threads:
        raise ValueError(f"block {block} is not a multiple of a {scope} ({scope_threads} threads)")
    data = buffer_bytes(buffer)
    expected = math.prod(grid) * threads // scope_threads * entries
    if len(data) != 4 * expected:
        raise ValueError(f"the buffer holds {len(data) // 4} words; grid {grid} x block {block} "
                         f"x {entries} entries per {scope} needs {expected}")
    sidecar = {
        "format": "mosaic-gpu",
        "grid": grid,
        "block": block,
        "entries_per_warpgroup": entries,
        "trace_scope": scope,
        "names": names_of(spec),
        "kernel_name": kernel_name,
    }
    os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
    with open(prefix + ".bin", "wb") as f:
        f.write(data)
    with open(prefix + ".json", "w") as f:
        json.dump(sidecar, f, indent=1)
    with open(prefix + ".meta.json", "w") as f:
        json.dump(dict(meta or {}, words=expected, sidecar=os.path.basename(prefix) + ".json"),
                  f, indent=1, default=str)
    return sidecar


class DumpHook:
    """Wraps SpecClass.dump (Mosaic calls spec.dump(buffer, f, grid=..., block=...) from a host
    callback after each profiled launch) so the raw buffer is saved first; Mosaic's own dump
    then runs as before. Its failure ("Insufficient space to capture a full trace", ...) is
    recorded, not raised, so the kernel's caller still gets its results. Use as a context
    manager; `saved` lists the prefixes written, `errors` what went wrong."""

    def __init__(self, spec_cls, out_dir, kernel_name, meta=None):
        self.spec_cls, self.out_dir, self.kernel_name = spec_cls, out_dir, kernel_name
        self.meta = dict(meta or {})
        self.saved, self.errors = [], []
        self._original = None

    def __enter__(self):
        self._original = self.spec_cls.dump
        hook = self

        def dump(spec, buffer, f, *args, **kwargs):
            grid = kwargs.get("grid", args[0] if args else None)
            block = kwargs.get("block", args[1] if len(args) > 1 else None)
            suffix = f"_{len(hook.saved)}" if hook.saved else ""
            prefix = os.path.join(hook.out_dir, hook.kernel_name + suffix)
            meta = dict(hook.meta, grid=grid, block=block,
                        mosaic_dump=getattr(f, "name", None))
            try:
                save_mosaic_buffer(prefix, buffer, grid, block, spec, hook.kernel_name, meta)
                hook.saved.append(prefix)
            except Exception as e:  # saving must never break Mosaic's own path
                hook.errors.append(f"saving the raw buffer: {type(e).__name__}: {e}")
            try:
                result = hook._original(spec, buffer, f, *args, **kwargs)
                hook._keep_mosaic_dump(f, prefix)
            except Exception as e:
                hook.errors.append(f"Mosaic's own dump: {type(e).__name__}: {e}")
                if prefix in hook.saved:
                    with open(prefix + ".meta.json") as m:
                        saved_meta = json.load(m)
                    saved_meta["mosaic_dump_error"] = f"{type(e).__name__}: {e}"
                    with open(prefix + ".meta.json", "w") as m:
                        json.dump(saved_meta, m, indent=1, default=str)
                return None
            return result

        self.spec_cls.dump = dump
        return self

    def __exit__(self, *exc):
        self.spec_cls.dump = self._original
        return False

    @staticmethod
    def _keep_mosaic_dump(f, prefix):
        """Copies the file Mosaic's dump wrote to PREFIX.mosaic_dump.json (next to the buffer)."""
        path = getattr(f, "name", None)
        target = prefix + ".mosaic_dump.json"
        if not isinstance(path, str) or not os.path.exists(path):
            return
        f.flush()
        if os.path.exists(target) and os.path.samefile(path, target):
            return
        shutil.copyfile(path, target)


def region_counts(trace, names):
    """Regions per name: B events of a Mosaic dump, X slices of a warptrace Chrome trace."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    return collections.Counter(e["name"] for e in events
                               if e.get("ph") in ("B", "X") and e.get("name") in names)


def compare(prefix, trace_path):
    with open(prefix + ".json") as f:
        names = set(json.load(f)["names"])
    with open(trace_path) as f:
        ours = region_counts(json.load(f), names)
    mosaic_path = prefix + ".mosaic_dump.json"
    if not os.path.exists(mosaic_path) or os.path.getsize(mosaic_path) == 0:
        why = "no dump"
        if os.path.exists(prefix + ".meta.json"):
            with open(prefix + ".meta.json") as f:
                why = json.load(f).get("mosaic_dump_error", why)
        print(f"compare {os.path.basename(prefix)}: Mosaic's own dump refused the buffer "
              f"({why}); warptrace shows {dict(sorted(ours.items()))}")
        return EXIT_OK
    with open(mosaic_path) as f:
        theirs = region_counts(json.load(f), names)
    if theirs != ours:
        print(f"compare {os.path.basename(prefix)}: regions per name differ: Mosaic "
              f"{dict(sorted(theirs.items()))}, warptrace {dict(sorted(ours.items()))}")
        return EXIT_FAILED
    print(f"compare {os.path.basename(prefix)}: same regions per name as Mosaic's own dump: "
          f"{dict(sorted(ours.items()))}")
    return EXIT_OK


# --- selftest: the pieces above, no GPU --------------------------------------------------------

def synthetic_buffer(traces, entries, names_count, start=1_000_000_000):
    """Mosaic's layout: per trace [start, smid, traces_used, (tag, clock)...], nested regions
    0 > 1 > 2 ..., zero-padded to `entries`."""
    words = []
    for t in range(traces):
        events, clock = [], (0xFFFFFF00 + 977 * t) & 0xFFFFFFFF  # wraps inside the trace
        for site in range(names_count):
            clock = (clock + 40 + site) & 0xFFFFFFFF
            events += [site, clock]
        for site in reversed(range(names_count)):
            clock = (clock + 300 + 7 * t) & 0xFFFFFFFF
            events += [site | 1 << 31, clock]
        trace = [start + 150 * t, t % 132, len(events)] + events
        if len(trace) > entries:
            raise ValueError("synthetic trace does not fit")
        words += trace + [0] * (entries - len(trace))
    return words


class _StandInSpec:
    """A ProfilerSpec with only what the saving reads (JAX before trace_scope)."""

    def __init__(self, entries_per_warpgroup):
        self.entries_per_warpgroup = entries_per_warpgroup
        self.interned_names = {}

    def intern_name(self, name):
        return self.interned_names.setdefault(name, len(self.interned_names))

    def dump(self, buffer, f, grid, block):
        json.dump({"traceEvents": [], "words": len(list(buffer))}, f)


def _check_saved(prefix, sidecar, words):
    with open(prefix + ".json") as f:
        if json.load(f) != sidecar:
            raise AssertionError(f"{prefix}.json does not hold the sidecar returned")
    size = os.path.getsize(prefix + ".bin")
    if size != 4 * len(words):
        raise AssertionError(f"{prefix}.bin has {size} bytes, expected {4 * len(words)}")
    with open(prefix + ".bin", "rb") as f:
        back = array.array("I", f.read())
    if sys.byteorder == "big":
        back.byteswap()
    if list(back) != [w & 0xFFFFFFFF for w in words]:
        raise AssertionError(f"{prefix}.bin does not hold the buffer's words")


def selftest(out):
    names = ["kernel", "load", "compute"]
    entries = 3 + 2 * 2 * len(names) + 5
    grid, block = (2, 1, 1), (256, 1, 1)  # 2 blocks x 2 warpgroups
    words = synthetic_buffer(4, entries, len(names))

    spec = _StandInSpec(entries)
    for name in names:
        spec.intern_name(name)
    with DumpHook(_StandInSpec, out, "standin", {"source": "selftest"}) as hook:
        with open(os.path.join(out, "standin.mosaic_dump.json"), "w") as f:
            spec.dump(words, f, grid=grid, block=block)
    if hook.errors or hook.saved != [os.path.join(out, "standin")]:
        raise AssertionError(f"stand-in hook: saved {hook.saved}, errors {hook.errors}")
    if _StandInSpec.dump is not hook._original:
        raise AssertionError("the hook did not restore ProfilerSpec.dump")
    with open(os.path.join(out, "standin.json")) as f:
        sidecar = json.load(f)
    expected = {"format": "mosaic-gpu", "grid": [2, 1, 1], "block": [256, 1, 1],
                "entries_per_warpgroup": entries, "trace_scope": "warpgroup", "names": names,
                "kernel_name": "standin"}
    if sidecar != expected:
        raise AssertionError(f"stand-in sidecar {sidecar} != {expected}")
    _check_saved(os.path.join(out, "standin"), sidecar, words)
    try:
        save_mosaic_buffer(os.path.join(out, "wrong"), words[:-1], grid, block, spec, "wrong")
        raise AssertionError("a buffer one word short was saved")
    except ValueError as e:
        if "needs" not in str(e):
            raise
    print(f"selftest: stand-in spec: {os.path.join(out, 'standin')}.bin + .json ok")

    try:
        import jax  # noqa: F401
        from jax.experimental.mosaic.gpu import profiler
    except Exception as e:  # ImportError, or a jaxlib without Mosaic GPU
        print(f"selftest: SKIPPED the real ProfilerSpec: jax's Mosaic GPU profiler does not "
              f"import here ({type(e).__name__}: {e})")
        return
    import numpy as np
    import jax.experimental.mosaic.gpu as mgpu
    scopes = [None]
    if "trace_scope" in inspect.signature(profiler.ProfilerSpec).parameters:
        scopes = [mgpu.ThreadSubset.WARPGROUP, mgpu.ThreadSubset.WARP]
    for scope in scopes:
        real = profiler.ProfilerSpec(entries, **spec_kwargs(profiler.ProfilerSpec, out, scope))
        for name in names:
            real.intern_name(name)
        label = "real_" + scope_of(real)
        traces = 2 * 256 // (32 if scope_of(real) == "warp" else 128)
        buffer = np.asarray(synthetic_buffer(traces, entries, len(names)), dtype=np.uint32)
        with DumpHook(profiler.ProfilerSpec, out, label, {"jax": jax.__version__}) as hook:
            with open(os.path.join(out, label + ".mosaic_dump.json"), "w") as f:
                real.dump(buffer, f, grid=grid, block=block)
        if hook.errors or len(hook.saved) != 1:
            raise AssertionError(f"real ProfilerSpec hook: saved {hook.saved}, errors {hook.errors}")
        with open(hook.saved[0] + ".json") as f:
            sidecar = json.load(f)
        if sidecar["trace_scope"] != scope_of(real) or sidecar["names"] != names:
            raise AssertionError(f"real ProfilerSpec sidecar {sidecar}")
        _check_saved(hook.saved[0], sidecar, list(buffer))
        with open(os.path.join(out, label + ".mosaic_dump.json")) as f:
            mosaic = json.load(f)
        regions = sum(1 for e in mosaic["traceEvents"] if e["ph"] == "B")
        if regions != traces * len(names):
            raise AssertionError(f"Mosaic's dump shows {regions} regions, expected "
                                 f"{traces * len(names)}")
        print(f"selftest: JAX {jax.__version__} ProfilerSpec ({scope_of(real)}): saved "
              f"{hook.saved[0]}.bin + .json; Mosaic's own dump: {regions} regions")


# --- mosaic: a real kernel on the GPU ---------------------------------------------------------

def run_mosaic(out):
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax._src.interpreters import mlir
    from jaxlib.mlir import ir
    import jax.experimental.mosaic.gpu as mgpu
    from jax.experimental.mosaic.gpu import profiler

    platform = jax.devices()[0].platform
    if platform != "gpu":
        raise RuntimeError(f"JAX's default device is {jax.devices()[0]} (platform {platform}), "
                           "not a GPU: is the CUDA plugin (jax-cuda13-plugin) installed?")
    meta = {"jax": jax.__version__, "device": str(jax.devices()[0]),
            "device_kind": getattr(jax.devices()[0], "device_kind", None)}
    try:
        import jaxlib
        meta["jaxlib"] = jaxlib.__version__
    except Exception:
        pass
    print(f"mosaic: JAX {jax.__version__} on {meta['device_kind'] or meta['device']}")
    params = inspect.signature(profiler.ProfilerSpec).parameters

    x = (np.arange(64 * 64, dtype=np.float32).reshape(64, 64) % 97) / 97.0
    expected = x * x + x

    def body(ctx, src, dst, scratch):
        del scratch
        with ctx.named_region("kernel"):
            with ctx.named_region("load"):
                a = mgpu.FragmentedArray.load_strided(src)
            with ctx.named_region("compute"):
                b = a * a + a
            with ctx.named_region("store"):
                b.store_untiled(dst)

    # (name, entries per trace, trace_scope, bounds_check): a warpgroup trace, a warp trace,
    # and one too small for its 8 events (Mosaic's dump refuses it; warptrace shows the rest).
    variants = [("mosaic_warpgroup", 64, None, None)]
    if "trace_scope" in params:
        variants.append(("mosaic_warp", 64, mgpu.ThreadSubset.WARP, None))
    if "bounds_check" in params:
        variants.append(("mosaic_overflow", MOSAIC_HEADER_WORDS + 2 * 5, None, True))
    failed = 0
    for name, entries, scope, bounds in variants:
        try:
            spec = profiler.ProfilerSpec(
                entries, **spec_kwargs(profiler.ProfilerSpec, out, scope, bounds))
            shape = jax.ShapeDtypeStruct(x.shape, jnp.float32)
            with DumpHook(profiler.ProfilerSpec, out, name, dict(meta, entries=entries)) as hook:
                with mlir.make_ir_context(), ir.Location.unknown():
                    f = mgpu.as_gpu_kernel(body, (2, 1, 1), (128, 1, 1), shape, shape, (),
                                           prof_spec=spec, kernel_name=name)
                    y = jax.block_until_ready(f(x))
                jax.effects_barrier()  # the dump runs in a host callback
            ok = np.allclose(np.asarray(y), expected, rtol=1e-6, atol=1e-6)
            status = "ok" if ok else "WRONG RESULT"
            if not hook.saved:
                status = "NO BUFFER SAVED"
            failed += status != "ok"
            print(f"anchor: mosaic {name}: {status}; saved {', '.join(hook.saved) or 'nothing'}"
                  f"{'; ' + '; '.join(hook.errors) if hook.errors else ''}")
        except Exception as e:
            failed += 1
            traceback.print_exc()
            print(f"anchor: mosaic {name}: FAILED: {type(e).__name__}: {str(e)[:300]}")
    return EXIT_FAILED if failed else EXIT_OK


# --- torch: cuBLAS and SDPA on the examples' problems -----------------------------------------

def shape(text, n):
    parts = text.lower().split("x")
    if len(parts) != n or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"expected {n} positive integers joined by 'x', got {text!r}")
    return tuple(int(p) for p in parts)


def time_cuda(torch, fn, repeat, warmup=10):
    """Per-launch CUDA event times in microseconds."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    pairs = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    return [1000.0 * s.elapsed_time(e) for s, e in pairs]


def run_torch(out, gemms, sdpas, repeat):
    import torch
    import torch.nn.functional as F
    if not torch.cuda.is_available():
        raise RuntimeError("torch.cuda.is_available() is False")
    dev = torch.device("cuda")
    info = {"torch": torch.__version__, "cuda": torch.version.cuda,
            "device": torch.cuda.get_device_name(), "capability": torch.cuda.get_device_capability(),
            "repeat": repeat, "gemm": [], "sdpa": []}
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda}) on {info['device']}")
    torch.manual_seed(0)
    failed = 0
    for m, n, k in gemms:
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        b = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
        c = torch.matmul(a, b)
        ref = a.float() @ b.float()
        err = ((c.float() - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()
        us = time_cuda(torch, lambda: torch.matmul(a, b, out=c), repeat)
        med = statistics.median(us)
        ok = err < 2e-2
        failed += not ok
        row = {"m": m, "n": n, "k": k, "median_us": med, "min_us": min(us),
               "tflops": 2 * m * n * k / (med * 1e-6) / 1e12, "max_rel_error": err, "ok": ok}
        info["gemm"].append(row)
        print(f"anchor: torch matmul bf16 {m}x{n}x{k} (cuBLAS): median {med:.3f} us, min "
              f"{min(us):.3f} us, {row['tflops']:.1f} TFLOP/s ({repeat} launches, CUDA events); "
              f"max error {err:.1e} of max |C| {'ok' if ok else 'TOO LARGE'}")
    for bsz, heads, seq, dim in sdpas:
        q, k_, v = (torch.randn(bsz, heads, seq, dim, device=dev, dtype=torch.bfloat16)
                    for _ in range(3))
        o = F.scaled_dot_product_attention(q, k_, v)
        # fp32 reference on one (batch, head) slice: softmax(q k^T / sqrt(d)) v
        q0, k0, v0 = (t[0, 0].float() for t in (q, k_, v))
        ref = torch.softmax(q0 @ k0.T / math.sqrt(dim), dim=-1) @ v0
        err = ((o[0, 0].float() - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()
        us = time_cuda(torch, lambda: F.scaled_dot_product_attention(q, k_, v), repeat)
        med = statistics.median(us)
        ok = err < 3e-2
        failed += not ok
        flops = 4 * bsz * heads * seq * seq * dim
        row = {"batch": bsz, "heads": heads, "seq": seq, "dim": dim, "median_us": med,
               "min_us": min(us), "tflops": flops / (med * 1e-6) / 1e12, "max_rel_error": err,
               "ok": ok}
        info["sdpa"].append(row)
        print(f"anchor: torch sdpa bf16 {bsz}x{heads}x{seq}x{dim}: median {med:.3f} us, min "
              f"{min(us):.3f} us, {row['tflops']:.1f} TFLOP/s ({repeat} launches, CUDA events); "
              f"max error {err:.1e} of max |O| on [0, 0] {'ok' if ok else 'TOO LARGE'}")
    with open(os.path.join(out, "anchors_torch.json"), "w") as f:
        json.dump(info, f, indent=1)
    return EXIT_FAILED if failed else EXIT_OK


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", choices=["torch", "mosaic", "selftest", "compare"])
    parser.add_argument("--out", help="directory for the outputs (created)")
    parser.add_argument("--prefix", help="compare: the saved buffer's PREFIX")
    parser.add_argument("--trace", help="compare: warptrace's Chrome trace of PREFIX")
    parser.add_argument("--gemm", action="append", type=lambda t: shape(t, 3), default=[],
                        metavar="MxNxK")
    parser.add_argument("--sdpa", action="append", type=lambda t: shape(t, 4), default=[],
                        metavar="BxHxSxD")
    parser.add_argument("--repeat", type=int, default=200)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else EXIT_OK
    if args.repeat < 1:
        print("anchors.py: error: --repeat must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    if args.part == "compare":
        if not args.prefix or not args.trace:
            print("anchors.py compare: error: needs --prefix and --trace", file=sys.stderr)
            return EXIT_USAGE
    elif not args.out:
        print(f"anchors.py {args.part}: error: needs --out", file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.part == "compare":
            return compare(args.prefix, args.trace)
        os.makedirs(args.out, exist_ok=True)
        if args.part == "selftest":
            selftest(args.out)
            return EXIT_OK
        if args.part == "mosaic":
            return run_mosaic(args.out)
        return run_torch(args.out, args.gemm or [(512, 512, 512)], args.sdpa or [(1, 16, 1024, 64)],
                         args.repeat)
    except Exception as e:
        traceback.print_exc()
        print(f"anchors.py {args.part}: error: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
