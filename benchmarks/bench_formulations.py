"""Huang's formulation study (chapter 5) on H2: the joint-coordinate formulation
with bdf ("Im-Im"), the Order-N elimination with bdf ("Ex-Im") and with dop853
("Ex-Ex"), and the absolute coordinates of Schwab 2009 with bdf ("Abs-Im"), at the
thesis's settings (alpha = 0.0003, rtol 1e-4, atol 1e-7, 5 s): steps, residual
evaluations, wall time and the energy error against the largest strain energy; the
sensitivity test of thesis section 5.4 (theta2 = -1.0 against -1.02: when the two
runs part); and the agreement of the formulations over 2 s at tight tolerances: joint
coordinates and body poses of H2, H3, H8 (Order-N and absolute coordinates), FB and BR
(absolute coordinates).

    .venv/bin/python benchmarks/bench_formulations.py --json benchmarks/results/formulations.json
    .venv/bin/python benchmarks/bench_formulations.py --table benchmarks/results/formulations.json

--table prints the two tables of docs/guides/solvers.md from a results file.
"""

import argparse
import json
import platform
import time

import numpy as np
from peers import add_results_options, grouped, printed_table, sci

from flexmbs.model.library import (
    bricard,
    four_bar,
    huang_eight_link,
    huang_three_link,
    huang_two_link,
)
from flexmbs.simulation import simulate

CASES = (("Im-Im", "joint", "bdf"), ("Ex-Im", "order-n", "bdf"),
         ("Ex-Ex", "order-n", "dop853"), ("Abs-Im", "absolute", "bdf"))


def _energy_ratio(sim):
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    return float(np.abs(total - total[0]).max() / e[:, 2].max())


def thesis_comparison(t_end, rtol, atol):
    rows = []
    for label, formulation, method in CASES:
        model = huang_two_link(alpha=0.0003, t_end=t_end)
        simulate(model, None, t_end=0.01, method=method, formulation=formulation)  # warm
        start = time.perf_counter()
        sim = simulate(model, None, rtol=rtol, atol=atol, method=method,
                       formulation=formulation)
        wall = time.perf_counter() - start
        rows.append({"case": label, "formulation": formulation, "method": method,
                     "status": sim.status, "wall": wall,
                     "reference_moves": sim.statistics.get("reference_moves"),
                     "nsteps": int(sim.statistics.get("nsteps", 0)),
                     "nres": int(sim.statistics.get("nres", sim.statistics.get("nfev", 0))),
                     "energy_ratio": _energy_ratio(sim)})
        print(rows[-1], flush=True)
    return rows


def sensitivity(t_end, rtol, atol, threshold=0.01):
    """theta2 = -1.0 against -1.02 (thesis 5.4), each case: the first time the joint
    angles differ by more than `threshold` rad beyond the initial 0.02 offset's
    own motion, and the largest difference."""
    out = []
    for label, formulation, method in CASES:
        sims = []
        for theta2 in (-1.0, -1.02):
            model = huang_two_link(alpha=0.0003, t_end=t_end)
            model.joints["joint2"].initial[:] = theta2
            sims.append(simulate(model, None, rtol=rtol, atol=atol, method=method,
                                 formulation=formulation))
        # theta1, theta2: the model's first two sensors (read from the joints' markers
        # in absolute coordinates, in (-pi, pi])
        diff = np.abs(np.unwrap(sims[0].sensors[:, :2], axis=0)
                      - np.unwrap(sims[1].sensors[:, :2], axis=0)).max(axis=1)
        apart = np.flatnonzero(diff > 0.02 + threshold)
        out.append({"case": label, "max_difference": float(diff.max()),
                    "parted_at": float(sims[0].t[apart[0]]) if apart.size else None})
        print(out[-1], flush=True)
    return out


def _recorded(model):
    """The model recording every revolute and prismatic joint's coordinate (their
    names) and every body's frame (position, axes); nothing else."""
    model.sensors.clear()
    joints = [n for n, j in model.joints.items() if j.type in ("revolute", "prismatic")]
    for name in joints:
        model.add_sensor(name, "joint_coordinate", joint=name)
    for body in model.bodies:
        model.add_sensor(f"{body}.r", "marker_position", body=body, marker="origin")
        model.add_sensor(f"{body}.A", "marker_orientation", body=body, marker="origin")
    return model, len(joints)


AGREEMENT_MODELS = (
    ("H2", lambda t: huang_two_link(t_end=t), ("order-n", "absolute")),
    ("H3", lambda t: huang_three_link(t_end=t), ("order-n", "absolute")),
    ("H8", lambda t: huang_eight_link(elements=1, t_end=t), ("order-n", "absolute")),
    ("FB", lambda t: four_bar(t_end=t), ("absolute",)),
    ("BR", lambda t: bricard(t_end=t), ("absolute",)))


def agreement(t_end=2.0, rtol=1e-10, atol=1e-12):
    """Each formulation against the joint-coordinate one (bdf, tight tolerances): the
    largest difference of the joint coordinates (angles unwrapped) and of the body
    frames' positions and axes over the run."""
    out = []
    for name, build, others in AGREEMENT_MODELS:
        runs = {}
        for formulation in ("joint",) + others:
            model, njoints = _recorded(build(t_end))
            start = time.perf_counter()
            runs[formulation] = simulate(model, None, rtol=rtol, atol=atol, method="bdf",
                                         formulation=formulation)
            runs[formulation].wall = time.perf_counter() - start
        ref = runs["joint"].sensors
        for formulation in others:
            got = runs[formulation].sensors
            d = np.unwrap(ref[:, :njoints], axis=0) - np.unwrap(got[:, :njoints], axis=0)
            d = (d + np.pi) % (2 * np.pi) - np.pi
            out.append({"model": name, "formulation": formulation, "t_end": t_end,
                        "status": runs[formulation].status,
                        "joints": njoints,
                        "max_joint_difference": float(np.abs(d).max(initial=0.0)),
                        "max_frame_difference": float(np.abs(ref[:, njoints:]
                                                             - got[:, njoints:]).max()),
                        "wall_joint": runs["joint"].wall,
                        "wall": runs[formulation].wall,
                        "nsteps_joint": int(runs["joint"].statistics["nsteps"]),
                        "nsteps": int(runs[formulation].statistics["nsteps"])})
            print(out[-1], flush=True)
    return out


FORMULATION_NAMES = {"joint": "joint", "order-n": "Order-N", "absolute": "absolute"}


def table(results):
    """The thesis's comparison on H2 and the formulations' agreement at tight
    tolerances, as docs/guides/solvers.md shows them."""
    lines = ["| case | formulation + integrator | steps | evaluations | wall (s) | "
             "max abs(E - E0) / max U |",
             "|---|---|---|---|---|---|"]
    for r in results["comparison"]:
        lines.append(f"| {r['case']} | {FORMULATION_NAMES[r['formulation']]} + "
                     f"`{r['method']}` | {grouped(r['nsteps'])} | {grouped(r['nres'])} | "
                     f"{r['wall']:.2f} | {sci(r['energy_ratio'])} |")
    if results.get("agreement"):
        order = [name for name, _, _ in AGREEMENT_MODELS]
        rows = sorted(results["agreement"], key=lambda r: order.index(r["model"]))
        lines += ["", "| model | formulation | joints (rad or m) | body frames | "
                  "steps (joint / other) | wall s (joint / other) |",
                  "|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r['model']} | {FORMULATION_NAMES[r['formulation']]} | "
                         f"{sci(r['max_joint_difference'])} | "
                         f"{sci(r['max_frame_difference'])} | {grouped(r['nsteps_joint'])} / "
                         f"{grouped(r['nsteps'])} | {r['wall_joint']:.1f} / "
                         f"{r['wall']:.1f} |")
    return "\n".join(lines)


def main():
    global AGREEMENT_MODELS
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--t-end", type=float, default=5.0)
    add_results_options(p)
    p.add_argument("--skip-agreement", action="store_true")
    p.add_argument("--only", nargs="+", metavar="MODEL",
                   help="the agreement study on these models only (H2 H3 H8 FB BR), "
                        "merged into an existing --json file")
    a = p.parse_args()
    if printed_table(a, table):
        return
    if a.only:
        AGREEMENT_MODELS = tuple(m for m in AGREEMENT_MODELS if m[0] in a.only)
        with open(a.json) as f:
            result = json.load(f)
        rows = agreement()
        result["agreement"] = [r for r in result["agreement"]
                               if r["model"] not in a.only] + rows
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
        return
    result = {"machine": platform.platform(), "python": platform.python_version(),
              "thesis_settings": {"alpha": 0.0003, "rtol": 1e-4, "atol": 1e-7,
                                  "t_end": a.t_end},
              "comparison": thesis_comparison(a.t_end, 1e-4, 1e-7),
              "sensitivity": sensitivity(a.t_end, 1e-4, 1e-7)}
    if not a.skip_agreement:
        result["agreement"] = agreement()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
