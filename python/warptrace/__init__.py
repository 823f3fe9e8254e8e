"""warptrace from Python: dump, verify and analyze intra-kernel GPU traces in-process.

The same pipeline as the ``warptrace`` CLI (decode -> verify -> timeline -> Perfetto or
Chrome JSON, summary, analysis), called in-process on a buffer you already hold: a numpy
array, a host JAX or torch array, ``bytes`` -- anything with the buffer protocol or DLPack --
read in place, without a copy. The C++ work runs with the GIL released (ctypes releases it
for every call into the library).

Example: dump a saved buffer (``PREFIX.bin`` + ``PREFIX.json``, as the CLI reads it)::

    import warptrace
    result = warptrace.dump("/tmp/gemm", output="/tmp/gemm.pftrace", summary=True)
    print(result.summary_text)          # the CLI's --summary table and diagnosis
    print(result.verdict_counts)        # {'complete': 256, 'truncated': 0, ...}

or a buffer in memory with its layout::

    layout = warptrace.Layout.load("/tmp/gemm.json")
    words = numpy.fromfile("/tmp/gemm.bin", dtype=numpy.uint32)
    result = warptrace.dump(words, layout, "/tmp/gemm_trace.json")

A trace that fails verification raises :class:`TraceError` (a ``RuntimeError``) whose
message names each broken unit (block, warpgroup, event) and what to change; its
``result`` still carries every unit's verdict. ``allow_truncated=True`` keeps each unit's
valid prefix instead, as the CLI's ``--allow-truncated`` does.

For JAX's Mosaic GPU profiler see :mod:`warptrace.mosaic`.

The package is pure Python over warptrace's C API (libwarptrace.so, loaded with ctypes), so
one wheel serves every CPython >= 3.9 and PyPy.
"""

from __future__ import annotations

import json as _json
import os as _os
from typing import Any, Dict, List, Optional, Union

from warptrace import _lib

__version__ = _lib.VERSION

__all__ = ["Layout", "DumpResult", "TraceError", "TraceFileNotFoundError", "TraceMemoryError",
           "dump", "diff",
           "DiffResult", "what_if", "tables", "to_parquet", "query", "ready_query",
           "READY_QUERIES", "MissingExtraError", "SchemaVersionError", "__version__"]

PathLike = Union[str, "_os.PathLike[str]"]


class TraceError(RuntimeError):
    """A trace could not be read, decoded, verified or written.

    A ``RuntimeError`` subclass, so ``except RuntimeError`` (what Mosaic GPU's own dump
    raises) keeps working. Attributes:

    * ``code``: the status code, e.g. ``"DATA_LOSS"`` (a corrupted buffer),
      ``"RESOURCE_EXHAUSTED"`` (events dropped: the buffer was too small),
      ``"INVALID_ARGUMENT"`` (a layout that disagrees with the buffer), ``"NOT_FOUND"``.
    * ``result``: the :class:`DumpResult` when the buffer was decoded (the verdicts of every
      unit, also when verification failed), else ``None``.
    """

    def __init__(self, message: str, code: str = "UNKNOWN",
                 result: Optional["DumpResult"] = None):
        super().__init__(message)
        self.code = code
        self.result = result


class TraceFileNotFoundError(TraceError, FileNotFoundError):
    """A file the trace needs does not exist (also a ``FileNotFoundError``)."""


class TraceMemoryError(TraceError, MemoryError):
    """The dump ran out of memory (also a ``MemoryError``; ``code`` is
    ``"RESOURCE_EXHAUSTED"``, the message starts with ``"out of memory"``).

    The library gave back what it had allocated and wrote no output: the interpreter goes on.
    Raise the process's memory limit, or ask for less (``threads=1``, no summary/analysis).
    Events dropped by a too-small buffer are also ``RESOURCE_EXHAUSTED`` but a plain
    :class:`TraceError`.
    """


def _raise(error, result=None):
    code, message = error
    if code == "NOT_FOUND":
        cls = TraceFileNotFoundError
    elif code == "RESOURCE_EXHAUSTED" and message.startswith("out of memory"):
        cls = TraceMemoryError
    else:
        cls = TraceError
    raise cls(message, code, result)


class Layout:
    """A trace's layout: what decodes a buffer (the ``PREFIX.json`` sidecar's contents).

    >>> layout = warptrace.Layout.load("/tmp/gemm.json")
    >>> layout.buffer_bytes            # the size the buffer must have
    """

    __slots__ = ("_handle", "_json", "_dict", "buffer_bytes")

    def __init__(self, _handle):
        if not isinstance(_handle, _lib.Layout):
            raise TypeError("use Layout.load(path) or Layout.from_json(text)")
        self._handle = _handle
        text, error = _lib.layout_to_json(_handle)
        if error is not None:
            _raise(error)
        self._json = text
        self.buffer_bytes = _lib.layout_buffer_bytes(_handle)
        self._dict = None

    @classmethod
    def from_json(cls, text: Union[str, bytes]) -> "Layout":
        """Parses a ``"warptrace"`` sidecar; raises TraceError (INVALID_ARGUMENT) naming
        the field at fault."""
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        if not isinstance(text, str):
            raise TypeError(f"Layout.from_json(text): text must be str or bytes, not "
                            f"{type(text).__name__}")
        handle, error = _lib.layout_from_json(text)
        if error is not None:
            _raise(error)
        return cls(handle)

    @classmethod
    def load(cls, path: PathLike) -> "Layout":
        """Reads a sidecar file; TraceFileNotFoundError when it is missing."""
        handle, error = _lib.layout_load(_os.fspath(path))
        if error is not None:
            _raise(error)
        return cls(handle)

    def to_json(self) -> str:
        """The layout as sidecar JSON text (canonical form)."""
        return self._json

    def to_dict(self) -> Dict[str, Any]:
        if self._dict is None:
            self._dict = _json.loads(self._json)
        return self._dict

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __repr__(self) -> str:
        d = self.to_dict()
        return (f"Layout(kernel={d.get('kernel_name')!r}, grid={d.get('grid')}, "
                f"block={d.get('block')}, capacity={d.get('capacity')})")


class DumpResult:
    """What a dump found, as plain Python data.

    Attributes:
      ok: no error finding (always True on a returned result unless allow_truncated
          turned errors into warnings -- then ``warnings`` says what was repaired).
      units: one dict per trace unit: ``block`` (linear), ``block_index`` (x, y, z),
          ``unit``, ``name`` ("block (3,0,0) warpgroup 1"), ``verdict`` ("complete",
          "truncated", "overflowed", "corrupt", "missing"), ``reason``, ``kept_events``,
          ``dropped``, ``repaired``.
      findings: dicts with ``severity``, ``kind``, ``block_index``, ``unit``, ``event``,
          ``message`` and ``text`` (the CLI's line, with coordinates).
      verdict_counts: units per verdict. kept_events, dropped_events, slices, capacity,
          required_capacity (the capacity that would have held every unit's events).
      summary: the summary (dict with ``regions`` rows) when ``summary=True``.
      summary_text: the CLI's ``--summary`` output (table, then the diagnosis).
      diagnosis: ranked findings, dicts with ``kind``, ``score``, ``text``.
      analysis: the CLI's ``--analysis`` JSON as a dict (``summary`` or ``analysis=True``).
      report: the CLI's ``--report`` verdict JSON as a dict.
      overflows: Mosaic buffers: traces that needed more entries (``entries_needed``).
      paths: the files written.
    """

    units: List[Dict[str, Any]]
    paths: List[str]
    format: Optional[str]
    analysis: Optional[Dict[str, Any]]
    report: Optional[Dict[str, Any]]
    trace: Optional[bytes]

    def __init__(self, d: Optional[Dict[str, Any]] = None, *, text: Optional[str] = None):
        # A successful dump's result is read from its JSON `text` on first use: a dump whose
        # result nobody looks at (Mosaic's ProfilerSpec.dump through install()) does not pay
        # for parsing every unit's verdict.
        self._text = text
        if d is not None:
            self._fill(d)

    def __getattr__(self, name: str) -> Any:
        text = self.__dict__.get("_text")
        if text is None or name.startswith("__"):
            raise AttributeError(f"'DumpResult' object has no attribute {name!r}")
        self._text = None
        self._fill(_json.loads(text))
        return getattr(self, name)

    def _fill(self, d: Dict[str, Any]) -> None:
        """Sets every attribute from the result JSON `d`, keeping those already set."""
        for item in d["units"] + d["findings"] + d["overflows"]:
            item["block_index"] = tuple(item["block_index"])
        paths = list(d["written"])
        values = {
            "_d": d, "units": d["units"], "findings": d["findings"],
            "verdict_counts": d["verdict_counts"], "kept_events": d["kept_events"],
            "dropped_events": d["dropped_events"], "slices": d["slices"],
            "capacity": d["capacity"], "required_capacity": d["required_capacity"],
            "errors": d["errors"], "warnings": d["warnings"], "ok": d["errors"] == 0,
            "kernel": d["kernel"], "grid": tuple(d["grid"]), "block": tuple(d["block"]),
            "unit_kind": d["unit_kind"], "clock_note": d["clock_note"],
            "summary": d["summary"], "summary_text": d["summary_text"],
            "diagnosis": d["analysis"]["diagnosis"] if d["analysis"] else [],
            "overflows": d["overflows"], "paths": paths,
            "format": d["format"] if paths else None, "analysis": d["analysis"],
            "report": d["report"],
            "trace": None,  # the trace itself, when dumped to memory
        }
        for name, value in values.items():
            self.__dict__.setdefault(name, value)

    def __repr__(self) -> str:
        return (f"DumpResult(kernel={self.kernel!r}, units={len(self.units)}, "
                f"verdicts={self.verdict_counts}, kept_events={self.kept_events}, "
                f"dropped_events={self.dropped_events}, paths={self.paths})")


def _finish(outcome):
    if outcome["error"] is None and outcome.get("text"):
        result = DumpResult(text=outcome["text"])  # read on first use
        result.trace = outcome.get("trace")
        return result
    d = outcome["result"]
    result = DumpResult(d) if d is not None and d.get("decoded") else None
    if result is not None:
        result.trace = outcome.get("trace")
    if outcome["error"] is not None:
        _raise(outcome["error"], result)
    return result if result is not None else DumpResult(d)


def _settings(caller, given):
    """The dump settings the caller was given (None: not given, so the library's default),
    checked against the library's one schema (warptrace_dump_settings: the CLI's flags and
    the C API's keys are the same settings), as the request dict. TypeError for a value of
    the wrong type, ValueError for one out of bounds, each naming ``caller(key=...)``."""
    specs = _lib.dump_settings()
    out = {}
    for key, value in given.items():
        if value is None:
            continue
        spec = specs[key]
        what = f"{caller}({key}=...)"
        if spec["type"] == "string":
            if isinstance(value, _os.PathLike):
                value = _os.fspath(value)
            if not isinstance(value, str):
                raise TypeError(f"{what} must be a str ({spec['doc']}), "
                                f"not {type(value).__name__}")
        elif spec["type"] == "bool":
            value = bool(value)
        else:
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{what} must be an int ({spec['doc']}), "
                                f"not {type(value).__name__}")
            if not spec["min"] <= value <= spec["max"]:
                raise ValueError(f"{what} must be an integer from {spec['min']} to "
                                 f"{spec['max']} ({spec['doc']}), not {value}")
        out[key] = value
    return out


def dump(buffer: Any, layout: Optional[Layout] = None, output: Optional[PathLike] = None, *,
         format: Optional[str] = None, summary: Optional[bool] = None,
         analysis: Optional[bool] = None, analysis_output: Optional[PathLike] = None,
         report: Optional[PathLike] = None, events: Optional[str] = None,
         json_args: Optional[str] = None, mosaic_overhead: Optional[bool] = None,
         mosaic_clock_khz: Optional[int] = None, allow_truncated: Optional[bool] = None,
         compensate_overhead: Optional[bool] = None, sm_clock_khz: Optional[int] = None,
         causal_profile: Optional[bool] = None, threads: Optional[int] = None) -> DumpResult:
    """Decodes, verifies and (optionally) writes a trace; returns a :class:`DumpResult`.

    Args:
      buffer: the raw trace words -- any object with the buffer protocol, __array_interface__
        or DLPack in host memory (numpy ``uint32``, a CPU JAX or torch array, ``bytes``),
        read without a copy -- or a ``PREFIX`` path (str / PathLike) naming ``PREFIX.bin`` +
        ``PREFIX.json`` as the CLI takes (then ``layout`` is not given).
      layout: a :class:`Layout` for an in-memory buffer.
      output: the trace file to write, or None. ``.pftrace`` / ``.perfetto-trace`` write
        Perfetto's protobuf trace, anything else Chrome trace JSON (as the CLI), unless
        ``format`` ("perfetto" or "json") says otherwise. Byte-identical to the CLI's.
      Every keyword is one of the dump's settings, the same as the CLI's ``warptrace dump``
      flags and the C API's request keys (``warptrace_dump_settings``); left out (None), it
      takes the library's default.
      summary: compute the summary and the diagnosis (``result.summary_text``).
      analysis: compute the analysis (``result.analysis``).
      analysis_output: write the analysis as JSON here (the CLI's ``--analysis``).
      report: write the per-unit verdict report (JSON) here, also when verification fails.
      events: the Chrome event style, "x" (default), "be" or "mosaic" (Mosaic GPU's own).
      json_args: Chrome slice args, "lean" (default) or "full".
      mosaic_overhead, mosaic_clock_khz: with ``events="mosaic"``, as the CLI's flags.
      allow_truncated: keep each broken unit's valid prefix instead of failing.
      compensate_overhead: move events earlier by the measured recording overhead.
      sm_clock_khz: the CLI's ``--sm-clock-khz`` (0: the layout's).
      causal_profile: with ``summary`` or ``analysis``, the causal profile under the
        diagnosis and in ``result.analysis["causal_profile"]``, as the CLI's dump
        (``--causal-profile=false``: ``causal_profile=False``).
      threads: threads the dump may use, the calling one included (0: the cores there are;
        1: the calling thread alone), the CLI's ``--threads``. The file does not depend on it.

    Raises:
      TypeError: the buffer is not integer data in host memory (or not an array at all), or
        an argument has the wrong type.
      ValueError: the buffer is not contiguous, little-endian, or whole words.
      TraceError: the layout disagrees with the buffer, the buffer is corrupted or dropped
        events (``.result`` has the verdicts), a file is missing
        (TraceFileNotFoundError), the output cannot be written, or memory ran out
        (TraceMemoryError, also a ``MemoryError``).

    Example::

        result = warptrace.dump(words, layout, "trace.pftrace", summary=True)
        for unit in result.units:
            if unit["verdict"] != "complete":
                print(unit["name"], unit["reason"])
    """
    options = _settings("dump", dict(
        output=output or None, format=format or None, summary=summary, analysis=analysis,
        analysis_output=analysis_output, report=report, events=events, json_args=json_args,
        mosaic_overhead=mosaic_overhead, mosaic_clock_khz=mosaic_clock_khz,
        allow_truncated=allow_truncated, compensate_overhead=compensate_overhead,
        sm_clock_khz=sm_clock_khz, causal_profile=causal_profile, threads=threads))
    if isinstance(buffer, (str, _os.PathLike)):
        if layout is not None:
            raise TypeError("dump(PREFIX, ...) reads the layout from PREFIX.json: "
                            "give no layout, or pass the buffer itself")
        return _finish(_lib.dump_prefix(_os.fspath(buffer), options))
    if not isinstance(layout, Layout):
        raise TypeError(f"dump(buffer, layout): layout must be a warptrace.Layout "
                        f"(Layout.load(path) or Layout.from_json(text)), got "
                        f"{type(layout).__name__}")
    address, nbytes, keep = _lib.buffer_address(buffer)
    outcome = _lib.dump_words(layout._handle, address, nbytes, options)
    del keep
    return _finish(outcome)


class DiffResult:
    """``warptrace diff``: ``table`` (the CLI's text, every row) and the JSON as data:
    ``rows``, ``kernel`` (each with ``mean_before_ns``, ``mean_after_ns``, ``change``,
    ``p_value``, ``significant``...), ``critical_path``, ``waits``."""

    def __init__(self, d: Dict[str, Any]):
        self.table: str = d["table"]
        self.data: Dict[str, Any] = d["diff"]
        self.rows = self.data["rows"]
        self.kernel = self.data["kernel"]
        self.critical_path = self.data["critical_path"]
        self.waits = self.data["waits"]

    def __repr__(self):
        return f"DiffResult(rows={len(self.rows)})"


def diff(before: PathLike, after: Optional[PathLike] = None, *,
         compensate_overhead: bool = False, what_if: Optional[str] = None) -> DiffResult:
    """Compares two saved traces (``PREFIX`` paths), as ``warptrace diff`` does; with
    ``what_if`` (a spec, as :func:`what_if`'s) and no ``after``, ``before`` against the launch
    predicted from it (``warptrace diff --before=PREFIX --what-if=SPEC``).

    >>> d = warptrace.diff("/tmp/gemm_v1", "/tmp/gemm_v2")
    >>> [r["name"] for r in d.rows if r["significant"]]
    >>> warptrace.diff("/tmp/pipeline", what_if="consumer:mma=0.5").rows[0]["name"]
    """
    options = {"compensate_overhead": bool(compensate_overhead)}
    if what_if is not None:
        if not isinstance(what_if, str):
            raise TypeError(f"what_if must be a spec string, not {type(what_if).__name__}")
        options["what_if"] = what_if
    elif after is None:
        raise TypeError("diff(before, after): give after, or what_if=SPEC")
    outcome = _lib.diff(_os.fspath(before), "" if after is None else _os.fspath(after),
                        options)
    if outcome["error"] is not None:
        _raise(outcome["error"])
    return DiffResult(outcome["result"])


def what_if(trace: PathLike, speedups: Union[str, List[str]], *,
            output: Optional[PathLike] = None, causal_profile: bool = True) -> Dict[str, Any]:
    """What if some work were faster? Predicts a saved trace's launch (``PREFIX``, as
    ``warptrace whatif``) over its exact hand-offs; returns the what-if JSON as a dict:
    ``measured_ns``, ``predicted_ns``, ``speedup``, ``blocks``, ``roles``, the predicted
    ``diagnosis`` and ``critical_path``, ``causal_profile`` and ``limitations``.

    ``speedups``: ``"[ROLE:]NAME=FACTOR"`` or ``"[ROLE:]NAME=-DURATION"`` (ns, us, ms), e.g.
    ``"consumer:mma=0.5"``; several in a list or separated by ``;``. ``output``: the predicted
    launch as a trace (``.pftrace``: Perfetto, else Chrome JSON). Raises TraceError:
    INVALID_ARGUMENT for a region that does not exist, a factor <= 0 or a shortening longer
    than the region; FAILED_PRECONDITION for a trace without the hand-offs the prediction
    needs (a Mosaic GPU buffer, a version-1 trace).
    """
    if isinstance(speedups, str):
        speedups = [speedups]
    if not isinstance(speedups, (list, tuple)) or not all(isinstance(s, str) for s in speedups):
        raise TypeError("speedups must be a string or a list of strings like 'consumer:mma=0.5'")
    options = {"speedups": list(speedups), "causal_profile": bool(causal_profile)}
    if output is not None:
        options["output"] = _os.fspath(output)
    outcome = _lib.what_if(_os.fspath(trace), options)
    if outcome["error"] is not None:
        _raise(outcome["error"])
    return outcome["result"]


# The tables (docs/tables.md; the wheel's `tables` extra: pip install warptrace[tables]).
from warptrace._tables import (READY_QUERIES, MissingExtraError, SchemaVersionError,  # noqa: E402
                               query, ready_query, tables, to_parquet)
