"""What a fit found: the values with their standard deviations and correlations,
equations (2) and (3) of flexmbs.analysis.fit, and the statistics of the residuals.
"""

from __future__ import annotations

import math
import os
import time as _time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .fit_values import FitParameter, _parameter_text

if TYPE_CHECKING:
    from .fit_record import _Record
    from .fit_search import _Outcome, _Search

DEFAULT_MAX_RUNS = 200
S2_CONSISTENT = 1.5  # s^2 up to this: the residuals are the noise (RMS within 1.22 of it)


@dataclass
class FittedValue:
    """One identified value: start, fitted value, standard deviation, bounds; `record`
    the record it belongs to in a fit of several (None: shared by all, or the one)."""

    path: str
    start: float
    value: float
    std: float
    lower: float
    upper: float
    record: str | None = None

    @property
    def name(self) -> str:
        """The value's name in the report: its path, after its record's name."""
        return f"{self.record}:{self.path}" if self.record else self.path

    @property
    def at_bound(self) -> bool:
        return bool(self.value <= self.lower or self.value >= self.upper)


@dataclass
class FitResult:
    """What fit_model found.

    values : [FittedValue] of the model values, then the offset (path "offset", s)
        when it was fitted; offset : the offset used at the end (s);
    correlation : (n, n) correlations of the fitted values (same order);
    noise : channel -> sigma_c of (1); noise_gain : channel -> g_c of (2);
    variance_ratio : s^2 of (2); cost : 1/2 sum r^2; samples : channel -> m_c;
    window : (first, last) experiment time of the fitted samples (s);
    runs : simulations made; wall_time : s; success, message : least_squares' outcome;
    alignment : how the starting offset was found;
    overrides : the dotted-path assignments of the fitted model values (for --set);
    noise_source : channel -> how its sigma was had (stated, third differences,
    quantization); channel_variance_ratio : channel -> s_c^2; unexplained : channel
    -> the RMS (SI) the model leaves unexplained, sigma_c sqrt(max(s_c^2 - 1, 0));
    consistent : s^2 <= S2_CONSISTENT (the standard deviations are given only then);
    smooth_jacobian : the sensors whose quantization the Jacobian's runs leave out;
    correlation_time : channel -> tau_c of (2), samples; quantization_shift : the
    values' shift d of (3) (same order as values; empty without quantizing sensors).
    stop : "converged", "budget" (max_runs spent) or "failed"; std_at : where the
    standard deviations were computed, "optimum" or "last point" (a fit stopped on
    its budget); max_runs : the budget; tolerance : how rtol and atol were had
    (the convergence check's outcome); shared : the --param forms of the values
    every record shares; records : per record its files, overrides, own
    parameters, window, samples, offset, cost and s^2 (a dict each).
    """

    values: list[FittedValue]
    offset: float
    offset_fitted: bool
    correlation: np.ndarray
    noise: dict[str, float]
    noise_gain: dict[str, float]
    variance_ratio: float
    cost: float
    samples: dict[str, int]
    window: tuple[float, float]
    runs: int
    wall_time: float
    success: bool
    message: str
    rtol: float
    atol: float
    alignment: str = ""
    output_step: float | None = None
    overrides: list[str] = field(default_factory=list)
    noise_source: dict[str, str] = field(default_factory=dict)
    channel_variance_ratio: dict[str, float] = field(default_factory=dict)
    unexplained: dict[str, float] = field(default_factory=dict)
    consistent: bool = True
    smooth_jacobian: list[str] = field(default_factory=list)
    correlation_time: dict[str, float] = field(default_factory=dict)
    quantization_shift: list[float] = field(default_factory=list)
    stop: str = "converged"
    std_at: str = "optimum"
    max_runs: int = DEFAULT_MAX_RUNS
    shared: list[str] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    tolerance: str = ""

    def value(self, path: str) -> FittedValue:
        return next(v for v in self.values if v.name == path or v.path == path)

    def to_dict(self) -> dict[str, Any]:
        names = [v.name for v in self.values]
        return {
            "values": [
                {
                    "path": v.path,
                    "start": v.start,
                    "value": v.value,
                    "std": _finite_or_none(v.std),
                    "lower": _finite_or_none(v.lower),
                    "upper": _finite_or_none(v.upper),
                    "at_bound": v.at_bound,
                    "record": v.record,
                }
                for v in self.values
            ],
            "offset": self.offset,
            "offset_fitted": self.offset_fitted,
            "correlation": {
                "names": names,
                "matrix": [
                    [_finite_or_none(x) for x in row]
                    for row in np.asarray(self.correlation).tolist()
                ],
            },
            "noise": self.noise,
            "noise_power_gain": self.noise_gain,
            "variance_ratio": self.variance_ratio,
            "cost": self.cost,
            "samples": self.samples,
            "window": list(self.window),
            "runs": self.runs,
            "wall_time": self.wall_time,
            "success": self.success,
            "message": self.message,
            "rtol": self.rtol,
            "atol": self.atol,
            "tolerance": self.tolerance,
            "output_step": self.output_step,
            "alignment": self.alignment,
            "overrides": list(self.overrides),
            "noise_source": dict(self.noise_source),
            "channel_variance_ratio": dict(self.channel_variance_ratio),
            "unexplained": dict(self.unexplained),
            "consistent": self.consistent,
            "smooth_jacobian": list(self.smooth_jacobian),
            "correlation_time": dict(self.correlation_time),
            "quantization_shift": list(self.quantization_shift),
            "stop": self.stop,
            "std_at": self.std_at,
            "max_runs": self.max_runs,
            "shared": list(self.shared),
            "records": [
                {k: (_finite_or_none(v) if isinstance(v, float) else v) for k, v in r.items()}
                for r in self.records
            ],
        }


def _finite_or_none(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def integrated_autocorrelation_time(values: ArrayLike) -> float:
    """tau = 1 + 2 sum_{k=1}^{M} rho_k of a series (its autocorrelation rho_k at lag k
    samples, about its mean), M the first lag with M >= 5 tau (Sokal's window); at
    least 1. A white series has tau = 1; a series whose values persist over tau samples
    has tau of them per independent value."""
    x = np.asarray(values, dtype=float)
    x = x - x.mean()
    n = len(x)
    if n < 2 or not np.any(x):
        return 1.0
    spectrum = np.fft.rfft(x, 2 * n)
    acf = np.fft.irfft(spectrum * np.conj(spectrum))[:n]
    rho = acf / acf[0]
    tau = 1.0
    for m in range(1, n):
        tau = 1.0 + 2.0 * float(np.sum(rho[1 : m + 1]))
        if m >= 5.0 * tau:
            break
    return max(tau, 1.0)


def noise_standard_deviation(values: ArrayLike) -> float:
    """sigma of white measurement noise on a finely sampled smooth signal:
    1.4826 median|D^3 x| / sqrt(20), D^3 the third difference
    (flexmbs.analysis.channel_map.third_difference_noise)."""
    from .channel_map import third_difference_noise

    return third_difference_noise(values)


def _fit_result(
    search: _Search,
    outcome: _Outcome,
    shared: Sequence[FitParameter],
    fit_offset: bool,
    rtol: float,
    atol: float,
    start_clock: float,
) -> FitResult:
    """The values, standard deviations (2), (3) and the per-record and per-channel
    statistics at the end of the search."""
    recs = search.recs
    x, r = outcome.x, outcome.r
    ch = _Channels(recs)
    dof = sum(g * m for g, m in zip(ch.gains, ch.counts)) - len(x)
    variance_ratio = float(r @ r) / dof if dof > 0 else math.nan
    cov, tau, quantization_shift = _covariance(recs, outcome, ch, variance_ratio)
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = cov / np.outer(std, std)
    per_channel = {
        lab: float(r[b] @ r[b]) / (g * m)
        for lab, b, g, m in zip(ch.labels, ch.blocks, ch.gains, ch.counts)
    }
    unexplained = {
        lab: ch.sigma[lab] * math.sqrt(max(v - 1.0, 0.0)) for lab, v in per_channel.items()
    }
    consistent = bool(variance_ratio <= S2_CONSISTENT)
    if not consistent or outcome.stop == "failed":  # no noise, or no point: no uncertainty
        std = np.full_like(std, math.nan)
    rec0 = recs[0]
    return FitResult(
        values=_fitted_values(search, x, std),
        offset=rec0.offset(x),
        offset_fitted=fit_offset,
        correlation=corr,
        noise=ch.sigma,
        noise_gain=ch.noise_gain,
        variance_ratio=variance_ratio,
        cost=0.5 * float(r @ r),
        samples={lab: m for lab, m in zip(ch.labels, ch.counts)},
        window=(float(rec0.t[0]), float(rec0.t[-1])),
        runs=search.budget.made,
        wall_time=_time.perf_counter() - start_clock,
        success=outcome.stop == "converged",
        message=outcome.message,
        rtol=rtol,
        atol=atol,
        alignment=rec0.alignment,
        output_step=rec0.runs.output_step,
        overrides=rec0.runs.assignments(rec0.values(x)),
        noise_source=ch.noise_source,
        channel_variance_ratio=per_channel,
        unexplained=unexplained,
        consistent=consistent,
        smooth_jacobian=sorted({n for rec in recs for n in rec.quantizing}),
        correlation_time=tau,
        quantization_shift=quantization_shift,
        stop=outcome.stop,
        std_at="last point" if outcome.stop == "budget" else "optimum",
        max_runs=search.budget.max_runs,
        shared=[_parameter_text(p) for p in shared],
        records=_record_reports(recs, x, r),
    )


class _Channels:
    """The channels of the records in the order of the residuals: their labels (a
    record's name before the channel's in a fit of several), filter gains g_c, sample
    counts m_c, rows of the residual vector, noise sigma_c and how it was had."""

    def __init__(self, recs: Sequence[_Record]) -> None:
        several = len(recs) > 1
        self.labels: list[str] = []
        self.gains: list[float] = []
        self.counts: list[int] = []
        self.sigma: dict[str, float] = {}
        self.noise_source: dict[str, str] = {}
        self.noise_gain: dict[str, float] = {}
        for rec in recs:
            for c in rec.channel_map.names:
                lab = f"{rec.label}:{c}" if several else c
                self.labels.append(lab)
                self.gains.append(rec.gain[c])
                self.counts.append(len(rec.t))
                self.sigma[lab] = rec.sigma[c]
                self.noise_source[lab] = rec.noise_source[c]
                self.noise_gain[lab] = rec.gain[c]
        self.blocks, row = [], 0
        for m in self.counts:
            self.blocks.append(slice(row, row + m))
            row += m


def _covariance(
    recs: Sequence[_Record], outcome: _Outcome, ch: _Channels, variance_ratio: float
) -> tuple[NDArray[np.float64], dict[str, float], list[float]]:
    """(cov of (2) and (3), tau_c by channel, the quantization's shift d of (3))."""
    x, jac, r = outcome.x, outcome.jac, outcome.r
    tau = {lab: integrated_autocorrelation_time(r[b]) for lab, b in zip(ch.labels, ch.blocks)}
    row_weight = np.concatenate(
        [
            np.full(m, 1.0 / max(1.0, g * tau[lab]))
            for lab, g, m in zip(ch.labels, ch.gains, ch.counts)
        ]
    )
    weighted_normal = np.asarray(np.linalg.pinv(jac.T @ (row_weight[:, None] * jac)), dtype=float)
    cov = variance_ratio * weighted_normal
    if not any(rec.quantizing for rec in recs):
        return cov, tau, []
    # the quantization's share: what it moves the values by, from the trend's
    parts, row = [], 0
    for rec in recs:  # the trend's residuals; a record that does not quantize is its own
        parts.append(rec.residual(x, smooth=True) if rec.quantizing else r[row : row + rec.rows])
        row += rec.rows
    shift = weighted_normal @ (jac.T @ (row_weight * (r - np.concatenate(parts))))
    cov = cov + np.outer(shift, shift)
    return cov, tau, [float(v) for v in shift]


def _fitted_values(
    search: _Search, x: NDArray[np.float64], std: NDArray[np.float64]
) -> list[FittedValue]:
    """The FittedValues of the search's values at x with their standard deviations."""
    fitted = []
    several = len(search.recs) > 1
    for i, name in enumerate(search.names):
        lo, hi = search.bounds[i]
        record = None
        path = name
        if several and ":" in name:
            record, _, path = name.partition(":")
        fitted.append(
            FittedValue(path, float(search.x_start[i]), float(x[i]), float(std[i]), lo, hi, record)
        )
    return fitted


def _record_reports(
    recs: Sequence[_Record], x: NDArray[np.float64], r: NDArray[np.float64]
) -> list[dict[str, Any]]:
    """Per record: its files, settings, window, samples, offset, cost and s^2."""
    reports = []
    row = 0
    for rec in recs:
        rr = r[row : row + rec.rows]
        row += rec.rows
        m_rec = sum(rec.gain[c] * len(rec.t) for c in rec.channel_map.names)
        reports.append(
            {
                "name": rec.label,
                "model": os.fspath(rec.spec.model_path),
                "experiment": rec.spec.experiment.path,
                "map": rec.channel_map.path,
                "overrides": list(rec.spec.overrides),
                "parameters": [_parameter_text(p) for p in rec.spec.parameters],
                "window": list(rec.spec.window) if rec.spec.window is not None else None,
                "samples_from": float(rec.t[0]),
                "samples_to": float(rec.t[-1]),
                "samples": int(rec.rows),
                "offset": rec.offset(x),
                "alignment": rec.alignment,
                "cost": 0.5 * float(rr @ rr),
                "variance_ratio": float(rr @ rr) / m_rec if m_rec > 0 else math.nan,
                "gaps": rec.spec.gaps,
                "group": rec.spec.group,
                "assignments": rec.runs.assignments(rec.values(x)),
                "output_step": rec.runs.output_step,
            }
        )
    return reports
