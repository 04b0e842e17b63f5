"""Huang's two-link manipulator H2 (docs/explanation/benchmark-models.md), 5 s: wall time,
steps and the energy criterion max |E - E0| / max U for 1 and 5 elements, alpha = 0,
undeformed and static initial state; and `flexmbs run` of the model file cold (fresh
kernel cache) and warm.

    .venv/bin/python benchmarks/bench_h2.py                       # the default beam (consistent)
    .venv/bin/python benchmarks/bench_h2.py --geometric none       # the linear beam
    .venv/bin/python benchmarks/bench_h2.py --elements 1 --repeat 1 --json
    benchmarks/results/h2.json
    .venv/bin/python benchmarks/bench_h2.py --table benchmarks/results/h2_linear.json
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from peers import add_results_options, printed_table

from flexmbs.model.library import huang_two_link
from flexmbs.simulation import simulate

ROOT = Path(__file__).resolve().parents[1]


def run_once(elements, initial, t_end, rtol, atol, geometric="consistent"):
    model = huang_two_link(elements, initial=initial, t_end=t_end, geometric=geometric)
    start = time.perf_counter()
    sim = simulate(model, None, rtol=rtol, atol=atol)
    wall = time.perf_counter() - start
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    drift = float(np.abs(total - total[0]).max())
    return {"wall": wall, "status": sim.status, "nsteps": int(sim.statistics["nsteps"]),
            "drift": drift, "max_strain": float(e[:, 2].max()),
            "ratio": drift / float(e[:, 2].max())}


def bench_start():
    """`flexmbs run data/models/huang_two_link.toml` with a fresh and a warm cache."""
    out = {}
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, FLEXMBS_CACHE_DIR=cache)
        cmd = [sys.executable, "-m", "flexmbs", "run",
               str(ROOT / "data" / "models" / "huang_two_link.toml"), "-q",
               "-o", str(Path(tmp) / "h2.h5")]
        for label in ("cold", "warm"):
            start = time.perf_counter()
            subprocess.run(cmd, env=env, check=True)
            out[label] = time.perf_counter() - start
    print(f"flexmbs run huang_two_link.toml (5 s): cold {out['cold']:.1f} s, "
          f"warm {out['warm']:.2f} s")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--elements", type=int, nargs="+", default=[1, 5])
    p.add_argument("--initial", nargs="+", default=["undeformed", "static"])
    p.add_argument("--t-end", type=float, default=5.0)
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--atol", type=float, default=1e-10)
    p.add_argument("--geometric", default="consistent",
                   help="the beam's geometric stiffness (none, consistent, ...)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--no-start", action="store_true")
    add_results_options(p)
    a = p.parse_args()
    if printed_table(a, table):
        return
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, python "
          f"{platform.python_version()}; rtol {a.rtol}, atol {a.atol}, t_end {a.t_end} s, "
          f"geometric {a.geometric}")
    run_once(1, "undeformed", 0.01, a.rtol, a.atol)  # warm the kernels
    rows = []
    for elements in a.elements:
        for initial in a.initial:
            runs = [run_once(elements, initial, a.t_end, a.rtol, a.atol, a.geometric)
                    for _ in range(a.repeat)]
            row = dict(runs[0], elements=elements, initial=initial, geometric=a.geometric,
                       wall=statistics.median(r["wall"] for r in runs))
            rows.append(row)
            print(f"H2 {elements} element(s), {initial:10s}: {row['status']}, wall "
                  f"{row['wall']:7.2f} s, {row['nsteps']:8d} steps, max U "
                  f"{row['max_strain']:.4f} J, max |dE| / max U {row['ratio']:.2e}",
                  flush=True)
    start = {} if a.no_start else bench_start()
    if a.json:
        Path(a.json).write_text(json.dumps({"machine": platform.platform(),
                                            "command": " ".join(sys.argv[1:]),
                                            "settings": {"t_end": a.t_end, "rtol": a.rtol,
                                                         "atol": a.atol,
                                                         "repeat": a.repeat},
                                            "rows": rows, "start": start}, indent=1))


def table(results):
    """The documentation's table of a results file: a row per beam and start."""
    lines = ["| beam | initial state | wall time | steps | max strain energy "
             "| max \\|dE\\| / max U |",
             "|---|---|---|---|---|---|"]
    for r in results["rows"]:
        beam = f"{r['elements']} element" + ("s" if r["elements"] > 1 else "")
        lines.append(f"| {beam} | {r['initial']} | {r['wall']:.1f} s | "
                     f"{r['nsteps']:,} | {r['max_strain']:.4f} J | {r['ratio']:.1e} |"
                     .replace(",", " "))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
