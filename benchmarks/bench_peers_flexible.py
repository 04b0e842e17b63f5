r"""H2 (5 s) and SPIN (20 s) of docs/explanation/benchmark-models.md: flexmbs against Exudyn's
geometrically exact beam (ObjectBeamGeometricallyExact: Simo-Reissner, shear
deformable, two nodes per element, generalized-alpha with a fixed step), wall time
and the agreement of joint angles and tip deflections.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python benchmarks/bench_peers_flexible.py --study h2
    .venv/bin/python benchmarks/bench_peers_flexible.py --study spin
    .venv/bin/python benchmarks/bench_peers_flexible.py \
        --json benchmarks/results/peers_flexible.json
    .venv/bin/python benchmarks/bench_peers_flexible.py \
        --table benchmarks/results/peers_flexible.json

Per study:

1. Reference: the finest Exudyn model (--ref: elements and step; H2 32 elements at
   2e-4 s, SPIN 32 elements at 2e-3 s), checked against a model twice as fine in
   space (--no-ref-check skips it). For SPIN give --ref 16 2e-3: Exudyn's Newton
   iteration stalls with 64 elements at that step, and cuts the step to 1e-6 s.
2. Sweep: flexmbs (the library model, geometric stiffness "consistent", several
   meshes, tolerances and the modal reduction) and Exudyn (elements x steps), one run
   each: wall time and the largest differences from the reference over the run, of
   the joint angles (H2) and of the tip's elastic displacement components in the
   link-2 / hub frame: along the joint-2 axis (z) and perpendicular to it in the plane
   of motion (y).
3. Equal accuracy: the accuracy flexmbs' default (H2: 1 element at rtol 1e-8, the model
   file; SPIN: 8 elements at rtol 1e-6) reaches, or --accuracy; for each tool the
   cheapest swept configuration within it, timed --repeat times in turn in this one
   process (medians), and the ratio flexmbs time / Exudyn time.

Numba compilation is not timed (a warm-up run first). --table prints the tables of
docs/explanation/performance.md from a results file: the sweep of each study in it.
"""

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
from peers import (
    add_results_options,
    exudyn_h2,
    exudyn_spin,
    grouped,
    machine,
    printed_table,
    sci,
    significant,
)

from flexmbs.model.library import huang_two_link, spin_up
from flexmbs.simulation import simulate

H2_T_END, SPIN_T_END = 5.0, 20.0
H2_OUTPUT, SPIN_OUTPUT = 0.01, 0.05
ATOL_RATIO = 1e-2
# sensors of the library models: H2 theta1, theta2, tip (3), tip_deflection (3);
# SPIN angle, tip_deflection (3)
H2_DEFLECTION, SPIN_DEFLECTION = slice(5, 8), slice(1, 4)


def run_flexmbs_h2(elements, rtol, modes="all", t_end=H2_T_END):
    corr = modes != "all"
    model = huang_two_link(elements, t_end=t_end, modes=modes, correction_modes=corr,
                           modal_derivatives=False if corr else None)
    start = time.perf_counter()
    sim = simulate(model, None, rtol=rtol, atol=rtol * ATOL_RATIO, output_step=H2_OUTPUT)
    wall = time.perf_counter() - start
    return {"t": sim.t, "theta1": sim.sensors[:, 0], "theta2": sim.sensors[:, 1],
            "deflection": sim.sensors[:, H2_DEFLECTION], "wall": wall,
            "steps": int(sim.statistics["nsteps"]), "status": sim.status}


def run_flexmbs_spin(elements, rtol, modes="all", t_end=SPIN_T_END):
    corr = modes != "all"
    model = spin_up(elements, "consistent", t_end=t_end, modes=modes, correction_modes=corr,
                    modal_derivatives=False if corr else None)
    start = time.perf_counter()
    sim = simulate(model, None, rtol=rtol, atol=rtol * ATOL_RATIO, output_step=SPIN_OUTPUT)
    wall = time.perf_counter() - start
    return {"t": sim.t, "deflection": sim.sensors[:, SPIN_DEFLECTION], "wall": wall,
            "steps": int(sim.statistics["nsteps"]), "status": sim.status}


STUDIES = {
    "h2": {
        "t_end": H2_T_END,
        "reference": ("exudyn", 32, 2e-4),
        "flexmbs": [(1, 1e-8, "all"), (1, 1e-7, "all"), (1, 1e-6, "all"), (1, 1e-5, "all"),
                    (1, 1e-4, "all"), (1, 1e-8, 2), (1, 1e-6, 2), (2, 1e-6, "all")],
        "flexmbs_default": (1, 1e-8, "all"),
        "exudyn": [(4, 1e-3), (8, 1e-3), (8, 5e-4), (16, 2e-3), (16, 1e-3), (16, 5e-4),
                   (32, 1e-3), (32, 5e-4)],
        "angles": True,
    },
    "spin": {
        "t_end": SPIN_T_END,
        "reference": ("exudyn", 32, 2e-3),
        "flexmbs": [(4, 1e-6, "all"), (8, 1e-6, "all"), (8, 1e-5, "all"), (8, 1e-4, "all"),
                    (8, 1e-6, 2)],
        "flexmbs_default": (8, 1e-6, "all"),
        "exudyn": [(8, 1e-2), (8, 5e-3), (16, 1e-2), (16, 5e-3)],
        "angles": False,
    },
}


def run(study, tool, config, t_end):
    if tool == "flexmbs":
        elements, rtol, modes = config
        fn = run_flexmbs_h2 if study == "h2" else run_flexmbs_spin
        return fn(elements, rtol, modes, t_end)
    elements, h = config
    if study == "h2":
        return exudyn_h2(elements, h, t_end, output_step=H2_OUTPUT)
    return exudyn_spin(elements, h, t_end, output_step=SPIN_OUTPUT)


def label(tool, config):
    if tool == "flexmbs":
        elements, rtol, modes = config
        red = "" if modes == "all" else f", {modes} modes + correction modes"
        return f"flexmbs {elements} el, rtol {rtol:.0e}{red}"
    elements, h = config
    return f"exudyn {elements} el, h {h:.0e}"


def differences(r, ref, angles):
    """Largest differences from the reference over the common outputs."""
    n = min(len(r["t"]), len(ref["t"]))
    if not np.allclose(r["t"][:n], ref["t"][:n], atol=1e-9):
        raise RuntimeError("output times differ from the reference's")
    out = {}
    if angles:
        out["theta1"] = float(np.abs(r["theta1"][:n] - ref["theta1"][:n]).max())
        out["theta2"] = float(np.abs(r["theta2"][:n] - ref["theta2"][:n]).max())
        out["angles"] = max(out["theta1"], out["theta2"])
    for k, axis in ((1, "y"), (2, "z")):
        d = float(np.abs(r["deflection"][:n, k] - ref["deflection"][:n, k]).max())
        scale = float(np.abs(ref["deflection"][:n, k]).max())
        out[f"tip_{axis}"] = d
        out[f"tip_{axis}_relative"] = d / scale if scale > 0 else None
    return out


def accuracy_of(diff, angles):
    """The measure of equal accuracy: joint angles (H2), in-plane tip deflection
    relative to its largest value (SPIN)."""
    return diff["angles"] if angles else diff["tip_y_relative"]


def bench_study(study, a, log):
    spec = STUDIES[study]
    t_end = a.t_end or spec["t_end"]
    angles = spec["angles"]
    out = {"study": study, "t_end": t_end}
    _, ref_el, ref_h = spec["reference"]
    if a.ref:
        ref_el, ref_h = int(a.ref[0]), float(a.ref[1])
    log(f"{study}: reference Exudyn {ref_el} elements, h {ref_h:g} s")
    ref = run(study, "exudyn", (ref_el, ref_h), t_end)
    out["reference"] = {"elements": ref_el, "h": ref_h, "wall": ref["wall"]}
    if angles:
        out["reference"]["max_tip_y"] = float(np.abs(ref["deflection"][:, 1]).max())
        out["reference"]["max_tip_z"] = float(np.abs(ref["deflection"][:, 2]).max())
    else:
        d = ref["deflection"][:, 1]
        out["reference"]["tip_y_min"] = float(d.min())
        out["reference"]["tip_y_at"] = {f"{tt:g}": float(np.interp(tt, ref["t"], d))
                                        for tt in (5.0, 10.0, 15.0, 20.0) if tt <= t_end}
    if not a.no_ref_check:
        finer = run(study, "exudyn", (2 * ref_el, ref_h), t_end)
        out["reference"]["check"] = {"elements": 2 * ref_el, "wall": finer["wall"],
                                     **differences(finer, ref, angles)}
        log(f"  reference vs {2 * ref_el} elements: "
            + ", ".join(f"{k} {v:.2e}" for k, v in out["reference"]["check"].items()
                        if isinstance(v, float)))
    sweep = []
    for tool in ("flexmbs", "exudyn"):
        for config in spec[tool]:
            r = run(study, tool, config, t_end)
            diff = differences(r, ref, angles)
            row = {"tool": tool, "config": list(config), "label": label(tool, config),
                   "wall": r["wall"], "steps": r["steps"], "status": r.get("status", ""),
                   "accuracy": accuracy_of(diff, angles), **diff}
            if not angles:
                d = r["deflection"][:, 1]
                row["tip_y_at"] = {f"{tt:g}": float(np.interp(tt, r["t"], d))
                                   for tt in (5.0, 10.0, 15.0, 20.0) if tt <= t_end}
            sweep.append(row)
            log(f"  {row['label']:44s} {row['wall']:8.2f} s, {row['steps']:8d} steps; "
                + ", ".join(f"{k} {v:.2e}" for k, v in diff.items() if isinstance(v, float)))
    out["sweep"] = sweep
    default = next(s for s in sweep if s["tool"] == "flexmbs"
                   and tuple(s["config"]) == spec["flexmbs_default"])
    target = a.accuracy or default["accuracy"]
    out["accuracy_target"] = target
    chosen = {}
    for tool in ("flexmbs", "exudyn"):
        ok = [s for s in sweep if s["tool"] == tool and s["accuracy"] <= target * 1.0000001
              and s["status"] in ("finished", "")]
        if ok:
            chosen[tool] = min(ok, key=lambda s: s["wall"])
    what = "joint angles (rad)" if angles else "in-plane tip deflection (relative)"
    log(f"  equal accuracy: {what} within {target:.2e} of the reference")
    walls = {tool: [] for tool in chosen}
    for _ in range(a.repeat):
        for tool, row in chosen.items():
            walls[tool].append(run(study, tool, tuple(row["config"]), t_end)["wall"])
    out["equal_accuracy"] = {tool: {"label": row["label"], "config": row["config"],
                                    "accuracy": row["accuracy"],
                                    "wall": statistics.median(walls[tool]),
                                    "walls": walls[tool]}
                             for tool, row in chosen.items()}
    for tool in ("flexmbs", "exudyn"):
        if tool not in chosen:
            log(f"  {tool}: no swept configuration within the accuracy")
    eq = out["equal_accuracy"]
    for tool, row in eq.items():
        log(f"  {tool:8s} {row['label']:44s} {row['wall']:8.2f} s (median of "
            f"{len(row['walls'])}), accuracy {row['accuracy']:.2e}")
    if "flexmbs" in eq and "exudyn" in eq:
        out["ratio"] = eq["flexmbs"]["wall"] / eq["exudyn"]["wall"]
        log(f"  flexmbs time / Exudyn time = {out['ratio']:.3g}")
    return out


def _model(tool, config):
    """A swept configuration as the tables name it."""
    if tool == "flexmbs":
        elements, rtol, modes = config
        mesh = f"{elements} element" + ("s" if elements > 1 else "")
        reduced = "" if modes == "all" else f", {modes} modes + correction"
        return f"{mesh}{reduced}, rtol {sci(rtol, 0)}"
    elements, h = config
    return f"{elements} elements, h {sci(h, 0)}"


def _tool(name):
    return "Exudyn" if name == "exudyn" else name


def h2_table(study):
    """H2: every swept run's wall time, steps and differences from the reference."""
    lines = ["| tool | model | wall | steps | theta1 | theta2 | tip z | tip y |",
             "|---|---|---|---|---|---|---|---|"]
    for r in study["sweep"]:
        lines.append(f"| {_tool(r['tool'])} | {_model(r['tool'], r['config'])} | "
                     f"{significant(r['wall'], 3)} | {grouped(r['steps'])} | "
                     f"{sci(r['theta1'])} | {sci(r['theta2'])} | {sci(r['tip_z'])} | "
                     f"{sci(r['tip_y'])} |")
    return lines


def spin_table(study):
    """SPIN: the reference and every swept run: wall time, steps, the in-plane tip
    deflection at 5 and 10 s and its largest difference from the reference's relative
    to the largest deflection."""
    ref = study["reference"]
    lines = ["| tool | model | wall | steps | tip at 5 s | tip at 10 s | relative difference |",
             "|---|---|---|---|---|---|---|",
             f"| Exudyn | reference, {_model('exudyn', (ref['elements'], ref['h']))} | "
             f"{significant(ref['wall'], 3)} | {grouped(round(study['t_end'] / ref['h']))} | "
             f"{ref['tip_y_at']['5']:.4f} | {ref['tip_y_at']['10']:.4f} | - |"]
    for r in study["sweep"]:
        lines.append(f"| {_tool(r['tool'])} | {_model(r['tool'], r['config'])} | "
                     f"{significant(r['wall'], 3)} | {grouped(r['steps'])} | "
                     f"{r['tip_y_at']['5']:.4f} | {r['tip_y_at']['10']:.4f} | "
                     f"{sci(r['tip_y_relative'])} |")
    return lines


def table(results):
    """The documentation's tables of the studies a results file holds."""
    tables = {"h2": h2_table, "spin": spin_table}
    return "\n\n".join("\n".join(tables[st["study"]](st)) for st in results["studies"])


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--study", nargs="+", default=["h2", "spin"], choices=list(STUDIES))
    p.add_argument("--ref", nargs=2, metavar=("ELEMENTS", "H"),
                   help="the reference Exudyn model")
    p.add_argument("--no-ref-check", action="store_true")
    p.add_argument("--accuracy", type=float,
                   help="the accuracy both tools must reach (default: flexmbs' default's)")
    p.add_argument("--t-end", type=float, help="shorter runs, for a quick look")
    p.add_argument("--repeat", type=int, default=3)
    add_results_options(p)
    a = p.parse_args()
    if printed_table(a, table):
        return

    def log(text):
        print(text, flush=True)

    info = machine()
    log(f"machine: {info['cpu']}, {info['cores']} cores; python {info['python']}, numba "
        f"{info['numba']}, exudyn {info['exudyn']}")
    run_flexmbs_h2(1, 1e-6, t_end=0.01)  # compile (not timed)
    run_flexmbs_spin(2, 1e-6, t_end=0.01)
    results = {"machine": info, "studies": []}
    for study in a.study:
        results["studies"].append(bench_study(study, a, log))
        if a.json:
            Path(a.json).parent.mkdir(parents=True, exist_ok=True)
            Path(a.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
