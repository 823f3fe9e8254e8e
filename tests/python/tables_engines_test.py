"""DuckDB and Dask distributed return the same rows for every ready query, on a dataset of
several hundred generated traces, with a real cluster on this machine: a scheduler and two
worker processes started as their own programs (`dask scheduler`, `dask worker`), not an
in-process local mode.

    tables_engines_test.py WRITE_TABLE_TRACES
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import unittest

import pandas as pd

import warptrace
import warptrace.dask_engine as wd

WRITER = sys.argv[1] if __name__ == "__main__" else None
DIR = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
LAUNCHES = 320


def start_cluster(work):
    """A scheduler and two single-threaded worker processes; returns (client, processes)."""
    from distributed import Client
    bindir = os.path.dirname(sys.executable)
    dask = os.path.join(bindir, "dask")
    sched_file = os.path.join(work, "scheduler.json")
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__DAEMON="False")
    log = open(os.path.join(work, "cluster.log"), "w")  # noqa: SIM115 (the cluster's life)
    procs = [subprocess.Popen([dask, "scheduler", "--scheduler-file", sched_file, "--port", "0",
                               "--no-dashboard"], stdout=log, stderr=log, env=env)]
    deadline = time.time() + 120
    while not os.path.exists(sched_file):
        if time.time() > deadline or procs[0].poll() is not None:
            raise AssertionError(f"the scheduler did not start: {open(log.name).read()}")
        time.sleep(0.2)
    for i in range(2):
        procs.append(subprocess.Popen(
            [dask, "worker", "--scheduler-file", sched_file, "--nthreads", "1", "--nworkers",
             "1", "--no-dashboard", "--name", f"w{i}", "--local-directory", work],
            stdout=log, stderr=log, env=env))
    client = Client(scheduler_file=sched_file, timeout=120)
    client.wait_for_workers(2, timeout=120)
    return client, procs + [log]


def frames_equal(a, b, what):
    a = a.reset_index(drop=True)
    b = b.reset_index(drop=True)
    assert list(a.columns) == list(b.columns), f"{what}: columns {list(a.columns)} vs {list(b.columns)}"
    assert len(a) == len(b), f"{what}: {len(a)} rows (DuckDB) vs {len(b)} (Dask)"
    for col in a.columns:
        for i, (x, y) in enumerate(zip(a[col].tolist(), b[col].tolist())):
            if isinstance(x, float) or isinstance(y, float):
                ok = math.isclose(float(x), float(y), rel_tol=1e-9, abs_tol=1e-9)
            else:
                ok = x == y
            assert ok, f"{what}: row {i} column {col}: DuckDB {x!r}, Dask {y!r}"


class EnginesAgree(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        traces = os.path.join(DIR, "traces")
        os.makedirs(traces)
        subprocess.run([WRITER, traces, str(LAUNCHES)], check=True)
        with open(os.path.join(traces, "tags.json")) as f:
            tags = json.load(f)
        cls.dataset = os.path.join(DIR, "dataset")
        written = warptrace.to_parquet(traces, cls.dataset,
                                       tags=lambda p: tags[os.path.basename(p)])
        assert len(written) == LAUNCHES, len(written)
        cls.client, cls.procs = start_cluster(DIR)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        *procs, log = cls.procs
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(timeout=60)
        log.close()

    def test_the_cluster_is_a_scheduler_and_two_worker_processes(self):
        workers = self.client.scheduler_info()["workers"]
        self.assertGreaterEqual(len(workers), 2)
        pids = set(self.client.run(os.getpid).values())
        self.assertEqual(len(pids), len(workers))
        self.assertNotIn(os.getpid(), pids)

    def test_every_ready_query_gives_the_same_rows_on_duckdb_and_dask(self):
        self.assertEqual(set(warptrace.READY_QUERIES), set(wd.READY))
        for name in warptrace.READY_QUERIES:
            duck = warptrace.ready_query(name, self.dataset).to_pandas()
            dask = wd.ready_query(name, self.dataset, self.client)
            self.assertGreater(len(duck), 0, f"{name} found nothing: the check would be empty")
            frames_equal(duck, dask, name)

    def test_the_ready_queries_find_the_planted_answers(self):
        bound = warptrace.ready_query("bound_by_config", self.dataset).to_pylist()
        by_config = {json.loads(r["tags"])["config"]: r["bound"] for r in bound
                     if r["launches"] >= 8}
        self.assertEqual(by_config.get("load300_mma100_s2"), "producer")
        self.assertEqual(by_config.get("load100_mma300_s2"), "consumer")
        stragglers = warptrace.ready_query("stragglers", self.dataset).to_pylist()
        # every 7th launch has one block at twice the time
        self.assertGreaterEqual(len({r["launch_id"] for r in stragglers}), LAUNCHES // 7 // 2)

    def test_dask_refuses_a_dataset_of_mixed_schema_versions_too(self):
        import pyarrow.parquet as pq
        import shutil
        mixed = os.path.join(DIR, "mixed")
        shutil.copytree(self.dataset, mixed)
        some = next(os.path.join(r, f) for r, _, fs in os.walk(os.path.join(mixed, "launches"))
                    for f in fs)
        t = pq.read_table(some)
        import pyarrow as pa
        t = t.set_column(0, "schema_version", pa.array([99] * t.num_rows, pa.int64()))
        pq.write_table(t, some)
        with self.assertRaisesRegex(warptrace.SchemaVersionError, "mixes .* versions"):
            wd.ready_query("bound_by_config", mixed, self.client)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=2)
