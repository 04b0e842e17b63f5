r"""A fit's Jacobian side by side: the rig of docs/guides/test-rig.md fitted in four
values (the bearings' Coulomb and viscous levels, their breakaway level and the
motor's torque constant), its Jacobian's runs one after another in this process
and on a dask LocalCluster of two workers.

    .venv/bin/python benchmarks/bench_fit_jacobian.py --json benchmarks/results/fit_jacobian.json
    .venv/bin/python benchmarks/bench_fit_jacobian.py --table benchmarks/results/fit_jacobian.json

Each arrangement makes the fit's first step and stops on its budget (the run at the
start, at the record's known offset, then one Jacobian: a run per value and one of
the trend, the encoder quantizing: five runs); the Jacobian's five runs are timed
where they are made (flexmbs.analysis.fit_runs._run_all, as the search calls it),
`--repeat` times each, the two arrangements taking turns (so that both meet the
machine's other load alike), the median kept. The workers
are started and warmed (each loads the kernels once) before the timing; the cluster's
start is given apart. The Jacobians must agree: the fitted values after the step
are compared bit for bit. The record: the first --t-end s (default 0.5) of
data/experiments/servo_synthetic.csv, at rtol 1e-8.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from peers import begin, finish, log

from flexmbs.analysis import fit_search
from flexmbs.analysis.distributed import dask_executor
from flexmbs.analysis.fit import fit_model, parse_parameter
from flexmbs.analysis.fit_file import record_of

ROOT = Path(__file__).resolve().parents[1]
RIG = ROOT / "data" / "models" / "flexible_link_rig.toml"
RECORD = ROOT / "data" / "experiments" / "servo_synthetic.csv"
MAP = ROOT / "data" / "experiments" / "servo_synthetic.map.toml"
PARAMS = ["frictions.bearings.coulomb=0:0.016", "frictions.bearings.viscous",
          "frictions.bearings.static", "actuators.motor.torque_constant"]
OFFSET = 0.05  # s: the record's rest before the run (no alignment run)
START = ["frictions.bearings.coulomb=0.0096", "frictions.bearings.viscous=0.0024",
         "frictions.bearings.static=0.0192", "actuators.motor.torque_constant=0.3"]


def first_step(t_end, executor):
    """One step of the fit: (seconds of the Jacobian's runs, their count, the values)."""
    timed = []
    real = fit_search._run_all

    def run_all(wanted, *args, **kwargs):
        start = time.perf_counter()
        real(wanted, *args, **kwargs)
        timed.append((len(wanted), time.perf_counter() - start))

    fit_search._run_all = run_all
    try:
        rec = record_of("", str(RIG), str(RECORD), str(MAP))
        fit = fit_model(RIG, rec.experiment, rec.channel_map,
                        [parse_parameter(p) for p in PARAMS], overrides=START, t_end=t_end,
                        max_runs=6, verify_limit=None, executor=executor, offset=OFFSET,
                        rtol=1e-8)
    finally:
        fit_search._run_all = real
    assert fit.runs <= 6, fit.runs
    runs, seconds = max(timed)  # the Jacobian's call: the most runs
    return seconds, runs, [v.value for v in fit.values]


def table(results):
    rows = ["| arrangement | runs of the Jacobian | Jacobian s (median) | each try s | "
            "speed-up |", "|---|---|---|---|---|"]
    serial = results["runs"][0]["median"]
    for r in results["runs"]:
        rows.append(f"| {r['arrangement']} | {r['jacobian_runs']} | {r['median']:.1f} | "
                    + ", ".join(f"{s:.1f}" for s in r["tries"])
                    + f" | {serial / r['median']:.2f}x |")
    same = "yes" if results["same_values"] else "no"
    return ("\n".join(rows) + f"\n\nThe cluster's start (two workers, warmed): "
            f"{results['cluster_start']:.1f} s. The values after the step identical: {same}. "
            f"Load average at the start: {results['load_average']:.2f}.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=0.5)
    parser.add_argument("--repeat", type=int, default=3)
    started = begin(parser, table)
    if started is None:
        return 0
    args, info, start = started
    load = os.getloadavg()[0]
    log("the kernels into the cache (one step here)")
    first_step(0.05, None)
    serial, side = [], []
    t0 = time.perf_counter()
    with dask_executor(workers=2) as executor:
        first_step(0.05, executor)  # each worker loads the kernels
        cluster = time.perf_counter() - t0
        for k in range(args.repeat):  # interleaved, so that both see the same load
            seconds, n, here = first_step(args.t_end, None)
            serial.append(seconds)
            log(f"  one after another {k + 1}: {seconds:.2f} s for {n} runs")
            seconds, n, there = first_step(args.t_end, executor)
            side.append(seconds)
            log(f"  two workers {k + 1}: {seconds:.2f} s for {n} runs")
    values = [here, there]
    runs = [
        {"arrangement": "one after another, in this process", "jacobian_runs": n,
         "tries": serial, "median": statistics.median(serial)},
        {"arrangement": "dask LocalCluster, 2 workers", "jacobian_runs": n,
         "tries": side, "median": statistics.median(side)},
    ]
    results = {"machine": info, "t_end": args.t_end, "runs": runs, "cluster_start": cluster,
               "same_values": values[0] == values[1], "load_average": load}
    finish(args, results, start, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
