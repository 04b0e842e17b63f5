"""The tolerance of a fit's runs: the model's own, tightened until the runs converge.

A run's integration error moves its outputs by about rtol of their scale; the fit
would identify that error as a change of the values if it were not small beside the
measurement noise and the difference steps. Whether it is, the convergence check says
(flexmbs.simulation.convergence.compare_runs, as `flexmbs verify`): the model run at a tolerance
and ten times tighter, every compared sensor must change by less than `limit` of its
scale within the fitted window, and by less than NOISE_SHARE of its channel's
measurement noise sigma_c (the change is about the looser run's integration error: a
systematic error, which the samples do not average away as they do the noise, so
that it is held below the noise of one sample). Starting from the model file's rtol and atol, the
tolerance goes down by TIGHTENING_FACTOR at a step until that holds (the run at the
tighter tolerance of one step is the looser run of the next), down to MIN_RTOL at
most; a tolerance given by the user is checked once and kept or refused.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ExperimentError, ModelError

if TYPE_CHECKING:
    from .fit_record import _Record as FitRecordRuns

__all__ = ["TIGHTENING_FACTOR", "MIN_RTOL", "ConvergedTolerance", "converged_tolerance"]

TIGHTENING_FACTOR = 10.0  # the tolerance of the tighter run of a check, and of a step down
MIN_RTOL = 1e-11  # the tightest rtol the search for a converging tolerance tries
NOISE_SHARE = 0.5  # largest change of a compared sensor at ten times tighter, of its noise


@dataclass(frozen=True)
class ConvergedTolerance:
    """What the convergence check found for one model: `kind` "converged" (the runs at
    `rtol`, `atol` and ten times tighter agree within the limit), "moves" (they do not
    at the tightest tolerance tried; `text` says which sensor by how much) or "failed"
    (a run failed; `text` its message); `runs` the runs it made."""

    kind: str
    rtol: float
    atol: float
    runs: int
    text: str = ""


def converged_tolerance(
    model_path: str,
    overrides: Sequence[str],
    t_end: float,
    window: tuple[float, float],
    rtol: float,
    atol: float,
    output_step: float,
    limit: float,
    compared: Mapping[str, float],
    tighten: bool,
) -> ConvergedTolerance:
    """The loosest tolerance from (rtol, atol) down, by TIGHTENING_FACTOR a step, at
    which the model file with `overrides`, run to t_end, changes every sensor of
    `compared` (name -> its measurement noise, SI; 0: none known) by less than `limit`
    of its scale and NOISE_SHARE of its noise within `window` (model time, s) when run
    ten times tighter; with `tighten` False, (rtol, atol) alone is checked. Runs
    where the fit sends it (a dask worker, or here)."""
    from ..formats.toml_reader import load_model
    from ..simulation.convergence import compare_runs
    from ..simulation.run import simulate

    model = load_model(model_path, overrides)

    def run(r: float, a: float) -> Any:
        return simulate(model, None, t_end=t_end, rtol=r, atol=a, output_step=output_step)

    looser = run(rtol, atol)
    runs = 1
    while True:
        if not looser.success:
            return ConvergedTolerance("failed", rtol, atol, runs, looser.message)
        tighter = run(rtol / TIGHTENING_FACTOR, atol / TIGHTENING_FACTOR)
        runs += 1
        if not tighter.success:
            return ConvergedTolerance("failed", rtol, atol, runs, tighter.message)
        text = _worst_change(compare_runs(model, looser, tighter, limit, window), compared, limit)
        if not text:
            return ConvergedTolerance("converged", rtol, atol, runs)
        if not tighten or rtol / TIGHTENING_FACTOR < MIN_RTOL * (1.0 - 1e-9):
            return ConvergedTolerance("moves", rtol, atol, runs, text)
        rtol, atol = rtol / TIGHTENING_FACTOR, atol / TIGHTENING_FACTOR
        looser = tighter


def _worst_change(groups: Sequence[Any], compared: Mapping[str, float], limit: float) -> str:
    """The sensor of `compared` that moves most beyond its limits (the convergence
    check's scale, NOISE_SHARE of its noise) among the compared `groups`, as a
    sentence; "" when none does."""
    worst, ratio = "", 1.0
    for g in groups:
        name = g.name[len("sensor ") :] if g.name.startswith("sensor ") else None
        if name is None or name not in compared:
            continue
        if not g.passed and g.relative / limit > ratio:
            ratio = g.relative / limit
            worst = (
                f"{g.name} changes by {g.relative:.3g} of its scale at ten times tighter "
                f"(at t = {g.at_time:.6g} s; at most {limit:g})"
            )
        bound = NOISE_SHARE * compared[name]
        if bound > 0 and g.change > bound * ratio:
            ratio = g.change / bound
            worst = (
                f"{g.name} changes by {g.change:.3g} at ten times tighter (at t = "
                f"{g.at_time:.6g} s), {g.change / compared[name]:.3g} times its measurement "
                f"noise (at most {NOISE_SHARE:g})"
            )
    return worst


def fit_tolerance(
    recs: Sequence[FitRecordRuns],
    x0: NDArray[np.float64],
    rtol: float,
    atol: float,
    tighten: bool,
    limit: float,
    executor: Executor | None,
    log: Callable[[str], object] | None,
) -> tuple[float, float, str]:
    """The tolerance (rtol, atol) of the fit's runs and how it was had: every record's
    starting model, over its window, from (rtol, atol) down when `tighten`
    (converged_tolerance), the tightest of the records'; ModelError with the remedy
    when one does not converge, ExperimentError when its run fails."""
    if log:
        log(
            f"finding the tolerance at which the model converges: from rtol {rtol:g}, "
            f"ten times tighter at a step until no compared sensor changes by {limit:g} "
            f"of its scale or {NOISE_SHARE:g} of its noise"
            if tighten
            else f"checking that the model converges at the fit's tolerance (rtol {rtol:g}, "
            "and ten times tighter)"
        )
    jobs = []
    for rec in recs:
        t0, t1 = rec.window()
        jobs.append(
            (
                os.fspath(rec.spec.model_path),
                rec.runs.overrides + rec.runs.assignments(rec.values(x0)),
                min(t1, rec.t_record),
                (t0, t1),
                rtol,
                atol,
                rec.runs.output_step,
                limit,
                rec.sensor_noise(),
                tighten,
            )
        )
    if executor is not None and len(jobs) > 1:
        outcomes = list(executor.map(converged_tolerance, *zip(*jobs)))
    else:
        outcomes = [converged_tolerance(*job) for job in jobs]
    for rec, outcome in zip(recs, outcomes):
        _refuse_unless_converged(rec.spec.model_path, outcome, tighten)
    found = min(outcomes, key=lambda o: o.rtol)
    runs = sum(o.runs for o in outcomes)
    steps = round(np.log10(rtol / found.rtol))
    if not tighten:
        how = f"the given rtol {rtol:g} converges"
    elif steps == 0:
        how = f"the model's rtol {rtol:g} converges"
    else:
        how = f"the model's rtol {rtol:g} tightened {steps} time(s) by ten to converge"

    note = (
        f"{how} (convergence check: {runs} runs, at most {limit:g} of a sensor's scale "
        f"and {NOISE_SHARE:g} of its noise)"
    )
    if log:
        log(f"rtol {found.rtol:g}, atol {found.atol:g}: {note}")
    return found.rtol, found.atol, note


def _refuse_unless_converged(
    source: str | os.PathLike[str], outcome: ConvergedTolerance, tightened: bool
) -> None:
    if outcome.kind == "failed":
        raise ExperimentError(
            f"the starting run failed: {outcome.text}; expected a model that runs",
            source=source,
        )
    if outcome.kind == "moves":
        remedy = (
            "the model with bdf (--set 'solver.method=\"bdf\"'), or a larger --verify-limit"
            if tightened
            else "a smaller --rtol (or none: the fit then tightens the model's own until "
            "it converges), or the model with bdf (--set 'solver.method=\"bdf\"')"
        )
        raise ModelError(
            f"the model does not converge at the fit's tolerance (rtol {outcome.rtol:g}): "
            f"{outcome.text}, so the fit would follow the integration error; expected a "
            f"tolerance that converges: {remedy}",
            "fit",
            "rtol",
            source=source,
        )
