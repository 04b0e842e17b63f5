"""Per-evaluation cost: flexmbs' residual F(t, y, y') and state derivative y' against
Pinocchio's rnea (inverse dynamics, the residual's counterpart) and aba (forward
dynamics, the state derivative's counterpart) on the rigid CHAIN-N models
(docs/explanation/benchmark-models.md), and flexmbs' residual on H2.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python benchmarks/bench_peers_eval.py
    .venv/bin/python benchmarks/bench_peers_eval.py --n 8 --json benchmarks/results/peers_eval.json

flexmbs' kernels are called COUNT times in a compiled (numba) loop, the way the BDF
driver calls them (`dae_residual(t, y, y', (m, ws), out)`); Pinocchio's in a C++ loop
(peers_eval_loop.cpp, compiled here with g++ against the `pin` wheel's headers and
library; it needs the Eigen headers of `cmeel-eigen`, which this script installs with
pip when they are missing and --no-install is not given). Without a compiler the
Python call is timed, and the Python overhead (a call of `pin.aba` on a one-joint
model, whose algorithm costs next to nothing) is subtracted and reported. Each
measurement is repeated --repeat times, the two sides in turn; the median is reported
(per call, in microseconds).

--table prints the table of docs/explanation/performance.md from a results file: the
chains of its first variant (the planar ones; the spatial chains give the same figures).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
from peers import add_results_options, machine, pinocchio_chain, printed_table, significant

from flexmbs.dynamics import system as _system
from flexmbs.model.compiled import compile_model
from flexmbs.model.library import chain_model, huang_two_link

HERE = Path(__file__).resolve().parent
COUNT = 20000


@numba.njit
def _residual_loop(count, t, y, yp, args, out):
    for _ in range(count):
        y[0] += 1e-12  # a new state each call
        _system.dae_residual(t, y, yp, args, out)


@numba.njit
def _derivative_loop(count, m, ws, t, y, out):
    for _ in range(count):
        y[0] += 1e-12
        _system.state_derivative(m, ws, t, y, out)


def flexmbs_costs(model, count):
    """(residual, state derivative) seconds per call, one measurement each."""
    cm = compile_model(model)
    m, ws = cm.arrays, cm.new_workspace()
    y = cm.initial_state()
    y[cm.nq:2 * cm.nq] = 0.3
    yp = np.zeros_like(y)
    out = np.zeros_like(y)
    _residual_loop(1, 0.0, y, yp, (m, ws), out)
    _derivative_loop(1, m, ws, 0.0, y, out)
    start = time.perf_counter()
    _residual_loop(count, 0.0, y, yp, (m, ws), out)
    res = (time.perf_counter() - start) / count
    start = time.perf_counter()
    _derivative_loop(count, m, ws, 0.0, y, out)
    der = (time.perf_counter() - start) / count
    return res, der


def pinocchio_prefix():
    """The cmeel prefix of the `pin` wheel (include/, lib/libpinocchio_default.so):
    pinocchio lives in PREFIX/lib/pythonX.Y/site-packages/pinocchio."""
    import pinocchio
    return Path(pinocchio.__file__).resolve().parents[4]


def build_loop(install):
    """Compile peers_eval_loop.cpp; the executable's path, or None with the reason."""
    gxx = shutil.which("g++")
    if gxx is None:
        return None, "no g++"
    prefix = pinocchio_prefix()
    if not (prefix / "include" / "pinocchio").exists():
        return None, "no Pinocchio headers (pin not installed from its wheel)"
    if not (prefix / "include" / "eigen3").exists():
        if not install:
            return None, "no Eigen headers (pip install cmeel-eigen)"
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "cmeel-eigen"],
                       check=True)
    exe = Path(tempfile.gettempdir()) / f"flexmbs_peers_eval_loop_{os.getuid()}"
    src = HERE / "peers_eval_loop.cpp"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        # the wheel's compile definitions (Pinocchio's CMake config); no -march=native:
        # Eigen's alignment must match the library's
        defs = ["-DBOOST_MPL_LIMIT_LIST_SIZE=30", "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
                "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS",
                "-DPINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION"]
        cmd = [gxx, "-O3", "-DNDEBUG", "-std=c++17", *defs, f"-I{prefix / 'include'}",
               f"-I{prefix / 'include' / 'eigen3'}", str(src), "-o", str(exe),
               f"-L{prefix / 'lib'}", "-lpinocchio_default", f"-Wl,-rpath,{prefix / 'lib'}"]
        print("compiling peers_eval_loop.cpp (about a minute)...", flush=True)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return None, "g++ failed: " + r.stderr[-500:]
    return exe, None


def cpp_costs(exe, n, variant, count):
    out = subprocess.run([str(exe), str(n), variant, str(count)], capture_output=True,
                         text=True, check=True).stdout
    d = json.loads(out)
    return d["aba"], d["rnea"]


def python_costs(n, variant, count):
    """Pinocchio from Python, minus the overhead of the call itself (aba on one joint)."""
    import pinocchio as pin

    def per_call(model, fn):
        data = model.createData()
        k = model.nq
        q, v, z = np.full(k, 0.2), np.full(k, 0.3), np.zeros(k)
        start = time.perf_counter()
        for _ in range(count):
            fn(model, data, q, v, z)
        return (time.perf_counter() - start) / count

    model = pinocchio_chain(n, variant)
    one = pinocchio_chain(1, variant)
    overhead = per_call(one, pin.aba)
    return (per_call(model, pin.aba) - overhead, per_call(model, pin.rnea) - overhead,
            overhead)


def table(results):
    """The documentation's table: us per call of flexmbs' residual and state
    derivative and of Pinocchio's rnea and aba, and their ratios, per chain."""
    chains = [r for r in results["rows"] if "variant" in r]
    variant = chains[0]["variant"]
    lines = ["| N | flexmbs residual | flexmbs y' | `rnea` | `aba` | residual / `rnea` | "
             "y' / `aba` |",
             "|---|---|---|---|---|---|---|"]
    for r in chains:
        if r["variant"] != variant:
            continue
        res, der = r["flexmbs_residual"], r["flexmbs_state_derivative"]
        rnea, aba = r["pinocchio_rnea"], r["pinocchio_aba"]
        us = [significant(1e6 * x, 3) for x in (res, der, rnea, aba)]
        lines.append(f"| {r['n']} | {' | '.join(us)} | {significant(res / rnea)} | "
                     f"{significant(der / aba)} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, nargs="+", default=[2, 4, 8, 16, 32])
    p.add_argument("--variants", nargs="+", default=["planar", "spatial"],
                   choices=["planar", "spatial"])
    p.add_argument("--count", type=int, default=COUNT)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--python", action="store_true",
                   help="time Pinocchio from Python (overhead subtracted), not in C++")
    p.add_argument("--no-install", action="store_true")
    add_results_options(p)
    a = p.parse_args()
    if printed_table(a, table):
        return
    info = machine()
    print(f"machine: {info['cpu']}, {info['cores']} cores; python {info['python']}, numba "
          f"{info['numba']}, pinocchio {info['pinocchio']}", flush=True)
    exe, why = (None, "--python") if a.python else build_loop(not a.no_install)
    mode = "C++ loop" if exe else f"Python, overhead subtracted ({why})"
    print(f"Pinocchio timed in a {mode}", flush=True)
    rows = []
    for variant in a.variants:
        for n in a.n:
            model = chain_model(n, variant)
            fx_res, fx_der, pin_aba, pin_rnea, overheads = [], [], [], [], []
            for _ in range(a.repeat):
                r, d = flexmbs_costs(model, a.count)
                fx_res.append(r)
                fx_der.append(d)
                if exe:
                    ab, rn = cpp_costs(exe, n, variant, a.count * 5)
                else:
                    ab, rn, oh = python_costs(n, variant, a.count)
                    overheads.append(oh)
                pin_aba.append(ab)
                pin_rnea.append(rn)
            row = {"model": f"chain {variant} {n}", "n": n, "variant": variant,
                   "flexmbs_residual": statistics.median(fx_res),
                   "flexmbs_state_derivative": statistics.median(fx_der),
                   "pinocchio_rnea": statistics.median(pin_rnea),
                   "pinocchio_aba": statistics.median(pin_aba), "pinocchio_mode": mode}
            if overheads:
                row["python_overhead"] = statistics.median(overheads)
            rows.append(row)
            print(f"{variant:8s} N={n:2d}: flexmbs residual {1e6 * row['flexmbs_residual']:7.2f}"
                  f" us, state derivative {1e6 * row['flexmbs_state_derivative']:7.2f} us; "
                  f"Pinocchio rnea {1e6 * row['pinocchio_rnea']:6.2f} us, aba "
                  f"{1e6 * row['pinocchio_aba']:6.2f} us; residual / rnea "
                  f"{row['flexmbs_residual'] / row['pinocchio_rnea']:5.1f}, derivative / aba "
                  f"{row['flexmbs_state_derivative'] / row['pinocchio_aba']:5.1f}", flush=True)
    for elements in (1, 5):
        res = statistics.median(flexmbs_costs(huang_two_link(elements), a.count // 4)[0]
                                for _ in range(a.repeat))
        der = statistics.median(flexmbs_costs(huang_two_link(elements), a.count // 4)[1]
                                for _ in range(a.repeat))
        rows.append({"model": f"H2 {elements} element(s)", "flexmbs_residual": res,
                     "flexmbs_state_derivative": der})
        print(f"H2, {elements} element(s): flexmbs residual {1e6 * res:7.2f} us, state "
              f"derivative {1e6 * der:7.2f} us", flush=True)
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps({"machine": info, "count": a.count,
                                            "repeat": a.repeat, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
