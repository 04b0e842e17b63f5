"""Geometric stiffness studies (docs/explanation/formulation.md section 6; Huang chapter 6): the
spin-up beam, H2 with and without it, and the test rig with every variant.

    .venv/bin/python benchmarks/bench_geometric.py                    # everything
    .venv/bin/python benchmarks/bench_geometric.py --study spin --elements 4 8
    .venv/bin/python benchmarks/bench_geometric.py --json benchmarks/results/geometric.json
    .venv/bin/python benchmarks/bench_geometric.py --table benchmarks/results/geometric.json

* spin: SPIN (docs/explanation/benchmark-models.md) with `none` (the time the tip deflection
first exceeds 1 m)
  and with `consistent` for several meshes (min and max of the tip deflection over
  0-20 s, its values at 5, 10, 15 and 20 s, the energy balance with the driver's work).
* h2: H2 (5 s, alpha = 0) with `none` and `consistent`: the largest differences of
  the joint angles and of the tip deflection, and each run's energy ratio.
* rig: RIG at 30 and 45 deg with the four variants: the jointed-end strain histories
  (thesis figures 6.3-6.10) as a plot (--plot FILE.png), their largest values, and the
  energy-balance error of each (the thesis's variants are not conservative).

--table prints the SPIN and RIG tables of docs/explanation/performance.md from a results
file.
"""

import argparse
import json
import platform
import time

import numpy as np
from peers import add_results_options, grouped, printed_table, sci

from flexmbs.elements.geometric import GEOMETRIC_OPTIONS
from flexmbs.model.library import huang_rig, huang_two_link, spin_up
from flexmbs.simulation import simulate

SPIN_TIMES = (5.0, 10.0, 15.0, 20.0)


def _total(sim):
    e = sim.energy
    return e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]


def _run(model, **settings):
    start = time.perf_counter()
    sim = simulate(model, None, **settings)
    return sim, time.perf_counter() - start


def spin_study(meshes, rtol):
    """SPIN: divergence without geometric stiffness, convergence with it."""
    rows = []
    sim, wall = _run(spin_up(meshes[0], "none"), t_end=12.0, rtol=rtol, atol=rtol * 1e-2,
                     output_step=0.01)
    d = sim.sensors[:, 2]
    over = np.flatnonzero(np.abs(d) > 1.0)
    rows.append({"case": f"none, {meshes[0]} elements", "status": sim.status,
                 "t_exceeds_1m": float(sim.t[over[0]]) if len(over) else None,
                 "wall": wall})
    cases = [(f"consistent, {mesh} elements", spin_up(mesh, "consistent"))
             for mesh in meshes]
    cases.append((f"consistent, {meshes[-1]} elements, 2 modes + correction modes",
                  spin_up(meshes[-1], "consistent", modes=2, correction_modes=True,
                          modal_derivatives=False)))
    for case, model in cases:
        sim, wall = _run(model, rtol=rtol, atol=rtol * 1e-2, output_step=0.01)
        d = sim.sensors[:, 2]
        at = {f"{t:g}": float(np.interp(t, sim.t, d)) for t in SPIN_TIMES}
        e = _total(sim)
        rows.append({"case": case, "status": sim.status,
                     "min": float(d.min()), "max": float(d.max()), "at": at,
                     "energy_error": float(np.abs(e - e[0]).max()),
                     "kinetic_max": float(sim.energy[:, 0].max()),
                     "steps": sim.statistics["nsteps"], "wall": wall})
    return rows


def h2_study(elements, rtol):
    """H2 5 s with and without geometric stiffness."""
    out = {}
    for option in ("none", "consistent"):
        sim, wall = _run(huang_two_link(elements, geometric=option), t_end=5.0, rtol=rtol,
                         atol=rtol * 1e-2, output_step=0.01)
        e = _total(sim)
        out[option] = (sim, {"energy_ratio": float(np.abs(e - e[0]).max()
                                                   / sim.energy[:, 2].max()),
                             "strain_max": float(sim.energy[:, 2].max()),
                             "steps": sim.statistics["nsteps"], "wall": wall})
    a, b = out["none"][0], out["consistent"][0]
    tip_a, tip_b = a.sensors[:, 5:8], b.sensors[:, 5:8]  # tip_deflection, link-2 axes
    result = {"none": out["none"][1], "consistent": out["consistent"][1],
              "joint_angle_difference": float(np.abs(a.y[:, :2] - b.y[:, :2]).max())}
    # y: perpendicular to the beam in the plane of motion; z: along the joint-2 axis
    for k, axis in ((1, "y"), (2, "z")):
        result[f"tip_{axis}_max_none"] = float(np.abs(tip_a[:, k]).max())
        result[f"tip_{axis}_max_consistent"] = float(np.abs(tip_b[:, k]).max())
        result[f"tip_{axis}_difference"] = float(np.abs(tip_a[:, k] - tip_b[:, k]).max())
    return result


def rig_study(rtol, plot):
    """RIG at 30 and 45 deg, every geometric option: the jointed-end strain."""
    rows, series = [], {}
    for degrees in (30, 45):
        for option in GEOMETRIC_OPTIONS:
            sim, wall = _run(huang_rig(np.radians(degrees), geometric=option), rtol=rtol,
                             atol=rtol * 1e-2, output_step=0.005)
            e = _total(sim)
            strain = sim.sensors[:, 2]
            series[(degrees, option)] = (sim.t, strain)
            rows.append({"theta2_deg": degrees, "geometric": option, "status": sim.status,
                         "strain_max_abs": float(np.abs(strain).max()),
                         "energy_error_over_largest": float(
                             np.abs(e - e[0]).max() / np.abs(sim.energy[:, :4]).max()),
                         "wall": wall})
    if plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
        for ax, degrees in zip(axes, (30, 45)):
            for option in GEOMETRIC_OPTIONS:
                t, s = series[(degrees, option)]
                ax.plot(t, s * 1e4, lw=0.8, label=option)
            ax.set_ylabel("strain x 1e4")
            ax.set_title(f"RIG, theta2 = {degrees} deg: jointed-end strain of link 2")
            ax.legend(fontsize=8, ncol=4)
        axes[-1].set_xlabel("time (s)")
        fig.tight_layout()
        fig.savefig(plot, dpi=110)
    return rows


def _seconds(wall):
    """A wall time as the SPIN table gives it: whole seconds from 10 s on."""
    return f"{wall:.0f}" if wall >= 10 else f"{wall:.2g}"


def spin_table(rows):
    """SPIN with `consistent`: the tip deflection's extremes and values, steps, wall."""
    times = list(rows[-1]["at"])
    lines = ["| `consistent` | min (m) | max (m) | "
             + " | ".join(f"at {t} s" for t in times) + " | steps | wall (s) |",
             "|---|---|---|" + "---|" * len(times) + "---|---|"]
    for r in rows:
        if not r["case"].startswith("consistent, "):
            continue
        at = " | ".join(f"{r['at'][t]:.4f}" for t in times)
        lines.append(f"| {r['case'].removeprefix('consistent, ')} | {r['min']:.4f} | "
                     f"{r['max']:.4f} | {at} | {grouped(r['steps'])} | "
                     f"{_seconds(r['wall'])} |")
    return lines


def rig_table(rows):
    """RIG: the largest jointed-end strain and the energy error of every variant."""
    options = list(dict.fromkeys(r["geometric"] for r in rows))
    by = {(r["theta2_deg"], r["geometric"]): r for r in rows}
    lines = ["| theta2 | " + " | ".join(f"`{o}`" for o in options) + " |",
             "|---|" + "---|" * len(options)]
    for degrees in dict.fromkeys(r["theta2_deg"] for r in rows):
        cells = [f"{1e6 * by[degrees, o]['strain_max_abs']:.1f}" for o in options]
        lines.append(f"| {degrees} deg: largest strain (1e-6) | " + " | ".join(cells)
                     + " |")
        cells = [sci(by[degrees, o]["energy_error_over_largest"]) for o in options]
        lines.append(f"| {degrees} deg: energy error / largest term | "
                     + " | ".join(cells) + " |")
    return lines


def table(results):
    """The documentation's tables of the studies a results file holds: SPIN, RIG."""
    parts = []
    if "spin" in results:
        parts.append("\n".join(spin_table(results["spin"])))
    if "rig" in results:
        parts.append("\n".join(rig_table(results["rig"])))
    return "\n\n".join(parts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", nargs="+", default=["spin", "h2", "rig"],
                    choices=["spin", "h2", "rig"])
    ap.add_argument("--elements", nargs="+", type=int, default=[4, 8, 16],
                    help="SPIN meshes")
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--plot", default="docs/geometric_rig.png")
    add_results_options(ap)
    args = ap.parse_args(argv)
    if printed_table(args, table):
        return
    report = {"machine": f"{platform.machine()}, {platform.python_version()}",
              "rtol": args.rtol}
    if "spin" in args.study:
        report["spin"] = spin_study(args.elements, args.rtol)
        for row in report["spin"]:
            print("SPIN", json.dumps(row))
    if "h2" in args.study:
        report["h2"] = h2_study(1, 1e-8)
        print("H2", json.dumps(report["h2"]))
    if "rig" in args.study:
        report["rig"] = rig_study(1e-8, args.plot)
        for row in report["rig"]:
            print("RIG", json.dumps(row))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
