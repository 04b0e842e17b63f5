r"""`flexmbs sweep` on dask: 16 cases of H2 on one worker and on two (a LocalCluster on
this machine), and the same 16 run one after another in this process.

    .venv/bin/python benchmarks/bench_sweep.py --json benchmarks/results/sweep.json
    .venv/bin/python benchmarks/bench_sweep.py --table benchmarks/results/sweep.json

The cases: data/models/huang_two_link.toml over --t-end s (default 2), its tip mass at
0.25, 0.5, 0.75 and 1 kg times joint 1's initial angle at 1.0, 1.2, 1.4 and 1.6 rad.
Each arrangement is timed from the start of run_sweep to its summary (a cluster's start
and its workers' warm-up included, separately measured: the cluster's start, and the
one warm-up run that loads the kernels from the cache), kernels already in the cache
from a first serial run. The cases' summaries must agree across the arrangements (the
JSON says whether they do, bit for bit).
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

from peers import begin, finish, log

from flexmbs.analysis.distributed import dask_executor
from flexmbs.analysis.sweep import parse_sweep_parameter, run_sweep

ROOT = Path(__file__).resolve().parents[1]
H2 = ROOT / "data" / "models" / "huang_two_link.toml"
PARAMS = ["bodies.link2.node_masses.-1=0.25,0.5,0.75,1.0",
          "joints.joint1.initial=1.0,1.2,1.4,1.6"]
SUMMARY = ["theta1", "theta2:maxabs", "tip_deflection[1]:maxabs"]


def sweep(folder, t_end, executor):
    params = [parse_sweep_parameter(p) for p in PARAMS]
    start = time.perf_counter()
    rows = run_sweep(H2, params, folder, [f"solver.t_end={t_end}"], SUMMARY, executor)
    return rows, time.perf_counter() - start


def table(results):
    rows = ["| arrangement | cases | wall s | of which cluster start s | integration s "
            "(sum over cases) | speed-up against serial |", "|---|---|---|---|---|---|"]
    serial = results["runs"][0]["wall"]
    for r in results["runs"]:
        rows.append(f"| {r['arrangement']} | {r['cases']} | {r['wall']:.1f} | "
                    f"{r.get('cluster_start', 0.0):.1f} | {r['integration']:.1f} | "
                    f"{serial / r['wall']:.2f}x |")
    same = "yes" if results["same_summaries"] else "no"
    return "\n".join(rows) + f"\n\nThe cases' summaries identical across arrangements: {same}."


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=2.0)
    started = begin(parser, table)
    if started is None:
        return 0
    args, info, start = started
    runs, summaries = [], []
    with tempfile.TemporaryDirectory() as tmp:
        log("serial (and the kernels into the cache)")
        sweep(Path(tmp) / "warm", 0.01, None)
        rows, wall = sweep(Path(tmp) / "serial", args.t_end, None)
        runs.append({"arrangement": "serial, in this process", "cases": len(rows),
                     "wall": wall, "integration": sum(r["integration_s"] for r in rows)})
        summaries.append([[r[k] for k in SUMMARY] for r in rows])
        for workers in (1, 2):
            log(f"{workers} worker(s)")
            t0 = time.perf_counter()
            with dask_executor(workers=workers) as executor:
                cluster = time.perf_counter() - t0
                rows, wall = sweep(Path(tmp) / f"w{workers}", args.t_end, executor)
            runs.append({"arrangement": f"dask LocalCluster, {workers} worker(s)",
                         "cases": len(rows), "wall": wall + cluster, "cluster_start": cluster,
                         "integration": sum(r["integration_s"] for r in rows)})
            summaries.append([[r[k] for k in SUMMARY] for r in rows])
            log(f"  {wall + cluster:.1f} s")
    results = {"machine": info, "t_end": args.t_end, "runs": runs,
               "same_summaries": all(s == summaries[0] for s in summaries)}
    finish(args, results, start, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
