r"""Where the time of a warm `flexmbs run data/models/huang_two_link.toml` goes (H2,
5 s, 1 element, rtol 1e-8), and what a run under 0.5 s would take.

    .venv/bin/python benchmarks/profile_h2_run.py
    .venv/bin/python benchmarks/profile_h2_run.py --repeat 3 \
        --json benchmarks/results/profile_h2_run.json

1. The command itself, warm (the kernels cached), in subprocesses: the full run, and
   the same with --t-end 0.001 (what does not depend on the simulated time: starting
   Python, imports, loading the cached kernels, reading and compiling the model,
   creating the result file), and `python -c "import flexmbs.simulation"` alone.
2. Variants of the command (--set, --rtol): the nodal beam at looser tolerances and the
   modal reduction (2 modes with the static correction modes at the tip, a basis that
   spans the one element's shape functions), with the solver's counters from the
   result file (steps, residuals, Jacobians, LU factorisations, Newton iterations) and
   the largest joint-angle difference from the nodal beam at rtol 1e-10.
3. The cost of one residual (the model's `dae_residual`, called in a compiled loop the
   way the BDF driver calls it) for the nodal and the modal beam, and the share of the
   integration that the residuals take (residuals x cost / integration time).

Medians of --repeat runs, the variants taken in turn.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
from peers import machine

from flexmbs.dynamics import system as _system
from flexmbs.formats.toml_reader import load_model
from flexmbs.io import open_result
from flexmbs.model.compiled import compile_model

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "data" / "models" / "huang_two_link.toml"
MODAL = ["--set", "bodies.link2.modes=2", "--set", "bodies.link2.correction_modes=true"]
VARIANTS = [
    ("nodal, rtol 1e-8 (the model file)", []),
    ("nodal, rtol 1e-6", ["--rtol", "1e-6", "--atol", "1e-8"]),
    ("nodal, rtol 1e-4", ["--rtol", "1e-4", "--atol", "1e-6"]),
    ("2 modes + correction modes, rtol 1e-8", MODAL),
    ("2 modes + correction modes, rtol 1e-6", MODAL + ["--rtol", "1e-6", "--atol", "1e-8"]),
]
REFERENCE = ["--rtol", "1e-10", "--atol", "1e-12"]


def flexmbs_run(extra, out):
    cmd = [sys.executable, "-m", "flexmbs", "run", str(MODEL), "-q", "-o", str(out), *extra]
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - start


def import_time():
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import flexmbs.simulation"], check=True)
    return time.perf_counter() - start


@numba.njit
def _residual_loop(count, t, y, yp, args, out):
    for _ in range(count):
        y[0] += 1e-12
        _system.dae_residual(t, y, yp, args, out)


def residual_cost(extra_set, count=5000):
    overrides = [extra_set[k + 1] for k in range(0, len(extra_set), 2)
                 if extra_set[k] == "--set"]
    cm = compile_model(load_model(str(MODEL), overrides=overrides))
    m, ws = cm.arrays, cm.new_workspace()
    y = cm.initial_state()
    yp = np.zeros_like(y)
    out = np.zeros_like(y)
    _residual_loop(1, 0.0, y, yp, (m, ws), out)
    start = time.perf_counter()
    _residual_loop(count, 0.0, y, yp, (m, ws), out)
    return (time.perf_counter() - start) / count, cm.nq


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", help="write the results here")
    a = p.parse_args()
    info = machine()
    print(f"machine: {info['cpu']}, {info['cores']} cores; python {info['python']}, numba "
          f"{info['numba']}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        flexmbs_run(["--t-end", "0.001"], tmp / "warm.h5")  # compile if needed
        ref_file = tmp / "reference.h5"
        flexmbs_run(REFERENCE, ref_file)
        ref = open_result(str(ref_file))
        fixed, imports = [], []
        walls = {label: [] for label, _ in VARIANTS}
        for _ in range(a.repeat):
            fixed.append(flexmbs_run(["--t-end", "0.001"], tmp / "fixed.h5"))
            imports.append(import_time())
            for k, (label, extra) in enumerate(VARIANTS):
                walls[label].append(flexmbs_run(extra, tmp / f"v{k}.h5"))
        report = {"machine": info, "repeat": a.repeat,
                  "fixed_cost": statistics.median(fixed),
                  "import_flexmbs_simulation": statistics.median(imports), "variants": []}
        print(f"fixed cost (flexmbs run --t-end 0.001): {report['fixed_cost']:.2f} s, of "
              f"which `import flexmbs.simulation` {report['import_flexmbs_simulation']:.2f} s",
              flush=True)
        for k, (label, extra) in enumerate(VARIANTS):
            r = open_result(str(tmp / f"v{k}.h5"))
            st = r.solver
            n = min(len(r.time), len(ref.time))
            dq = float(np.abs(r.q[:n, :2] - ref.q[:n, :2]).max())
            cost, nq = residual_cost(extra)
            nres = int(st.get("nres", 0))
            integ = float(st.get("wall_time", np.nan))
            row = {"variant": label, "args": extra, "wall": statistics.median(walls[label]),
                   "walls": walls[label], "integration": integ,
                   "nsteps": int(st.get("nsteps", 0)), "nres": nres,
                   "njac": int(st.get("njac", 0)), "nlu": int(st.get("nlu", 0)),
                   "nnewton": int(st.get("nnewton", 0)), "nq": nq,
                   "residual_cost": cost, "residual_share": nres * cost / integ,
                   "max_dtheta_vs_rtol_1e-10": dq}
            report["variants"].append(row)
            print(f"{label:40s} run {row['wall']:6.2f} s (integrating {integ:6.2f} s): "
                  f"{row['nsteps']:7d} steps, {nres:7d} residuals "
                  f"({nres / max(row['nsteps'], 1):.2f}/step), {row['njac']:5d} Jacobians "
                  f"of {nq} residuals, {row['nlu']:5d} LU; residual {1e6 * cost:.1f} us "
                  f"(residuals {100 * row['residual_share']:.0f} % of the integration); "
                  f"max |d theta| vs rtol 1e-10: {dq:.1e} rad", flush=True)
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
