"""warptrace from Python: dump, verify and analyze intra-kernel GPU traces in-process.

The same pipeline as the ``warptrace`` CLI (decode -> verify -> timeline -> Perfetto or
Chrome JSON, summary, analysis), called in-process on a buffer you already hold: a numpy
array, a host JAX or torch array, ``bytes`` -- anything with the buffer protocol or DLPack --
read in place, without a copy. The C++ work runs with the GIL released.

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
"""

import json as _json
import os as _os

from warptrace import _warptrace_core as _core

__all__ = ["Layout", "DumpResult", "TraceError", "dump", "diff", "DiffResult"]


class TraceError(RuntimeError):
    """A trace could not be read, decoded, verified or written.

    A ``RuntimeError`` subclass, so ``except RuntimeError`` (what Mosaic GPU's own dump
    raises) keeps working. Attributes:

    * ``code``: the C++ status code, e.g. ``"DATA_LOSS"`` (a corrupted buffer),
      ``"RESOURCE_EXHAUSTED"`` (events dropped: the buffer was too small),
      ``"INVALID_ARGUMENT"`` (a layout that disagrees with the buffer), ``"NOT_FOUND"``.
    * ``result``: the :class:`DumpResult` when the buffer was decoded (the verdicts of every
      unit, also when verification failed), else ``None``.
    """

    def __init__(self, message, code="UNKNOWN", result=None):
        super().__init__(message)
        self.code = code
        self.result = result


class TraceFileNotFoundError(TraceError, FileNotFoundError):
    """A file the trace needs does not exist (also a ``FileNotFoundError``)."""


def _raise(error, result=None, buffer_error=None):
    code, message = error
    if buffer_error == "type":
        raise TypeError(message)
    if buffer_error == "value":
        raise ValueError(message)
    cls = TraceFileNotFoundError if code == "NOT_FOUND" else TraceError
    raise cls(message, code, result)


class Layout:
    """A trace's layout: what decodes a buffer (the ``PREFIX.json`` sidecar's contents).

    >>> layout = warptrace.Layout.load("/tmp/gemm.json")
    >>> layout.buffer_bytes            # the size the buffer must have
    """

    __slots__ = ("_json", "_dict", "buffer_bytes")

    def __init__(self, _parsed):
        self._json = _parsed["json"]
        self.buffer_bytes = _parsed["buffer_bytes"]
        self._dict = None

    @classmethod
    def from_json(cls, text):
        """Parses a ``"warptrace"`` sidecar; raises TraceError (INVALID_ARGUMENT) naming
        the field at fault."""
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        parsed = _core.layout_from_json(text)
        if parsed["error"] is not None:
            _raise(parsed["error"])
        return cls(parsed)

    @classmethod
    def load(cls, path):
        """Reads a sidecar file; TraceFileNotFoundError when it is missing."""
        parsed = _core.load_layout(_os.fspath(path))
        if parsed["error"] is not None:
            _raise(parsed["error"])
        return cls(parsed)

    def to_json(self):
        """The layout as sidecar JSON text (canonical form)."""
        return self._json

    def to_dict(self):
        if self._dict is None:
            self._dict = _json.loads(self._json)
        return self._dict

    def __getitem__(self, key):
        return self.to_dict()[key]

    def __repr__(self):
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

    def __init__(self, d):
        self._d = d
        self.units = d["units"]
        self.findings = d["findings"]
        self.verdict_counts = d["verdict_counts"]
        self.kept_events = d["kept_events"]
        self.dropped_events = d["dropped_events"]
        self.slices = d["slices"]
        self.capacity = d["capacity"]
        self.required_capacity = d["required_capacity"]
        self.errors = d["errors"]
        self.warnings = d["warnings"]
        self.ok = d["errors"] == 0
        self.kernel = d["kernel"]
        self.grid = d["grid"]
        self.block = d["block"]
        self.unit_kind = d["unit_kind"]
        self.clock_note = d["clock_note"]
        self.summary = d["summary"]
        self.summary_text = d["summary_text"]
        self.diagnosis = d["diagnosis"]
        self.overflows = d["overflows"]
        self.format = None
        self.paths = []
        if d["written"]:
            self.paths.append(d["written"])
            self.format = "perfetto" if d["perfetto"] else "json"
        self._analysis = None
        self._report = None

    @property
    def analysis(self):
        if self._analysis is None and self._d["analysis_json"]:
            self._analysis = _json.loads(self._d["analysis_json"])
        return self._analysis

    @property
    def report(self):
        if self._report is None and self._d["report_json"]:
            self._report = _json.loads(self._d["report_json"])
        return self._report

    def __repr__(self):
        return (f"DumpResult(kernel={self.kernel!r}, units={len(self.units)}, "
                f"verdicts={self.verdict_counts}, kept_events={self.kept_events}, "
                f"dropped_events={self.dropped_events}, paths={self.paths})")


def _finish(d):
    error = d.get("error")
    if error is None:
        return DumpResult(d)
    result = DumpResult(d) if d.get("decoded") else None
    _raise(error, result, d.get("buffer_error"))


def _check_byte_order(buffer):
    dtype = getattr(buffer, "dtype", None)
    order = getattr(dtype, "byteorder", None)
    if order == ">" or (order == "=" and _sys_big_endian()):
        raise ValueError(
            f"the buffer is big-endian ({dtype}): trace words are little-endian uint32; pass "
            "buffer.astype('<u4') (or buffer.byteswap().view(buffer.dtype.newbyteorder()))")


def _sys_big_endian():
    import sys
    return sys.byteorder == "big"


def dump(buffer, layout=None, output=None, *, format=None, summary=False, analysis=False,
         allow_truncated=False, compensate_overhead=False, sm_clock_khz=0):
    """Decodes, verifies and (optionally) writes a trace; returns a :class:`DumpResult`.

    Args:
      buffer: the raw trace words -- any object with the buffer protocol or DLPack in host
        memory (numpy ``uint32``, a CPU JAX or torch array, ``bytes``), read without a copy
        -- or a ``PREFIX`` path (str / PathLike) naming ``PREFIX.bin`` + ``PREFIX.json`` as
        the CLI takes (then ``layout`` is not given).
      layout: a :class:`Layout` for an in-memory buffer.
      output: the trace file to write, or None. ``.pftrace`` / ``.perfetto-trace`` write
        Perfetto's protobuf trace, anything else Chrome trace JSON (as the CLI), unless
        ``format`` ("perfetto" or "json") says otherwise. Byte-identical to the CLI's.
      summary: compute the summary and the diagnosis (``result.summary_text``).
      analysis: compute the analysis (``result.analysis``).
      allow_truncated: keep each broken unit's valid prefix instead of failing.
      compensate_overhead: move events earlier by the measured recording overhead.
      sm_clock_khz: the CLI's ``--sm-clock-khz`` (0: the layout's).

    Raises:
      TypeError: the buffer is not integer data (or not an array at all).
      ValueError: the buffer is not contiguous, aligned, little-endian, or whole words.
      TraceError: the layout disagrees with the buffer, the buffer is corrupted or dropped
        events (``.result`` has the verdicts), a file is missing
        (TraceFileNotFoundError), or the output cannot be written.

    Example::

        result = warptrace.dump(words, layout, "trace.pftrace", summary=True)
        for unit in result.units:
            if unit["verdict"] != "complete":
                print(unit["name"], unit["reason"])
    """
    output = "" if output is None else _os.fspath(output)
    format = "" if format is None else str(format)
    if isinstance(buffer, (str, _os.PathLike)):
        if layout is not None:
            raise TypeError("dump(PREFIX, ...) reads the layout from PREFIX.json: "
                            "give no layout, or pass the buffer itself")
        return _finish(_core.dump_prefix(_os.fspath(buffer), output, format, bool(summary),
                                         bool(analysis), bool(allow_truncated),
                                         bool(compensate_overhead), int(sm_clock_khz)))
    if not isinstance(layout, Layout):
        raise TypeError(f"dump(buffer, layout): layout must be a warptrace.Layout "
                        f"(Layout.load(path) or Layout.from_json(text)), got "
                        f"{type(layout).__name__}")
    _check_byte_order(buffer)
    return _finish(_core.dump_words(buffer, layout._json, output, format, bool(summary),
                                    bool(analysis), bool(allow_truncated),
                                    bool(compensate_overhead), int(sm_clock_khz)))


class DiffResult:
    """``warptrace diff``: ``table`` (the CLI's text, every row) and the JSON as data:
    ``rows``, ``kernel`` (each with ``mean_before_ns``, ``mean_after_ns``, ``change``,
    ``p_value``, ``significant``...), ``critical_path``, ``waits``."""

    def __init__(self, d):
        self.table = d["table"]
        self.data = _json.loads(d["json"])
        self.rows = self.data["rows"]
        self.kernel = self.data["kernel"]
        self.critical_path = self.data["critical_path"]
        self.waits = self.data["waits"]

    def __repr__(self):
        return f"DiffResult(rows={len(self.rows)})"


def diff(before, after, *, compensate_overhead=False):
    """Compares two saved traces (``PREFIX`` paths), as ``warptrace diff`` does.

    >>> d = warptrace.diff("/tmp/gemm_v1", "/tmp/gemm_v2")
    >>> [r["name"] for r in d.rows if r["significant"]]
    """
    d = _core.diff(_os.fspath(before), _os.fspath(after), bool(compensate_overhead))
    if d["error"] is not None:
        _raise(d["error"])
    return DiffResult(d)
