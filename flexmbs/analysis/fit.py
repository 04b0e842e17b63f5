"""Identifying model values from an experiment: weighted least squares over the runs.

`fit_model` adjusts chosen values of a model file (addressed by their `--set` dotted
paths, e.g. `joints.joint2.damping`) and the time offset of the alignment so that the
mapped channels of the run match the experiment (scipy.optimize.least_squares, trust
region reflective, within bounds). The residual of channel c at the experiment's
sample t_k is

    r_ck = (F s_c(t_k - offset; p) - F e_c(t_k)) / sigma_c                    (1)

with s_c the run's sensor (cubic spline through its outputs; before t = 0 the model is
held at its initial state), e_c the calibrated measurement, F the channel's low-pass
filter F of the map (identity without one) and sigma_c the standard deviation of the
channel's measurement noise: stated in the map (its `noise`), or estimated from the
third differences of the unfiltered measurement, sigma = 1.4826 median|D^3 e| /
sqrt(20) (a smooth signal sampled finely has negligible third differences; white
noise has var D^3 = 20 sigma^2), and on a quantized record at least the rounding's
q / sqrt(12) (flexmbs.analysis.channel_map.measurement_noise). The samples
are those of the window (t0, t1) of model time, t_k - offset_0 in [t0, t1] with
offset_0 the starting offset (default: from the release to the end of the record);
the runs start at 0, so the state at t0 is the model's.

Several records (`fit_records`) stack their residuals (1) in one vector: each
record's runs use its own model file and settings with the shared values and its own
ones, its own window and offset; the Jacobian of a record's rows has columns for the
shared values, its own values and its offset, zeros for the other records'.

The search (scipy.optimize.least_squares, trust region reflective) is held to the
budget of runs `max_runs` alone: every run is counted where it is made, and the
search stops when its next step (a run per record and the Jacobian that would follow)
does not fit in what is left. It then keeps the last point at which it took a
Jacobian (the search's best: it takes one at each point it accepts) and gives the
standard deviations (2), (3) at that point, marked as such.

Jacobian: forward differences for the model values, one run per value, with the step
FD_STEP * max(|p|, |p_0|) (backwards at an upper bound); the offset's column is exact,
-F ds/dt / sigma, from the spline. The runs use the tolerance at which the model
converges over the fitted window (flexmbs.analysis.fit_tolerance): the model file's
rtol and atol, ten times tighter at a step until a run ten times tighter changes no
compared sensor by more than VERIFY_LIMIT (1e-4) of its scale or half its channel's
noise. At the end of the search the tolerance is checked again at the optimum x with
the last Jacobian J: the runs ten times tighter move the optimum by
d_t = -(J^T J)^-1 J^T (r_tight - r), and the optimum of the runs' trend (without the
sensors' quantization) lies d_s = -(J^T J)^-1 J^T r_s away; while some |d_t,i| exceeds
TOLERANCE_SHIFT or |d_s,i| STALL_STEP standard deviations sqrt(s^2 (J^T J)^-1_ii),
or a column of J changes by more than JACOBIAN_CHANGE of its norm at ten times
tighter (forward differences of a value whose effect is not clear of the runs'
integration error), the search goes on from x ten times tighter.

A model whose sensors quantize (a `resolution`, read by a sampled controller) is a
piecewise smooth function of its values: a change of a value that moves a sample of
the encoder across a count changes the controller's output by a gain times the count
for a sample, and the run by a small jump. Differences across such jumps are
no derivatives (on a hub held by stick-slip friction under an encoder of 4096
counts, forward steps of 1e-4 give columns seven times the trend). The difference
columns are then taken on the model with its sensors' quantization removed (each
`resolution` = 0, Widrow's model of a quantizer as its input plus a uniform error
of no mean), a smooth function whose derivative is the trend of the quantized run;
the residual (1), its cost and s^2 are the quantized model's. The quantized run then
differs from its trend by a pattern of jumps that moves with the values, so the
fitted values scatter about the truth by more than the noise alone says; the fit
counts one realisation of it, the shift of the values that the difference between
the quantized run and its trend at the optimum, r_q - r_s, makes:

    d = (J^T W J)^-1 J^T W (r_q - r_s),     cov = s^2 (J^T W J)^-1 + d d^T     (3)

Uncertainty, from the Jacobian J of (1) at the optimum:

    cov = s^2 (J^T W J)^-1,   s^2 = sum r^2 / (sum_c g_c m_c - n)             (2)

with m_c the samples of channel c, n the number of fitted values and g_c the noise
power gain of the channel's filter (flexmbs.analysis.channel_map.noise_power_gain;
1 without one): filtered white noise keeps g_c of its variance, while the slowly varying
columns of J pass the filter unchanged. W weighs the rows of channel c by
1 / max(1, g_c tau_c), tau_c the integrated autocorrelation time of its residuals
(samples; 1 + 2 sum_k rho_k over Sokal's window, the sum up to the first lag M >= 5 tau):
residuals correlated over tau samples carry 1 / tau of the information of white ones
against the slowly varying columns of J (a quantized record of a slow or stuck joint
has a rounding error that stays for many samples; filtered white noise has
tau = 1 / g_c and keeps its weight). s^2 near 1 says the residuals are the
measurement noise, and the standard deviations sqrt(cov_ii) (correlations
cov_ij / (sd_i sd_j)) are the values' uncertainty. Above S2_CONSISTENT the model
does not explain the record: the residuals hold something that is not noise, which
moves the values by more than any standard deviation from (2) says (a model that
differs in a detail the fit does not see moves them as much), so none is given;
the fit says instead, per channel, the RMS the model leaves unexplained,
sigma_c sqrt(s_c^2 - 1) with s_c^2 = sum r_c^2 / (g_c m_c).
"""

from __future__ import annotations

import math
import os
import time as _time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ..errors import ExperimentError, ModelError
from .channel_map import find_offset
from .fit_record import OFFSET_RANGE, FitRecord, _Record, _runs_needed_for_a_step
from .fit_report import FitOutputs, fitted_model_text, format_fit_report, write_fit_outputs
from .fit_result import (
    DEFAULT_MAX_RUNS,
    FitResult,
    FittedValue,
    _fit_result,
    integrated_autocorrelation_time,
    noise_standard_deviation,
)
from .fit_runs import _Budget, _run_all
from .fit_search import (
    FD_STEP,
    JACOBIAN_CHANGE,
    STALL_STEP,
    TOLERANCE_SHIFT,
    _jacobian_change,
    _Outcome,
    _Search,
    _stall_step,
    _tolerance_shift,
)
from .fit_tolerance import MIN_RTOL, TIGHTENING_FACTOR, fit_tolerance
from .fit_toml import OFFSET_NAME, set_toml_values, toml_value
from .fit_values import (
    FitParameter,
    _default_bounds,
    _start_value,
    parse_parameter,
    quantizing_sensors,
    unquantized_overrides,
)

if TYPE_CHECKING:
    from .channel_map import ChannelMap
    from .experiment import Experiment

__all__ = [
    "FitParameter",
    "FittedValue",
    "FitResult",
    "FitOutputs",
    "parse_parameter",
    "FitRecord",
    "fit_model",
    "fit_records",
    "write_fit_outputs",
    "fitted_model_text",
    "toml_value",
    "noise_standard_deviation",
    "set_toml_values",
    "format_fit_report",
    "FD_STEP",
    "OFFSET_RANGE",
    "OFFSET_NAME",
    "DEFAULT_MAX_RUNS",
    "integrated_autocorrelation_time",
    "quantizing_sensors",
    "unquantized_overrides",
]

VERIFY_LIMIT = 1e-4  # largest change of a compared sensor, of its scale, at 10x tighter
ATOL_PER_RTOL = 1e-2  # atol = this * rtol


def fit_model(
    model_path: str | os.PathLike[str],
    experiment: Experiment,
    channel_map: ChannelMap,
    parameters: Iterable[FitParameter],
    overrides: Sequence[str] = (),
    t_end: float | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    fit_offset: bool = True,
    gaps: str | None = None,
    max_runs: int = DEFAULT_MAX_RUNS,
    log: Callable[[str], object] | None = None,
    executor: Executor | None = None,
    verify_limit: float | None = VERIFY_LIMIT,
    window: tuple[float, float] | None = None,
    offset: float | None = None,
) -> FitResult:
    """Identify `parameters` ([FitParameter]) of the model file `model_path` (with the
    --set `overrides` applied; their values there are the starting point) from the
    Experiment `experiment` through the ChannelMap `channel_map`: fit_records with
    one record.

    t_end
        fit the first t_end s after the release (None: the whole record); the same as
        window (0, t_end).
    window
        (t0, t1): the cost counts the samples from model time t0 to t1 (s); the runs
        start at 0, so the state at t0 is the model's (None: from the release).
    offset
        the starting time offset (s; None: the map's alignment).

    The other arguments as for fit_records.
    """
    if window is None and t_end is not None:
        window = (0.0, float(t_end))
    record = FitRecord(
        model_path,
        experiment,
        channel_map,
        overrides=list(overrides),
        window=window,
        gaps=gaps,
        offset=offset,
    )
    return fit_records(
        [record],
        parameters,
        rtol=rtol,
        atol=atol,
        fit_offset=fit_offset,
        max_runs=max_runs,
        log=log,
        executor=executor,
        verify_limit=verify_limit,
    )


def _check_window(spec: FitRecord, source: str | os.PathLike[str]) -> None:
    if spec.window is None:
        return
    t0, t1 = spec.window
    if not (math.isfinite(t0) and math.isfinite(t1) and 0.0 <= t0 < t1):
        raise ModelError(
            f"expected 0 <= T0 < T1 (model time, s), got {t0:g} {t1:g}",
            "--window" if not spec.name else f'record "{spec.name}"',
            "window" if spec.name else None,
            source=source,
        )


def _labels(records: Sequence[FitRecord]) -> list[str]:
    """The records' names for the report: their own, or record1, record2, ..."""
    labels = [r.name or f"record{k + 1}" for k, r in enumerate(records)]
    for label in labels:
        if labels.count(label) > 1:
            raise ModelError(
                "given to two records: expected each record's name once", f'record "{label}"'
            )
    return labels


def fit_records(
    records: Sequence[FitRecord],
    parameters: Iterable[FitParameter],
    rtol: float | None = None,
    atol: float | None = None,
    fit_offset: bool = True,
    max_runs: int = DEFAULT_MAX_RUNS,
    log: Callable[[str], object] | None = None,
    executor: Executor | None = None,
    verify_limit: float | None = VERIFY_LIMIT,
) -> FitResult:
    """Identify the shared `parameters` ([FitParameter], set in every record's model)
    and each record's own (FitRecord.parameters) from the FitRecords `records` at
    once: the residuals (1) of every record, one vector, one least-squares search.

    rtol, atol
        of the runs. None: the model file's own, tightened ten times at a step until
        the convergence check passes (see verify_limit; the tightest of the
        records'); atol None with rtol given: rtol / 100.
    fit_offset
        identify each record's time offset too (else hold its alignment's).
    max_runs
        runs of the model at most, every record's: the starting ones (the alignment,
        one per record whose offset is not given), one per record for each
        evaluation of the residuals, and for each Jacobian one per value of each
        record and, for a model whose sensors quantize, one of its trend. The search
        stops when its next step does not fit in what is left (the convergence
        check's two runs per record aside).
    log
        a function of one str for progress lines, or None.
    executor
        where the runs of a step go, all at once (a concurrent.futures Executor:
        flexmbs.analysis.distributed.dask_executor): the Jacobian's columns and the
        records' runs at a point; None: here, one after another. The fit is the same.
    verify_limit
        before fitting, each record's starting model is run at the fit's tolerance
        and ten times tighter (flexmbs.simulation.convergence) to the end of its window; a
        compared sensor that changes by more than this of its scale within the window
        moves the tolerance ten times tighter (rtol None), or is refused (rtol
        given; ModelError with the remedy): the fit would follow the integration
        error, not the parameters. None: no check (the tolerance as given, or the
        model's).

    A fit that stops on its budget keeps the last point at which it took a Jacobian
    (its best), with `stop` "budget", `success` False and the standard deviations of
    that point (FitResult.std_at "last point"): not those of a minimum, which it did
    not reach. `flexmbs fit --resume` goes on from there.

    Returns a FitResult; raises ModelError / ExperimentError for bad input.
    """
    start_clock = _time.perf_counter()
    if not records:
        raise ModelError("expected at least one record to fit", "fit")
    shared = [_default_bounds(p) for p in parameters]
    recs, names, bounds, x0 = _records(records, shared)
    evaluation_runs, jacobian_runs = _runs_needed_for_a_step(recs)
    aligning = [rec for rec in recs if rec.spec.offset is None]
    least = len(aligning) + evaluation_runs + jacobian_runs
    if max_runs < least:
        raise ModelError(
            f"{max_runs} runs cannot make one step of the fit: expected --max-runs >= "
            f"{least} ({len(aligning)} starting run(s) for the alignment, "
            f"{evaluation_runs} at the start and {jacobian_runs} for its Jacobian)",
            "fit",
            "max_runs",
            source=records[0].model_path,
        )
    budget = _Budget(max_runs)
    rtol_free = rtol is None and verify_limit is not None
    rtol, atol, note = _tolerance(recs, x0, rtol, atol, verify_limit, executor, log)
    _set_samples(recs, x0, fit_offset, budget, executor, log)
    if sum(rec.rows for rec in recs) < len(names) + (len(recs) if fit_offset else 0) + 2:
        raise ExperimentError(
            f"{sum(len(rec.t) for rec in recs)} samples in the window(s): expected more "
            "than the fitted values",
            source=records[0].experiment.path,
        )
    start = list(x0)
    if fit_offset:
        for rec in recs:
            rec.offset_index = len(start)
            start.append(rec.offset0)
            names.append(OFFSET_NAME if len(recs) == 1 else f"{rec.label}:{OFFSET_NAME}")
            bounds.append((rec.offset0 - OFFSET_RANGE, rec.offset0 + OFFSET_RANGE))
    search = _Search(
        recs, names, np.array(start, dtype=float), bounds, budget, executor, log, jacobian_runs
    )
    outcome = search.run()
    if rtol_free:
        search, outcome, rtol, atol, note = _tightened_at_the_optimum(
            search, outcome, rtol, atol, note
        )
    fit = _fit_result(search, outcome, shared, fit_offset, rtol, atol, start_clock)
    fit.tolerance = note
    return fit


def _records(
    records: Sequence[FitRecord], shared: Sequence[FitParameter]
) -> tuple[list[_Record], list[str], list[tuple[float, float]], NDArray[np.float64]]:
    """The search's records of the FitRecords `records` with the `shared` values and
    their own, the names and bounds of the values in the search's vector (the shared
    ones, then each record's own) and their starting values (each checked against its
    model)."""
    labels = _labels(records)
    recs: list[_Record] = []
    n_shared = len(shared)
    names = [p.path for p in shared]
    bounds = [(p.lower, p.upper) for p in shared]
    x0_parts: list[float] = []
    for spec, label in zip(records, labels):
        _check_window(spec, spec.model_path)
        own = [_default_bounds(p) for p in spec.parameters]
        paths = [p.path for p in list(shared) + own]
        for p in list(shared) + own:
            if paths.count(p.path) > 1:
                raise ModelError(
                    "given twice: expected each value once",
                    f'--param "{p.path}"',
                    source=spec.model_path,
                )
        first = len(names)
        index = list(range(n_shared)) + list(range(first, first + len(own)))
        rec = _Record(spec, label, list(shared) + own, index)
        starts = [_start_value(rec.doc, p, spec.model_path) for p in list(shared) + own]
        if not recs:
            x0_parts += starts[:n_shared]
        prefix = f"{label}:" if len(records) > 1 else ""
        names += [prefix + p.path for p in own]
        bounds += [(p.lower, p.upper) for p in own]
        x0_parts += starts[n_shared:]
        recs.append(rec)
    x0 = np.array(x0_parts, dtype=float)
    for rec in recs:  # every record with the start (and its values known to its model)
        rec.runs.model(rec.values(x0))
    return recs, names, bounds, x0


def _set_samples(
    recs: Sequence[_Record],
    x0: NDArray[np.float64],
    fit_offset: bool,
    budget: _Budget,
    executor: Executor | None,
    log: Callable[[str], object] | None,
) -> None:
    """Each record's starting offset (given, or from a run of its starting model over
    the record and the map's alignment) and its samples in its window from there."""
    aligning = [rec for rec in recs if rec.spec.offset is None]
    for rec in aligning:
        rec.runs.t_end = rec.t_record
    if aligning and log:
        log("starting run(s) and alignment")
    _run_all(
        [(rec.runs, rec.values(x0)) for rec in aligning],
        budget,
        executor,
        log=log if executor is None else None,
    )
    for rec in recs:
        if rec.spec.offset is None:
            offset0, alignment = find_offset(
                rec.channel_map, rec.measured, rec.runs.signals(rec.values(x0))
            )
        else:
            offset0, alignment = float(rec.spec.offset), f"offset {rec.spec.offset:.6g} s given"
        rec.set_samples(offset0, alignment, fit_offset)
        if len(rec.t) < 2:
            raise ExperimentError(
                f"{len(rec.t)} samples in the window from {offset0 + rec.window()[0]:.6g} s "
                "(experiment time): expected more",
                source=rec.spec.experiment.path,
            )


def _tightened_at_the_optimum(
    search: _Search, outcome: _Outcome, rtol: float, atol: float, note: str
) -> tuple[_Search, _Outcome, float, float, str]:
    """The search gone on from where it stopped, ten times tighter, while it stopped
    short of its trend's optimum (_stall_step above STALL_STEP standard deviations:
    the runs' integration error roughens the cost) or the runs ten times tighter move
    the optimum by more than TOLERANCE_SHIFT of a standard deviation
    (_tolerance_shift): the last search, its outcome, its tolerance and how it was had."""
    while outcome.stop == "converged":
        stall = _stall_step(search, outcome)
        shift = _tolerance_shift(search, outcome) if stall is not None else None
        if stall is None or shift is None:
            break
        change = 0.0
        if stall <= STALL_STEP and shift <= TOLERANCE_SHIFT:
            change = _jacobian_change(search, outcome) or 0.0
        measured = (
            f"ten times tighter moves the values by at most {shift:.2g} of their standard "
            f"deviations (the trend's own optimum {stall:.2g} away) and the Jacobian's "
            f"columns by {change:.2g}"
        )
        if stall <= STALL_STEP and shift <= TOLERANCE_SHIFT and change <= JACOBIAN_CHANGE:
            note += f"; at the optimum, {measured}"
            break
        if rtol / TIGHTENING_FACTOR < MIN_RTOL:
            note += f"; at the optimum, at the tightest tolerance tried, {measured}"
            break
        rtol, atol = rtol / TIGHTENING_FACTOR, atol / TIGHTENING_FACTOR
        if shift > TOLERANCE_SHIFT:
            why = (
                f"ten times tighter moved the values by {shift:.2g} of their standard "
                f"deviations (more than {TOLERANCE_SHIFT:g})"
            )
        elif stall > STALL_STEP:
            why = (
                f"the search stopped {stall:.2g} standard deviations short of its trend's "
                f"optimum (more than {STALL_STEP:g})"
            )
        else:
            why = (
                f"ten times tighter changed a column of the Jacobian by {change:.2g} of its "
                f"norm (more than {JACOBIAN_CHANGE:g})"
            )
        note += f"; at the end of the search {why}: tightened to {rtol:g}"
        if search.log:
            search.log(f"the search goes on at rtol {rtol:g}: {why}")
        for rec in search.recs:
            rec.set_tolerance(rtol, atol)
        search = search.again_from(outcome.x)
        outcome = search.run()
    return search, outcome, rtol, atol, note


def _tolerance(
    recs: Sequence[_Record],
    x0: NDArray[np.float64],
    rtol: float | None,
    atol: float | None,
    verify_limit: float | None,
    executor: Executor | None,
    log: Callable[[str], object] | None,
) -> tuple[float, float, str]:
    """The fit's (rtol, atol) and how they were had, set in every record's runs: the
    given ones or the models' (the tightest record's), checked or tightened by the
    convergence check (flexmbs.analysis.fit_tolerance) unless verify_limit is None."""
    model_first = min(recs, key=lambda rec: rec.model_tolerance[0])
    if rtol is None:
        rtol0, atol0 = model_first.model_tolerance
        if atol is not None:
            atol0 = atol
        how = "the model's, unchecked"
    else:
        rtol0 = rtol
        atol0 = ATOL_PER_RTOL * rtol if atol is None else atol
        how = "given, unchecked"
    if verify_limit is not None:
        rtol0, atol0, how = fit_tolerance(
            recs, x0, rtol0, atol0, rtol is None, verify_limit, executor, log
        )
    for rec in recs:
        rec.set_tolerance(rtol0, atol0)
    return rtol0, atol0, how
