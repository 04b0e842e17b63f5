r"""The geared rig fitted over its two records, as docs/guides/test-rig.md walks
through it: `flexmbs fit --records data/experiments/servo.fit.toml` (the bearings'
Coulomb and viscous friction, the motor's torque constant and the gear's play
shared, the stiff trial's starting angle its own, all from 20 % off; the records
SYNTHETIC, data/experiments/make_servo_records.py, whose true values are TRUE).

    .venv/bin/python benchmarks/bench_rig_fit.py --json benchmarks/results/rig_fit.json
    .venv/bin/python benchmarks/bench_rig_fit.py --table benchmarks/results/rig_fit.json

One fit, the command line's own (in a process of its own, its runs on a local dask
cluster of a worker per core as the command starts it; --serial: one after another):
its wall time, its runs, the tolerance the convergence check chose, each value's
error against the truth and its standard deviation, s^2, and the machine's load
before and after (a fit on a shared machine takes longer).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from peers import begin, finish, log

ROOT = Path(__file__).resolve().parents[1]
FIT_FILE = ROOT / "data" / "experiments" / "servo.fit.toml"
TRUE = {
    "frictions.bearings.coulomb": 0.012,
    "frictions.bearings.viscous": 0.002,
    "actuators.motor.torque_constant": 0.25,
    "backlashes.gear.gap": 0.004,
    "stiff:joints.shaft.initial": 0.1,
    "soft:offset": 0.05,
    "stiff:offset": 0.05,
}


def table(results):
    fit = results["fit"]
    rows = [
        f"{fit['runs']} runs, {results['wall_s']:.0f} s wall (load {results['load_before']:.1f} "
        f"before, {results['load_after']:.1f} after), rtol {fit['rtol']:g}; s^2 "
        f"{fit['variance_ratio']:.3g}; {fit['stop']}",
        "",
        "| value | true | start | fitted | error | std | error / std |",
        "|---|---|---|---|---|---|---|",
    ]
    for v in results["values"]:
        rows.append(
            f"| {v['name']} | {v['true']:g} | {v['start']:.6g} | {v['value']:.6g} | "
            f"{100 * v['error']:+.2f} % | {v['std']:.3g} | {v['error_in_std']:+.2f} |"
        )
    return "\n".join(rows)


def main():
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--serial", action="store_true", help="the fit's runs one after another")
    started = begin(p, table)
    if started is None:
        return
    args, info, start = started
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "flexmbs", "fit", "--records", str(FIT_FILE),
               "--no-plots", "-o", out, "--serial" if args.serial else "--workers",
               *([] if args.serial else [str(os.cpu_count() or 1)])]
        log(" ".join(cmd))
        load_before = os.getloadavg()[0]
        t0 = time.perf_counter()
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        sys.stderr.write(done.stderr[-3000:])
        fit = json.loads((Path(out) / "fit.json").read_text())["fit"]
    values = []
    for v in fit["values"]:
        name = f"{v['record']}:{v['path']}" if v["record"] else v["path"]
        true = TRUE[name]
        std = v["std"] if v["std"] is not None else float("nan")
        values.append({"name": name, "true": true, "start": v["start"], "value": v["value"],
                       "error": v["value"] / true - 1.0, "std": std,
                       "error_in_std": (v["value"] - true) / std if std else float("nan")})
    results = {"machine": info, "returncode": done.returncode, "wall_s": wall,
               "load_before": load_before, "load_after": os.getloadavg()[0],
               "fit": {k: fit[k] for k in ("runs", "rtol", "atol", "tolerance", "variance_ratio",
                                           "stop", "message", "wall_time")},
               "values": values}
    finish(args, results, start, table)


if __name__ == "__main__":
    main()
