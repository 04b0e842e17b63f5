"""The cost of one call from Python of the kernels that scipy's integrators and IDA
evaluate at every step, on the rigid CHAIN-N (spatial), in microseconds:

* the residual through numba's dispatcher with the (m, ws) tuples (how IDA called
  it before flexmbs.solvers.kernel_call) and through a KernelCall (a held reference
  and the compiled entry point, how IDA calls it now);
* the state derivative the direct way (the tests' state_derivative_by_columns, B at every
  column, through the dispatcher: scipy's right-hand side before), the recursive one
  through the dispatcher, and `system.rhs` (the recursive one through a KernelCall,
  the copy of the result included: scipy's right-hand side now).

    .venv/bin/python benchmarks/bench_python_calls.py [--n 2 8 32] [--calls 20000] \
        [--json benchmarks/results/python_calls.json]
    .venv/bin/python benchmarks/bench_python_calls.py \
        --table benchmarks/results/python_calls.json
"""

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from peers import add_results_options, printed_table

from flexmbs.dynamics import system as _system

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from reference_kernels import state_derivative_by_columns  # noqa: E402 - the tests' reference

from flexmbs.model.compiled import compile_model
from flexmbs.model.library import chain_model
from flexmbs.simulation import build_system
from flexmbs.solvers.kernel_call import KernelCall


def per_call(f, calls, repeat=5):
    """Median over `repeat` loops of `calls` calls of f(), us per call."""
    f()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            f()
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times)


def costs(n, calls):
    cm = compile_model(chain_model(n, "spatial"))
    system = build_system(cm)
    y = cm.initial_state().copy()
    y[cm.nq:2 * cm.nq] = 0.3
    yp = np.full(system.n, 0.1)
    out = np.zeros(system.n)
    args = (system.m, system.ws)
    residual = KernelCall(system.dae_residual, args, system.n, 2)
    return {
        "n": n,
        "residual_dispatcher": per_call(
            lambda: system.dae_residual(0.1, y, yp, args, out), calls),
        "residual_kernel_call": per_call(lambda: residual(0.1, y, yp), calls),
        "derivative_by_columns_dispatcher": per_call(
            lambda: state_derivative_by_columns(system.m, system.ws, 0.1, y, out),
            calls),
        "derivative_dispatcher": per_call(
            lambda: _system.state_derivative(system.m, system.ws, 0.1, y, out), calls),
        "rhs": per_call(lambda: system.rhs(0.1, y), calls),
    }


def table(results):
    """The documentation's table: us per call of each way, per chain."""
    lines = ["| N | residual, dispatcher | residual, `KernelCall` (IDA) | y' by columns, "
             "dispatcher | `system.rhs`, `KernelCall` (scipy) |",
             "|---|---|---|---|---|"]
    for r in results["rows"]:
        lines.append(f"| {r['n']} | {r['residual_dispatcher']:.1f} | "
                     f"{r['residual_kernel_call']:.1f} | "
                     f"{r['derivative_by_columns_dispatcher']:.1f} | {r['rhs']:.1f} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, nargs="+", default=[2, 8, 32])
    p.add_argument("--calls", type=int, default=20000)
    add_results_options(p)
    a = p.parse_args()
    if printed_table(a, table):
        return
    rows = []
    for n in a.n:
        row = costs(n, a.calls)
        rows.append(row)
        print("  ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"N={v}"
                        for k, v in row.items()), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": platform.platform(), "unit": "us per call",
                       "rows": rows}, f, indent=1)
    print(table({"rows": rows}))


if __name__ == "__main__":
    main()
