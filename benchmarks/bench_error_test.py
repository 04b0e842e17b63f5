r"""What `bdf`'s error test holds, three ways: every differential component (IDA's
default), every one but the elastic speeds of damped bodies (flexmbs's runs), or the
positions and works only (as `galpha`'s test), on a damped arm a user writes and on
undamped H2, at several tolerances, in one process.

    .venv/bin/python benchmarks/bench_error_test.py --json benchmarks/results/error_test.json
    .venv/bin/python benchmarks/bench_error_test.py --table benchmarks/results/error_test.json

Per model and tolerance: steps, steps at order 1, the run's integration time (its own
counter; the kernels are compiled by a warm-up run first), the largest error of the
joint coordinates against the same model at rtol 1e-12 (flexmbs's test), and the
energy balance's drift over the largest strain energy (Huang's criterion). The
machine is shared: the times are of one run each, the steps and errors are exact.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from peers import begin, finish, log, sci

import flexmbs
from flexmbs.model.library import huang_two_link
from flexmbs.simulation import simulate, systems

ROOT = Path(__file__).resolve().parents[1]
MODELS = {
    "arm_3d_damped": (lambda: flexmbs.load_model(ROOT / "tests/user_models/arm_3d_damped.toml"),
                      1.0),
    "h2": (lambda: huang_two_link(1), 5.0),
}
TOLERANCES = {"arm_3d_damped": (1e-8, 1e-9, 1e-10), "h2": (1e-8, 1e-10)}
REFERENCE_RTOL = 1e-12
DAMPED_ELASTIC_OUT = systems._error_test


def _positions_only(cm, n):
    test = np.ones(n, dtype=bool)
    test[cm.nq:2 * cm.nq] = False
    return test


TESTS = {  # name: the error-test mask of a compiled model's state of size n
    "every component": lambda cm, n: None,
    "all but damped elastic speeds": DAMPED_ELASTIC_OUT,
    "positions, works": _positions_only,
}


def _run(model, t_end, rtol, test=DAMPED_ELASTIC_OUT):
    """One bdf run with the error test `test` (a TESTS value)."""
    systems._error_test = test
    try:
        start = time.perf_counter()
        sim = simulate(model, None, t_end=t_end, rtol=rtol, atol=rtol * 1e-2, method="bdf")
        wall = time.perf_counter() - start
    finally:
        systems._error_test = DAMPED_ELASTIC_OUT
    return sim, wall


def _joints(model, sim):
    cm = flexmbs.compile_model(model)
    nj = cm.nq - int(np.sum(cm.arrays.flex_nf))
    return sim.y[:, :nj]


def _ratio(sim):
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    return float(np.abs(total - total[0]).max() / e[:, 2].max())


def measure(names):
    rows = []
    for name in names:
        build, t_end = MODELS[name]
        model = build()
        log(f"{name}: warm-up and reference at rtol {REFERENCE_RTOL:g}")
        simulate(model, None, t_end=model.output.step, method="bdf")
        ref, _ = _run(model, t_end, REFERENCE_RTOL)
        ref_q = _joints(model, ref)
        for rtol in TOLERANCES[name]:
            for test_name, test in TESTS.items():
                log(f"{name}: rtol {rtol:g}, error test: {test_name}")
                sim, wall = _run(model, t_end, rtol, test)
                st = sim.statistics
                rows.append({
                    "model": name, "t_end": t_end, "rtol": rtol, "error_test": test_name,
                    "status": sim.status, "steps": int(st["nsteps"]),
                    "order1_steps": int(st["order_counts"][0]),
                    "integration_s": float(st["wall_time"]), "wall_s": wall,
                    "joint_error": float(np.abs(_joints(model, sim) - ref_q).max()),
                    "energy_ratio": _ratio(sim),
                })
    return rows


def _count(n):
    return f"{n:,}".replace(",", " ")


def table(data):
    """The Markdown table of the documentation."""
    head = ["model", "rtol", "error test", "steps", "at order 1", "integrating (s)",
            "largest joint error", "drift / max U"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in data["rows"]:
        cells = [r["model"], f"{r['rtol']:g}",
                 r["error_test"],
                 _count(r["steps"]), _count(r["order1_steps"]), f"{r['integration_s']:.3g}",
                 sci(r["joint_error"]), sci(r["energy_ratio"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="*", default=list(MODELS))
    started = begin(p, table)
    if started is None:
        return 0
    args, info, start = started
    results = {"machine": info, "reference_rtol": REFERENCE_RTOL,
               "rows": measure(args.models)}
    finish(args, results, start, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
