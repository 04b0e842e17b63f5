r"""Flexible models at the pace of their motion: `galpha` against today's `bdf` and
against Exudyn's geometrically exact beams, at equal accuracy, on H2 (1, 2 and 5
elements, 5 s) and SPIN (8 elements, 20 s) of the benchmark models.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python benchmarks/bench_galpha.py --json benchmarks/results/galpha.json
    .venv/bin/python benchmarks/bench_galpha.py --table benchmarks/results/galpha.json

Per study:

1. Reference: the finest Exudyn model of bench_peers_flexible.py (H2: 32 elements at
   2e-4 s; SPIN: 32 elements at 2e-3 s).
2. Today's `bdf`: the model's default tolerance (H2 rtol 1e-8, SPIN 1e-6), per mesh:
   its steps, its integration time (the run's own counter, compilation excluded) and
   its largest difference from the reference (joint angles for H2, in-plane tip
   deflection relative to its largest value for SPIN). That difference is the
   accuracy to match: it is the mesh's, the integration adds nothing to it.
3. `galpha` on the same mesh, a sweep of tolerances, rho_inf and fixed steps; the
   cheapest run whose difference from the reference is within 5 % of bdf's (so that
   it is equally accurate; --slack) is `galpha` at equal accuracy: steps and
   integration time against bdf's, both run --repeat times in turn (medians).
4. Exudyn at equal accuracy (the angles, or the deflection, within the galpha run's
   difference): the cheapest of its sweep; wall time of its solve against
   galpha's integration time.

Numba compilation is not timed (a warm-up run first). The tables of
docs/explanation/performance.md come from the JSON: --table prints them.

--table also prints the table of benchmarks/results/galpha_h2_session.json: H2 with 1
and 5 elements, `galpha` at several tolerances, rho_inf and fixed steps against `bdf`
at the model file's rtol 1e-8 on the same mesh (steps, integration time from the run's
own counter, the largest joint-angle difference from that `bdf` run).
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np
from peers import (
    add_results_options,
    exudyn_h2,
    exudyn_spin,
    grouped,
    log,
    machine,
    printed_table,
    sci,
)

from flexmbs.model.library import huang_two_link, spin_up
from flexmbs.simulation import simulate

H2_T_END, SPIN_T_END = 5.0, 20.0
H2_OUTPUT, SPIN_OUTPUT = 0.01, 0.05
H2_DEFLECTION, SPIN_DEFLECTION = slice(5, 8), slice(1, 4)

GALPHA_H2 = ([("galpha", r, rho, None) for rho in (0.9, 0.5) for r in (1e-3, 1e-4, 1e-5)]
             + [("galpha", 1e-4, 0.9, h) for h in (2e-3, 1e-3, 5e-4)])
GALPHA_SPIN = ([("galpha", r, rho, None) for rho in (0.9, 0.5) for r in (1e-3, 1e-4, 1e-5)]
               + [("galpha", 1e-4, 0.9, h) for h in (2e-2, 1e-2, 5e-3)])
STUDIES = {
    "h2": {"t_end": H2_T_END, "reference": (32, 2e-4), "meshes": (1, 2, 5),
           "bdf": ("bdf", 1e-8, None, None), "galpha": GALPHA_H2, "angles": True,
           "exudyn": [(4, 2e-3), (8, 2e-3), (8, 1e-3), (16, 2e-3), (16, 1e-3),
                      (16, 5e-4)]},
    "spin": {"t_end": SPIN_T_END, "reference": (32, 2e-3), "meshes": (8,),
             "bdf": ("bdf", 1e-6, None, None), "galpha": GALPHA_SPIN, "angles": False,
             "exudyn": [(8, 2e-2), (8, 1e-2), (8, 5e-3), (16, 1e-2)]},
}


def run_flexmbs(study, elements, config, t_end):
    method, rtol, rho, fixed = config
    if study == "h2":
        model = huang_two_link(elements, t_end=t_end)
        out = H2_OUTPUT
    else:
        model = spin_up(elements, "consistent", t_end=t_end)
        out = SPIN_OUTPUT
    extra = {} if method == "bdf" else {"rho_inf": rho, "fixed_step": fixed}
    sim = simulate(model, None, method=method, rtol=rtol, atol=rtol * 1e-2,
                   output_step=out, **extra)
    st = sim.statistics
    r = {"t": sim.t, "wall": float(st["wall_time"]), "steps": int(st["nsteps"]),
         "residuals": int(st["nres"]), "jacobians": int(st["njac"]),
         "status": sim.status}
    if study == "h2":
        r.update(theta1=sim.sensors[:, 0], theta2=sim.sensors[:, 1],
                 deflection=sim.sensors[:, H2_DEFLECTION])
    else:
        r.update(deflection=sim.sensors[:, SPIN_DEFLECTION])
    return r


def run_exudyn(study, config, t_end):
    elements, h = config
    if study == "h2":
        return exudyn_h2(elements, h, t_end, output_step=H2_OUTPUT)
    return exudyn_spin(elements, h, t_end, output_step=SPIN_OUTPUT)


def accuracy(r, ref, angles):
    """Joint angles (H2, rad) or the in-plane tip deflection relative to its largest
    value (SPIN): the largest difference from the reference over the outputs."""
    n = min(len(r["t"]), len(ref["t"]))
    if angles:
        return float(max(np.abs(r["theta1"][:n] - ref["theta1"][:n]).max(),
                         np.abs(r["theta2"][:n] - ref["theta2"][:n]).max()))
    d = ref["deflection"][:n, 1]
    return float(np.abs(r["deflection"][:n, 1] - d).max() / np.abs(d).max())


def label(config):
    method, rtol, rho, fixed = config
    if method == "bdf":
        return f"bdf rtol {rtol:.0e}"
    step = f"h {fixed:.0e}" if fixed else f"rtol {rtol:.0e}"
    return f"galpha {step}, rho {rho:g}"


def bench_study(study, a, log):
    spec = STUDIES[study]
    t_end = a.t_end or spec["t_end"]
    angles = spec["angles"]
    ref_el, ref_h = spec["reference"]
    log(f"{study}: reference Exudyn {ref_el} elements, h {ref_h:g} s")
    ref = run_exudyn(study, (ref_el, ref_h), t_end)
    out = {"study": study, "t_end": t_end, "reference": [ref_el, ref_h], "meshes": []}
    exu = []
    for config in spec["exudyn"]:
        r = run_exudyn(study, config, t_end)
        exu.append({"config": list(config), "wall": r["wall"], "steps": r["steps"],
                    "accuracy": accuracy(r, ref, angles)})
        log(f"  exudyn {config[0]:3d} el, h {config[1]:.0e}: {r['wall']:7.2f} s, "
            f"accuracy {exu[-1]['accuracy']:.2e}")
    out["exudyn"] = exu
    for elements in spec["meshes"]:
        rows = []
        for config in [spec["bdf"]] + spec["galpha"]:
            r = run_flexmbs(study, elements, config, t_end)
            rows.append({"config": list(config), "label": label(config),
                         "wall": r["wall"], "steps": r["steps"],
                         "residuals": r["residuals"], "jacobians": r["jacobians"],
                         "status": r["status"], "accuracy": accuracy(r, ref, angles)})
            log(f"  {elements} el {rows[-1]['label']:28s} {r['status']:8s} "
                f"{r['wall']:8.3f} s {r['steps']:9d} steps, {r['residuals']:9d} res, "
                f"accuracy {rows[-1]['accuracy']:.3e}")
        bdf = rows[0]
        target = bdf["accuracy"] * (1.0 + a.slack)
        ok = [s for s in rows[1:] if s["status"] == "finished" and s["accuracy"] <= target]
        mesh = {"elements": elements, "runs": rows, "target": target}
        if ok:
            best = min(ok, key=lambda s: s["wall"])
            walls = {"bdf": [], "galpha": []}
            for _ in range(a.repeat):
                for key, row in (("bdf", bdf), ("galpha", best)):
                    walls[key].append(run_flexmbs(study, elements, tuple(row["config"]),
                                                  t_end)["wall"])
            med = {k: statistics.median(v) for k, v in walls.items()}
            peer = [e for e in exu if e["accuracy"] <= max(best["accuracy"], target)]
            mesh["equal_accuracy"] = {
                "galpha": best["label"], "galpha_accuracy": best["accuracy"],
                "bdf_wall": med["bdf"], "galpha_wall": med["galpha"],
                "steps_ratio": bdf["steps"] / best["steps"],
                "time_ratio": med["bdf"] / med["galpha"], "walls": walls}
            if peer:
                p = min(peer, key=lambda e: e["wall"])
                mesh["equal_accuracy"].update(
                    exudyn=f"{p['config'][0]} el, h {p['config'][1]:.0e}",
                    exudyn_wall=p["wall"], exudyn_ratio=p["wall"] / med["galpha"])
            log(f"  {elements} el: {best['label']} at {best['accuracy']:.2e}: "
                f"{mesh['equal_accuracy']['steps_ratio']:.0f}x fewer steps, "
                f"{mesh['equal_accuracy']['time_ratio']:.1f}x less time than bdf")
        else:
            log(f"  {elements} el: no galpha run within {target:.2e}")
        out["meshes"].append(mesh)
    return out


def _session_label(run):
    """A run of galpha_h2_session.json as the table names it: "galpha rtol 1e-05,
    atol 1e-07, rho_inf 0.5" is "`galpha` rtol 1e-5, `rho_inf` 0.5" (atol is rtol /
    100 throughout)."""
    method, *settings = run.replace(",", "").split()
    pairs = dict(zip(settings[::2], settings[1::2]))
    words = [f"`{method}`"]
    if "fixed_step" in pairs:
        words.append(f"fixed step {sci(float(pairs['fixed_step']), 0)} s,")
    words.append(f"rtol {sci(float(pairs['rtol']), 0)}")
    if "rho_inf" in pairs:
        words[-1] += ","
        words.append(f"`rho_inf` {pairs['rho_inf']}")
    if method == "bdf":
        words.append("(the model file)")
    return " ".join(words)


def session_table(results):
    """The table of galpha_h2_session.json: per mesh, `bdf` at the model file's rtol
    and each `galpha` run against it."""
    lines = ["| H2 | run | steps | s | max joint-angle difference, rad |",
             "|---|---|---|---|---|"]
    for elements, runs in results.items():
        mesh = f"{elements} element" + ("s" if int(elements) > 1 else "")
        for k, r in enumerate(runs):
            difference = "reference" if r["run"].startswith("bdf") else sci(r["dtheta"])
            first = f"| {mesh} |" if k == 0 else "| |"
            lines.append(f"{first} {_session_label(r['run'])} | {grouped(r['steps'])} | "
                         f"{r['s']:.3g} | {difference} |")
    return "\n".join(lines)


def table(results):
    """The documentation's table, from the JSON (galpha_h2_session.json's, see
    session_table, for a file of that form)."""
    if "studies" not in results:
        return session_table(results)
    lines = ["| model | bdf (default rtol): steps, s | galpha at equal accuracy | "
             "steps, s | fewer steps | less time | Exudyn at that accuracy |",
             "|---|---|---|---|---|---|---|"]
    for st in results["studies"]:
        for mesh in st["meshes"]:
            bdf = mesh["runs"][0]
            eq = mesh.get("equal_accuracy")
            name = f"{st['study'].upper()}, {mesh['elements']} el"
            if not eq:
                runs = [r for r in mesh["runs"][1:] if r["status"] == "finished"]
                c = min(runs, key=lambda r: r["accuracy"])
                lines.append(f"| {name} | {bdf['steps']}, {bdf['wall']:.2f} "
                             f"({bdf['accuracy']:.2e}) | none within "
                             f"{mesh['target']:.2e}; closest {c['label']} "
                             f"({c['accuracy']:.2e}) | {c['steps']}, {c['wall']:.3f} | "
                             f"{bdf['steps'] / c['steps']:.0f}x | "
                             f"{bdf['wall'] / c['wall']:.1f}x (one run) | |")
                continue
            g = next(r for r in mesh["runs"] if r["label"] == eq["galpha"])
            ex = (f"{eq['exudyn']}: {eq['exudyn_wall']:.2f} s ({eq['exudyn_ratio']:.1f}x)"
                  if "exudyn" in eq else "none in the sweep")
            lines.append(f"| {name} | {bdf['steps']}, {eq['bdf_wall']:.2f} | "
                         f"{eq['galpha']} ({eq['galpha_accuracy']:.2e}) | {g['steps']}, "
                         f"{eq['galpha_wall']:.3f} | {eq['steps_ratio']:.0f}x | "
                         f"{eq['time_ratio']:.1f}x | {ex} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--study", nargs="+", default=["h2", "spin"], choices=list(STUDIES))
    p.add_argument("--t-end", type=float, help="shorter runs, for a quick look")
    p.add_argument("--slack", type=float, default=0.05,
                   help="galpha may be this much (relative) less accurate than bdf")
    p.add_argument("--repeat", type=int, default=3)
    add_results_options(p)
    a = p.parse_args()
    if printed_table(a, table):
        return

    info = machine()
    log(f"machine: {info['cpu']}, {info['cores']} cores; numba {info['numba']}, "
        f"exudyn {info['exudyn']}")
    for study in a.study:   # compile (not timed)
        for method in ("bdf", "galpha"):
            run_flexmbs(study, 1 if study == "h2" else 2, (method, 1e-6, 0.9, None), 0.01)
    results = {"machine": info, "command": " ".join(sys.argv[1:]), "studies": []}
    for study in a.study:
        results["studies"].append(bench_study(study, a, log))
        if a.json:
            Path(a.json).parent.mkdir(parents=True, exist_ok=True)
            Path(a.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
