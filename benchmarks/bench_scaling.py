r"""The cost of a run against the size of the model: H2 with N = 2 ... 160 elements in
link 2, and a UR5 (example-robot-data's URDF) with three flexible links of N = 4 ... 32
elements each; flexmbs `galpha` and `bdf` against Exudyn's geometrically exact beams
(ObjectBeamGeometricallyExact, generalized-alpha, h = 2e-3 s) at equal joint-angle
accuracy, in one process, the tools taken in turn at every size and every round.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python benchmarks/bench_scaling.py --json benchmarks/results/scaling.json
    .venv/bin/python benchmarks/bench_scaling.py --table benchmarks/results/scaling.json
    .venv/bin/python benchmarks/bench_scaling.py --profile 10 40 80 160 \
        --json benchmarks/results/scaling_profile.json

Per model (H2: 5 s released under gravity, the library model; UR5: 2 s released from
a bent pose, every joint held by a spring and damper, `ur5_model`):

1. The reference: Exudyn with the finest mesh at a small step (--ref-h2, --ref-ur5).
2. At each size N: Exudyn with N elements at h = 2e-3 s, its joint-angle accuracy e_X
   (the largest difference of any joint angle from the reference over the run);
   flexmbs `galpha` and `bdf` with N elements at the loosest rtol of their list
   (atol = rtol / 100) within e_X ("equal accuracy"; the closest when none is).
3. --repeat rounds of every chosen run, the tools in turn at each size; medians.
   Time: the whole call (flexmbs: `simulate`, the model's compilation included;
   Exudyn: building, assembling and solving) and the integration alone (flexmbs:
   the run's own counter; Exudyn: `SolveDynamic`), and per step.
4. The growth exponent of the time per step in N, fitted by least squares on
   log-log over N = 10 ... 160 (H2) and all UR5 sizes.

Numba compilation is not timed (warm-up runs first). A run that would take longer
than --max-run (s, predicted from the size before it) is left out and said so.

--profile N ...: where a `galpha` step of H2 goes (rtol 1e-4, 1 s): counts from the
run and the cost of one call of each kernel at its last state, timed in a compiled
loop (the residual, the mass hook with the elastic blocks and with A alone, the
factorization and the solve of the iteration matrix, in the layout the run used).
"""

import argparse
import json
import statistics
import time
from pathlib import Path

import numba
import numpy as np
from peers import (
    add_results_options,
    exudyn_h2,
    exudyn_tree,
    grouped,
    machine,
    printed_table,
    sci,
    significant,
)

from flexmbs.dynamics import system as _system
from flexmbs.model.compiled import compile_model
from flexmbs.model.library import huang_two_link
from flexmbs.numerics.bordered_band import (
    bordered_band_factor,
    bordered_band_solve,
    factor_size,
    packed_size,
)
from flexmbs.numerics.linalg import lu_factor, lu_solve
from flexmbs.simulation import build_system, simulate

H = 2e-3                                  # s, Exudyn's step (the setting)
OUTPUT = 0.01                             # s
ATOL_RATIO = 1e-2
GALPHA_RTOLS = (1e-4, 5e-5, 2e-5, 1e-5, 5e-6, 2e-6, 1e-6)
BDF_RTOLS = (1e-5, 1e-6, 1e-7)
FIT_FROM = 10                             # the smallest H2 size in the fitted exponent

FAMILIES = {
    "h2": {"sizes": (2, 5, 10, 20, 40, 80, 160), "t_end": 5.0, "ref": (32, 2e-4),
           "name": "H2", "unit": "elements in link 2"},
    "ur5": {"sizes": (4, 8, 16, 32), "t_end": 2.0, "ref": (32, 2.5e-4),
            "name": "UR5", "unit": "elements in each flexible link"},
}


# ------------------------------------------------------------------- the UR5 model

UR5_FLEXIBLE = ("shoulder_link:y", "upper_arm_link:z", "forearm_link:z")
UR5_TUBE = (0.05, 0.003)                        # m, outer diameter and wall
UR5_POSE = (0.0, -0.6, 1.2, -0.4, 0.5, 0.0)     # rad, the joints' rest
UR5_START = (0.3, -1.1, 0.6, 0.2, -0.3, 0.4)    # rad, released from here
UR5_STIFFNESS = (400.0, 800.0, 400.0, 50.0, 50.0, 20.0)   # N m / rad
UR5_DAMPING = (20.0, 40.0, 20.0, 2.0, 2.0, 1.0)           # N m s / rad


def ur5_model(elements, t_end):
    """A lightweight UR5: example-robot-data's URDF with its shoulder, upper arm and
    forearm links as beams of `elements` elements each (`flexmbs import-urdf
    --flexible`), each an aluminium tube of UR5_TUBE (the import's tube of the link's
    whole mass is 0.09 to 0.19 m across, stubbier than a beam) with the rest of the
    link's mass as two point masses, at its first and last node (the motors); every
    joint held by a spring and damper about UR5_POSE, released at rest from
    UR5_START under gravity."""
    import sysconfig

    from flexmbs.elements import round_tube_section
    from flexmbs.formats.urdf import load_urdf
    from flexmbs.model.items import BeamBody
    urdf = (Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data"
            / "robots/ur_description/urdf/ur5_robot.urdf")
    model = load_urdf(urdf, flexible=[f"{spec}:{elements}" for spec in UR5_FLEXIBLE])
    for body in model.bodies.values():
        if isinstance(body, BeamBody):
            link_mass = body.mass
            body.section = round_tube_section(*UR5_TUBE)
            rest = (link_mass - body.mass) / 2
            body.node_masses = {0: rest, len(body.nodes) - 1: rest}
    for k, joint in enumerate(model.joints.values()):
        joint.initial = np.array([UR5_START[k]])
        joint.stiffness = np.array([UR5_STIFFNESS[k]])
        joint.damping = np.array([UR5_DAMPING[k]])
        joint.rest = np.array([UR5_POSE[k]])
    model.set_solver(t_end=t_end)
    return model


# ------------------------------------------------------------------------- runs

def flexmbs_model(family, n, t_end):
    return huang_two_link(n, t_end=t_end) if family == "h2" else ur5_model(n, t_end)


def run_flexmbs(family, n, method, rtol, t_end, linear_solver="auto"):
    """One flexmbs run: joint angles at the outputs, times, steps (and the Simulation)."""
    model = flexmbs_model(family, n, t_end)
    model.set_solver(linear_solver=linear_solver)
    start = time.perf_counter()
    sim = simulate(model, None, method=method, rtol=rtol, atol=rtol * ATOL_RATIO,
                   output_step=OUTPUT)
    wall = time.perf_counter() - start
    nj = len(model.joints)
    st = sim.statistics
    return {"t": sim.t, "angles": sim.y[:, :nj], "wall": wall,
            "integration": float(st["wall_time"]), "steps": int(st["nsteps"]),
            "status": sim.status, "coordinates": len(sim.coordinate_names), "sim": sim}


def exudyn_newton_abs(n):
    """Exudyn's absolute Newton tolerance (N) for H2 with n elements: 1e-6 up to 80
    elements, growing as n beyond, where the residual's round-off (growing with the
    elements' stiffness E A / L_e) is above 1e-6 N: at 160 elements with 1e-6 Exudyn
    cut its steps without end (25 steps of 2e-3 s took more than 300 s); with 2e-6 it
    takes its 500 steps a second."""
    return 1e-6 * max(1.0, n / 80)


def run_exudyn(family, n, h, t_end):
    if family == "h2":
        r = exudyn_h2(n, h, t_end, output_step=OUTPUT, newton_abs=exudyn_newton_abs(n))
        r["angles"] = np.column_stack([r["theta1"], r["theta2"]])
        return r
    return exudyn_tree(ur5_model(n, t_end), h, t_end, output_step=OUTPUT)


def accuracy(run, ref):
    """The largest difference of any joint angle from the reference's (rad) at the
    reference's outputs, the run's interpolated linearly (Exudyn records its sensors
    at its own steps, which its step control may move off the output grid)."""
    t = ref["t"][ref["t"] <= run["t"][-1] + 1e-12]
    angles = np.column_stack([np.interp(t, run["t"], a) for a in np.asarray(run["angles"]).T])
    return float(np.abs(angles - ref["angles"][:len(t)]).max())


def fitted_exponent(sizes, values):
    """The slope of log(values) against log(sizes), least squares."""
    if len(sizes) < 2:
        return None
    return float(np.polyfit(np.log(sizes), np.log(values), 1)[0])


def bench_family(family, a, log):
    spec = FAMILIES[family]
    t_end = a.t_end or spec["t_end"]
    sizes = [n for n in spec["sizes"] if a.sizes is None or n in a.sizes]
    ref_n, ref_h = spec["ref"]
    log(f"{spec['name']}: reference Exudyn {ref_n} elements, h {ref_h:g} s, {t_end:g} s")
    ref = run_exudyn(family, ref_n, ref_h, t_end)
    out = {"family": family, "t_end": t_end, "h": H,
           "reference": {"elements": ref_n, "h": ref_h, "wall": ref["wall"]}, "sizes": []}
    rows = []
    skip = {"galpha": False, "bdf": False, "exudyn": False}
    last = {}
    for n in sizes:
        row = {"n": n, "runs": {}}
        # Exudyn at h, then flexmbs at the accuracy it reached
        predicted = _predicted(last.get("exudyn"), n)
        if skip["exudyn"] or predicted > a.max_run:
            skip["exudyn"] = True
            log(f"  N = {n}: Exudyn left out (predicted {predicted:.0f} s)")
            rows.append(row)
            continue
        r = run_exudyn(family, n, H, t_end)
        target = accuracy(r, ref)
        row["runs"]["exudyn"] = {"setting": f"h {sci(H, 0)}", "accuracy": target,
                                 "walls": [r["wall"]], "integrations": [r["solve"]],
                                 "steps": r["steps"]}
        last["exudyn"] = (n, r["wall"])
        log(f"  N = {n}: Exudyn h {H:g}: {r['wall']:.2f} s, accuracy {target:.2e}")
        for method, rtols in (("galpha", GALPHA_RTOLS), ("bdf", BDF_RTOLS)):
            if method not in a.methods:
                continue
            predicted = _predicted(last.get(method), n)
            if skip[method] or predicted > a.max_run:
                skip[method] = True
                log(f"  N = {n}: {method} left out (predicted {predicted:.0f} s)")
                continue
            chosen = None
            for rtol in rtols:
                r = run_flexmbs(family, n, method, rtol, t_end)
                acc = accuracy(r, ref) if r["status"] == "finished" else float("inf")
                log(f"  N = {n}: {method} rtol {rtol:.0e}: {r['wall']:.2f} s, "
                    f"{r['steps']} steps, accuracy {acc:.2e}")
                if r["wall"] > a.max_run:
                    break
                if chosen is None or acc < chosen[1]["accuracy"]:
                    chosen = (rtol, {"accuracy": acc, **r})
                if acc <= target:
                    break
            if chosen is None:
                continue
            rtol, r = chosen
            row["coordinates"] = r["coordinates"]
            row["runs"][method] = {"setting": f"rtol {sci(rtol, 0)}", "rtol": rtol,
                                   "accuracy": r["accuracy"], "walls": [r["wall"]],
                                   "integrations": [r["integration"]],
                                   "steps": r["steps"], "equal": r["accuracy"] <= target}
            last[method] = (n, r["wall"])
        rows.append(row)
    for round_ in range(1, a.repeat):
        log(f"  round {round_ + 1} of {a.repeat}")
        for row in rows:
            for tool, run in row["runs"].items():
                if tool == "exudyn":
                    r = run_exudyn(family, row["n"], H, t_end)
                    run["walls"].append(r["wall"])
                    run["integrations"].append(r["solve"])
                else:
                    r = run_flexmbs(family, row["n"], tool, run["rtol"], t_end)
                    run["walls"].append(r["wall"])
                    run["integrations"].append(r["integration"])
    for row in rows:
        for run in row["runs"].values():
            run["wall"] = statistics.median(run["walls"])
            run["integration"] = statistics.median(run["integrations"])
            run["per_step"] = run["integration"] / run["steps"]
        out["sizes"].append(row)
    lo = FIT_FROM if family == "h2" else 0
    out["exponents"] = {}
    for tool in ("galpha", "bdf", "exudyn"):
        pts = [(row["n"], row["runs"][tool]["per_step"]) for row in rows
               if tool in row["runs"] and row["n"] >= lo]
        if len(pts) >= 2:
            ns, ts = zip(*pts)
            out["exponents"][tool] = {"per_step": fitted_exponent(ns, ts),
                                      "from": min(ns), "to": max(ns)}
    log("  growth of the time per step: " + ", ".join(
        f"{tool} N^{e['per_step']:.2f} ({e['from']}-{e['to']})"
        for tool, e in out["exponents"].items()))
    return out


def _predicted(last, n):
    """A run's time at size n from the last size's, growing as N (0 without one)."""
    if last is None:
        return 0.0
    n0, wall = last
    return wall * n / n0


# ------------------------------------------------------------------------ profile

@numba.njit
def _residual_loop(count, t, y, yp, args, out):
    for _ in range(count):
        y[0] += 1e-12
        _system.dae_residual(t, y, yp, args, out)


@numba.njit
def _banded_hook_loop(count, t, y, yp, args, out):
    for _ in range(count):
        y[0] += 1e-12
        out[:, :] = 0.0
        _system.dae_mass_elastic_banded(t, y, yp, args, out)


@numba.njit
def _dense_hook_loop(count, t, y, yp, args, out):
    for _ in range(count):
        y[0] += 1e-12
        out[:, :] = 0.0
        _system.dae_mass_elastic_block(t, y, yp, args, out)


@numba.njit
def _banded_factor_loop(count, g, dims, f, piv):
    for _ in range(count):
        bordered_band_factor(g, dims, f, piv)


@numba.njit
def _dense_factor_loop(count, g, work, piv):
    for _ in range(count):
        work[:, :] = g
        lu_factor(work, piv)


@numba.njit
def _banded_solve_loop(count, f, piv, dims, pos, b, x, w):
    for _ in range(count):
        x[:] = b
        bordered_band_solve(f, piv, dims, pos, x, w)


@numba.njit
def _dense_solve_loop(count, lu, piv, b, x):
    for _ in range(count):
        x[:] = b
        lu_solve(lu, piv, x)


def _per_call(loop, *args, seconds=0.3):
    """Median seconds per call of a compiled loop (three timings of enough calls)."""
    loop(1, *args)
    start = time.perf_counter()
    loop(1, *args)
    once = max(time.perf_counter() - start, 1e-7)
    count = max(3, int(seconds / once))
    times = []
    for _ in range(3):
        start = time.perf_counter()
        loop(count, *args)
        times.append((time.perf_counter() - start) / count)
    return statistics.median(times)


def profile(n, linear_solver, log):
    """Counts of a `galpha` run of H2 with n elements (rtol 1e-4, 1 s) and the cost
    of each kernel call at its last state."""
    r = run_flexmbs("h2", n, "galpha", 1e-4, 1.0, linear_solver)
    cm = compile_model(huang_two_link(n, t_end=1.0))
    banded = build_system(cm, linear_solver=linear_solver).dae_layout is not None
    sim = r["sim"]
    st = sim.statistics
    m, ws = cm.arrays, cm.new_workspace()
    y = np.array(sim.y[-1])
    yp = np.zeros_like(y)
    nq = cm.nq
    nr = y.size - nq
    costs = {"residual": _per_call(_residual_loop, 0.5, y, yp, (m, ws), np.zeros_like(y))}
    if banded:
        dims, pos = m.lin_dims, m.lin_pos
        hook = np.zeros((3, packed_size(dims)))
        costs["mass_hook"] = _per_call(_banded_hook_loop, 0.5, y, yp, (m, ws), hook)
        costs["mass_hook_a"] = _per_call(_banded_hook_loop, 0.5, y, yp, (m, ws), hook[:1])
        g = 1e3 * hook[0] + hook[1] / 1e3 + hook[2]
        f = np.zeros(factor_size(dims))
        piv = np.zeros(nr, dtype=np.int64)
        costs["factor"] = _per_call(_banded_factor_loop, g, dims, f, piv)
        b = np.ones(nr)
        costs["solve"] = _per_call(_banded_solve_loop, f, piv, dims, pos, b, np.zeros(nr),
                                   np.zeros(nr))
    else:
        hook = np.zeros((3 * nr, nr))
        costs["mass_hook"] = _per_call(_dense_hook_loop, 0.5, y, yp, (m, ws), hook)
        costs["mass_hook_a"] = _per_call(_dense_hook_loop, 0.5, y, yp, (m, ws), hook[:nr])
        g = 1e3 * hook[:nr] + hook[nr:2 * nr] / 1e3 + hook[2 * nr:]
        work = np.zeros_like(g)
        piv = np.zeros(nr, dtype=np.int64)
        costs["factor"] = _per_call(_dense_factor_loop, g, work, piv)
        costs["solve"] = _per_call(_dense_solve_loop, work, piv, np.ones(nr), np.zeros(nr))
    counts = {"steps": int(st["nsteps"]), "residual": int(st["nres"]),
              "mass_hook": int(st["njac"]), "mass_hook_a": int(st["nmass"]),
              "factor": int(st["nlu"]), "solve": int(st["nnewton"])}
    explained = sum(counts[k] * costs[k] for k in costs)
    row = {"n": n, "layout": "banded" if banded else "dense", "coordinates": nq,
           "dims": [int(x) for x in m.lin_dims], "integration": float(st["wall_time"]),
           "counts": counts, "costs": costs, "explained": explained / st["wall_time"]}
    log(f"  N = {n} ({row['layout']}): {counts['steps']} steps in "
        f"{row['integration']:.2f} s; per call: " + ", ".join(
            f"{k} {1e3 * v:.3f} ms" for k, v in costs.items())
        + f"; counts x costs = {100 * row['explained']:.0f} % of the integration")
    return row


# ------------------------------------------------------------------------- tables

def _ms(x):
    return significant(1e3 * x, 3)


def _wall(run):
    """The median wall time, with the lowest and highest of its rounds when more than
    one."""
    walls = run.get("walls", [run["wall"]])
    if len(walls) < 2:
        return significant(run["wall"], 3)
    return (f"{significant(run['wall'], 3)} [{significant(min(walls), 2)}-"
            f"{significant(max(walls), 2)}]")


def scaling_table(fam):
    spec = FAMILIES[fam["family"]]
    lines = [f"| {spec['name']}: N | coordinates | Exudyn h {sci(fam['h'], 0)}: "
             "accuracy, s (ms a step) | `galpha` at that accuracy: rtol, steps, s "
             "(ms a step) | `bdf`: rtol, steps, s (ms a step) | Exudyn / `galpha` |",
             "|---|---|---|---|---|---|"]
    for row in fam["sizes"]:
        runs = row["runs"]
        x = runs.get("exudyn")
        cells = [str(row["n"]), grouped(row.get("coordinates", 0)) or "-"]
        cells.append(f"{sci(x['accuracy'])}, {_wall(x)} "
                     f"({_ms(x['per_step'])})" if x else "n.r.")
        for method in ("galpha", "bdf"):
            r = runs.get(method)
            if r is None:
                cells.append("n.r.")
                continue
            mark = "" if r["equal"] else f" (closest: {sci(r['accuracy'])})"
            cells.append(f"{r['setting'].replace('rtol ', '')}, {grouped(r['steps'])}, "
                         f"{_wall(r)} ({_ms(r['per_step'])}){mark}")
        g = runs.get("galpha")
        cells.append(f"{significant(x['wall'] / g['wall'], 2)}" if x and g else "-")
        lines.append("| " + " | ".join(cells) + " |")
    exps = fam.get("exponents", {})
    lines.append("")
    lines.append(f"Growth of the time per step ({spec['name']}, N = "
                 + ", ".join(f"{tool if tool == 'Exudyn' else tool} "
                             f"{e['from']} to {e['to']}: N^{e['per_step']:.2f}"
                             for tool, e in ((('Exudyn' if k == 'exudyn' else f'`{k}`'), v)
                                             for k, v in exps.items()))
                 + ").")
    return lines


def profile_table(results):
    lines = ["| N | layout | steps | residuals | mass hook (A, K, D / A) | factorizations "
             "| solves | per call, ms: residual | mass hook | A | factor | solve | "
             "counts x costs |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in results["profile"]:
        c, k = row["costs"], row["counts"]
        lines.append(
            f"| {row['n']} | {row['layout']} | {grouped(k['steps'])} | "
            f"{grouped(k['residual'])} | {k['mass_hook']} / {grouped(k['mass_hook_a'])} | "
            f"{grouped(k['factor'])} | {grouped(k['solve'])} | {_ms(c['residual'])} | "
            f"{_ms(c['mass_hook'])} | {_ms(c['mass_hook_a'])} | {_ms(c['factor'])} | "
            f"{_ms(c['solve'])} | {100 * row['explained']:.0f} % |")
    return lines


def table(results):
    parts = []
    if "families" in results:
        parts += ["\n".join(scaling_table(f)) for f in results["families"]]
    if "profile" in results:
        parts.append("\n".join(profile_table(results)))
    return "\n\n".join(parts)


# --------------------------------------------------------------------------- main

def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--family", nargs="+", default=list(FAMILIES), choices=list(FAMILIES))
    p.add_argument("--sizes", nargs="+", type=int, help="only these sizes")
    p.add_argument("--t-end", type=float, help="shorter runs, for a quick look")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--methods", nargs="+", default=["galpha", "bdf"],
                   choices=("galpha", "bdf"), help="the flexmbs integrators to run")
    p.add_argument("--max-run", type=float, default=900.0,
                   help="leave out runs predicted to take longer (s)")
    p.add_argument("--profile", nargs="+", type=int, metavar="N",
                   help="the per-call profile of H2 with N elements instead")
    p.add_argument("--linear-solver", default="auto", choices=("auto", "dense", "banded"),
                   help="the layout of the iteration matrix in --profile")
    add_results_options(p)
    a = p.parse_args()
    if printed_table(a, table):
        return

    def log(text):
        print(text, flush=True)

    info = machine()
    log(f"machine: {info['cpu']}, {info['cores']} cores; numba {info['numba']}, "
        f"exudyn {info['exudyn']}")
    start = time.perf_counter()
    results = {"machine": info}
    for method in ("galpha", "bdf"):  # compile every path first (not timed)
        for n in (2, 20):
            run_flexmbs("h2", n, method, 1e-4, 0.01)
    if a.profile:
        results["profile"] = [profile(n, a.linear_solver, log) for n in a.profile]
    else:
        if "ur5" in a.family:
            run_flexmbs("ur5", 4, "galpha", 1e-4, 0.01)
        results["families"] = []
        for family in a.family:
            results["families"].append(bench_family(family, a, log))
            if a.json:
                Path(a.json).write_text(json.dumps(results, indent=1))
    results["total_wall"] = time.perf_counter() - start
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps(results, indent=1))
    print(table(results))


if __name__ == "__main__":
    main()
