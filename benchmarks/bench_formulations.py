"""Huang's formulation study (chapter 5) on H2: the joint-coordinate formulation
with bdf ("Im-Im"), the Order-N elimination with bdf ("Ex-Im") and with dop853
("Ex-Ex"), at the thesis's settings (alpha = 0.0003, rtol 1e-4, atol 1e-7, 5 s):
steps, residual evaluations, wall time and the energy error against the largest
strain energy; the sensitivity test of thesis section 5.4 (theta2 = -1.0 against
-1.02: when the two runs part); and the agreement of the formulations on H2, H3 and H8
over 2 s at tight tolerances.

    .venv/bin/python benchmarks/bench_formulations.py --json benchmarks/results/formulations.json
"""

import argparse
import json
import platform
import time

import numpy as np

from flexmbs.model.compiled import compile_model
from flexmbs.model.library import huang_eight_link, huang_three_link, huang_two_link
from flexmbs.simulation import simulate

CASES = (("Im-Im", "joint", "bdf"), ("Ex-Im", "order-n", "bdf"),
         ("Ex-Ex", "order-n", "dop853"))


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
        diff = np.abs(sims[0].y[:, :2] - sims[1].y[:, :2]).max(axis=1)
        apart = np.flatnonzero(diff > 0.02 + threshold)
        out.append({"case": label, "max_difference": float(diff.max()),
                    "parted_at": float(sims[0].t[apart[0]]) if apart.size else None})
        print(out[-1], flush=True)
    return out


def agreement(t_end=2.0, rtol=1e-10, atol=1e-12):
    """Joint angles of the joint-coordinate and Order-N formulations (bdf, tight)."""
    out = []
    for name, model in (("H2", huang_two_link(t_end=t_end)),
                        ("H3", huang_three_link(t_end=t_end)),
                        ("H8", huang_eight_link(elements=1, t_end=t_end))):
        cm = compile_model(model)
        joints = [k for k, n in enumerate(cm.coordinate_names) if "." not in n]
        start = time.perf_counter()
        runs = [simulate(model, None, rtol=rtol, atol=atol, method="bdf", formulation=f)
                for f in ("joint", "order-n")]
        out.append({"model": name, "t_end": t_end,
                    "status": [r.status for r in runs],
                    "max_joint_difference": float(np.abs(runs[0].y[:, joints]
                                                         - runs[1].y[:, joints]).max()),
                    "wall": time.perf_counter() - start})
        print(out[-1], flush=True)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--t-end", type=float, default=5.0)
    p.add_argument("--json", help="write the results here")
    p.add_argument("--skip-agreement", action="store_true")
    a = p.parse_args()
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
