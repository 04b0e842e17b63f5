"""What a user force law costs (flexmbs.user_law).

1. One call: a numba loop that calls a compiled law (a damper, -c u[1]) through its
   address (the kernels' `call_user_law`) against the same loop with the law's
   arithmetic written inline.
2. In a run: H2 (data/models/huang_two_link.toml, 1 s, 1 element) with a viscous
   damper on joint 2 written three ways: none, the joint's own `damping`, and a joint
   user law; the same steps, and the CPU time per residual evaluation (the run's, best
   of --repeat).

    .venv/bin/python benchmarks/bench_user_laws.py
    .venv/bin/python benchmarks/bench_user_laws.py --json benchmarks/results/user_laws.json
"""

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numba
import numpy as np

import flexmbs
from flexmbs.dynamics.user_laws import call_user_law
from flexmbs.formats.toml_reader import load_model
from flexmbs.simulation import simulate

MODEL = Path(__file__).resolve().parents[1] / "data" / "models" / "huang_two_link.toml"
CALLS = 20_000_000
DAMPING = 0.05  # N m s/rad on joint 2


@flexmbs.user_law
def damper(t, q, u, params, out):
    """-c x' on coordinate q[params[1]], c = params[0]."""
    out[0] = -params[0] * u[int(params[1])]


@flexmbs.user_law
def fixed_damper(t, q, u, params, out):
    """-c x' on coordinate q[1], c = params[0] (the call's cost, no index conversion)."""
    out[0] = -params[0] * u[1]


@numba.njit(cache=False)
def _through_address(address, q, u, params, out, n):
    s = 0.0
    for _k in range(n):
        call_user_law(address, 0.0, q, u, params, out)
        s += out[0]
    return s


@numba.njit(cache=False)
def _inline(q, u, params, out, n):
    s = 0.0
    for _k in range(n):
        out[0] = -params[0] * u[1]
        s += out[0]
    return s


def per_call(repeat):
    q, u = np.zeros(8), np.linspace(0.1, 0.8, 8)
    params, out = np.array([DAMPING, 1.0]), np.zeros(6)
    _through_address(fixed_damper.address, q, u, params, out, 1)
    _inline(q, u, params, out, 1)
    best = {}
    for name, fn in (("address", lambda: _through_address(fixed_damper.address, q, u,
                                                           params, out, CALLS)),
                     ("inline", lambda: _inline(q, u, params, out, CALLS))):
        walls = []
        for _ in range(repeat):
            start = time.perf_counter()
            fn()
            walls.append(time.perf_counter() - start)
        best[name] = min(walls) / CALLS * 1e9
    print(f"one call of a law through its address: {best['address']:.2f} ns; the same "
          f"arithmetic inline: {best['inline']:.2f} ns; overhead "
          f"{best['address'] - best['inline']:.2f} ns per call")
    return best


def h2(kind):
    sets = ["solver.t_end=1.0"]
    if kind == "joint damping":
        sets.append(f"joints.joint2.damping={DAMPING}")
    model = load_model(MODEL, sets)
    if kind == "user law":
        model.add_user_law("damper", damper, joint="joint2", params=[DAMPING],
                           read_coordinates=["joint2"])
    return model


def per_run(repeat):
    rows = {}
    for kind in ("none", "joint damping", "user law"):
        walls, sim = [], None
        for _ in range(repeat):  # CPU time: steadier than wall time on a shared machine
            start = time.process_time()
            sim = simulate(h2(kind), None)
            walls.append(time.process_time() - start)
        st = sim.statistics
        rows[kind] = {"nsteps": int(st["nsteps"]), "nres": int(st["nres"]),
                      "wall": min(walls), "us_per_residual": min(walls) / st["nres"] * 1e6,
                      "theta2_end": float(sim.sensors[-1, 1])}
        print(f"H2, 1 s, damper on joint 2 as {kind:13s}: {st['nsteps']} steps, "
              f"{st['nres']} residuals, {min(walls):.3f} s CPU (best of {repeat}), "
              f"{rows[kind]['us_per_residual']:.2f} us per residual")
    dt = rows["user law"]["theta2_end"] - rows["joint damping"]["theta2_end"]
    print(f"theta2(1 s): user law - joint damping = {dt:.1e} rad")
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", help="write the results here")
    a = p.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, python "
          f"{platform.python_version()}, numba {numba.__version__}")
    simulate(h2("user law"), None, t_end=0.01)  # warm the kernels
    result = {"machine": platform.platform(), "per_call_ns": per_call(a.repeat),
              "h2": per_run(a.repeat)}
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
