r"""Rigid CHAIN-N (docs/explanation/benchmark-models.md) against peer simulators at equal
energy drift: flexmbs (`bdf`), scipy's DOP853 and Radau with Pinocchio's `aba` as the
right-hand side (Radau with Pinocchio's analytic ABA derivatives as its Jacobian),
SUNDIALS IDA (scikit-sundae) on Pinocchio's `rnea` residual with the RNEA derivatives
as its Jacobian, and Exudyn's ObjectKinematicTree with generalized-alpha.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python benchmarks/bench_peers_chain.py --n 8 --variants planar  # CHAIN-8
    .venv/bin/python benchmarks/bench_peers_chain.py --n 2 4 8 16 32 \
        --json benchmarks/results/peers_chain.json
    .venv/bin/python benchmarks/bench_peers_chain.py --n 4 --methods flexmbs dop853 --repeat 5

For each chain, 10 s from docs/explanation/benchmark-models.md's initial state, outputs
every 0.01 s:

1. Verification: every peer's joint angles at t = 1 s against flexmbs at rtol 1e-12
   (the tolerance methods at rtol 1e-12, Exudyn at a step of 1e-5 s and 2e-5 s, whose
   ratio shows its second order), and flexmbs' own energy against Pinocchio's on
   flexmbs' outputs.
2. Tuning: each method's setting is made tighter until its energy drift
   max |E(t) - E(0)| over the 10 s (on the outputs, Pinocchio's energy for every
   method) is at or below the target: --drift (1e-6 J) times (N/8)^2, the same
   drift relative to the chain's potential-energy scale m g L N^2 / 2 as 1e-6 J is for
   CHAIN-8. Tolerance methods go down half a decade at a time from rtol 1e-6
   (--rtol-start; atol = rtol / 100); Exudyn's fixed step from 1e-3 s down, each next
   step predicted from the drift's h^2 law (aimed at half the target), then the
   largest passing step bracketed to within a factor --bracket (1.5). A run predicted
   to take longer than --max-run seconds is not made: the method is reported as not
   reaching the target, with the step and time predicted.
3. Timing: every method at its tuned setting, --repeat runs (at least 3), taken in turn
   (one run of each method, then the next round) in this one process; the median wall
   time (building the model and integrating, outputs included) is reported, and the
   ratio flexmbs time / peer time.

Numba compilation is not timed (a warm-up run first). The results go to --json;
--table prints the two tables of docs/explanation/performance.md from a results file
(median wall times; ratios flexmbs / peer with the drift each reached), a row per chain.
A chain whose tuning started below rtol 1e-6 (--rtol-start) is marked so in its N.
"""

import argparse
import json
import math
import statistics
import time
from pathlib import Path

import numpy as np
from peers import (
    CHAIN_OUTPUT_STEP,
    add_results_options,
    chain_energy,
    chain_initial,
    exudyn_chain,
    machine,
    pinocchio_chain,
    printed_table,
    sci,
    significant,
)

T_END = 10.0
VERIFY_T = 1.0
RTOL_START = 1e-6
RTOL_FLOOR = 1e-14
ATOL_RATIO = 1e-2
EXUDYN_H_START = 1e-3  # s
EXUDYN_H_FLOOR = 1e-7
EXUDYN_MARGIN = 0.5  # aim the predicted drift at this fraction of the target
EXUDYN_ORDER = 2  # generalized-alpha: the energy error goes as h^2
EXUDYN_BRACKET = 1.5
METHODS = ("flexmbs", "dop853", "radau", "ida", "exudyn", "flexmbs-dop853")


class Chain:
    """One CHAIN-N: Pinocchio's model, its energy, and a runner per method."""

    def __init__(self, n, variant):
        import pinocchio as pin
        self.n, self.variant = n, variant
        self.pin = pin
        self.model = pinocchio_chain(n, variant)
        self.data = self.model.createData()
        self.q0 = chain_initial(n, variant)

    def drift(self, q, v):
        e = chain_energy(self.model, self.data, q, v)
        return float(np.abs(e - e[0]).max())

    def outputs(self, t_end):
        return CHAIN_OUTPUT_STEP * np.arange(0, int(round(t_end / CHAIN_OUTPUT_STEP)) + 1)

    # each runner: (setting, t_end) -> dict(wall, q, v, steps, evaluations, status)

    def run_flexmbs(self, rtol, t_end, method="bdf"):
        from flexmbs.model.library import chain_model
        from flexmbs.simulation import simulate
        start = time.perf_counter()
        sim = simulate(chain_model(self.n, self.variant, t_end=t_end), None, method=method,
                       rtol=rtol, atol=rtol * ATOL_RATIO, output_step=CHAIN_OUTPUT_STEP)
        wall = time.perf_counter() - start
        n = self.n
        return {"wall": wall, "t": sim.t, "q": sim.y[:, :n], "v": sim.y[:, n:2 * n],
                "steps": int(sim.statistics.get("nsteps", 0)) or None,
                "evaluations": int(sim.statistics.get("nres", sim.statistics.get("nfev", 0))),
                "status": sim.status,
                "energy": sim.energy}

    def _rhs(self):
        pin, model, data, n = self.pin, self.model, self.data, self.n
        tau = np.zeros(n)

        def rhs(t, y):
            return np.concatenate([y[n:], pin.aba(model, data, y[:n], y[n:], tau)])
        return rhs

    def _scipy(self, method, rtol, t_end):
        from scipy.integrate import solve_ivp
        pin, model, data, n = self.pin, self.model, self.data, self.n
        start = time.perf_counter()
        tau = np.zeros(n)
        jac = None
        if method == "Radau":
            zero, eye = np.zeros((n, n)), np.eye(n)

            def jac(t, y):
                dq, dv, _ = pin.computeABADerivatives(model, data, y[:n], y[n:], tau)
                return np.block([[zero, eye], [dq, dv]])
        te = self.outputs(t_end)
        options = {} if jac is None else {"jac": jac}
        sol = solve_ivp(self._rhs(), (0.0, t_end), np.concatenate([self.q0, np.zeros(n)]),
                        method=method, rtol=rtol, atol=rtol * ATOL_RATIO, t_eval=te,
                        **options)
        wall = time.perf_counter() - start
        return {"wall": wall, "t": sol.t, "q": sol.y[:n].T, "v": sol.y[n:].T,
                "steps": None, "evaluations": int(sol.nfev),
                "status": "finished" if sol.success else f"failed: {sol.message}"}

    def run_dop853(self, rtol, t_end):
        return self._scipy("DOP853", rtol, t_end)

    def run_radau(self, rtol, t_end):
        return self._scipy("Radau", rtol, t_end)

    def run_ida(self, rtol, t_end):
        from sksundae.ida import IDA
        pin, model, data, n = self.pin, self.model, self.data, self.n
        eye = np.eye(n)
        count = [0]

        def residual(t, y, yp, res):
            count[0] += 1
            res[:n] = yp[:n] - y[n:]
            res[n:] = pin.rnea(model, data, y[:n], y[n:], yp[n:])

        def jacobian(t, y, yp, res, cj, jj):
            dq, dv, mass = pin.computeRNEADerivatives(model, data, y[:n], y[n:], yp[n:])
            mass = np.triu(mass) + np.triu(mass, 1).T
            jj[:n, :n] = cj * eye
            jj[:n, n:] = -eye
            jj[n:, :n] = dq
            jj[n:, n:] = dv + cj * mass

        start = time.perf_counter()
        y0 = np.concatenate([self.q0, np.zeros(n)])
        yp0 = self._rhs()(0.0, y0)
        solver = IDA(residual, rtol=rtol, atol=rtol * ATOL_RATIO, jacfn=jacobian,
                     max_num_steps=10_000_000)
        sol = solver.solve(self.outputs(t_end), y0, yp0)
        wall = time.perf_counter() - start
        return {"wall": wall, "t": np.asarray(sol.t), "q": sol.y[:, :n], "v": sol.y[:, n:],
                "steps": None, "evaluations": count[0],
                "status": "finished" if sol.success else f"failed: {sol.message}"}

    def run_exudyn(self, h, t_end):
        wall, t, q, v, steps = exudyn_chain(self.n, self.variant, h, t_end)
        return {"wall": wall, "t": t, "q": q, "v": v, "steps": steps, "evaluations": None,
                "status": "finished"}

    def run_flexmbs_dop853(self, rtol, t_end):
        return self.run_flexmbs(rtol, t_end, method="dop853")

    def runner(self, method):
        return getattr(self, "run_" + method.replace("-", "_"))


def verify(chain, methods):
    """Joint angles at t = 1 s of every method against flexmbs at rtol 1e-12; flexmbs'
    energy against Pinocchio's on its outputs."""
    ref = chain.run_flexmbs(1e-12, VERIFY_T)
    out = {}
    e_fx = ref["energy"][:, 0] + ref["energy"][:, 1]
    e_pin = chain_energy(chain.model, chain.data, ref["q"], ref["v"])
    out["energy_flexmbs_vs_pinocchio"] = float(np.abs(e_fx - e_pin).max())
    q_ref = ref["q"][-1]
    for method in methods:
        if method.startswith("flexmbs"):
            continue
        if method == "exudyn":
            for h in (2e-5, 1e-5):
                r = chain.run_exudyn(h, VERIFY_T)
                out[f"exudyn_h{h:g}"] = float(np.abs(r["q"][-1] - q_ref).max())
        else:
            r = chain.runner(method)(1e-12, VERIFY_T)
            out[method] = float(np.abs(r["q"][-1] - q_ref).max())
    return out


def _ladder(start=RTOL_START):
    k = 0
    while True:
        rtol = start * 10 ** (-k / 2)
        if rtol < RTOL_FLOOR * 0.99:
            return
        yield float(f"{rtol:.3g}")
        k += 1


def tune_tolerance(chain, method, target, max_run, log, start=RTOL_START):
    """The loosest rtol of the half-decade ladder whose drift is at or below target."""
    tried = []
    for rtol in _ladder(start):
        if tried and tried[-1]["wall"] * 2 > max_run:
            break
        r = chain.runner(method)(rtol, T_END)
        d = chain.drift(r["q"], r["v"]) if r["status"] == "finished" else math.inf
        tried.append({"setting": rtol, "drift": d, "wall": r["wall"], "status": r["status"]})
        log(f"    {method:8s} rtol {rtol:8.2e}: drift {d:9.2e} J, {r['wall']:7.2f} s")
        if d <= target:
            return rtol, tried
    return None, tried


def tune_step(chain, target, max_run, log, bracket=EXUDYN_BRACKET):
    """Exudyn's fixed step: from EXUDYN_H_START down, each next step from the drift's
    second order in h (generalized-alpha) aimed at EXUDYN_MARGIN of the target (at least
    halving, at most a tenth); once a step passes, the largest passing step is sought
    between it and the smallest failing one (bisection in log h, to within a factor
    `bracket`). (None, tried, prediction) when the next run would take over
    max_run s."""
    tried = []

    def attempt(h):
        r = chain.run_exudyn(h, T_END)
        d = chain.drift(r["q"], r["v"])
        tried.append({"setting": h, "drift": d, "wall": r["wall"], "status": r["status"]})
        log(f"    exudyn   h    {h:8.2e}: drift {d:9.2e} J, {r['wall']:7.2f} s")
        return d, r["wall"]

    h = EXUDYN_H_START
    while True:
        d, wall = attempt(h)
        if d <= target:
            break
        ratio = EXUDYN_MARGIN * target / d if np.isfinite(d) else 0.01
        h_next = float(f"{h * min(max(ratio ** (1 / EXUDYN_ORDER), 0.1), 0.5):.2g}")
        predicted = wall * h / h_next
        if predicted > max_run or h_next < EXUDYN_H_FLOOR:
            return None, tried, {"h": h_next, "wall": predicted}
        h = h_next
    passed = h
    failed = min((t["setting"] for t in tried if t["drift"] > target), default=None)
    while failed is not None and failed / passed > bracket:
        h = float(f"{math.sqrt(failed * passed):.2g}")
        d, _ = attempt(h)
        if d <= target:
            passed = h
        else:
            failed = h
    return passed, tried, None


def bench_chain(n, variant, methods, target, repeat, max_run, do_verify, log,
                bracket=EXUDYN_BRACKET, rtol_start=RTOL_START):
    chain = Chain(n, variant)
    log(f"{variant} CHAIN-{n}: target drift {target:.2e} J")
    row = {"variant": variant, "n": n, "target": target, "methods": {}}
    if do_verify:
        row["verification"] = verify(chain, methods)
        log("  verification (max |q - q_flexmbs| at t = 1 s, rad): "
            + ", ".join(f"{k} {v:.1e}" for k, v in row["verification"].items()))
    settings = {}
    for method in methods:
        if method == "exudyn":
            setting, tried, predicted = tune_step(chain, target, max_run, log, bracket)
        else:
            setting, tried = tune_tolerance(chain, method, target, max_run, log, rtol_start)
            predicted = None
        row["methods"][method] = {"setting": setting, "tried": tried,
                                  "setting_name": "h" if method == "exudyn" else "rtol"}
        if setting is None:
            row["methods"][method]["not_reached"] = predicted or True
        else:
            settings[method] = setting
    walls = {m: [] for m in settings}
    for _ in range(repeat):
        for method, setting in settings.items():
            r = chain.runner(method)(setting, T_END)
            walls[method].append(r["wall"])
            info = row["methods"][method]
            info.update(drift=chain.drift(r["q"], r["v"]), steps=r["steps"],
                        evaluations=r["evaluations"], status=r["status"])
    for method, w in walls.items():
        row["methods"][method].update(wall=statistics.median(w), walls=w)
    base = row["methods"].get("flexmbs", {}).get("wall")
    for method, info in row["methods"].items():
        if "wall" in info:
            if base:
                info["ratio"] = base / info["wall"]
            log(f"  {method:8s} {info['setting_name']} {info['setting']:8.2e}: "
                f"{info['wall']:8.3f} s (median of {len(info['walls'])}), drift "
                f"{info['drift']:.2e} J, steps {info['steps']}"
                + (f", flexmbs / {method} = {info['ratio']:.3f}" if base else ""))
        else:
            nr = info["not_reached"]
            extra = (f" (predicted {nr['wall']:.0f} s at h {nr['h']:.1e})"
                     if isinstance(nr, dict) else "")
            log(f"  {method:8s} did not reach the target within --max-run{extra}")
    return row


def warm_up(methods):
    """Compile flexmbs' kernels (not timed) and load every peer once."""
    chain = Chain(2, "planar")
    for method in methods:
        chain.runner(method)(1e-6 if method != "exudyn" else 1e-3, 0.1)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, nargs="+", default=[2, 4, 8, 16, 32])
    p.add_argument("--variants", nargs="+", default=["planar", "spatial"],
                   choices=["planar", "spatial"])
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    p.add_argument("--drift", type=float, default=1e-6,
                   help="target drift of CHAIN-8 (J); N scales it by (N/8)^2")
    p.add_argument("--absolute", action="store_true",
                   help="the same target drift (J) for every N")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--max-run", type=float, default=600.0,
                   help="longest single run (s) made while tuning")
    p.add_argument("--bracket", type=float, default=EXUDYN_BRACKET,
                   help="Exudyn's largest passing step is sought to within this factor")
    p.add_argument("--rtol-start", type=float, default=RTOL_START,
                   help="the loosest rtol tried (the ladder goes down from it)")
    p.add_argument("--no-verify", action="store_true")
    add_results_options(p)
    a = p.parse_args()
    if printed_table(a, table):
        return
    if a.repeat < 1:
        p.error("--repeat must be at least 1")

    def log(text):
        print(text, flush=True)

    info = machine()
    log(f"machine: {info['cpu']}, {info['cores']} cores; python {info['python']}, numba "
        f"{info['numba']}, pinocchio {info['pinocchio']}, exudyn {info['exudyn']}, "
        f"scikit-sundae {info['scikit-sundae']}")
    warm_up(a.methods)
    rows = []
    for variant in a.variants:
        for n in a.n:
            target = a.drift * (1.0 if a.absolute else (n / 8) ** 2)
            rows.append(bench_chain(n, variant, a.methods, target, a.repeat, a.max_run,
                                    not a.no_verify, log, a.bracket, a.rtol_start))
            if a.json:
                _write(a.json, info, a, rows)
    summary(rows, log)


def _write(path, info, a, rows):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps({
        "machine": info, "t_end": T_END, "drift_chain8": a.drift, "absolute": a.absolute,
        "repeat": a.repeat, "atol_ratio": ATOL_RATIO, "rows": rows}, indent=1))


def summary(rows, log):
    """The table: median wall time (s) and drift (J) per method, flexmbs / peer."""
    log("\nchain    N  target   | method   setting    wall (s)   drift (J)  flexmbs/peer")
    for row in rows:
        for method, info in row["methods"].items():
            if "wall" in info:
                ratio = f"{info['ratio']:.3g}" if "ratio" in info else "-"
                log(f"{row['variant']:8s} {row['n']:2d} {row['target']:.1e} | {method:8s} "
                    f"{info['setting']:8.2e} {info['wall']:10.3f} {info['drift']:10.2e}  "
                    f"{ratio}")
            else:
                log(f"{row['variant']:8s} {row['n']:2d} {row['target']:.1e} | {method:8s} "
                    f"not reached")



COLUMNS = (("flexmbs", "flexmbs `bdf`"), ("dop853", "DOP853"), ("radau", "Radau"),
           ("ida", "IDA"), ("exudyn", "Exudyn"), ("flexmbs-dop853", "flexmbs `dop853`"))
"""The methods in the tables' order, with their headings."""


def _chain(row):
    """The chain's first two cells: its variant and N, N with the rtol its tuning
    started from when that was not RTOL_START."""
    start = max((info["tried"][0]["setting"] for info in row["methods"].values()
                 if info["setting_name"] == "rtol" and info["tried"]), default=RTOL_START)
    n = str(row["n"]) if start == RTOL_START else f"{row['n']}, from rtol {sci(start, 0)}"
    return f"| {row['variant']} | {n} |"


def table(results):
    """The documentation's tables: the median wall time (s) of every method at its
    tuned setting with [lowest-highest] of its runs, then flexmbs' drift and each
    peer's ratio flexmbs time / peer time with the drift it reached (J). n.r.: the
    target not reached within --max-run; -: the method not run."""
    times = ["| chain | N | target (J) | " + " | ".join(name for _, name in COLUMNS) + " |",
             "|---|---|---|" + "---|" * len(COLUMNS)]
    ratios = ["| chain | N | flexmbs drift | "
              + " | ".join(name for _, name in COLUMNS[1:]) + " |",
              "|---|---|---|" + "---|" * (len(COLUMNS) - 1)]
    for row in results["rows"]:
        methods = row["methods"]
        cells, pairs = [], []
        for method, _ in COLUMNS:
            info = methods.get(method)
            if info is None:
                cells.append("-")
                pairs.append("-")
            elif "wall" not in info:
                cells.append("n.r.")
                pairs.append("n.r.")
            else:
                walls = info.get("walls", [])
                spread = (f" [{significant(min(walls), 2)}-{significant(max(walls), 2)}]"
                          if len(walls) > 1 else "")
                cells.append(significant(info["wall"], 3) + spread)
                ratio = significant(info["ratio"]) if "ratio" in info else "-"
                pairs.append(f"{ratio} ({sci(info['drift'])})")
        flexmbs = methods.get("flexmbs", {})
        drift = sci(flexmbs["drift"]) if "drift" in flexmbs else cells[0]
        times.append(f"{_chain(row)} {sci(row['target'])} | " + " | ".join(cells) + " |")
        ratios.append(f"{_chain(row)} {drift} | " + " | ".join(pairs[1:]) + " |")
    return "\n".join(times) + "\n\n" + "\n".join(ratios)


if __name__ == "__main__":
    main()
