"""The rolling disk over its full spans (docs/explanation/benchmark-models.md RD; Shui and
Zhang 1995, section 5), with both formulations of the constraints (the stabilised index-2
"ggl" and Shui and Zhang's "projection"): the departure from the steady motion (lean,
heading and spin rates), the energy balance, the contact's residuals (the rim's height above
the plane and the slip velocity, all three components, from the NumPy reference of the
tests), steps and wall time. The tests run the same models over 1 s
(tests/test_rolling_disk.py).

    .venv/bin/python benchmarks/bench_rolling_disk.py \
        --json benchmarks/results/rolling_disk.json
    .venv/bin/python benchmarks/bench_rolling_disk.py --variants circular --atol 1e-10
    .venv/bin/python benchmarks/bench_rolling_disk.py \
        --table benchmarks/results/rolling_disk.json

* straight: RD-steady (a), upright at 1 m/s, 10 s.
* circular: RD-steady (b), lean 0.2 rad, 1 m/s, the steady rates, 10 s.
* accel: RD-accel, the plane accelerating at 0.5 m/s^2, lean 0.1 rad, spin 15 rad/s,
  5 s; the two formulations compared (largest difference of q and u).

--table prints the table of docs/guides/rolling-contacts.md from a results file.
"""

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
from peers import add_results_options, grouped, printed_table, sci

from flexmbs.model.compiled import compile_model
from flexmbs.model.library import (
    RD_LEAN,
    RD_SPEED,
    RD_VARIANTS,
    rolling_disk,
    rolling_disk_steady_rates,
)
from flexmbs.simulation import simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_rolling_disk import reference_rows  # noqa: E402  (the slow NumPy twin)

FORMULATIONS = ("ggl", "projection")
NQ = 6


def run_case(variant, constraints, rtol, atol):
    model = rolling_disk(variant)
    start = time.perf_counter()
    sim = simulate(model, None, rtol=rtol, atol=atol, constraints=constraints)
    wall = time.perf_counter() - start
    cm = compile_model(model)
    gap, slip = 0.0, 0.0
    for t, y in zip(sim.t, sim.y):
        phi, _, v_rel = reference_rows(cm, y[:NQ], y[NQ:2 * NQ], t)
        gap = max(gap, abs(phi))
        slip = max(slip, float(np.abs(v_rel).max()))
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    u = sim.y[:, NQ:2 * NQ]
    row = {"variant": variant, "constraints": constraints, "t_end": float(sim.t[-1]),
           "rtol": rtol, "atol": atol, "status": sim.status, "contact_gap": gap,
           "slip_velocity": slip,
           "energy_error_over_largest": float(np.abs(total - total[0]).max()
                                              / np.abs(e[:, :5]).max()),
           "steps": int(sim.statistics["nsteps"]),
           "restarts": int(sim.statistics.get("restarts", 0)), "wall": wall}
    if variant != "accel":
        lean, heading, spin = (0.0, 0.0, RD_SPEED / 0.1) if variant == "straight" else \
            (RD_LEAN, *rolling_disk_steady_rates(RD_LEAN, RD_SPEED))
        row["lean_error"] = float(np.abs(sim.y[:, 4] - lean).max())
        row["heading_rate_error"] = float(np.abs(u[:, 3] - heading).max())
        row["spin_rate_error"] = float(np.abs(u[:, 5] - spin).max())
    return row, sim


RUN_NAMES = {"straight": "RD-steady (a)", "circular": "RD-steady (b)", "accel": "RD-accel"}


def _size(x, unit=""):
    """A residual or error: 0 when exact, else two significant digits."""
    if x == 0:
        return "0"
    return sci(x) + (f" {unit}" if unit else "")


def table(results):
    """The documentation's table: per run and formulation, steps, wall time, the
    contact's residuals, the energy balance and the departure from the steady motion."""
    lines = ["| run | formulation | steps | wall | gap | slip | energy | "
             "lean, heading rate, spin rate |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results["rows"]:
        steps = grouped(r["steps"])
        if r["restarts"]:
            steps += f" ({r['restarts']} restarts)"
        steady = ""
        if "lean_error" in r:
            errors = (r["lean_error"], r["heading_rate_error"], r["spin_rate_error"])
            steady = ("0" if not any(errors) else
                      f"{_size(errors[0], 'rad')}, {_size(errors[1])}, "
                      f"{_size(errors[2], 'rad/s')}")
        lines.append(f"| {RUN_NAMES[r['variant']]}, {r['t_end']:g} s | {r['constraints']} | "
                     f"{steps} | {r['wall']:.2f} s | {_size(r['contact_gap'], 'm')} | "
                     f"{_size(r['slip_velocity'], 'm/s')} | "
                     f"{_size(r['energy_error_over_largest'])} |"
                     + (f" {steady} |" if steady else " |"))
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--variants", nargs="+", default=list(RD_VARIANTS),
                   choices=list(RD_VARIANTS))
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--atol", type=float, default=1e-9)
    add_results_options(p)
    a = p.parse_args()
    if printed_table(a, table):
        return
    for constraints in FORMULATIONS:  # compile the kernels first
        simulate(rolling_disk("accel"), None, t_end=0.01, constraints=constraints)
    rows = []
    for variant in a.variants:
        sims = {}
        for constraints in FORMULATIONS:
            row, sims[constraints] = run_case(variant, constraints, a.rtol, a.atol)
            rows.append(row)
            steady = (f", lean {row['lean_error']:.1e} rad, heading rate "
                      f"{row['heading_rate_error']:.1e}, spin rate "
                      f"{row['spin_rate_error']:.1e} rad/s" if "lean_error" in row else "")
            print(f"{variant:9s} {constraints:10s} {row['t_end']:4.0f} s rtol "
                  f"{row['rtol']:.0e} atol {row['atol']:.0e}: {row['status']}, gap "
                  f"{row['contact_gap']:.1e} m, "
                  f"slip {row['slip_velocity']:.1e} m/s, energy "
                  f"{row['energy_error_over_largest']:.1e}{steady}, {row['steps']} steps, "
                  f"{row['restarts']} restarts, {row['wall']:.2f} s", flush=True)
        ggl, proj = sims["ggl"], sims["projection"]
        if len(ggl.t) == len(proj.t):
            diff = float(np.abs(ggl.y[:, :2 * NQ] - proj.y[:, :2 * NQ]).max())
            rows[-1]["difference_to_ggl"] = diff
            print(f"{variant:9s} ggl - projection: largest difference of q and u "
                  f"{diff:.1e}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": f"{platform.machine()}, {platform.python_version()}",
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
