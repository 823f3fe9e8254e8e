"""The ready queries (warptrace.READY_QUERIES) on Dask distributed, over the same Parquet
dataset DuckDB reads: for datasets larger than one machine. The computation runs on the
cluster of the ``dask.distributed.Client`` you pass (a scheduler and its worker processes);
each function returns a ``pandas.DataFrame`` with the same columns and rows, in the same
order, as DuckDB's answer to the ready query of that name.

    from dask.distributed import Client
    import warptrace, warptrace.dask_engine as wd
    client = Client("tcp://scheduler:8786")
    df = wd.ready_query("region_percentiles", "/data/traces_dataset", client)

Needs ``dask[dataframe]`` and ``distributed`` (not part of the ``tables`` extra: install
them where the cluster runs). Percentiles are exact (linear interpolation, as DuckDB's
quantile_cont), computed per group on the workers.
"""

from __future__ import annotations

import os as _os
from typing import Callable, Dict, List

from warptrace._tables import MissingExtraError, _check_versions_frame

_HINT = "pip install 'dask[dataframe]' distributed"


def _dd():
    try:
        import dask.dataframe as dd
        import distributed  # noqa: F401 (the engine is the distributed scheduler)
    except ImportError as e:
        raise MissingExtraError(f"warptrace.dask_engine needs dask and distributed: {_HINT}") from e
    return dd


def _read(dataset: str, table: str, columns: List[str]):
    return _dd().read_parquet(_os.path.join(_os.fspath(dataset), table), columns=columns,
                              dataset={"partitioning": "hive"})


def _launches(dataset: str, client, columns: List[str]):
    launches = client.compute(_read(dataset, "launches", ["schema_version"] + columns)).result()
    _check_versions_frame(launches, _os.fspath(dataset))
    return launches[columns]


def _percentiles(frame, keys, value):
    import numpy as np
    import pandas as pd

    def per_group(g):
        v = g[value].to_numpy()
        return pd.Series({"count": len(v), "p50_ns": float(np.quantile(v, 0.5)),
                          "p95_ns": float(np.quantile(v, 0.95))})

    meta = {"count": "i8", "p50_ns": "f8", "p95_ns": "f8"}
    return frame.groupby(keys).apply(per_group, meta=meta)


def region_percentiles(dataset: str, client):
    launches = _launches(dataset, client, ["launch_id", "kernel", "tags"])
    slices = _read(dataset, "slices", ["launch_id", "name", "duration_ns"])
    joined = slices.merge(launches, on="launch_id", how="inner")
    out = client.compute(_percentiles(joined, ["kernel", "tags", "name"], "duration_ns")).result()
    out = out.reset_index()[["kernel", "tags", "name", "count", "p50_ns", "p95_ns"]]
    return out.sort_values(["kernel", "tags", "name"], kind="stable").reset_index(drop=True)


def top_waiting_units(dataset: str, client):
    _launches(dataset, client, ["launch_id"])
    waits = _read(dataset, "waits",
                  ["launch_id", "record", "block", "unit", "barrier_name", "name", "wait_ns"])
    waits["barrier"] = waits["barrier_name"].fillna(waits["name"])
    grouped = waits.groupby(["launch_id", "record", "block", "unit", "barrier"]).agg(
        waits=("wait_ns", "count"), wait_ns=("wait_ns", "sum"))
    out = client.compute(grouped).result().reset_index()
    out = out.sort_values(["wait_ns", "launch_id", "record", "barrier"],
                          ascending=[False, True, True, True], kind="stable")
    return out.head(20)[["launch_id", "record", "block", "unit", "barrier", "waits",
                         "wait_ns"]].reset_index(drop=True)


def stragglers(dataset: str, client):
    import numpy as np
    launches = _launches(dataset, client, ["launch_id", "globaltimer_origin_ns"])
    units = _read(dataset, "units", ["launch_id", "block", "sm", "end_ns"]).dropna(
        subset=["end_ns"])
    blocks = units.groupby(["launch_id", "block"]).agg(sm=("sm", "min"), end=("end_ns", "max"))
    blocks = client.compute(blocks).result().reset_index()
    blocks = blocks.merge(launches, on="launch_id")
    blocks["end_ns"] = (blocks["end"] - blocks["globaltimer_origin_ns"]).astype("int64")
    medians = blocks.groupby("launch_id")["end_ns"].apply(
        lambda v: float(np.quantile(v.to_numpy(), 0.5))).rename("median_end_ns").reset_index()
    out = blocks.merge(medians, on="launch_id")
    out = out[out["end_ns"] >= 1.25 * out["median_end_ns"]].copy()
    out["ratio"] = out["end_ns"] / out["median_end_ns"]
    out["sm"] = out["sm"].astype("int64")
    out = out.sort_values(["sm", "ratio", "launch_id", "block"],
                          ascending=[True, False, True, True], kind="stable")
    return out[["sm", "launch_id", "block", "end_ns", "median_end_ns",
                "ratio"]].reset_index(drop=True)


def bound_by_config(dataset: str, client):
    launches = _launches(dataset, client, ["launch_id", "tags"])
    diagnosis = _read(dataset, "diagnosis", ["launch_id", "kind", "bound_role"])
    bound = client.compute(diagnosis[diagnosis["kind"] == "bound"]).result()
    merged = launches.merge(bound[["launch_id", "bound_role"]], on="launch_id", how="left")
    merged["bound"] = merged["bound_role"].fillna("(none)")
    out = merged.groupby(["tags", "bound"]).size().rename("launches").reset_index()
    out = out.sort_values(["tags", "launches", "bound"], ascending=[True, False, True],
                          kind="stable")
    return out[["tags", "bound", "launches"]].reset_index(drop=True)


READY: Dict[str, Callable] = {
    "region_percentiles": region_percentiles,
    "top_waiting_units": top_waiting_units,
    "stragglers": stragglers,
    "bound_by_config": bound_by_config,
}


def ready_query(name: str, dataset: str, client):
    """The ready query `name` on the client's cluster; KeyError naming the ready queries."""
    if name not in READY:
        raise KeyError(f"no ready query {name!r}; ready: {', '.join(READY)}")
    return READY[name](_os.fspath(dataset), client)
