"""An autotuning sweep as data: runs //examples:hopper_gemm on the host backend with the
deterministic clock over a grid of configurations (BN, stages, ping-pong, persistent) x
repeated launches, writes every trace into one Hive-partitioned Parquet dataset with the
configuration as tags (warptrace.to_parquet), and answers with one DuckDB query: which
configuration is producer-bound, and the p95 of `mma` per configuration.

    bazel run //examples:hopper_gemm_sweep -- --out=/tmp/sweep [--repeats=2]
        [--bn=64,128] [--stages=2,4] [--pingpong=0,1] [--persistent=0,1]
        [--consumer_delay=0[,CYCLES...]]

With the deterministic clock only the record points and planted delays take time, so the
default grid (no delay) shows the pipeline's structure; --consumer_delay adds a dimension of
busy work per mma (cycles, a tag like the others) that makes consumers the bottleneck.

Bound: a configuration is producer-bound when its consumer roles wait (on full[*]: data
the producer has not delivered) a larger share of their time than the producer waits (on
empty[*]), consumer-bound otherwise; the diagnosis' own "bound" line is shown beside it
(ping-pong kernels have two consumer roles and no single bound line).
"""
import argparse
import itertools
import os
import shutil
import subprocess
import sys

import warptrace

QUERY = """
WITH role_share AS (
  SELECT launch_id,
         avg(waiting_share) FILTER (WHERE role LIKE 'consumer%') AS consumer_wait,
         avg(waiting_share) FILTER (WHERE role = 'producer') AS producer_wait
  FROM roles GROUP BY launch_id),
line AS (
  SELECT launch_id, bound_role FROM diagnosis WHERE kind = 'bound'),
mma AS (
  SELECT bn, stages, pingpong, persistent, consumer_delay,
         count(*) AS mma_slices,
         quantile_cont(duration_ns, 0.5) AS mma_p50_ns,
         quantile_cont(duration_ns, 0.95) AS mma_p95_ns
  FROM slices WHERE name = 'mma' GROUP BY ALL)
SELECT l.bn, l.stages, l.pingpong, l.persistent, l.consumer_delay, count(*) AS launches,
       CASE WHEN avg(r.consumer_wait) > avg(r.producer_wait) THEN 'producer-bound'
            ELSE 'consumer-bound' END AS bound,
       round(avg(r.consumer_wait), 3) AS consumer_wait_share,
       round(avg(r.producer_wait), 3) AS producer_wait_share,
       coalesce(min(d.bound_role) || '-bound', '-') AS diagnosis_line,
       any_value(m.mma_slices) AS mma_slices, any_value(m.mma_p50_ns) AS mma_p50_ns,
       any_value(m.mma_p95_ns) AS mma_p95_ns
FROM launches l
JOIN role_share r USING (launch_id)
LEFT JOIN line d USING (launch_id)
LEFT JOIN mma m ON m.bn = l.bn AND m.stages = l.stages AND m.pingpong = l.pingpong
                AND m.persistent = l.persistent AND m.consumer_delay = l.consumer_delay
GROUP BY l.bn, l.stages, l.pingpong, l.persistent, l.consumer_delay
ORDER BY l.bn, l.stages, l.pingpong, l.persistent, l.consumer_delay
"""


def ints(text):
    return [int(x) for x in text.split(",") if x]


def run_one(binary, out, bn, stages, pingpong, persistent, consumer_delay):
    args = [binary, "--device=host", "--m=128", "--n=256", "--k=256", f"--bn={bn}",
            f"--stages={stages}", f"--consumer_delay={consumer_delay}", f"--out={out}"]
    if pingpong:
        args.append("--pingpong")
    if persistent:
        args += ["--persistent", "--blocks=2"]
    env = dict(os.environ, WARPTRACE_HOST_CLOCK="deterministic")
    ran = subprocess.run(args, env=env, capture_output=True, text=True)
    if ran.returncode != 0:
        sys.exit(f"hopper_gemm_sweep: {' '.join(args)} failed ({ran.returncode}):\n"
                 f"{ran.stdout[-2000:]}{ran.stderr[-2000:]}")
    return os.path.join(out, "hopper_gemm")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hopper_gemm", required=True, help="the hopper_gemm example binary")
    parser.add_argument("--out", default="warptrace_sweep", help="output directory")
    parser.add_argument("--repeats", type=int, default=2, help="launches per configuration")
    parser.add_argument("--bn", default="64,128")
    parser.add_argument("--stages", default="2,4")
    parser.add_argument("--pingpong", default="0,1")
    parser.add_argument("--persistent", default="0,1")
    parser.add_argument("--consumer_delay", default="0")
    a = parser.parse_args(argv)
    out = os.path.abspath(os.path.join(os.environ.get("BUILD_WORKING_DIRECTORY", ""), a.out))
    traces, dataset = os.path.join(out, "traces"), os.path.join(out, "dataset")
    shutil.rmtree(dataset, ignore_errors=True)
    grid = list(itertools.product(ints(a.bn), ints(a.stages), ints(a.pingpong),
                                  ints(a.persistent), ints(a.consumer_delay)))
    for bn, stages, pingpong, persistent, delay in grid:
        for repeat in range(a.repeats):
            name = f"bn{bn}_s{stages}_pp{pingpong}_pers{persistent}_cd{delay}_r{repeat}"
            prefix = run_one(a.hopper_gemm, os.path.join(traces, name), bn, stages, pingpong,
                             persistent, delay)
            warptrace.to_parquet(prefix, dataset, launch_id=name, tags={
                "bn": bn, "stages": stages, "pingpong": pingpong, "persistent": persistent,
                "consumer_delay": delay, "repeat": repeat})
    print(f"{len(grid)} configurations x {a.repeats} launches -> {dataset}")
    answer = warptrace.query(QUERY, dataset)
    print(answer.to_pandas().to_string(index=False))
    return answer


if __name__ == "__main__":
    main()
