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

By default the Chrome JSON is exactly what Mosaic's own dump writes -- the same events,
names, B/E phases, pid = 1 + SM, Mosaic's tid and ts (its cycles-as-nanoseconds convention
and its overhead compensation; profiler/outputs/mosaic_trace.h has the rules) -- so tools
that read Mosaic's traces see no change. What warptrace adds: every trace verified (a clock
that steps back is a finding with coordinates), the exact entries_per_warpgroup on overflow,
and speed. Opt-ins: Perfetto (a ``.pftrace`` path, or ``perfetto=``), calibrated nanoseconds
(``clock_khz=``: different numbers from Mosaic's), ``compensate=False``, and warptrace's own
timeline events (``events="x"``). :func:`profile` relaunches an overflowing kernel once
with the exact size.
"""

from __future__ import annotations

import contextlib as _contextlib
import os as _os
import re as _re
import sys as _sys
from typing import Any, Iterator, List, Optional, Sequence, Union

import warptrace as _wt
from warptrace import _lib

__all__ = ["Spec", "dump", "install", "uninstall", "installed", "is_installed", "profile",
           "ProfileRun", "traces_used_of_jax"]

# Mosaic's header word 2 ("traces_used") has two forms: JAX 0.8.0 and later count the event
# words only; JAX 0.7.2 and earlier counted the 3 header words too. The change is jax commit
# 794de7abdb (2025-10-06), first released in 0.8.0 (0.7.2's profiler.py checks
# `entries_used > entries_per_warpgroup - 2`, 0.8.0's `traces_used + 3 > entries_per_warpgroup`).
EVENT_WORDS = "event_words"
WITH_HEADER = "with_header"
_EVENT_WORDS_SINCE = (0, 8, 0)
_EVENT_WORDS_COMMIT_DATE = 20251006


def traces_used_of_jax(version: str) -> str:
    """The header form a JAX of ``version`` writes: ``"event_words"`` (0.8.0 and later) or
    ``"with_header"`` (0.7.2 and earlier; also a 0.8.0 nightly dated before 2025-10-06).
    ValueError for a version that does not start with three numbers."""
    m = _re.match(r"\s*(\d+)\.(\d+)\.(\d+)(?:\.?dev(\d{8}))?", str(version))
    if not m:
        raise ValueError(f"cannot read the JAX version {version!r} (expected e.g. '0.8.0')")
    release = tuple(int(x) for x in m.group(1, 2, 3))
    if release < _EVENT_WORDS_SINCE:
        return WITH_HEADER
    if release == _EVENT_WORDS_SINCE and m.group(4) and int(m.group(4)) < _EVENT_WORDS_COMMIT_DATE:
        return WITH_HEADER
    return EVENT_WORDS


def _running_jax_traces_used() -> str:
    """The form of the JAX this process imported (the newer form when it imported none)."""
    jax = _sys.modules.get("jax")
    version = getattr(jax, "__version__", None) if jax is not None else None
    return traces_used_of_jax(version) if version else EVENT_WORDS


class Spec:
    """The fields of Mosaic's ``ProfilerSpec`` a dump reads, without JAX.

    Args:
      entries_per_warpgroup: words per trace (3 header words + 2 per event).
      names: the interned region names: a dict ``{name: id}`` (``ProfilerSpec
        .interned_names``) or a list indexed by id.
      trace_scope: "warpgroup" (128 threads per trace) or "warp" (32).
      bounds_check: the buffer was recorded with ``ProfilerSpec(bounds_check=True)`` (JAX
        after 0.10.2): a trace stops at its capacity and is truncated, not overrun.
      traces_used: header word 2's form: ``"event_words"`` (JAX >= 0.8.0) or
        ``"with_header"`` (JAX <= 0.7.2, which counted the 3 header words).
    """

    def __init__(self, entries_per_warpgroup: int, names: Union[dict, Sequence[str]],
                 trace_scope: str = "warpgroup", bounds_check: bool = False,
                 traces_used: str = EVENT_WORDS):
        self.entries_per_warpgroup = int(entries_per_warpgroup)
        if isinstance(names, dict):
            self.interned_names = dict(names)
        else:
            self.interned_names = {n: i for i, n in enumerate(names)}
        self.trace_scope = trace_scope
        self.bounds_check = bool(bounds_check)
        self.traces_used = traces_used

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
        if isinstance(d, (str, bytes)):
            raise TypeError
        dims = [int(x) for x in d] if hasattr(d, "__iter__") else [int(d)]
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be an int or a sequence of 1 to 3 ints, not "
                        f"{d!r}") from None
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{what} {tuple(dims)} has {len(dims)} dimensions: give 1 to 3")
    if any(x <= 0 for x in dims):
        raise ValueError(f"{what} {tuple(dims)} has a dimension <= 0")
    return dims


def _fd_of(f):
    """The file object's descriptor, flushed, when it is a real file opened for writing."""
    fileno = getattr(f, "fileno", None)
    if fileno is None:
        return None
    try:
        fd = fileno()
    except (OSError, ValueError, AttributeError):  # io.StringIO raises UnsupportedOperation
        return None
    encoding = getattr(f, "encoding", "utf-8") or "utf-8"
    if encoding.lower().replace("-", "").replace("_", "") not in ("utf8", "ascii"):
        return None  # the JSON is UTF-8 (ASCII in practice): let Python re-encode it
    f.flush()
    return fd


def dump(spec: Any, buffer: Any, f: Any, grid: Any, block: Any, *,
         perfetto: Union[None, bool, str, "_os.PathLike[str]"] = None,
         allow_truncated: bool = False, summary: bool = False, analysis: bool = False,
         sm_clock_khz: int = 0, kernel_name: Optional[str] = None,
         clock_khz: Optional[int] = None, compensate: bool = True,
         events: str = "mosaic", traces_used: Optional[str] = None) -> "_wt.DumpResult":
    """Mosaic's ``ProfilerSpec.dump(buffer, f, grid, block)``, done by warptrace.

    Args:
      spec: a JAX ``ProfilerSpec`` (read duck-typed: ``entries_per_warpgroup``,
        ``interned_names``, ``trace_scope``) or a :class:`Spec`.
      buffer: the profiler buffer Mosaic hands its callback (numpy / host array of uint32,
        shape anything with blocks x traces x entries_per_warpgroup words), read in place.
      f: the text file object Mosaic opened (Chrome JSON is written into its file descriptor
        directly, without a temporary file or a copy; a file object without one, e.g.
        io.StringIO, gets the text), or a path: ``.pftrace`` / ``.perfetto-trace`` write
        Perfetto, anything else Chrome JSON.
      grid, block: the launch's dimensions (1 to 3 each).
      perfetto: also write Perfetto here (a path), or True: beside ``f``'s file, with
        ``.pftrace`` instead of its extension.
      allow_truncated: write each overflowed trace's recorded prefix instead of raising.
      summary, analysis: as :func:`warptrace.dump`.
      sm_clock_khz: the SM clock the summary, the analysis and a Perfetto trace convert
        cycles at (default 1980000, H100/H200); the Chrome JSON keeps Mosaic's numbers.
      kernel_name: the trace's kernel name (default: ``f``'s file name without extension).
      clock_khz: Chrome JSON only: convert cycles to nanoseconds at this SM clock (kHz)
        instead of counting a cycle as a nanosecond as Mosaic does -- calibrated times, which
        are different numbers from Mosaic's. Default None: Mosaic's.
      compensate: Chrome JSON only: subtract Mosaic's profiling-overhead estimate, as Mosaic
        does (default); False: the raw clock differences.
      events: the Chrome JSON's events: "mosaic" (default: exactly the events of Mosaic's
        own dump -- names, B/E, pid = 1 + SM, Mosaic's tid and ts), or warptrace's own
        "x" (complete slices on warptrace's timeline) or "be".
      traces_used: header word 2's form, ``"event_words"`` (JAX >= 0.8.0) or
        ``"with_header"`` (JAX <= 0.7.2). Default: the spec's ``traces_used`` if it has one
        (:class:`Spec`), else that of the JAX this process imported (:func:`install` fixes it
        from the running JAX's version).

    A spec with ``bounds_check=True`` (JAX's ``ProfilerSpec`` after 0.10.2, e.g. 0.12.1) is
    dumped as Mosaic dumps it: a trace the device truncated at its capacity keeps its events
    and its open regions are closed with Mosaic's synthetic ends; nothing is raised, and
    ``result.overflows`` (and the units' verdicts, ``truncated``) name each truncated trace
    with ``entries_needed``, a lower bound (``entries_needed_exact`` False: the device stops
    counting at capacity).

    Returns the :class:`warptrace.DumpResult` (``result.overflows`` lists every trace that
    needed more room, with ``entries_needed``).

    Raises :class:`warptrace.TraceError` on overflow or a corrupted buffer (with the units
    and the ``entries_per_warpgroup`` that fits); TypeError / ValueError for a buffer that
    is not host uint32 memory or dimensions that are not 1 to 3 positive ints.
    """
    # JAX before 0.6.x's ProfilerSpec has no trace_scope: its traces are warpgroups.
    warp = _scope_is_warp(getattr(spec, "trace_scope", "warpgroup"))
    names = _names_by_id(spec.interned_names)
    grid, block = _dims(grid, "grid"), _dims(block, "block")
    entries = int(spec.entries_per_warpgroup)
    path = None
    if isinstance(f, (str, _os.PathLike)):
        path = _os.fspath(f)
    else:
        if not hasattr(f, "write"):
            raise TypeError(f"f must be a file object opened for writing or a path, not "
                            f"{type(f).__name__}")
        name = getattr(f, "name", None)
        if isinstance(name, str) and name and not name.startswith("<"):
            path = name
    if kernel_name is None:
        kernel_name = (_os.path.splitext(_os.path.basename(path))[0] if path else
                       "mosaic_gpu")
    if traces_used is None:
        traces_used = getattr(spec, "traces_used", None) or _running_jax_traces_used()
    if traces_used not in (EVENT_WORDS, WITH_HEADER):
        raise ValueError(f"traces_used must be {EVENT_WORDS!r} or {WITH_HEADER!r}, not "
                         f"{traces_used!r}")
    sidecar = {"format": "mosaic-gpu", "grid": grid, "block": block,
               "entries_per_warpgroup": entries,
               "trace_scope": "warp" if warp else "warpgroup", "names": names,
               "kernel_name": kernel_name, "traces_used": traces_used,
               "bounds_check": bool(getattr(spec, "bounds_check", False))}
    address, nbytes, keep = _lib.buffer_address(buffer)

    if events not in ("mosaic", "x", "be"):
        raise ValueError(f"events must be 'mosaic', 'x' or 'be', not {events!r}")
    if clock_khz is not None and (not isinstance(clock_khz, int) or clock_khz <= 0):
        raise ValueError(f"clock_khz must be a positive int (kHz) or None, not {clock_khz!r}")
    chrome = {"events": events, "mosaic_overhead": bool(compensate),
              "mosaic_clock_khz": int(clock_khz or 0)}

    def run(**target):
        fmt = target.pop("format", "")
        output = target.pop("output", "")
        if fmt != "perfetto" and not (output and output.lower().endswith(
                (".pftrace", ".perfetto-trace"))):
            target.update(chrome)
        target.update(output=output or None, format=fmt or None, summary=summary,
                      analysis=analysis, allow_truncated=allow_truncated,
                      sm_clock_khz=sm_clock_khz or None)
        options = _wt._settings("mosaic.dump", target)
        return _wt._finish(_lib.dump_mosaic(sidecar, address, nbytes, options))

    if isinstance(f, (str, _os.PathLike)):
        result = run(output=path)
    else:
        fd = _fd_of(f)
        if fd is not None:
            result = run(output_fd=fd, format="json")
        else:
            result = run(output_memory=True, format="json")
            f.write(result.trace.decode("utf-8"))
            result.trace = None
        result.paths = [path] if path else []
        result.format = "json"
    if perfetto:
        if perfetto is True:
            if not path:
                raise ValueError("perfetto=True writes beside f's file, but f has no path: "
                                 "give perfetto a path")
            perfetto = _os.path.splitext(path)[0] + ".pftrace"
        extra = run(output=_os.fspath(perfetto), format="perfetto")
        result.paths.extend(extra.paths)
    del keep
    return result


_original = None
_options = {}  # install()'s keywords, applied to every dump


def _profiler_spec():
    try:
        from jax.experimental.mosaic.gpu import profiler
    except ImportError as e:
        raise ImportError(
            "warptrace.mosaic.install() patches jax.experimental.mosaic.gpu.profiler."
            f"ProfilerSpec, which cannot be imported here: {e}") from e
    return profiler.ProfilerSpec


def install(**options: Any) -> None:
    """Routes every ``ProfilerSpec.dump`` in this process through :func:`dump`.

    Idempotent. Mosaic's runtime keeps calling ``spec.dump(buffer, f, grid=..., block=...)``
    as before, and by default the file holds exactly the events Mosaic's own dump writes
    (names, B/E, pid, tid, ts), verified by warptrace, with a clear overflow error naming the
    entries_per_warpgroup that fits. ``options`` are :func:`dump`'s keywords (``perfetto``,
    ``allow_truncated``, ``summary``, ``analysis``, ``sm_clock_khz``, and the opt-ins
    ``clock_khz``, ``compensate=False``, ``events``), applied to every dump.
    :func:`uninstall` restores Mosaic's own dump.

    The buffer's header form is the running JAX's (:func:`traces_used_of_jax` of
    ``jax.__version__``: word 2 counts event words since JAX 0.8.0, and the 3 header words
    too before it); ``traces_used=`` overrides it.
    """
    global _original, _options
    known = {"perfetto", "allow_truncated", "summary", "analysis", "sm_clock_khz", "clock_khz",
             "compensate", "events", "traces_used"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(f"install() got unknown option(s) {', '.join(unknown)}; known: "
                        f"{', '.join(sorted(known))}")
    cls = _profiler_spec()
    _options = dict(options)
    _options.setdefault("traces_used", _running_jax_traces_used())
    if _original is not None:
        return
    _original = cls.__dict__["dump"]

    def warptrace_dump(self, buffer, f, grid, block):
        return dump(self, buffer, f, grid, block, **_options)

    warptrace_dump.__doc__ = "ProfilerSpec.dump, routed through warptrace.mosaic.dump."
    warptrace_dump.__wrapped__ = _original
    cls.dump = warptrace_dump


def uninstall() -> None:
    """Restores Mosaic's own ``ProfilerSpec.dump`` (no-op when not installed)."""
    global _original
    if _original is None:
        return
    _profiler_spec().dump = _original
    _original = None


def is_installed() -> bool:
    """Whether :func:`install` is in effect."""
    return _original is not None


@_contextlib.contextmanager
def installed(**options: Any) -> Iterator[None]:
    """``with warptrace.mosaic.installed(): ...``: :func:`install` for the block, then the dump
    that was in effect before it (Mosaic's, or an enclosing install's options)."""
    was, before = _original is not None, dict(_options)
    install(**options)
    try:
        yield
    finally:
        if was:
            install(**before)
        else:
            uninstall()



class ProfileRun:
    """What :func:`profile` ran: ``value`` (what ``launch`` returned), ``results`` (one
    :class:`warptrace.DumpResult` per dump of the final launch), ``spec`` (the ProfilerSpec
    of the final launch), ``relaunched`` and ``note`` (why, when it relaunched)."""

    def __init__(self, value, results, spec, relaunched, note):
        self.value = value
        self.results = results
        self.spec = spec
        self.relaunched = relaunched
        self.note = note

    def __repr__(self) -> str:
        return (f"ProfileRun(relaunched={self.relaunched}, entries_per_warpgroup="
                f"{self.spec.entries_per_warpgroup}, results={self.results})")


def _default_spec(entries):
    return _profiler_spec()(entries_per_warpgroup=entries)


def _resized(spec, entries):
    import copy
    import dataclasses
    if dataclasses.is_dataclass(spec):
        return dataclasses.replace(spec, entries_per_warpgroup=entries)
    bigger = copy.copy(spec)
    bigger.entries_per_warpgroup = entries
    return bigger


def profile(launch: Any, *, entries_per_warpgroup: int = 1024, spec: Any = None,
            **options: Any) -> ProfileRun:
    """Runs ``launch(spec)`` -- a function that builds and launches a Mosaic GPU kernel with
    the ProfilerSpec it is given -- with every dump going through warptrace, and when a trace
    overflowed, relaunches it ONCE with the exact ``entries_per_warpgroup`` the dump computed
    (Mosaic's header word counts every event a trace attempted), instead of Mosaic's advice to
    double it and try again.

    Args:
      launch: ``launch(spec)``; its return value is kept (``ProfileRun.value``).
      entries_per_warpgroup: the first launch's size (ignored when ``spec`` is given).
      spec: the first launch's ProfilerSpec (default: JAX's ``ProfilerSpec(
        entries_per_warpgroup=...)``).
      options: :func:`dump`'s keywords for every dump (``perfetto``, ``summary``, ...).

    Returns a :class:`ProfileRun`; ``note`` says that it relaunched and why. Raises
    :class:`warptrace.TraceError` when the relaunch overflows too (the kernel records a
    different number of events per launch) or a trace is corrupted.
    """
    if "allow_truncated" in options:
        raise TypeError("profile() relaunches instead of truncating: do not pass "
                        "allow_truncated")
    first = spec if spec is not None else _default_spec(int(entries_per_warpgroup))

    def run(s, allow_truncated):
        results = []
        cls = type(s)
        original = cls.__dict__.get("dump")

        def capture(self, buffer, f, grid, block):
            results.append(dump(self, buffer, f, grid, block, allow_truncated=allow_truncated,
                                **options))
            return results[-1]

        cls.dump = capture
        try:
            value = launch(s)
        finally:
            if original is not None:
                cls.dump = original
            else:
                del cls.dump
        return value, results

    value, results = run(first, True)
    needed = max((o["entries_needed"] for r in results for o in r.overflows), default=0)
    if needed == 0:
        return ProfileRun(value, results, first, False, "")
    had = int(first.entries_per_warpgroup)
    overflowed = sum(len(r.overflows) for r in results)
    note = (f"relaunched once with entries_per_warpgroup={needed}: {overflowed} trace(s) of the "
            f"first launch overflowed entries_per_warpgroup={had} (the largest needed "
            f"{needed}, counted by Mosaic's header word)")
    bigger = _resized(first, needed)
    value, results = run(bigger, False)
    return ProfileRun(value, results, bigger, True, note)
