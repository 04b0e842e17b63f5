"""Integrators on the rigid CHAIN-N models (docs/explanation/benchmark-models.md).

For each chain (planar and spatial, N = 2, 4, 8, 16, 32), 10 s of simulated time, the
same rtol/atol for every solver: wall time (median of --repeat runs, after one warm-up
run so that numba compilation is not counted), steps, residual/right-hand-side
evaluations and the energy drift max |E(t) - E(0)|. Ratios are taken within one
process, on one machine, in one run. Also times `flexmbs run` cold (fresh kernel cache)
and warm (cached) in subprocesses.

    .venv/bin/python benchmarks/bench_integrators.py                 # the full table
    .venv/bin/python benchmarks/bench_integrators.py --n 2 4 --repeat 1 --solvers bdf ida
    .venv/bin/python benchmarks/bench_integrators.py --equal-drift \
        --json benchmarks/results/integrators.json
    .venv/bin/python benchmarks/bench_integrators.py --solvers bdf scipy-radau \
        --equal-drift --step-drift --no-start \
        --json benchmarks/results/integrators_step_drift.json

--equal-drift adds, for each chain, `bdf` at the loosest rtol (1e-9, 5e-10, 2e-10,
1e-10, ... 1e-13, atol = rtol / 100) whose drift is at most scipy-radau's at the
common tolerance, and the ratio of their wall times: the comparison "at equal or
better energy drift".

The drift of the timed runs is read at the outputs (every 0.01 s), which come from each
method's dense output. --step-drift also measures it at the accepted steps themselves
(one more, untimed, run of scipy-radau and of bdf per tolerance) and repeats the
equal-drift comparison with that drift. The two differ for scipy's Radau, whose steps
are of order 5 but whose dense output, the collocation polynomial, is of order 3.

--table JSON prints the tables of docs/explanation/performance.md from a results file:
wall time and drift of every solver and the equal-drift comparison, or with
--step-drift's results the comparison at the outputs and at the steps side by side.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from peers import add_results_options, printed_table

from flexmbs.dynamics.energy import ENERGY_COMPONENTS
from flexmbs.dynamics.outputs import output_quantities
from flexmbs.model.library import chain_model
from flexmbs.simulation import SOLVERS, build_system, compile_model, make_integrator, simulate

ROOT = Path(__file__).resolve().parents[1]


def run_once(n, variant, solver, t_end, rtol, atol):
    model = chain_model(n, variant, t_end=t_end)
    start = time.perf_counter()
    sim = simulate(model, None, method=solver, rtol=rtol, atol=atol, output_step=0.01)
    wall = time.perf_counter() - start
    return {"wall": wall, "status": sim.status,
            "nsteps": int(sim.statistics.get("nsteps", 0)),
            "nres": int(sim.statistics.get("nres", 0)),
            "drift": drift(sim.energy)}


def drift(e):
    """max |E(t) - E(0)| of the total energy E = kinetic + gravity + strain + spring -
    dissipated, from rows of the energy components (ENERGY_COMPONENTS), in J."""
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    return float(np.abs(total - total[0]).max())


def step_drift(n, variant, solver, t_end, rtol, atol):
    """The energy drift of `solver` ("bdf" or a scipy method) at its accepted steps,
    where no dense output enters: one untimed run stepped from Python (the integrator's
    `driver`)."""
    cm = compile_model(chain_model(n, variant, t_end=t_end))
    system = build_system(cm)
    y0 = cm.initial_state()
    driver = make_integrator(solver, system, 0.0, y0, t_end, rtol, atol).driver
    end = np.array([t_end])
    ts, ys = [0.0], [y0]
    while driver.status == "running":
        if solver == "bdf":
            driver.advance(end, max_steps=1)
        else:
            with np.errstate(over="ignore"):  # as in ScipyIntegrator: W_nc's column
                driver.step()
        ts.append(driver.t)
        ys.append(np.array(driver.y))
    e = np.zeros((len(ts), len(ENERGY_COMPONENTS)))
    output_quantities(cm.arrays, system.ws, np.array(ts), np.array(ys), e,
                      np.zeros((len(ts), cm.nsensor_values)))
    return drift(e)


def bench_chains(sizes, variants, solvers, t_end, rtol, atol, repeat):
    rows = []
    for variant in variants:
        for n in sizes:
            for solver in solvers:
                run_once(min(n, 2), variant, solver, 0.1, rtol, atol)  # warm the kernels
                runs = [run_once(n, variant, solver, t_end, rtol, atol)
                        for _ in range(repeat)]
                row = dict(runs[0], variant=variant, n=n, solver=solver,
                           wall=statistics.median(r["wall"] for r in runs))
                rows.append(row)
                print(f"{variant:8s} N={n:3d} {solver:12s} {row['status']:9s} "
                      f"wall {row['wall']:8.3f} s  steps {row['nsteps']:7d}  "
                      f"evals {row['nres']:8d}  drift {row['drift']:.2e}", flush=True)
    return rows


EQUAL_DRIFT_RTOLS = tuple(float(f"{m}e{e}") for e in range(-9, -14, -1)
                          for m in (5, 2, 1) if float(f"{m}e{e}") <= 1e-9)
"""1e-9, 5e-10, 2e-10, 1e-10, ... 1e-13: the tolerances searched by --equal-drift."""


def bench_equal_drift(rows, t_end, repeat, rtol, atol, peer="scipy-radau",
                      rtols=EQUAL_DRIFT_RTOLS, at_steps=False):
    """For each chain that `peer` ran: `bdf` at the first rtol of `rtols` (atol = rtol /
    100) whose energy drift is at most the peer's at (rtol, atol), timed as in
    bench_chains; the ratio of the peer's wall time to it. The drifts compared are
    those at the outputs of the timed runs, or with `at_steps` those at the accepted
    steps (step_drift, untimed runs)."""
    out = []
    for r in rows:
        if r["solver"] != peer:
            continue
        chain = (r["n"], r["variant"])
        peer_drift = (step_drift(*chain, peer, t_end, rtol, atol) if at_steps
                      else r["drift"])
        for bdf_rtol in rtols:
            if at_steps:
                b_drift = step_drift(*chain, "bdf", t_end, bdf_rtol, bdf_rtol / 100)
                runs = []
            else:
                runs = [run_once(*chain, "bdf", t_end, bdf_rtol, bdf_rtol / 100)]
                b_drift = runs[0]["drift"]
            if b_drift <= peer_drift:
                break
        runs += [run_once(*chain, "bdf", t_end, bdf_rtol, bdf_rtol / 100)
                 for _ in range(repeat - len(runs))]
        b = dict(runs[0], wall=statistics.median(x["wall"] for x in runs))
        row = {"variant": r["variant"], "n": r["n"], "peer": peer, "peer_wall": r["wall"],
               "peer_drift": peer_drift, "bdf_rtol": bdf_rtol, "bdf_wall": b["wall"],
               "bdf_steps": b["nsteps"], "bdf_drift": b_drift,
               "ratio": r["wall"] / b["wall"], "equal_or_better": b_drift <= peer_drift}
        out.append(row)
        print(f"{row['variant']:8s} N={row['n']:3d} bdf at rtol {bdf_rtol:.0e}: wall "
              f"{b['wall']:.3f} s, drift {b_drift:.2e} (peer {peer_drift:.2e}"
              f"{', at the steps' if at_steps else ''}); {peer} / bdf = "
              f"{row['ratio']:.1f}", flush=True)
    return out


def print_ratios(rows, base="bdf"):
    """Wall time and drift of every other solver relative to `base`, per chain."""
    by = {(r["variant"], r["n"], r["solver"]): r for r in rows}
    for (variant, n, solver), r in by.items():
        b = by.get((variant, n, base))
        if solver == base or b is None:
            continue
        print(f"{variant:8s} N={n:3d} {solver:12s} time / {base} time = "
              f"{r['wall'] / b['wall']:7.1f}   drift / {base} drift = "
              f"{r['drift'] / max(b['drift'], 1e-300):7.2f}")


def bench_start(solver):
    """Wall time of `flexmbs run` on chain_planar_4 (1 s) with a fresh and a warm cache."""
    out = {}
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, FLEXMBS_CACHE_DIR=cache)
        env.pop("NUMBA_CACHE_DIR", None)   # it would override the fresh folder
        cmd = [sys.executable, "-m", "flexmbs", "run",
               str(ROOT / "data" / "models" / "chain_planar_4.toml"), "-q",
               "-o", str(Path(tmp) / "x.h5"), "--t-end", "1", "--solver", solver]
        for label in ("cold", "warm"):
            start = time.perf_counter()
            subprocess.run(cmd, env=env, check=True)
            out[label] = time.perf_counter() - start
    print(f"flexmbs run ({solver}): cold {out['cold']:.1f} s, warm {out['warm']:.2f} s")
    return out


RATIOS = (("ida", "ida / bdf"), ("scipy-radau", "radau / bdf"))
"""The solvers whose wall time the first table gives as a ratio to bdf's."""


def _chains(rows):
    """The chains of `rows` ((variant, n)) in their order."""
    return list(dict.fromkeys((r["variant"], r["n"]) for r in rows))


def solvers_table(rows):
    """Wall time (s) and drift (J) of every solver per chain, and RATIOS."""
    solvers = list(dict.fromkeys(r["solver"] for r in rows))
    by = {(r["variant"], r["n"], r["solver"]): r for r in rows}
    ratios = [(s, name) for s, name in RATIOS if s in solvers and "bdf" in solvers]
    lines = ["| chain | N | " + " | ".join(f"`{s}` | drift" for s in solvers)
             + "".join(f" | {name}" for _, name in ratios) + " |",
             "|---|---|" + "---|---|" * len(solvers) + "---|" * len(ratios)]
    for variant, n in _chains(rows):
        cells = [variant, str(n)]
        for s in solvers:
            r = by.get((variant, n, s))
            cells += ([f"{r['wall']:.3g}", f"{r['drift']:.1e}"] if r else ["-", "-"])
        for s, _ in ratios:
            r, b = by.get((variant, n, s)), by.get((variant, n, "bdf"))
            cells.append(f"{r['wall'] / b['wall']:.1f}" if r and b else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def equal_drift_table(equal):
    """The peer against bdf at the loosest rtol whose drift is at most the peer's."""
    lines = ["| chain | N | `scipy-radau` | its drift | `bdf` rtol | `bdf` | its drift | "
             "radau / bdf |",
             "|---|---|---|---|---|---|---|---|"]
    for e in equal:
        lines.append(f"| {e['variant']} | {e['n']} | {e['peer_wall']:.3g} | "
                     f"{e['peer_drift']:.1e} | {e['bdf_rtol']:.0e} | {e['bdf_wall']:.3g} | "
                     f"{e['bdf_drift']:.1e} | {e['ratio']:.1f} |")
    return lines


def step_drift_table(equal, equal_steps):
    """The equal-drift comparison with the drift at the outputs and at the steps."""
    lines = ["| chain | N | `scipy-radau` | drift at outputs | `bdf` rtol | `bdf` | "
             "radau / bdf | drift at steps | `bdf` rtol | `bdf` | radau / bdf |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    steps = {(e["variant"], e["n"]): e for e in equal_steps}
    for e in equal:
        s = steps[(e["variant"], e["n"])]
        lines.append(f"| {e['variant']} | {e['n']} | {e['peer_wall']:.3g} | "
                     f"{e['peer_drift']:.1e} | {e['bdf_rtol']:.0e} | {e['bdf_wall']:.3g} | "
                     f"{e['ratio']:.1f} | {s['peer_drift']:.1e} | {s['bdf_rtol']:.0e} | "
                     f"{s['bdf_wall']:.3g} | {s['ratio']:.1f} |")
    return lines


def table(results):
    """The documentation's tables of a results file: with the drift at the steps
    (--step-drift), the equal-drift comparison at the outputs and at the steps; else
    every solver's wall time and drift, then the equal-drift comparison if made."""
    if results.get("equal_step_drift"):
        return "\n".join(step_drift_table(results["equal_drift"],
                                          results["equal_step_drift"]))
    lines = solvers_table(results["rows"])
    if results.get("equal_drift"):
        lines += [""] + equal_drift_table(results["equal_drift"])
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, nargs="+", default=[2, 4, 8, 16, 32])
    p.add_argument("--variants", nargs="+", default=["planar", "spatial"])
    p.add_argument("--solvers", nargs="+", default=[s for s in ("bdf", "ida",
                                                                  "scipy-radau", "dop853")
                                                     if s in SOLVERS])
    p.add_argument("--t-end", type=float, default=10.0)
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--atol", type=float, default=1e-10)
    p.add_argument("--repeat", type=int, default=3)
    add_results_options(p)
    p.add_argument("--equal-drift", action="store_true",
                   help="also time bdf at the tolerance that matches scipy-radau's drift")
    p.add_argument("--step-drift", action="store_true",
                   help="with --equal-drift: also compare the drifts at the accepted steps")
    p.add_argument("--no-start", action="store_true",
                   help="skip the cold/warm `flexmbs run` timing")
    a = p.parse_args()
    if printed_table(a, table):
        return
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"python {platform.python_version()}; rtol {a.rtol}, atol {a.atol}, "
          f"t_end {a.t_end} s")
    rows = bench_chains(a.n, a.variants, a.solvers, a.t_end, a.rtol, a.atol, a.repeat)
    print_ratios(rows)
    equal = (bench_equal_drift(rows, a.t_end, a.repeat, a.rtol, a.atol)
             if a.equal_drift else [])
    equal_steps = (bench_equal_drift(rows, a.t_end, a.repeat, a.rtol, a.atol,
                                     at_steps=True)
                   if a.equal_drift and a.step_drift else [])
    start = {} if a.no_start else {s: bench_start(s) for s in a.solvers[:1]}
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps({
            "machine": platform.platform(), "cores": os.cpu_count(), "rtol": a.rtol,
            "atol": a.atol, "t_end": a.t_end, "rows": rows, "equal_drift": equal,
            "equal_step_drift": equal_steps, "start": start}, indent=1))


if __name__ == "__main__":
    main()
