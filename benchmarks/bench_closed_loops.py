"""The closed-loop models over their full spans (docs/explanation/benchmark-models.md FB, BR,
SC): the largest position and velocity residuals of the cut joint, the energy balance
against the largest energy term, steps and wall time. The tests run the same models over
short spans (tests/test_closed_loops.py).

    .venv/bin/python benchmarks/bench_closed_loops.py --json benchmarks/results/closed_loops.json
    .venv/bin/python benchmarks/bench_closed_loops.py --models slider_crank --sc-alpha 1e-5

* four_bar: 10 s at rtol 1e-10.
* bricard: 10 s at rtol 1e-10 (IFToMM's Bricard benchmark: the linkage folds, and
  the independent constraint rows are chosen again as it moves).
* slider_crank: SC, 2 s at rtol 1e-7, atol 1e-9, the rod's structural damping alpha
  given by --sc-alpha (undamped, the rod's axial modes ring at about 1e4 rad/s and
  the run follows them). It needs bdf's lowest index-2 order, 3 (bdf_kernels
  INDEX2_MIN_ORDER; see docs/guides/closed-loops.md).
"""

import argparse
import json
import platform
import time

import numpy as np

from flexmbs.model.library import bricard, four_bar, slider_crank
from flexmbs.simulation import simulate

CASES = {
    "four_bar": (four_bar, "coupler_rocker", 10.0, 1e-10),
    "bricard": (bricard, "hinge6", 10.0, 1e-10),
    "slider_crank": (slider_crank, "rod_slider", 2.0, 1e-7),
}


def run_case(name, sc_alpha):
    build, joint, t_end, rtol = CASES[name]
    model = build()
    if name == "slider_crank":
        model.bodies["rod"].alpha = sc_alpha
    model.add_sensor("residual", "constraint_residual", joint=joint)
    start = time.perf_counter()
    sim = simulate(model, None, t_end=t_end, rtol=rtol, atol=rtol * 1e-2)
    wall = time.perf_counter() - start
    nrow = 6 - model.joints[joint].ndof
    res = sim.sensors[:, -2 * nrow:]
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    return {"model": name, "t_end": t_end, "rtol": rtol, "status": sim.status,
            "position_residual": float(np.abs(res[:, :nrow]).max()),
            "velocity_residual": float(np.abs(res[:, nrow:]).max()),
            "energy_error_over_largest": float(np.abs(total - total[0]).max()
                                               / np.abs(e[:, :5]).max()),
            "steps": int(sim.statistics["nsteps"]),
            "restarts": int(sim.statistics.get("restarts", 0)), "wall": wall,
            **({"alpha": sc_alpha} if name == "slider_crank" else {})}


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", default=list(CASES), choices=list(CASES))
    p.add_argument("--sc-alpha", type=float, default=1e-5)
    p.add_argument("--json")
    a = p.parse_args()
    simulate(four_bar(), None, t_end=0.01)  # compile the kernels first
    rows = []
    for name in a.models:
        row = run_case(name, a.sc_alpha)
        rows.append(row)
        print(f"{name:13s} {row['t_end']:4.0f} s rtol {row['rtol']:.0e}: {row['status']}, "
              f"residuals {row['position_residual']:.1e} / {row['velocity_residual']:.1e}, "
              f"energy {row['energy_error_over_largest']:.1e} of the largest term, "
              f"{row['steps']} steps, {row['restarts']} restarts, {row['wall']:.1f} s",
              flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": f"{platform.machine()}, {platform.python_version()}",
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
