"""The warptrace tables (docs/tables.md) from Python: Arrow tables of a trace, a
Hive-partitioned Parquet dataset of many, and DuckDB queries over it.

Public through the package: ``warptrace.tables``, ``warptrace.to_parquet``,
``warptrace.query``, ``warptrace.ready_query``, ``warptrace.READY_QUERIES``. Needs the
wheel's ``tables`` extra (pyarrow, duckdb): ``pip install warptrace[tables]``; without it
every function raises :class:`MissingExtraError` saying so.
"""

from __future__ import annotations

import ctypes as _ct
import glob as _glob
import json as _json
import os as _os
import re as _re
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Union
from urllib.parse import quote as _quote

from warptrace import _lib

SCHEMA_VERSION = _lib.TABLES_SCHEMA_VERSION
TABLE_NAMES = ("launches", "units", "slices", "waits", "links", "copies", "sites", "roles",
               "role_waits", "critical_path", "diagnosis")
EXTRA_HINT = "pip install warptrace[tables]"


class MissingExtraError(ImportError):
    """An optional dependency of the tables (pyarrow, duckdb) is not installed."""


class SchemaVersionError(ValueError):
    """A dataset holds tables of another schema version than this warptrace reads, or
    mixes versions."""


def _require(module: str):
    try:
        return __import__(module)
    except ImportError as e:
        raise MissingExtraError(
            f"warptrace's tables need {module}, which is not installed: {EXTRA_HINT} "
            f"(the 'tables' extra: pyarrow and duckdb)") from e


def _pyarrow():
    _require("pyarrow")
    import pyarrow  # noqa: F811 (the checked import above)
    return pyarrow


# ---- Arrow streams without a copy --------------------------------------------------------

_CAPSULE_NAME = b"arrow_array_stream"


class _StreamCapsule:
    """Hands one ArrowArrayStream to pyarrow through the PyCapsule protocol
    (``__arrow_c_stream__``); pyarrow moves the struct out, so the data is never copied."""

    def __init__(self, stream: _lib.ArrowArrayStream):
        self._stream = stream

    def __arrow_c_stream__(self, requested_schema=None):
        new = _ct.pythonapi.PyCapsule_New
        new.restype = _ct.py_object
        new.argtypes = [_ct.c_void_p, _ct.c_char_p, _ct.c_void_p]
        return new(_ct.addressof(self._stream), _CAPSULE_NAME, None)


def _release(stream: _lib.ArrowArrayStream):
    if stream.release:  # not moved out by the consumer
        _ct.CFUNCTYPE(None, _ct.POINTER(_lib.ArrowArrayStream))(stream.release)(
            _ct.byref(stream))


def _import_table(handle: _lib.Tables, name: str):
    pa = _pyarrow()
    stream = _lib.ArrowArrayStream()
    error = handle.export(name, stream)
    if error is not None:
        raise KeyError(error[1])
    try:
        if hasattr(pa.RecordBatchReader, "from_stream") and hasattr(_ct, "pythonapi"):
            reader = pa.RecordBatchReader.from_stream(_StreamCapsule(stream))
        else:
            reader = pa.RecordBatchReader._import_from_c(_ct.addressof(stream))
        return reader.read_all()
    finally:
        _release(stream)


def _check_tags(tags: Optional[Mapping[str, Any]]) -> Dict[str, str]:
    if tags is None:
        return {}
    if not isinstance(tags, Mapping):
        raise TypeError(f"tags must be a mapping of names to values, not {type(tags).__name__}")
    out = {}
    for k, v in tags.items():
        if not isinstance(k, str) or not _re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
            raise ValueError(f"tag name {k!r} is not an identifier ([A-Za-z_][A-Za-z0-9_]*): "
                             "tags become Hive partition columns")
        out[k] = str(v)
    return out


def tables(trace: Union[str, "_os.PathLike[str]"], *, tags: Optional[Mapping[str, Any]] = None,
           launch_id: Optional[str] = None, allow_truncated: bool = True,
           names: Optional[Iterable[str]] = None) -> Dict[str, Any]:
    """The warptrace tables of a saved trace (``PREFIX`` of ``PREFIX.bin`` + ``PREFIX.json``)
    as ``{name: pyarrow.Table}``, imported from the C library's Arrow streams without a copy.

    ``tags`` (e.g. ``{"rank": 3, "config": "bn128"}``) go into ``launches.tags`` (a JSON
    object); ``launch_id`` (default: the prefix) keys every row. ``allow_truncated`` (default
    True): broken units keep their valid prefix and say so in ``units.verdict``; False raises
    TraceError for a trace that fails verification. ``names``: only these tables.

    Raises MissingExtraError without pyarrow; TraceError (NOT_FOUND, DATA_LOSS, ...) as
    :func:`warptrace.dump`; KeyError for an unknown table name.
    """
    _pyarrow()
    from warptrace import _raise  # the package's error mapping
    prefix = _os.fspath(trace)
    options = {"tags": _check_tags(tags), "allow_truncated": bool(allow_truncated)}
    if launch_id is not None:
        options["launch_id"] = str(launch_id)
    handle, error = _lib.tables_from_prefix(prefix, options)
    if error is not None:
        _raise(error)
    wanted = list(names) if names is not None else handle.names()
    return {name: _import_table(handle, name) for name in wanted}


# ---- Parquet datasets -------------------------------------------------------------------

def _prefixes(directory: str) -> List[str]:
    found = []
    for sidecar in _glob.glob(_os.path.join(directory, "**", "*.json"), recursive=True):
        prefix = sidecar[:-len(".json")]
        if _os.path.isfile(prefix + ".bin"):
            found.append(prefix)
    return sorted(found)


def _file_name(launch_id: str) -> str:
    return _quote(launch_id, safe="") + ".parquet"


def to_parquet(trace_or_prefix: Union[str, "_os.PathLike[str]"],
               directory: Union[str, "_os.PathLike[str]"], *,
               tags: Union[None, Mapping[str, Any], Callable[[str], Mapping[str, Any]]] = None,
               launch_id: Optional[str] = None, allow_truncated: bool = True) -> List[str]:
    """Writes a trace's tables into the Hive-partitioned Parquet dataset ``directory``:
    ``directory/TABLE/TAG=VALUE/.../LAUNCH.parquet``, one file per table and launch, the
    tags (sorted by name) as partition columns, so every table of the dataset carries them.

    ``trace_or_prefix``: a ``PREFIX``, or a directory: every ``PREFIX.json`` with its
    ``PREFIX.bin`` under it becomes one launch (launch_id: the prefix relative to it).
    ``tags``: a mapping (the same for every launch) or a function of the prefix returning one;
    every launch of one dataset should have the same tag names. Returns the launch ids
    written. Raises as :func:`tables`; ValueError for a directory without traces.
    """
    pa = _pyarrow()
    import pyarrow.parquet as pq
    source = _os.fspath(trace_or_prefix)
    out = _os.fspath(directory)
    if _os.path.isdir(source):
        prefixes = _prefixes(source)
        if not prefixes:
            raise ValueError(f"{source} holds no saved traces (PREFIX.json + PREFIX.bin)")
        ids = [_os.path.relpath(p, source) for p in prefixes]
    else:
        prefixes, ids = [source], [launch_id if launch_id is not None else source]
    written = []
    for prefix, lid in zip(prefixes, ids):
        these = _check_tags(tags(prefix) if callable(tags) else tags)
        parts = [f"{k}={_quote(v, safe='')}" for k, v in sorted(these.items())]
        for name, table in tables(prefix, tags=these, launch_id=lid,
                                  allow_truncated=allow_truncated).items():
            clash = sorted(set(these) & set(table.column_names))
            if clash:
                raise ValueError(f"tag {clash[0]!r} is also a column of table {name}: "
                                 "rename the tag (tags become columns of every table)")
            where = _os.path.join(out, name, *parts)
            _os.makedirs(where, exist_ok=True)
            pq.write_table(table, _os.path.join(where, _file_name(lid)), compression="zstd")
        written.append(lid)
    del pa
    return written


# ---- DuckDB -------------------------------------------------------------------------------

READY_QUERIES: Dict[str, str] = {
    # p50 / p95 of each region (slice name) per kernel and tag set.
    "region_percentiles": """
        SELECT l.kernel, l.tags, s.name, count(*) AS count,
               quantile_cont(s.duration_ns, 0.5) AS p50_ns,
               quantile_cont(s.duration_ns, 0.95) AS p95_ns
        FROM slices s JOIN launches l USING (launch_id)
        GROUP BY l.kernel, l.tags, s.name
        ORDER BY l.kernel, l.tags, s.name""",
    # The 20 units that waited most, and on which barrier (the released barrier's name, or
    # the wait site's where the trace records no hand-off).
    "top_waiting_units": """
        SELECT launch_id, record, block, unit, coalesce(barrier_name, name) AS barrier,
               count(*) AS waits, sum(wait_ns) AS wait_ns
        FROM waits
        GROUP BY launch_id, record, block, unit, coalesce(barrier_name, name)
        ORDER BY wait_ns DESC, launch_id, record, barrier
        LIMIT 20""",
    # Blocks whose end (latest unit end, from the launch's first unit start) is at least 1.25
    # times the launch's median block end, with the SM they ran on.
    "stragglers": """
        WITH blocks AS (
          SELECT u.launch_id, u.block, min(u.sm) AS sm,
                 max(u.end_ns) - min(l.globaltimer_origin_ns) AS end_ns
          FROM units u JOIN launches l USING (launch_id)
          WHERE u.end_ns IS NOT NULL
          GROUP BY u.launch_id, u.block),
        medians AS (
          SELECT launch_id, quantile_cont(end_ns, 0.5) AS median_end_ns
          FROM blocks GROUP BY launch_id)
        SELECT b.sm, b.launch_id, b.block, b.end_ns, m.median_end_ns,
               b.end_ns / m.median_end_ns AS ratio
        FROM blocks b JOIN medians m USING (launch_id)
        WHERE b.end_ns >= 1.25 * m.median_end_ns
        ORDER BY b.sm, ratio DESC, b.launch_id, b.block""",
    # Per tag set: how many launches the diagnosis calls bound by each role ("producer",
    # "consumer"; "(none)": no bound line), and the roles' mean waiting shares.
    "bound_by_config": """
        WITH bound AS (
          SELECT l.launch_id, l.tags, coalesce(d.bound_role, '(none)') AS bound
          FROM launches l
          LEFT JOIN diagnosis d ON d.launch_id = l.launch_id AND d.kind = 'bound')
        SELECT tags, bound, count(*) AS launches
        FROM bound GROUP BY tags, bound
        ORDER BY tags, launches DESC, bound""",
}


def _duckdb():
    _require("duckdb")
    import duckdb  # noqa: F811
    return duckdb


def _table_glob(dataset: str, name: str) -> Optional[str]:
    root = _os.path.join(dataset, name)
    if not _os.path.isdir(root):
        return None
    return _os.path.join(root, "**", "*.parquet")


def connect(dataset: Union[str, "_os.PathLike[str]"]):
    """A DuckDB connection with one view per table of the dataset (``slices``, ``units``,
    ...; tag partitions as columns), after checking its schema version. Raises
    SchemaVersionError for a dataset of another version or of mixed versions, ValueError
    for a directory without a ``launches`` table."""
    duckdb = _duckdb()
    root = _os.fspath(dataset)
    con = duckdb.connect()
    for name in TABLE_NAMES:
        pattern = _table_glob(root, name)
        if pattern is None:
            continue
        quoted = pattern.replace("'", "''")
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{quoted}', "
                    "hive_partitioning = true, union_by_name = true)")
    if _table_glob(root, "launches") is None:
        raise ValueError(f"{root} is not a warptrace dataset: it has no launches/ table "
                         "(write one with warptrace.to_parquet)")
    _check_versions(con, root)
    return con


def _check_versions(con, root: str):
    found = con.execute("SELECT schema_version, count(*), min(launch_id) FROM launches "
                        "GROUP BY schema_version ORDER BY schema_version").fetchall()
    _check_found_versions(found, root)


def _check_versions_frame(launches, root: str):
    """The same check over a pandas frame of launches (schema_version, launch_id)."""
    g = launches.groupby("schema_version")["launch_id"]
    found = [(int(v), int(n), m) for v, n, m in
             zip(g.size().index, g.size().values, g.min().values)]
    _check_found_versions(found, root)


def _check_found_versions(found, root: str):
    if len(found) == 1 and found[0][0] == SCHEMA_VERSION:
        return
    listed = "; ".join(f"version {v}: {n} launches (e.g. {lid!r})" for v, n, lid in found)
    if len(found) > 1:
        raise SchemaVersionError(
            f"{root} mixes warptrace table schema versions ({listed}): rewrite the old "
            f"launches with warptrace.to_parquet, or query each version's files apart")
    raise SchemaVersionError(
        f"{root} holds warptrace tables of schema version {found[0][0] if found else '?'} "
        f"({listed}); this warptrace reads version {SCHEMA_VERSION}: rewrite them with "
        "warptrace.to_parquet")


def _arrow_of(relation):
    for method in ("to_arrow_table", "fetch_arrow_table", "arrow"):
        fn = getattr(relation, method, None)
        if fn is not None:
            result = fn()
            return result.read_all() if hasattr(result, "read_all") else result
    raise RuntimeError("this duckdb has no Arrow result method")


def query(sql: str, dataset: Union[str, "_os.PathLike[str]"]):
    """Runs ``sql`` with DuckDB over the dataset's tables (views named as the tables) and
    returns a ``pyarrow.Table``. ``sql`` may also name a ready query (READY_QUERIES)."""
    _pyarrow()
    con = connect(dataset)
    try:
        return _arrow_of(con.sql(READY_QUERIES.get(sql, sql)))
    finally:
        con.close()


def ready_query(name: str, dataset: Union[str, "_os.PathLike[str]"]):
    """One of READY_QUERIES by name, with DuckDB; KeyError naming the ready queries."""
    if name not in READY_QUERIES:
        raise KeyError(f"no ready query {name!r}; ready: {', '.join(READY_QUERIES)}")
    return query(READY_QUERIES[name], dataset)


def main(argv: List[str]) -> int:
    """``warptrace query DATASET SQL|READY_NAME [--csv]``: prints the result."""
    import sys
    if len(argv) < 2 or argv[0] in ("-h", "--help"):
        sys.stdout.write("usage: warptrace query DATASET SQL|READY_QUERY [--csv]\n"
                         f"ready queries: {', '.join(READY_QUERIES)}\n")
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    dataset, sql = argv[0], argv[1]
    try:
        result = query(sql, dataset)
    except (MissingExtraError, SchemaVersionError, ValueError) as e:
        sys.stderr.write(f"warptrace query: error: {e}\n")
        return 1
    if "--csv" in argv[2:]:
        import pyarrow.csv as pcsv
        pcsv.write_csv(result, sys.stdout.buffer)
    else:
        sys.stdout.write(result.to_pandas().to_string(index=False) + "\n"
                         if _has("pandas") else str(result) + "\n")
    return 0


def _has(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False
