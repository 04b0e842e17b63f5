"""H2 with the modal reduction to 2 modes (the first bending pair) against H2 with
the nodal coordinates (docs/explanation/benchmark-models.md; Huang figure 3.25): the
largest difference of the joint angles over the run, the tip deflection, wall time
and steps of each, and the energy criterion.

    .venv/bin/python benchmarks/bench_modal_h2.py
    .venv/bin/python benchmarks/bench_modal_h2.py --elements 1 --t-end 5 --json
    benchmarks/results/modal_h2.json
"""

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from flexmbs.model.library import huang_two_link
from flexmbs.simulation import simulate


def run(elements, modes, correction_modes, t_end, rtol, atol):
    """One H2 run; its sensors, energy criterion, wall time and steps."""
    model = huang_two_link(elements, t_end=t_end, modes=modes,
                           correction_modes=correction_modes,
                           geometric="none")  # the thesis's figure 3.25: linear beams
    start = time.perf_counter()
    sim = simulate(model, None, rtol=rtol, atol=atol)
    wall = time.perf_counter() - start
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    names = list(model.sensors)
    offsets = np.cumsum([0, 1, 1, 3, 3])
    columns = {n: sim.sensors[:, offsets[k]:offsets[k + 1]] for k, n in enumerate(names)}
    return {"t": sim.t, "theta1": columns["theta1"][:, 0], "theta2": columns["theta2"][:, 0],
            "deflection": columns["tip_deflection"], "wall": wall,
            "nsteps": int(sim.statistics["nsteps"]), "status": sim.status,
            "max_strain": float(e[:, 2].max()),
            "ratio": float(np.abs(total - total[0]).max() / e[:, 2].max())}


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--elements", type=int, default=1)
    p.add_argument("--modes", type=int, default=2)
    p.add_argument("--t-end", type=float, default=5.0)
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--atol", type=float, default=1e-10)
    p.add_argument("--json", help="write the results here")
    a = p.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, python "
          f"{platform.python_version()}; H2 with {a.elements} element(s), rtol {a.rtol}, "
          f"atol {a.atol}, t_end {a.t_end} s")
    run(a.elements, "all", False, 0.01, a.rtol, a.atol)  # warm the kernels
    variants = [("nodal", "all", False), (f"{a.modes} modes", a.modes, False),
                (f"{a.modes} modes + corrections", a.modes, True)]
    runs = {label: run(a.elements, modes, corr, a.t_end, a.rtol, a.atol)
            for label, modes, corr in variants}
    ref = runs["nodal"]
    rows = []
    for label, r in runs.items():
        d1 = float(np.abs(r["theta1"] - ref["theta1"]).max())
        d2 = float(np.abs(r["theta2"] - ref["theta2"]).max())
        dd = float(np.abs(r["deflection"] - ref["deflection"]).max())
        row = {"variant": label, "status": r["status"], "wall": r["wall"],
               "nsteps": r["nsteps"], "max_strain": r["max_strain"], "ratio": r["ratio"],
               "max_dtheta1": d1, "max_dtheta2": d2, "max_ddeflection": dd,
               "max_deflection": float(np.abs(r["deflection"]).max())}
        rows.append(row)
        print(f"{label:26s} {r['status']}: wall {r['wall']:6.2f} s, {r['nsteps']:7d} steps, "
              f"max U {r['max_strain']:.4f} J, max|dE|/max U {r['ratio']:.1e}; vs nodal: "
              f"max |d theta1| {d1:.2e} rad, max |d theta2| {d2:.2e} rad, max |d tip "
              f"deflection| {dd:.2e} m (of {row['max_deflection']:.3f} m)", flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps({"machine": platform.platform(),
                                            "elements": a.elements, "t_end": a.t_end,
                                            "rtol": a.rtol, "atol": a.atol, "rows": rows},
                                           indent=1))


if __name__ == "__main__":
    main()
