"""Where the time of planar CHAIN-8 (10 s) goes at an energy drift of 1e-6 J: flexmbs
`bdf` against scipy's DOP853 with Pinocchio's `aba` as the right-hand side, and
flexmbs' own `dop853` (scipy's DOP853 on flexmbs' state derivative).

    .venv/bin/python benchmarks/profile_chain8.py
    .venv/bin/python benchmarks/profile_chain8.py --json benchmarks/results/profile_chain8.json

The tolerances are those bench_peers_chain.py found for a drift <= 1e-6 J (--bdf-rtol,
--dop853-rtol). For each method: the median wall time of --repeat runs (taken in turn
in this one process), the solver's counters, and the cost of one evaluation of the
function it calls, timed apart: flexmbs' `dae_residual` and `state_derivative` in a
compiled loop (as the BDF driver calls them), the same `state_derivative` called from
Python (as scipy calls it: the numba dispatcher resolves the types of its arguments on
every call), Pinocchio's `aba` called from Python. The share of a run spent in the
evaluations is evaluations x cost / wall time; the rest is the integrator itself
(Newton, LU, error control, outputs).
"""

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
from bench_peers_chain import Chain
from bench_peers_eval import flexmbs_costs
from peers import machine

from flexmbs.model.compiled import compile_model
from flexmbs.model.library import chain_model
from flexmbs.simulation import simulate


def python_state_derivative_cost(model, count=2000):
    """s per call of flexmbs' compiled state derivative called from Python."""
    from flexmbs.dynamics import system as _system
    cm = compile_model(model)
    m, ws = cm.arrays, cm.new_workspace()
    y = cm.initial_state()
    out = np.zeros_like(y)
    _system.state_derivative(m, ws, 0.0, y, out)
    start = time.perf_counter()
    for _ in range(count):
        _system.state_derivative(m, ws, 0.0, y, out)
    return (time.perf_counter() - start) / count


def python_aba_cost(chain, count=20000):
    pin, model, data, n = chain.pin, chain.model, chain.data, chain.n
    q, v, tau = np.full(n, 0.2), np.full(n, 0.3), np.zeros(n)
    start = time.perf_counter()
    for _ in range(count):
        pin.aba(model, data, q, v, tau)
    return (time.perf_counter() - start) / count


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=8)
    p.add_argument("--variant", default="planar", choices=["planar", "spatial"])
    p.add_argument("--bdf-rtol", type=float, default=3.16e-11)
    p.add_argument("--dop853-rtol", type=float, default=3.16e-9)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", help="write the results here")
    a = p.parse_args()
    info = machine()
    print(f"machine: {info['cpu']}, {info['cores']} cores", flush=True)
    chain = Chain(a.n, a.variant)
    chain.run_flexmbs(1e-6, 0.1)  # compile (not timed)
    chain.run_flexmbs(1e-6, 0.1, method="dop853")
    runs = {"bdf": [], "dop853": [], "flexmbs-dop853": []}
    last = {}
    for _ in range(a.repeat):
        start = time.perf_counter()
        sim = simulate(chain_model(a.n, a.variant), None, method="bdf", rtol=a.bdf_rtol,
                       atol=a.bdf_rtol / 100, output_step=0.01)
        runs["bdf"].append(time.perf_counter() - start)
        last["bdf"] = (sim.statistics, chain.drift(sim.y[:, :a.n], sim.y[:, a.n:2 * a.n]))
        r = chain.run_dop853(a.dop853_rtol, 10.0)
        runs["dop853"].append(r["wall"])
        last["dop853"] = ({"nres": r["evaluations"]}, chain.drift(r["q"], r["v"]))
        start = time.perf_counter()
        sim = simulate(chain_model(a.n, a.variant), None, method="dop853",
                       rtol=a.dop853_rtol, atol=a.dop853_rtol / 100, output_step=0.01)
        runs["flexmbs-dop853"].append(time.perf_counter() - start)
        last["flexmbs-dop853"] = (sim.statistics,
                                  chain.drift(sim.y[:, :a.n], sim.y[:, a.n:2 * a.n]))
    model = chain_model(a.n, a.variant)
    costs = [flexmbs_costs(model, 20000) for _ in range(a.repeat)]
    residual = statistics.median(c[0] for c in costs)
    derivative = statistics.median(c[1] for c in costs)
    derivative_py = statistics.median(python_state_derivative_cost(model)
                                      for _ in range(a.repeat))
    aba_py = statistics.median(python_aba_cost(chain) for _ in range(a.repeat))
    out = {"machine": info, "n": a.n, "variant": a.variant, "repeat": a.repeat,
           "cost_per_call": {"flexmbs_residual_compiled": residual,
                             "flexmbs_state_derivative_compiled": derivative,
                             "flexmbs_state_derivative_from_python": derivative_py,
                             "pinocchio_aba_from_python": aba_py},
           "methods": {}}
    per_eval = {"bdf": residual, "dop853": aba_py, "flexmbs-dop853": derivative_py}
    for method, walls in runs.items():
        st, drift = last[method]
        wall = statistics.median(walls)
        nres = int(st["nres"])
        row = {"rtol": a.bdf_rtol if method == "bdf" else a.dop853_rtol, "wall": wall,
               "walls": walls, "drift": drift,
               "counters": {k: (v.tolist() if hasattr(v, "tolist") else v)
                            for k, v in st.items()},
               "evaluations": nres, "cost_per_evaluation": per_eval[method],
               "evaluation_share": nres * per_eval[method] / wall}
        if method == "bdf":
            row["jacobian_residuals"] = int(st["njac"]) * a.n
            row["newton_residuals"] = nres - row["jacobian_residuals"]
            row["per_step"] = wall / int(st["nsteps"])
        out["methods"][method] = row
        steps = st.get("nsteps", "-")
        print(f"{method:15s} rtol {row['rtol']:.2e}: {wall:6.3f} s, drift {drift:.2e} J, "
              f"steps {steps}, evaluations {nres}, {1e6 * per_eval[method]:.2f} us each "
              f"= {100 * row['evaluation_share']:.0f} % of the run", flush=True)
    b = out["methods"]["bdf"]
    print(f"bdf: {b['counters']['nsteps']} steps ({1e6 * b['per_step']:.1f} us per step), "
          f"orders {b['counters'].get('order_counts')}, {b['newton_residuals']} Newton "
          f"residuals + {b['jacobian_residuals']} for {b['counters']['njac']} Jacobians, "
          f"{b['counters']['nlu']} LU", flush=True)
    print(f"per call: flexmbs residual {1e6 * residual:.2f} us, state derivative "
          f"{1e6 * derivative:.2f} us compiled / {1e6 * derivative_py:.2f} us from Python; "
          f"Pinocchio aba from Python {1e6 * aba_py:.2f} us", flush=True)
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
