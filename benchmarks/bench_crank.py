"""Simeon's flexible slider-crank (the Bari test set's problem `crank`): `galpha` and
`bdf` on the nodal rod and on a reduced one, against the test set's reference.

Model: flexmbs.model.library.simeon_crank (docs/explanation/benchmark-models.md,
CRANK): the rod in 8 planar linear elements, from the test set's initial values,
0.1 s. Measures, over outputs every 0.1 ms:
- "vs test set": |q1(0.1 s) - q1 of the test set's reference| over the amplitude of
  the test set's midpoint deflection (1.65e-3 m), q1 the midpoint's deflection from
  the chord (crank_midpoint_deflection);
- "vs reference": the largest difference of that deflection's history from `bdf` at
  rtol 1e-8 on the same nodal rod, over the same amplitude: the integration error
  alone (the model's own difference from the test set's 4-coordinate rod, rotary
  inertia and a 15 times larger axial mass, is in the first measure).
Counters and integration time from the runs' statistics, one process.

    python benchmarks/bench_crank.py --json benchmarks/results/crank.json
    python benchmarks/bench_crank.py --table benchmarks/results/crank.json
"""

import argparse
import sys

import numpy as np
from peers import begin, finish, log

from flexmbs.model.library import CRANK_REFERENCE_Q1, crank_midpoint_deflection, simeon_crank
from flexmbs.simulation import simulate

AMPLITUDE = 1.65e-3  # m: the test set's midpoint deflection, its largest over 0.1 s
ELEMENTS = 8
OUTPUT_STEP = 1e-4
REFERENCE = ("bdf", 1e-8, "all")
RUNS = [("bdf", 1e-4, "all"), ("bdf", 1e-5, "all"), ("bdf", 1e-6, "all"), ("bdf", 1e-7, "all"),
        ("galpha", 1e-4, "all"),
        ("galpha", 1e-5, "all"), ("bdf", 1e-6, 4), ("galpha", 1e-4, 4),
        ("galpha", 1e-5, 4)]


def label(config):
    method, rtol, modes = config
    rod = "nodal" if modes == "all" else f"{modes} modes + 2 corrections"
    return f"{method} rtol {rtol:.0e}, {rod}"


def run(config):
    method, rtol, modes = config
    sim = simulate(simeon_crank(ELEMENTS, modes=modes), None, method=method, rtol=rtol,
                   atol=rtol * 1e-2, output_step=OUTPUT_STEP)
    st = sim.statistics
    q1 = crank_midpoint_deflection(sim.sensors[:, 0:3], sim.sensors[:, 3:6])
    r = {"label": label(config), "config": list(config), "status": sim.status,
         "message": sim.message or "", "steps": int(st["nsteps"]),
         "rejected": int(st.get("nrejected", 0)), "residuals": int(st["nres"]),
         "jacobians": int(st["njac"]), "reformed": int(st.get("nmass", 0)),
         "wall": float(st["wall_time"]), "q1_end": float(q1[-1]),
         "vs_test_set": float(abs(q1[-1] - CRANK_REFERENCE_Q1) / AMPLITUDE)}
    return r, q1


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    started = begin(p, table)
    if started is None:
        return
    a, info, start = started
    ref, ref_q1 = run(REFERENCE)
    log(f"reference {ref['label']}: {ref['steps']} steps, {ref['wall']:.2f} s, q1(0.1) "
        f"{ref['q1_end']:.4e} ({ref['vs_test_set']:.2%} of the amplitude from the test set)")
    out = {"machine": info, "command": " ".join(sys.argv[1:]), "elements": ELEMENTS,
           "amplitude": AMPLITUDE, "test_set_q1": CRANK_REFERENCE_Q1, "reference": ref,
           "runs": []}
    for config in RUNS:
        r, q1 = run(config)
        r["vs_reference"] = float(np.abs(q1 - ref_q1).max() / AMPLITUDE)
        out["runs"].append(r)
        log(f"{r['label']}: {r['status']}, {r['steps']} steps, {r['wall']:.2f} s, "
            f"vs test set {r['vs_test_set']:.2%}, vs reference {r['vs_reference']:.2%}")
    finish(a, out, start, table)


def table(results):
    ref = results["reference"]
    lines = [f"Simeon's crank, 0.1 s, the rod in {results['elements']} elements; the "
             f"test set's q1(0.1 s) = {results['test_set_q1']:.4e} m, amplitude "
             f"{results['amplitude']:g} m; reference {ref['label']}: {ref['steps']} steps, "
             f"{ref['wall']:.2f} s, q1(0.1 s) {ref['q1_end']:.4e} m "
             f"({ref['vs_test_set']:.2%} of the amplitude from the test set's).",
             "",
             "| run | steps (rejected) | residuals | integration s | q1(0.1 s) vs test set "
             "| history vs reference (of the amplitude) |",
             "|---|---|---|---|---|---|"]
    for r in results["runs"]:
        lines.append(f"| {r['label']} | {r['steps']} ({r['rejected']}) | {r['residuals']} "
                     f"| {r['wall']:.2f} | {r['vs_test_set']:.2%} | "
                     f"{r['vs_reference']:.1e} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
