"""The tables benchmark (not a test: numbers for the notes).

    tables_benchmark.py WRITE_TABLE_TRACES WORKDIR [LAUNCHES BLOCKS ITERATIONS]

Generates LAUNCHES pipeline traces (write_table_traces.cc), then measures: the export rate
(warptrace.tables: dump + tables + Arrow import, slices per second on one core, and
to_parquet's), Parquet bytes per slice, each ready query's time on DuckDB (best of 3) and on
Dask distributed (a scheduler + two single-threaded worker processes, best of 2).
"""
import json
import os
import subprocess
import sys
import time

import warptrace
import warptrace.dask_engine as wd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tables_engines_test import start_cluster  # noqa: E402


def du(path):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)


def main():
    writer, work = sys.argv[1], sys.argv[2]
    launches, blocks, iterations = (int(x) for x in (sys.argv[3:6] or ["160", "64", "256"]))
    traces, dataset = os.path.join(work, "traces"), os.path.join(work, "dataset")
    os.makedirs(traces, exist_ok=True)
    t0 = time.perf_counter()
    subprocess.run([writer, traces, str(launches), str(blocks), str(iterations)], check=True)
    print(f"generated {launches} traces in {time.perf_counter() - t0:.1f} s")
    with open(os.path.join(traces, "tags.json")) as f:
        tags = json.load(f)
    prefix = os.path.join(traces, "launch_0000")
    best = 1e9
    for _ in range(3):
        t0 = time.perf_counter()
        t = warptrace.tables(prefix)
        best = min(best, time.perf_counter() - t0)
    n = t["slices"].num_rows
    print(f"export: warptrace.tables of one trace: {n} slices in {best * 1e3:.1f} ms = "
          f"{n / best / 1e6:.2f} M slices/s (one core; dump + tables + import)")
    t0 = time.perf_counter()
    warptrace.to_parquet(traces, dataset, tags=lambda p: tags[os.path.basename(p)])
    elapsed = time.perf_counter() - t0
    total = warptrace.query("SELECT count(*) AS n FROM slices", dataset).to_pylist()[0]["n"]
    print(f"to_parquet: {launches} traces, {total} slices in {elapsed:.1f} s = "
          f"{total / elapsed / 1e6:.2f} M slices/s (one core, zstd Parquet)")
    print(f"parquet: slices/ {du(os.path.join(dataset, 'slices')) / total:.2f} bytes/slice, "
          f"whole dataset {du(dataset) / total:.2f} bytes/slice ({du(dataset) / 1e6:.1f} MB)")
    for name in warptrace.READY_QUERIES:
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            rows = warptrace.ready_query(name, dataset).num_rows
            times.append(time.perf_counter() - t0)
        print(f"duckdb {name}: {min(times):.3f} s (best of 3; {rows} rows)")
    client, procs = start_cluster(work)
    try:
        for name in wd.READY:
            times = []
            for _ in range(2):
                t0 = time.perf_counter()
                rows = len(wd.ready_query(name, dataset, client))
                times.append(time.perf_counter() - t0)
            print(f"dask {name}: {min(times):.2f} s (best of 2; {rows} rows)")
    finally:
        client.close()
        *ps, log = procs
        for p in ps:
            p.terminate()
        for p in ps:
            p.wait(timeout=60)
        log.close()


if __name__ == "__main__":
    main()
