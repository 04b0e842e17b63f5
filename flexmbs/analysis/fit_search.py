"""The least-squares search of a fit (scipy.optimize.least_squares, trust region
reflective) over the records' residuals, within the budget of runs, its Jacobian by
forward differences; and the check that its tolerance does not move the optimum.
"""

from __future__ import annotations

import copy
import time as _time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import least_squares

from .fit_record import _Record
from .fit_runs import _Budget, _duration, _OutOfRuns, _run_all, _Runs
from .fit_tolerance import TIGHTENING_FACTOR

FD_STEP = 1e-4  # relative finite-difference step of the model values
STALL_STEP = 3.0  # the trend's Gauss-Newton step from where the search stopped, in sd
JACOBIAN_CHANGE = 0.25  # largest change of a Jacobian column at ten times tighter, of its
# norm: a standard deviation is then known to about a quarter of itself
TOLERANCE_SHIFT = 0.5  # most the optimum may move at ten times tighter, of a standard deviation
FTOL = XTOL = 1e-6  # least_squares: relative change of the cost / of the values
GTOL = 1e-8


@dataclass
class _Outcome:
    """Where the search ended: the point `x` of its last Jacobian `jac`, the
    residuals `r` there, why it stopped."""

    x: NDArray[np.float64]
    jac: NDArray[np.float64]
    r: NDArray[np.float64]
    stop: str  # "converged" | "budget"
    message: str


class _Search:
    """The least-squares search over the records' residuals, within the run budget."""

    def __init__(
        self,
        recs: Sequence[_Record],
        names: Sequence[str],
        x_start: NDArray[np.float64],
        bounds: Sequence[tuple[float, float]],
        budget: _Budget,
        executor: Executor | None,
        log: Callable[[str], object] | None,
        jacobian_runs: int,
        x_from: NDArray[np.float64] | None = None,
    ) -> None:
        self.recs, self.names = list(recs), list(names)
        self.x_start, self.bounds = x_start, list(bounds)
        self.x_from = x_start if x_from is None else x_from
        self.budget, self.executor, self.log = budget, executor, log
        self.jacobian_runs = jacobian_runs
        self.last: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]] | None
        self.last = None
        self.search_clock = _time.perf_counter()
        self.search_runs0 = budget.made

    def again_from(self, x: NDArray[np.float64]) -> _Search:
        """The same search (its records, start, bounds and budget) going on from x."""
        return _Search(
            self.recs,
            self.names,
            self.x_start,
            self.bounds,
            self.budget,
            self.executor,
            self.log,
            self.jacobian_runs,
            x,
        )

    def residual(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        _run_all(
            [(rec.runs, rec.values(x)) for rec in self.recs],
            self.budget,
            self.executor,
            reserve=self.jacobian_runs,
        )
        return np.concatenate([rec.residual(x) for rec in self.recs])

    def jacobian(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        r0 = self.residual(x)  # made by the evaluation before, kept
        wanted: list[tuple[_Runs, NDArray[np.float64]]] = []
        columns: list[list[tuple[int, float, NDArray[np.float64]]]] = []
        for rec in self.recs:
            values = rec.values(x)
            if rec.quantizing:
                wanted.append((rec.smooth_runs, values))
            cols = []
            for j, (i, p) in enumerate(zip(rec.index, rec.parameters)):
                h = FD_STEP * max(abs(values[j]), abs(self.x_start[i])) or FD_STEP
                if values[j] + h > p.upper:
                    h = -h
                shifted = values.copy()
                shifted[j] += h
                wanted.append((rec.smooth_runs, shifted))
                cols.append((i, h, shifted))
            columns.append(cols)
        _run_all(wanted, self.budget, self.executor)
        jac = np.zeros((len(r0), len(x)))
        row = 0
        for rec, cols in zip(self.recs, columns):
            rows = slice(row, row + rec.rows)
            base = rec.residual(x, smooth=True)
            for i, h, shifted in cols:
                xi = x.copy()
                xi[rec.index] = shifted
                jac[rows, i] = (rec.residual(xi, smooth=True) - base) / h
            if rec.offset_index is not None:
                jac[rows, rec.offset_index] = rec.offset_column(x)
            row += rec.rows
        self.last = (x.copy(), jac, r0)
        self.progress(x, r0)
        return jac

    def progress(self, x: NDArray[np.float64], r: NDArray[np.float64]) -> None:
        """One line per step: runs made of the budget, the cost, the time so far and
        the most that the rest of the budget would take at this pace."""
        if not self.log:
            return
        b = self.budget
        wall = _time.perf_counter() - b.clock
        pace = (_time.perf_counter() - self.search_clock) / max(b.made - self.search_runs0, 1)
        self.log(
            f"run {b.made} of {b.max_runs}: cost {0.5 * float(r @ r):.6g}, "
            f"{_duration(wall)}; at most {b.left()} runs left (about {_duration(b.left() * pace)} "
            "at this pace); at " + ", ".join(f"{p}={v:.6g}" for p, v in zip(self.names, x))
        )

    def run(self) -> _Outcome:
        lower = [lo for lo, _ in self.bounds]
        upper = [hi for _, hi in self.bounds]
        try:
            res = least_squares(
                self.residual,
                self.x_from,
                jac=self.jacobian,
                bounds=(lower, upper),
                x_scale="jac",
                method="trf",
                ftol=FTOL,
                xtol=XTOL,
                gtol=GTOL,
                max_nfev=10 * self.budget.max_runs + 10,  # never before the budget
            )
        except _OutOfRuns as out:
            assert self.last is not None  # the budget holds the first step
            x, jac, r = self.last
            b = self.budget
            return _Outcome(
                x,
                jac,
                r,
                "budget",
                f"the budget of {b.max_runs} runs is spent: {b.made} made, the next step "
                f"needs {out.needed} (--max-runs, or --resume to go on)",
            )
        assert self.last is not None
        x, jac, r = self.last
        if not np.array_equal(x, res.x):  # least_squares takes J at each point it accepts
            try:
                self.jacobian(res.x)
            except _OutOfRuns:
                pass  # the last point's Jacobian stands
            x, jac, r = self.last
        return _Outcome(x, jac, r, "converged" if res.success else "failed", str(res.message))


def _tolerance_shift(search: _Search, outcome: _Outcome) -> float | None:
    """How far the records' runs ten times tighter move the optimum, in standard
    deviations of the values: the largest |d_i| / sd_i with the Gauss-Newton step
    d = -(J^T J)^-1 J^T (r_tight - r) at the optimum x (J^T r = 0 there) and
    sd_i = sqrt(s^2 (J^T J)^-1_ii); None when the budget has no runs for it."""
    x, jac, r = outcome.x, outcome.jac, outcome.r
    tight = []
    for rec in search.recs:
        runs = copy.copy(rec.runs)
        runs.rtol, runs.atol = rec.runs.rtol / TIGHTENING_FACTOR, rec.runs.atol / TIGHTENING_FACTOR
        runs.cache = {}
        tight.append(runs)
    try:
        _run_all(
            [(runs, rec.values(x)) for runs, rec in zip(tight, search.recs)],
            search.budget,
            search.executor,
        )
    except _OutOfRuns:
        return None
    r_tight = np.concatenate([rec.residual(x, runs=runs) for runs, rec in zip(tight, search.recs)])
    return _step_in_sd(jac, r, r_tight - r)


def _stall_step(search: _Search, outcome: _Outcome) -> float | None:
    """How far from where the search stopped the trend's own optimum lies, in standard
    deviations of the values: the largest |d_i| / sd_i of the Gauss-Newton step
    d = -(J^T J)^-1 J^T r_s, r_s the residuals of the records' trends at x (the
    runs without their sensors' quantization; a record without any, its own). Near 0
    at a minimum; a search that stopped short of it (steps refused where the runs'
    integration error or quantization roughens the cost) leaves a large one. None
    when the budget has no runs for it."""
    x, jac, r = outcome.x, outcome.jac, outcome.r
    quantizing = [rec for rec in search.recs if rec.quantizing]
    try:
        _run_all(
            [(rec.smooth_runs, rec.values(x)) for rec in quantizing],
            search.budget,
            search.executor,
        )
    except _OutOfRuns:
        return None
    parts, row = [], 0
    for rec in search.recs:
        parts.append(rec.residual(x, smooth=True) if rec.quantizing else r[row : row + rec.rows])
        row += rec.rows
    return _step_in_sd(jac, r, np.concatenate(parts))


def _step_in_sd(
    jac: NDArray[np.float64], r: NDArray[np.float64], toward: NDArray[np.float64]
) -> float:
    """The largest |d_i| / sd_i of the Gauss-Newton step d = -(J^T J)^-1 J^T `toward`,
    sd_i = sqrt(s^2 (J^T J)^-1_ii) with s^2 = r.r / (rows - columns) of the residuals r."""
    normal = np.linalg.pinv(jac.T @ jac)
    step = -normal @ (jac.T @ toward)
    s2 = max(float(r @ r) / max(len(r) - jac.shape[1], 1), 1e-300)
    sd = np.sqrt(np.maximum(np.diag(normal) * s2, 1e-300))
    return float(np.max(np.abs(step) / sd))


def _jacobian_change(search: _Search, outcome: _Outcome) -> float | None:
    """The largest relative change |J_t,j - J_j| / |J_t,j| of a column of the search's
    last Jacobian J when its runs are made ten times tighter (J_t): forward differences
    of a value whose effect on the runs is not clear of their integration error are
    that error's, not the value's, and make its standard deviation too small. None
    when the budget has no runs for it."""
    x, jac = outcome.x, outcome.jac
    tolerances = [(rec.runs.rtol, rec.runs.atol) for rec in search.recs]
    kept = [(dict(rec.runs.cache), dict(rec.smooth_runs.cache)) for rec in search.recs]
    for rec, (rtol, atol) in zip(search.recs, tolerances):
        rec.set_tolerance(rtol / TIGHTENING_FACTOR, atol / TIGHTENING_FACTOR)
    tight = _Search(
        search.recs,
        search.names,
        search.x_start,
        search.bounds,
        search.budget,
        search.executor,
        None,
        search.jacobian_runs,
        x,
    )
    try:
        _run_all([(rec.runs, rec.values(x)) for rec in search.recs], search.budget, search.executor)
        jac_tight = tight.jacobian(x)
    except _OutOfRuns:
        return None
    finally:  # the runs at the search's tolerance, as they were
        for rec, (rtol, atol), (runs, smooth) in zip(search.recs, tolerances, kept):
            rec.set_tolerance(rtol, atol)
            rec.runs.cache.update(runs)
            rec.smooth_runs.cache.update(smooth)
    norms = np.maximum(np.linalg.norm(jac_tight, axis=0), 1e-300)
    return float(np.max(np.linalg.norm(jac_tight - jac, axis=0) / norms))
