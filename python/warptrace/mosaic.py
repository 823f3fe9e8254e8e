"""warptrace for JAX's Mosaic GPU profiler: a drop-in ``ProfilerSpec.dump``.

Mosaic GPU's runtime calls ``spec.dump(buffer, f, grid=grid, block=block)`` after every
profiled launch (jax/experimental/mosaic/gpu/core.py). Routing that through warptrace gives
the verified, fast dump -- in C++, with the GIL released -- and keeps the Chrome trace JSON
Mosaic users' tools already read. A JAX program changes one line::

    import warptrace.mosaic
    warptrace.mosaic.install()      # every ProfilerSpec.dump in this process goes through
                                    # warptrace from now on; uninstall() restores Mosaic's

or calls it directly, with Mosaic's signature::

    warptrace.mosaic.dump(spec, buffer, "/tmp/attention.json", grid, block)
    warptrace.mosaic.dump(spec, buffer, "/tmp/attention.pftrace", grid, block)  # Perfetto

On overflow (a trace recorded more events than ``entries_per_warpgroup`` holds, where
Mosaic's own dump raises "Insufficient space to capture a full trace") it raises
:class:`warptrace.TraceError` -- a ``RuntimeError``, so ``except RuntimeError`` keeps
working -- naming each unit and the exact ``entries_per_warpgroup`` that would have been
enough; ``allow_truncated=True`` writes every valid prefix instead.

Differences from Mosaic's own dump (see profiler/imports/mosaic_import.h): SM cycles are
converted to nanoseconds at ``sm_clock_khz`` (default 1980000, H100/H200), instead of
being added to nanoseconds as they are; a clock that steps back is a finding, not a silent
clamp; the recording overhead is measured, and compensated only on request.
"""

import os as _os
import shutil as _shutil
import tempfile as _tempfile

import warptrace as _wt
from warptrace import _warptrace_core as _core

__all__ = ["Spec", "dump", "install", "uninstall", "installed"]


class Spec:
    """The fields of Mosaic's ``ProfilerSpec`` a dump reads, without JAX.

    Args:
      entries_per_warpgroup: words per trace (3 header words + 2 per event).
      names: the interned region names: a dict ``{name: id}`` (``ProfilerSpec
        .interned_names``) or a list indexed by id.
      trace_scope: "warpgroup" (128 threads per trace) or "warp" (32).
    """

    def __init__(self, entries_per_warpgroup, names, trace_scope="warpgroup"):
        self.entries_per_warpgroup = int(entries_per_warpgroup)
        if isinstance(names, dict):
            self.interned_names = dict(names)
        else:
            self.interned_names = {n: i for i, n in enumerate(names)}
        self.trace_scope = trace_scope

    def dump(self, buffer, f, grid, block, **kwargs):
        return dump(self, buffer, f, grid, block, **kwargs)


def _scope_is_warp(scope):
    name = getattr(scope, "name", scope)  # jax's ThreadSubset enum, or a string
    name = str(name).lower()
    if name not in ("warp", "warpgroup"):
        raise ValueError(f"unsupported trace_scope {scope!r}: Mosaic GPU traces a 'warp' or "
                         "a 'warpgroup'")
    return name == "warp"


def _names_by_id(interned):
    if not interned:
        return []
    by_id = ["(unnamed id %d)" % i for i in range(max(interned.values()) + 1)]
    for name, i in interned.items():
        by_id[i] = str(name)
    return by_id


def _dims(d, what):
    try:
        dims = [int(x) for x in d]
    except TypeError:
        dims = [int(d)]
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{what} {tuple(dims)} has {len(dims)} dimensions: give 1 to 3")
    return dims


def dump(spec, buffer, f, grid, block, *, perfetto=None, allow_truncated=False,
         summary=False, analysis=False, sm_clock_khz=0, kernel_name=None):
    """Mosaic's ``ProfilerSpec.dump(buffer, f, grid, block)``, done by warptrace.

    Args:
      spec: a JAX ``ProfilerSpec`` (read duck-typed: ``entries_per_warpgroup``,
        ``interned_names``, ``trace_scope``) or a :class:`Spec`.
      buffer: the profiler buffer Mosaic hands its callback (numpy / host array of uint32,
        shape anything with blocks x traces x entries_per_warpgroup words), read in place.
      f: the text file object Mosaic opened (Chrome JSON is written into it), or a path:
        ``.pftrace`` / ``.perfetto-trace`` write Perfetto, anything else Chrome JSON.
      grid, block: the launch's dimensions (1 to 3 each).
      perfetto: also write Perfetto here (a path), or True: beside ``f``'s file, with
        ``.pftrace`` instead of its extension.
      allow_truncated: write each overflowed trace's recorded prefix instead of raising.
      summary, analysis, sm_clock_khz: as :func:`warptrace.dump`.
      kernel_name: the trace's kernel name (default: ``f``'s file name without extension).

    Returns the :class:`warptrace.DumpResult` (``result.overflows`` lists every trace that
    needed more room, with ``entries_needed``).

    Raises :class:`warptrace.TraceError` on overflow or a corrupted buffer (with the units
    and the ``entries_per_warpgroup`` that fits); TypeError / ValueError for a buffer that
    is not host uint32 memory.
    """
    warp = _scope_is_warp(spec.trace_scope)
    names = _names_by_id(spec.interned_names)
    grid, block = _dims(grid, "grid"), _dims(block, "block")
    path = None
    if isinstance(f, (str, _os.PathLike)):
        path = _os.fspath(f)
    else:
        name = getattr(f, "name", None)
        if isinstance(name, str) and name and not name.startswith("<"):
            path = name
    if kernel_name is None:
        kernel_name = (_os.path.splitext(_os.path.basename(path))[0] if path else
                       "mosaic_gpu")
    _wt._check_byte_order(buffer)

    def run(output, fmt=""):
        return _wt._finish(_core.dump_mosaic(
            buffer, grid, block, spec.entries_per_warpgroup, warp, names, kernel_name,
            output, fmt, bool(summary), bool(analysis), bool(allow_truncated),
            int(sm_clock_khz)))

    if isinstance(f, (str, _os.PathLike)):
        result = run(path)
    else:
        # C++ writes (atomically) to a temporary file, which is then copied into `f`.
        directory = _os.path.dirname(path) if path else None
        fd, tmp = _tempfile.mkstemp(suffix=".json", dir=directory or None)
        _os.close(fd)
        try:
            result = run(tmp, "json")
            raw = getattr(f, "buffer", None)  # a text file's binary stream: no decoding
            if raw is not None and getattr(f, "encoding", "").lower().replace("-", "") in (
                    "utf8", "ascii"):
                f.flush()
                with open(tmp, "rb") as src:
                    _shutil.copyfileobj(src, raw, 1 << 20)
            else:
                with open(tmp, "r", encoding="utf-8") as src:
                    _shutil.copyfileobj(src, f, 1 << 20)
        finally:
            if _os.path.exists(tmp):
                _os.unlink(tmp)
        result.paths = [path] if path else []
        result.format = "json"
    if perfetto:
        if perfetto is True:
            if not path:
                raise ValueError("perfetto=True writes beside f's file, but f has no path: "
                                 "give perfetto a path")
            perfetto = _os.path.splitext(path)[0] + ".pftrace"
        extra = run(_os.fspath(perfetto), "perfetto")
        result.paths.extend(extra.paths)
    return result


_original = None


def _profiler_spec():
    try:
        from jax.experimental.mosaic.gpu import profiler
    except ImportError as e:
        raise ImportError(
            "warptrace.mosaic.install() patches jax.experimental.mosaic.gpu.profiler."
            f"ProfilerSpec, which cannot be imported here: {e}") from e
    return profiler.ProfilerSpec


def install():
    """Routes every ``ProfilerSpec.dump`` in this process through :func:`dump`.

    Idempotent. Mosaic's runtime keeps calling ``spec.dump(buffer, f, grid=..., block=...)``
    as before; only what runs changes. :func:`uninstall` restores Mosaic's own dump.
    """
    global _original
    cls = _profiler_spec()
    if _original is not None:
        return
    _original = cls.__dict__["dump"]

    def warptrace_dump(self, buffer, f, grid, block):
        return dump(self, buffer, f, grid, block)

    warptrace_dump.__doc__ = "ProfilerSpec.dump, routed through warptrace.mosaic.dump."
    warptrace_dump.__wrapped__ = _original
    cls.dump = warptrace_dump


def uninstall():
    """Restores Mosaic's own ``ProfilerSpec.dump`` (no-op when not installed)."""
    global _original
    if _original is None:
        return
    _profiler_spec().dump = _original
    _original = None


def installed():
    """Whether :func:`install` is in effect."""
    return _original is not None
