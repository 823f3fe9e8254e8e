"""The warptrace tables from Python (docs/tables.md): round trips against the dump's own
counts, Parquet datasets, DuckDB, and bad input.

    tables_test.py WRITE_TEST_TRACES
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import pyarrow as pa
import pyarrow.parquet as pq

import warptrace

WRITER = sys.argv[1]
DIR = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
subprocess.run([WRITER, DIR], check=True, stdout=subprocess.DEVNULL)
EXAMPLES = ["clean", "clean_large", "pipeline"]
WAIT_KINDS = {"barrier_wait", "phase_wait"}


def p(name):
    return os.path.join(DIR, name)


def handoffs(summary_text):
    m = re.search(r"hand-offs: (\d+) barrier arrivals, (\d+) async copies \(\d+ never "
                  r"completed\), (\d+) arrival -> release flows, (\d+) issue -> completion",
                  summary_text)
    return tuple(int(x) for x in m.groups()) if m else (0, 0, 0, 0)


class RoundTrip(unittest.TestCase):
    def test_tables_hold_exactly_the_dumps_slices_waits_and_links(self):
        for name in EXAMPLES:
            with self.subTest(trace=name):
                r = warptrace.dump(p(name), summary=True)
                t = warptrace.tables(p(name), tags={"rank": 0})
                self.assertEqual(t["slices"].num_rows, r.slices)
                self.assertEqual(t["launches"]["slices"].to_pylist(), [r.slices])
                per_name = {}
                for n, d in zip(t["slices"]["name"].to_pylist(),
                                t["slices"]["duration_ns"].to_pylist()):
                    c, s = per_name.get(n, (0, 0))
                    per_name[n] = (c + 1, s + d)
                self.assertEqual(per_name, {row["name"]: (row["count"], row["total_ns"])
                                            for row in r.summary["regions"]})
                waits = sum(1 for k in t["slices"]["kind"].to_pylist() if k in WAIT_KINDS)
                self.assertEqual(t["waits"].num_rows, waits)
                _, copies, arrival_flows, copy_flows = handoffs(r.summary_text)
                self.assertEqual(t["links"].num_rows, arrival_flows + copy_flows)
                self.assertEqual(t["copies"].num_rows, copies)
                self.assertEqual([u["verdict"] for u in r.units],
                                 t["units"]["verdict"].to_pylist())
                self.assertEqual(t["sites"].num_rows, len(warptrace.Layout.load(
                    p(name) + ".json")["sites"]))
                for table in t.values():
                    self.assertEqual(set(table["schema_version"].to_pylist()),
                                     {warptrace._tables.SCHEMA_VERSION} if table.num_rows else set())

    def test_the_pipelines_waits_name_the_unit_whose_arrival_released_them(self):
        t = warptrace.tables(p("pipeline"))
        waits = t["waits"].to_pylist()
        released = [w for w in waits if w["releasing_unit"] is not None]
        self.assertEqual(len(released), len(waits))  # every wait has a recorded hand-off
        for w in released:
            self.assertLessEqual(w["releasing_arrival_ns"], w["wait_end_ns"])
            # full[*] is released by the producer (unit 0), empty[*] by the consumer
            self.assertEqual(w["releasing_unit"], 0 if w["barrier_name"].startswith("full") else 1)

    def test_copies_engine_and_bytes_are_null_where_the_site_table_does_not_know_them(self):
        copies = warptrace.tables(p("pipeline"))["copies"]
        self.assertGreater(copies.num_rows, 0)
        self.assertEqual(copies["engine"].null_count, copies.num_rows)
        self.assertEqual(copies["bytes"].null_count, copies.num_rows)

    def test_the_import_makes_no_copy(self):
        before = pa.total_allocated_bytes()
        t = warptrace.tables(p("big"), names=["slices"])
        self.assertGreater(t["slices"].num_rows, 500_000)
        self.assertEqual(pa.total_allocated_bytes(), before,
                         "pyarrow allocated memory: the stream was copied")

    def test_a_parquet_dataset_reads_back_equal(self):
        dataset = os.path.join(DIR, "dataset_rt")
        for i, name in enumerate(EXAMPLES):
            warptrace.to_parquet(p(name), dataset, tags={"config": name, "rank": i},
                                 launch_id=name)
        for i, name in enumerate(EXAMPLES):
            t = warptrace.tables(p(name), tags={"config": name, "rank": i}, launch_id=name)
            for table, expected in t.items():
                path = os.path.join(dataset, table, f"config={name}", f"rank={i}",
                                    f"{name}.parquet")
                got = pq.read_table(path, partitioning=None)
                self.assertTrue(got.equals(expected), f"{name}/{table} differs")
        rows = warptrace.query("SELECT config, rank, count(*) AS n FROM slices "
                               "GROUP BY ALL ORDER BY rank", dataset).to_pylist()
        self.assertEqual(rows, [{"config": n, "rank": i,
                                 "n": warptrace.dump(p(n)).slices}
                                for i, n in enumerate(EXAMPLES)])

    def test_a_directory_of_traces_becomes_one_dataset(self):
        traces = os.path.join(DIR, "some")
        os.makedirs(traces)
        for name in EXAMPLES:
            for ext in (".bin", ".json"):
                shutil.copy(p(name) + ext, os.path.join(traces, name + ext))
        dataset = os.path.join(DIR, "dataset_dir")
        ids = warptrace.to_parquet(traces, dataset, tags=lambda prefix: {
            "config": os.path.basename(prefix)})
        self.assertEqual(ids, sorted(EXAMPLES))
        got = warptrace.query("SELECT launch_id, config FROM launches ORDER BY 1",
                              dataset).to_pylist()
        self.assertEqual(got, [{"launch_id": n, "config": n} for n in sorted(EXAMPLES)])

    def test_the_query_command_prints_a_ready_query(self):
        dataset = os.path.join(DIR, "dataset_cli")
        warptrace.to_parquet(p("pipeline"), dataset, tags={"config": "a"})
        out = subprocess.run([sys.executable, "-m", "warptrace._cli", "query", dataset,
                              "bound_by_config", "--csv"], capture_output=True, text=True,
                             check=True).stdout
        self.assertEqual(out.splitlines()[0], '"tags","bound","launches"')
        self.assertIn('"producer",1', out)


class BadInput(unittest.TestCase):
    def test_corrupt_units_carry_their_verdict_and_nothing_is_invented(self):
        with open(p("corruptions.txt")) as f:
            names = f.read().split()
        self.assertGreater(len(names), 3)
        broken = 0
        for c in names:
            prefix = p("corrupt_" + c)
            with self.subTest(corruption=c):
                try:
                    r = warptrace.dump(prefix, allow_truncated=True)
                except warptrace.TraceError:
                    with self.assertRaises(warptrace.TraceError):
                        warptrace.tables(prefix)
                    continue
                t = warptrace.tables(prefix)
                broken += any(v != "complete" for v in t["units"]["verdict"].to_pylist())
                self.assertEqual(t["units"]["verdict"].to_pylist(),
                                 [u["verdict"] for u in r.units])
                self.assertEqual(t["units"]["events"].to_pylist(),
                                 [u["kept_events"] for u in r.units])
                self.assertEqual(t["slices"].num_rows, r.slices)
                for u in t["units"].to_pylist():
                    if u["start_ns"] is None:  # no usable record: no SM, no slices
                        self.assertIsNone(u["sm"])
                        self.assertNotIn(u["record"], t["slices"]["record"].to_pylist())
                with self.assertRaises(warptrace.TraceError):
                    warptrace.tables(prefix, allow_truncated=False)
        self.assertGreater(broken, 3, "too few corruptions left a unit with a verdict to check")

    def test_a_dataset_mixing_schema_versions_is_a_clear_error(self):
        dataset = os.path.join(DIR, "dataset_mixed")
        warptrace.to_parquet(p("clean"), dataset, tags={"config": "a"}, launch_id="a")
        warptrace.to_parquet(p("pipeline"), dataset, tags={"config": "b"}, launch_id="b")
        path = os.path.join(dataset, "launches", "config=b", "b.parquet")
        t = pq.read_table(path, partitioning=None)
        t = t.set_column(0, "schema_version", pa.array([0], pa.int64()))
        pq.write_table(t, path)
        with self.assertRaisesRegex(warptrace.SchemaVersionError,
                                    r"mixes warptrace table schema versions \(version 0: 1 "
                                    r"launches \(e.g. 'b'\); version 1"):
            warptrace.query("SELECT count(*) FROM slices", dataset)

    def test_a_missing_extra_names_the_pip_install(self):
        for module, call in (("pyarrow", "warptrace.tables(%r)" % p("clean")),
                             ("duckdb", "warptrace.query('SELECT 1', %r)" % DIR)):
            with self.subTest(missing=module):
                code = (f"import sys; sys.modules[{module!r}] = None\n"
                        "import warptrace\n"
                        f"try:\n    {call}\nexcept warptrace.MissingExtraError as e:\n"
                        "    print(e)\nelse:\n    print('no error')\n")
                out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                     text=True, check=True).stdout
                self.assertIn("pip install warptrace[tables]", out)
                self.assertIn(module, out)

    def test_a_tag_that_names_a_column_or_is_no_identifier_is_refused(self):
        with self.assertRaisesRegex(ValueError, "'block' is also a column"):
            warptrace.to_parquet(p("clean"), os.path.join(DIR, "d_tag"), tags={"block": 1})
        with self.assertRaisesRegex(ValueError, "not an identifier"):
            warptrace.tables(p("clean"), tags={"a b": 1})

    def test_an_unknown_table_is_a_key_error_naming_the_tables(self):
        with self.assertRaisesRegex(KeyError, "the tables are launches, units, slices"):
            warptrace.tables(p("clean"), names=["nope"])

    def test_a_missing_trace_is_file_not_found(self):
        with self.assertRaises(FileNotFoundError):
            warptrace.tables(p("no_such_trace"))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=2)
