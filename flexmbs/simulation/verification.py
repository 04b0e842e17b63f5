"""A run's convergence check (simulate(..., verify=True)): the same run at tighter
tolerances, compared output group by group (flexmbs.simulation.convergence)."""

import time

from .convergence import Convergence, compare_runs

__all__ = ["verified"]


def verified(model, sim, settings, wall, log, rerun, factor, limit, window=None):
    """`sim` (which took `wall` s) with its convergence check: the same run at
    `settings`' rtol and atol divided by `factor` (`rerun(settings)`, a Simulation
    with its history, without a file), compared output group by group
    (flexmbs.simulation.convergence.compare_runs, against `limit`)."""
    s = model.solver.with_changes(
        settings["method"], settings["t_end"], settings["rtol"], settings["atol"]
    )
    tight = dict(settings, rtol=s.rtol / factor, atol=s.atol / factor)
    if log is not None:
        log(f"verifying: the same run at rtol {tight['rtol']:g}, atol {tight['atol']:g}")
    start = time.perf_counter()
    fine = rerun(tight)
    sim.convergence = Convergence(
        s.method,
        float(s.rtol),
        float(s.atol),
        float(factor),
        float(limit),
        statistics=(sim.statistics, fine.statistics),
        wall_time=(wall, time.perf_counter() - start),
        status=(sim.status, fine.status),
        message=sim.message or fine.message,
        window=None if window is None else (float(window[0]), float(window[1])),
    )
    if sim.status == fine.status == "finished":
        sim.convergence.groups = compare_runs(model, sim, fine, limit, window)
    return sim
