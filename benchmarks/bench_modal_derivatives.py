"""Reduced beams under geometric stiffness: modes alone, with correction modes and with
modal derivatives, against the nodal beam (and, for H2, Exudyn's geometrically exact
beam), on the three models where the basis matters.

- SPIN (`spin_up`, 8 elements, 20 s, consistent geometric stiffness): the in-plane tip
  deflection's history against the nodal beam's, relative to its largest value.
- H2 (`huang_two_link`, 5 elements, 5 s, consistent): the joint angles against the
  nodal beam's and against Exudyn's 32 geometrically exact elements at h = 2e-4 s
  (skipped without Exudyn).
- CRANK (`simeon_crank`, 8 planar elements, 0.1 s, consistent): the midpoint
  deflection from the chord against the nodal rod's, relative to its largest value.

Every run is `bdf` at rtol 1e-8, atol 1e-10, in one process; steps and the
integration time from each run's own counters.

    python benchmarks/bench_modal_derivatives.py --json benchmarks/results/modal_derivatives.json
    python benchmarks/bench_modal_derivatives.py --table benchmarks/results/modal_derivatives.json
"""

import argparse
import sys

import numpy as np
from peers import begin, exudyn_h2, finish, log

from flexmbs.model.library import crank_midpoint_deflection, huang_two_link, simeon_crank, spin_up
from flexmbs.simulation import simulate

RTOL, ATOL = 1e-8, 1e-10
# (label, modes, correction modes, modal derivatives)
BASES = {
    "spin": [("nodal", "all", False, False), ("2 modes", 2, False, False),
             ("2 modes + corrections", 2, True, False), ("2 modes + derivatives", 2, False, True),
             ("4 modes + derivatives", 4, False, True)],
    "h2": [("nodal", "all", False, False), ("2 modes", 2, False, False),
           ("2 modes + corrections", 2, True, False), ("2 modes + derivatives", 2, False, True),
           ("2 modes + corrections + derivatives", 2, True, True)],
    "crank": [("nodal", "all", True, False), ("4 modes + corrections", 4, True, False),
              ("10 modes + corrections", 10, True, False),
              ("2 modes + corrections + derivatives", 2, True, True),
              ("4 modes + corrections + derivatives", 4, True, True)],
}
NAMES = {"spin": "SPIN, 8 elements, 20 s", "h2": "H2, 5 elements, 5 s",
         "crank": "CRANK, 8 elements, 0.1 s"}


def build(study, modes, corrections, derivatives):
    reduced = modes != "all"
    flag = derivatives if reduced else None
    if study == "spin":
        return spin_up(8, modes=modes, correction_modes=corrections and reduced,
                       modal_derivatives=flag)
    if study == "h2":
        return huang_two_link(5, modes=modes, correction_modes=corrections and reduced,
                              modal_derivatives=flag)
    return simeon_crank(8, geometric="consistent", modes=modes, corrections=corrections,
                        modal_derivatives=flag)


def history(study, sim):
    """The compared history: SPIN's in-plane tip deflection, H2's joint angles (n, 2),
    CRANK's midpoint deflection."""
    if study == "spin":
        return sim.sensors[:, 2]
    if study == "h2":
        return sim.sensors[:, :2]
    return crank_midpoint_deflection(sim.sensors[:, 0:3], sim.sensors[:, 3:6])


def run(study, basis):
    label, modes, corrections, derivatives = basis
    model = build(study, modes, corrections, derivatives)
    body = next(b for b in model.bodies.values() if hasattr(b, "basis"))
    extra = {"output_step": 1e-4} if study == "crank" else {}
    sim = simulate(model, None, rtol=RTOL, atol=ATOL, **extra)
    st = sim.statistics
    return {"label": label, "coordinates": int(body.nf), "status": sim.status,
            "steps": int(st["nsteps"]), "wall": float(st["wall_time"])}, \
        history(study, sim), sim.t


def bench_study(study, exact):
    out = {"study": study, "name": NAMES[study], "runs": []}
    log(f"{NAMES[study]}: warm-up")
    ref = None
    for basis in BASES[study]:
        r, h, t = run(study, basis)
        if ref is None:
            ref = (h, r)
        diff = np.abs(h - ref[0]).max()
        if study == "h2":
            r["vs_nodal"] = float(diff)
        else:
            r["vs_nodal"] = float(diff / np.abs(ref[0]).max())
        r["speed_up"] = ref[1]["wall"] / r["wall"]
        if study == "h2" and exact is not None:
            n = min(len(t), len(exact["t"]))
            r["vs_exact"] = float(max(np.abs(h[:n, 0] - exact["theta1"][:n]).max(),
                                      np.abs(h[:n, 1] - exact["theta2"][:n]).max()))
        log(f"  {r['label']}: {r['coordinates']} coordinates, {r['status']}, {r['steps']} "
            f"steps, {r['wall']:.2f} s, vs nodal {r['vs_nodal']:.2e}"
            + (f", vs exact {r['vs_exact']:.2e}" if "vs_exact" in r else ""))
        out["runs"].append(r)
    return out


def table(results):
    rows = ["| model | basis | coordinates | steps | s | faster than nodal | "
            "from the nodal beam | from the geometrically exact beam |",
            "|---|---|---|---|---|---|---|---|"]
    for s in results["studies"]:
        unit = " rad" if s["study"] == "h2" else " of the largest"
        for k, r in enumerate(s["runs"]):
            name = s["name"] if k == 0 else ""
            vs = "reference" if k == 0 else f"{r['vs_nodal']:.1e}{unit}"
            exact = f"{r['vs_exact']:.1e} rad" if "vs_exact" in r else ""
            rows.append(f"| {name} | {r['label']} | {r['coordinates']} | {r['steps']} | "
                        f"{r['wall']:.2f} | {r['speed_up']:.1f}x | {vs} | {exact} |")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", nargs="+", default=["spin", "h2", "crank"],
                        choices=["spin", "h2", "crank"])
    parser.add_argument("--no-exact", action="store_true",
                        help="leave out Exudyn's geometrically exact H2")
    started = begin(parser, table)
    if started is None:
        return 0
    args, info, start = started
    simulate(huang_two_link(1, t_end=0.01, modes=2), None)  # compile the kernels
    exact = None
    if "h2" in args.study and not args.no_exact:
        try:
            log("Exudyn H2, 32 geometrically exact elements, h = 2e-4 s")
            exact = exudyn_h2(32, 2e-4)
        except ImportError:
            log("  Exudyn is not installed: H2 against the nodal beam only")
    results = {"machine": info, "rtol": RTOL, "atol": ATOL,
               "studies": [bench_study(s, exact) for s in args.study]}
    finish(args, results, start, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
