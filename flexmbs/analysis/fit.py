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
are those from the starting offset (the release) to the end of the record or `t_end`
later.

Jacobian: forward differences for the model values, one run per value, with the step
FD_STEP * max(|p|, |p_0|) (backwards at an upper bound); the offset's column is exact,
-F ds/dt / sigma, from the spline. The runs use rtol (default FIT_RTOL = 1e-8,
atol = rtol / 100): the integration error then changes the outputs by about 1e-8
relative, so a difference step of 1e-4 keeps its share of a derivative near 1e-4.

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

import datetime
import json
import math
import os
import re
import time as _time
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import least_squares

from .. import __version__
from ..errors import ExperimentError, ModelError
from .channel_map import (
    filtered,
    find_offset,
    measured_signals,
    measurement_noise,
    noise_power_gain,
    sensor_quantities,
    simulated_signals,
)

if TYPE_CHECKING:
    from ..model.compiled import CompiledModel
    from ..model.description import Model
    from .channel_map import ChannelMap, SimulatedSignals
    from .compare import Comparison
    from .experiment import Experiment

__all__ = [
    "FitParameter",
    "FittedValue",
    "FitResult",
    "FitOutputs",
    "parse_parameter",
    "fit_model",
    "write_fit_outputs",
    "fitted_model_text",
    "toml_value",
    "noise_standard_deviation",
    "set_toml_values",
    "format_fit_report",
    "FIT_RTOL",
    "FD_STEP",
    "OFFSET_RANGE",
]

FIT_RTOL = 1e-8  # of the runs
VERIFY_LIMIT = 1e-4  # largest change of a compared sensor, of its scale, at 10x tighter
ATOL_PER_RTOL = 1e-2  # atol = this * rtol
FD_STEP = 1e-4  # relative finite-difference step of the model values
OFFSET_RANGE = 0.1  # s: the fitted offset stays within this of its starting value
OUTPUT_SUBSTEPS = 10  # run outputs per experiment sample interval
FTOL = XTOL = 1e-6  # least_squares: relative change of the cost / of the values
GTOL = 1e-8
DEFAULT_MAX_RUNS = 200
S2_CONSISTENT = 1.5  # s^2 up to this: the residuals are the noise (RMS within 1.22 of it)
OFFSET_NAME = "offset"
# fields whose values cannot be negative (a default lower bound of 0)
NON_NEGATIVE_FIELDS = (
    "stiffness",
    "damping",
    "alpha",
    "beta",
    "mass",
    "density",
    "youngs_modulus",
    "shear_modulus",
    "rotor_inertia",
    "motor_damping",
    "kp",
    "kd",
    "max_torque",
    "gear_ratio",
    "coulomb",
    "static",
    "viscous",
    "stribeck_velocity",
    "regularization",
    "sample_time",
    "delay",
    "dead_time",
    "lag",
    "resolution",
)
NON_NEGATIVE_TABLES = ("node_masses",)


# ---------------------------------------------------------------- parameters
@dataclass(frozen=True)
class FitParameter:
    """A model value to identify: its dotted path (as for --set) and bounds."""

    path: str
    lower: float = -math.inf
    upper: float = math.inf


def parse_parameter(text: str) -> FitParameter:
    """'PATH' or 'PATH=lo:hi' (either bound may be left out: 'PATH=0:') -> FitParameter."""
    path, equals, bounds = str(text).partition("=")
    path = path.strip()
    item = f'--param "{text}"'
    if not path or not all(k.strip() for k in path.split(".")):
        raise ModelError(
            "expected PATH or PATH=lo:hi with a dotted path, e.g. joints.joint2.damping=0:1", item
        )
    if not equals:
        return FitParameter(path)
    lo, colon, hi = bounds.partition(":")
    if not colon:
        raise ModelError(f'expected bounds lo:hi after "=", got "{bounds}"', item)
    try:
        lower = float(lo) if lo.strip() else -math.inf
        upper = float(hi) if hi.strip() else math.inf
    except ValueError:
        raise ModelError(
            f'expected numbers (or nothing) on each side of ":", got "{bounds}"', item
        ) from None
    if not lower < upper:
        raise ModelError(f"expected lo < hi, got {lower:g}:{upper:g}", item)
    return FitParameter(path, lower, upper)


def _keys(path: str) -> list[str]:
    return [k.strip() for k in path.split(".")]


def _toml_value_of_text(text: str) -> object:
    try:
        return tomllib.loads("v = " + text)["v"]
    except tomllib.TOMLDecodeError:
        return text


def _assign(doc: dict[str, Any], keys: Sequence[str], value: object) -> None:
    table = doc
    for key in keys[:-1]:
        table = table.setdefault(key, {})
        if not isinstance(table, dict):
            return
    table[keys[-1]] = value


def _document(text: str, overrides: Iterable[str]) -> dict[str, Any]:
    """The parsed model file with the --set overrides applied (already checked by the
    reader: the model was loaded with them)."""
    doc = tomllib.loads(text)
    for override in overrides:
        path, _, value = str(override).partition("=")
        _assign(doc, _keys(path), _toml_value_of_text(value.strip()))
    return doc


def quantizing_sensors(doc: Mapping[str, Any]) -> list[str]:
    """The sensors of the model document `doc` that quantize what they read (a
    nonzero `resolution`)."""
    sensors = doc.get("sensors", {})
    return [
        name
        for name, table in sensors.items()
        if isinstance(table, Mapping) and float(table.get("resolution", 0.0) or 0.0) != 0.0
    ]


def _start_value(
    doc: Mapping[str, Any], parameter: FitParameter, source: str | os.PathLike[str]
) -> float:
    item = f'--param "{parameter.path}"'
    table = doc
    keys = _keys(parameter.path)
    for depth, key in enumerate(keys):
        if not isinstance(table, dict) or key not in table:
            where = ".".join(keys[:depth]) or "the top level"
            has = ", ".join(table) if isinstance(table, dict) else "(not a table)"
            raise ModelError(
                f'no value "{key}" in {where} of the model file (after --set); '
                f"it has: {has}; give a starting value with --set "
                f"{parameter.path}=VALUE",
                item,
                source=source,
            )
        table = table[key]
    value: object = table
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kind = "a list (one value per coordinate)" if isinstance(value, list) else repr(value)
        raise ModelError(f"expected a number to fit, got {kind}", item, source=source)
    value = float(value)
    if not parameter.lower <= value <= parameter.upper:
        raise ModelError(
            f"the starting value {value:g} is outside the bounds "
            f"{parameter.lower:g}:{parameter.upper:g}",
            item,
            source=source,
        )
    return value


def _default_bounds(parameter: FitParameter) -> FitParameter:
    keys = _keys(parameter.path)
    non_negative = keys[-1] in NON_NEGATIVE_FIELDS or (
        len(keys) > 1 and keys[-2] in NON_NEGATIVE_TABLES
    )
    if non_negative and parameter.lower == -math.inf:
        return FitParameter(parameter.path, 0.0, parameter.upper)
    return parameter


# -------------------------------------------------------------------- results
@dataclass
class FittedValue:
    """One identified value: start, fitted value, standard deviation, bounds."""

    path: str
    start: float
    value: float
    std: float
    lower: float
    upper: float

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

    def value(self, path: str) -> FittedValue:
        return next(v for v in self.values if v.path == path)

    def to_dict(self) -> dict[str, Any]:
        names = [v.path for v in self.values]
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


# ------------------------------------------------------------------------ fit
class _Runs:
    """Runs of the model at given values, the last few kept (least_squares asks for the
    residual and the Jacobian at the same point)."""

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        overrides: Iterable[str],
        parameters: Sequence[FitParameter],
        t_end: float | None,
        rtol: float,
        atol: float,
        output_step: float,
        channel_map: ChannelMap,
        quantities: Mapping[str, str | None],
        log: Callable[[str], object] | None = None,
    ) -> None:
        self.model_path = model_path
        self.overrides = list(overrides)
        self.parameters = parameters
        self.t_end, self.rtol, self.atol = t_end, rtol, atol
        self.output_step = output_step
        self.channel_map = channel_map
        self.quantities = quantities
        self.cache: dict[tuple[float, ...], SimulatedSignals] = {}
        self.count = 0
        self.log = log

    def assignments(self, values: NDArray[np.float64]) -> list[str]:
        return [f"{p.path}={float(v)!r}" for p, v in zip(self.parameters, values)]

    def model(self, values: NDArray[np.float64]) -> Model:
        from ..model.toml_reader import load_model

        try:
            return load_model(self.model_path, self.overrides + self.assignments(values))
        except ModelError as err:
            raise ModelError(
                f"{err.message} (values tried by the fit: "
                f"{', '.join(self.assignments(values))}); expected bounds "
                "that keep the model valid: --param PATH=lo:hi",
                err.item,
                err.field,
                err.source,
            ) from None

    def _job(
        self, values: NDArray[np.float64]
    ) -> tuple[
        str, list[str], float | None, float, float, float, Mapping[str, str | None], ChannelMap
    ]:
        """The arguments of _simulated_signals for a run at `values` (the model is
        read here first, so that a bad value is a ModelError of this process)."""
        self.model(values)
        return (
            os.fspath(self.model_path),
            self.overrides + self.assignments(values),
            self.t_end,
            self.rtol,
            self.atol,
            self.output_step,
            self.quantities,
            self.channel_map,
        )

    def _keep(self, values: NDArray[np.float64], outcome: SimulatedSignals | str) -> None:
        self.count += 1
        if isinstance(outcome, str):
            raise ExperimentError(
                f"the run failed at {', '.join(self.assignments(values)) or 'the start'}: "
                f"{outcome}; expected bounds (--param PATH=lo:hi) that keep the model "
                "valid",
                source=self.model_path,
            )
        self.cache[tuple(float(v) for v in values)] = outcome

    def prefetch(self, points: Sequence[NDArray[np.float64]], executor: Executor) -> None:
        """Run the models at `points` on `executor` at once (the difference columns of
        a Jacobian), into the cache; the cache then holds at least these."""
        todo = [v for v in points if tuple(float(x) for x in v) not in self.cache]
        jobs = [self._job(v) for v in todo]
        outcomes = list(executor.map(_simulated_signals, *zip(*jobs))) if jobs else []
        for values, outcome in zip(todo, outcomes):
            self._keep(values, outcome)

    def signals(self, values: NDArray[np.float64]) -> SimulatedSignals:
        key = tuple(float(v) for v in values)
        if key in self.cache:
            return self.cache[key]
        outcome = _simulated_signals(*self._job(values), log=self.log if not self.count else None)
        while len(self.cache) > 4 + len(values):
            self.cache.pop(next(iter(self.cache)))
        self._keep(values, outcome)
        return self.cache[key]


def _check_convergence(
    runs: _Runs,
    x0: NDArray[np.float64],
    t_end: float,
    channel_map: ChannelMap,
    limit: float,
    model_path: str | os.PathLike[str],
    log: Callable[[str], object] | None,
) -> None:
    """The starting model run at the fit's tolerance and ten times tighter: ModelError
    (with the remedy) when a compared sensor changes by `limit` of its scale or more."""
    from ..simulation import simulate

    if log:
        log(
            f"checking that the model converges at the fit's tolerance (rtol {runs.rtol:g}, "
            "and ten times tighter)"
        )
    model = runs.model(x0)
    sim = simulate(
        model,
        None,
        t_end=t_end,
        rtol=runs.rtol,
        atol=runs.atol,
        output_step=runs.output_step,
        verify=True,
        verify_limit=limit,
    )
    conv = sim.convergence
    assert conv is not None  # verify=True
    if conv.status != ("finished", "finished"):
        raise ExperimentError(
            f"the starting run failed: {conv.message}; expected a model that runs",
            source=model_path,
        )
    compared = {c.sensor for c in channel_map.channels}
    bad = [g for g in conv.groups if g.name[len("sensor ") :] in compared and not g.passed]
    if bad:
        g = max(bad, key=lambda x: x.relative)
        raise ModelError(
            f"the model does not converge at the fit's tolerance ({conv.method}, rtol "
            f"{conv.rtol:g}): {g.name} changes by {g.relative:.3g} of its scale at ten times "
            f"tighter (at t = {g.at_time:.6g} s; at most {limit:g}), so the fit would follow "
            "the integration error; expected a tolerance that converges: a smaller --rtol, "
            "or the model with bdf (--set 'solver.method=\"bdf\"')",
            "fit",
            "rtol",
            source=model_path,
        )


def _simulated_signals(
    model_path: str,
    overrides: Sequence[str],
    t_end: float | None,
    rtol: float,
    atol: float,
    output_step: float,
    quantities: Mapping[str, str | None],
    channel_map: ChannelMap,
    log: Callable[[str], object] | None = None,
) -> SimulatedSignals | str:
    """The simulated signals of one run of the model file with `overrides`, or the
    run's failure message. Runs where the fit sends it (a dask worker, or here)."""
    from ..model.compiled import compile_model
    from ..model.toml_reader import load_model
    from ..simulation import simulate

    model = load_model(model_path, overrides)
    sim = simulate(model, None, t_end=t_end, rtol=rtol, atol=atol, output_step=output_step, log=log)
    if not sim.success:
        return sim.message or "the run failed"
    sensors = _sensor_dict(compile_model(model), sim.sensors)
    return simulated_signals(sim.t, sensors, quantities, channel_map, model_path)


def _sensor_dict(cm: CompiledModel, sensors: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """The columns of Simulation.sensors by sensor name ((n,) or (n, size))."""
    out, k = {}, 0
    for name, size in zip(cm.sensor_names, cm.sensor_sizes):
        out[name] = sensors[:, k] if size == 1 else sensors[:, k : k + size]
        k += size
    return out


def _evaluations_within(
    max_runs: int, n_model: int, quantizing: bool, model_path: str | os.PathLike[str]
) -> int:
    """The residual evaluations least_squares may make so that the fit runs the model
    `max_runs` times at most: one starting run (the alignment), then per evaluation one
    run and, at most once per evaluation (after each accepted step, and at the start),
    a Jacobian of one run per model value, plus one run of the trend at the point
    itself when the model quantizes (the Jacobian at the optimum is the last one's, kept):

        runs <= 1 + nfev (1 + n + [quantizing])

    ModelError when not even one evaluation and its Jacobian fit in `max_runs`."""
    per_evaluation = 1 + n_model + (1 if quantizing else 0)
    least = 1 + per_evaluation
    if max_runs < least:
        raise ModelError(
            f"{max_runs} runs cannot make one step of the fit: expected --max-runs >= "
            f"{least} (the starting run, a run at the start and {per_evaluation - 1} for "
            "its Jacobian)",
            "fit",
            "max_runs",
            source=model_path,
        )
    return (max_runs - 1) // per_evaluation


def _check_record_moves(measured: Any, channel_map: ChannelMap, path: object) -> None:
    """ExperimentError when every channel the map compares holds one value over the
    record: a flat record has no motion for the fit to follow."""
    values = {c.name: np.asarray(measured.values[c.name]) for c in channel_map.channels}
    if values and all(len(v) and np.ptp(v) == 0.0 for v in values.values()):
        held = ", ".join(f'"{n}" = {v[0]:.6g}' for n, v in values.items())
        raise ExperimentError(
            f"every channel is flat over the record's {len(measured.time)} samples ({held}): "
            "expected a record that moves (the fit follows its motion)",
            source=path,
        )


def fit_model(
    model_path: str | os.PathLike[str],
    experiment: Experiment,
    channel_map: ChannelMap,
    parameters: Iterable[FitParameter],
    overrides: Sequence[str] = (),
    t_end: float | None = None,
    rtol: float = FIT_RTOL,
    atol: float | None = None,
    fit_offset: bool = True,
    gaps: str | None = None,
    max_runs: int = DEFAULT_MAX_RUNS,
    log: Callable[[str], object] | None = None,
    executor: Executor | None = None,
    verify_limit: float | None = VERIFY_LIMIT,
) -> FitResult:
    """Identify `parameters` ([FitParameter]) of the model file `model_path` (with the
    --set `overrides` applied; their values there are the starting point) from the
    Experiment `experiment` through the ChannelMap `channel_map`.

    t_end
        fit the first t_end s after the release (None: the whole record).
    rtol, atol
        of the runs (atol None: rtol / 100).
    fit_offset
        identify the time offset too (else hold the alignment's).
    gaps
        gap policy, None: the map's.
    max_runs
        runs of the model at most: the starting run, the runs of the search and those
        of its Jacobians (the convergence check's two runs aside).
    log
        a function of one str for progress lines, or None.
    executor
        where the runs of a Jacobian's difference columns go, all at once (a
        concurrent.futures Executor: flexmbs.analysis.distributed.dask_executor); None:
        here, one after another.
    verify_limit
        before fitting, the starting model is run at the fit's tolerance and ten
        times tighter (flexmbs.convergence); a compared sensor that changes by more
        than this of its scale is refused (ModelError with the remedy): the fit
        would follow the integration error, not the parameters. None: no check.

    A fit that did not converge (least_squares stopped on max_runs or failed) keeps
    its best point with `success` False and no standard deviations (NaN): they
    describe a minimum, which it did not reach.

    Returns a FitResult; raises ModelError / ExperimentError for bad input.
    """
    from ..model.toml_reader import load_model

    start_clock = _time.perf_counter()
    atol = ATOL_PER_RTOL * rtol if atol is None else atol
    model = load_model(model_path, overrides)  # checks the file and the overrides
    assert model.source_text is not None  # a model read from a file keeps its text
    doc = _document(model.source_text, overrides)
    parameters = [_default_bounds(p) for p in parameters]
    paths = [p.path for p in parameters]
    for p in parameters:
        if paths.count(p.path) > 1:
            raise ModelError(
                "given twice: expected each value once", f'--param "{p.path}"', source=model_path
            )
    x0 = np.array([_start_value(doc, p, model_path) for p in parameters])
    load_model(
        model_path, list(overrides) + [f"{p.path}={float(v)!r}" for p, v in zip(parameters, x0)]
    )  # known fields
    measured = measured_signals(channel_map, experiment, gaps)
    _check_record_moves(measured, channel_map, experiment.path)
    dt = measured.sample_interval
    from ..model.serialize import model_to_json

    quantities = sensor_quantities(model_to_json(model))
    t_record = measured.time[-1] - measured.time[0]

    def runs_of(model_overrides: Sequence[str], run_log: Callable[[str], object] | None) -> _Runs:
        return _Runs(
            model_path,
            model_overrides,
            parameters,
            None,
            rtol,
            atol,
            dt / OUTPUT_SUBSTEPS,
            channel_map,
            quantities,
            run_log,
        )

    runs = runs_of(overrides, log)
    quantizing = quantizing_sensors(doc)
    smooth = [f"sensors.{_toml_key(n)}.resolution=0.0" for n in quantizing]
    smooth_runs = runs_of(list(overrides) + smooth, None) if quantizing else runs
    max_nfev = _evaluations_within(max_runs, len(parameters), bool(quantizing), model_path)
    if verify_limit is not None:
        _check_convergence(runs, x0, t_record, channel_map, verify_limit, model_path, log)
    # the starting offset, from a run of the starting model over the record
    runs.t_end = t_record
    if log:
        log("starting run and alignment")
    offset0, alignment = find_offset(channel_map, measured, runs.signals(x0))
    last = measured.time[-1] if t_end is None else min(measured.time[-1], offset0 + t_end)
    window = (measured.time >= offset0) & (measured.time <= last)
    if window.sum() < len(parameters) + 2:
        raise ExperimentError(
            f"{int(window.sum())} samples after the release at "
            f"{offset0:.6g} s: expected more than the fitted values",
            source=experiment.path,
        )
    t = measured.time[window]
    runs.t_end = (last - offset0) + (OFFSET_RANGE if fit_offset else 0.0)
    runs.cache.clear()
    smooth_runs.t_end = runs.t_end
    names = channel_map.names
    noise = {c.name: measurement_noise(c, measured.values[c.name]) for c in channel_map.channels}
    sigma = {name: sd for name, (sd, _) in noise.items()}
    for name, s in sigma.items():
        if not s > 0:
            raise ExperimentError(
                "the measurement has no noise to weigh it by (its third differences "
                "vanish and it is not quantized): state it in the map, noise = the "
                "standard deviation in the channel's unit",
                f'channel "{name}"',
                "noise",
                source=channel_map.path,
            )
    gain = {c.name: noise_power_gain(dt, c.lowpass, c.lowpass_order) for c in channel_map.channels}
    target = {
        c.name: filtered(c, measured.values[c.name][window], dt) for c in channel_map.channels
    }
    n_model = len(parameters)

    def split(x: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
        return x[:n_model], (x[n_model] if fit_offset else offset0)

    def residual(x: NDArray[np.float64], of: _Runs = runs) -> NDArray[np.float64]:
        values, offset = split(x)
        sim = of.signals(values)
        parts = []
        for c in channel_map.channels:
            s = filtered(c, sim.at(c.name, t - offset), dt)
            parts.append((s - target[c.name]) / sigma[c.name])
        return np.concatenate(parts)

    def jacobian(x: NDArray[np.float64]) -> NDArray[np.float64]:
        values, offset = split(x)
        r0 = residual(x)
        steps, shifted = [], []
        for i in range(n_model):
            h = FD_STEP * max(abs(values[i]), abs(x0[i])) or FD_STEP
            if values[i] + h > parameters[i].upper:
                h = -h
            xi = x.copy()
            xi[i] = values[i] + h
            steps.append(h)
            shifted.append(xi)
        if executor is not None:
            smooth_runs.prefetch(
                ([values] if quantizing else []) + [xi[:n_model] for xi in shifted], executor
            )
        base = residual(x, smooth_runs) if quantizing else r0
        columns = [(residual(xi, smooth_runs) - base) / h for xi, h in zip(shifted, steps)]
        if fit_offset:
            sim = runs.signals(values)
            columns.append(
                np.concatenate(
                    [
                        -filtered(c, sim.rate_at(c.name, t - offset), dt) / sigma[c.name]
                        for c in channel_map.channels
                    ]
                )
            )
        if log:
            made = runs.count + (smooth_runs.count if quantizing else 0)
            log(
                f"run {made}: cost {0.5 * float(r0 @ r0):.6g} at "
                + ", ".join(f"{p}={v:.6g}" for p, v in zip(paths + [OFFSET_NAME], x))
            )
        return np.column_stack(columns)

    lower = [p.lower for p in parameters]
    upper = [p.upper for p in parameters]
    start = list(x0)
    if fit_offset:
        lower.append(offset0 - OFFSET_RANGE)
        upper.append(offset0 + OFFSET_RANGE)
        start.append(offset0)
    res = least_squares(
        residual,
        np.array(start),
        jac=jacobian,
        bounds=(lower, upper),
        x_scale="jac",
        method="trf",
        ftol=FTOL,
        xtol=XTOL,
        gtol=GTOL,
        max_nfev=max_nfev,
    )
    jac = jacobian(res.x)  # at the optimum, with this module's steps
    r = residual(res.x)
    m_eff = sum(gain[c] * len(t) for c in names)
    dof = m_eff - len(res.x)
    variance_ratio = float(r @ r) / dof if dof > 0 else math.nan
    tau = {
        c: integrated_autocorrelation_time(r[k * len(t) : (k + 1) * len(t)])
        for k, c in enumerate(names)
    }
    row_weight = np.concatenate([np.full(len(t), 1.0 / max(1.0, gain[c] * tau[c])) for c in names])
    weighted_normal = np.linalg.pinv(jac.T @ (row_weight[:, None] * jac))
    cov = variance_ratio * weighted_normal
    if quantizing:  # the quantization's share: what it moves the values by, from the trend
        shift = weighted_normal @ (jac.T @ (row_weight * (r - residual(res.x, smooth_runs))))
        cov = cov + np.outer(shift, shift)
        quantization_shift = [float(x) for x in shift]
    else:
        quantization_shift = []
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = cov / np.outer(std, std)
    per_channel = {}
    for k, c in enumerate(names):
        rc = r[k * len(t) : (k + 1) * len(t)]
        per_channel[c] = float(rc @ rc) / (gain[c] * len(t))
    unexplained = {c: sigma[c] * math.sqrt(max(v - 1.0, 0.0)) for c, v in per_channel.items()}
    consistent = bool(variance_ratio <= S2_CONSISTENT)
    if not res.success or not consistent:  # no minimum, or no noise: no uncertainty
        std = np.full_like(std, math.nan)
    values, offset = split(res.x)
    fitted = [
        FittedValue(p.path, float(s0), float(v), float(sd), p.lower, p.upper)
        for p, s0, v, sd in zip(parameters, x0, values, std)
    ]
    if fit_offset:
        fitted.append(
            FittedValue(
                OFFSET_NAME,
                float(offset0),
                float(offset),
                float(std[-1]),
                offset0 - OFFSET_RANGE,
                offset0 + OFFSET_RANGE,
            )
        )
    return FitResult(
        values=fitted,
        offset=float(offset),
        offset_fitted=fit_offset,
        correlation=corr,
        noise=sigma,
        noise_gain=gain,
        variance_ratio=variance_ratio,
        cost=0.5 * float(r @ r),
        samples={c: int(len(t)) for c in names},
        window=(float(t[0]), float(t[-1])),
        runs=runs.count + (smooth_runs.count if quantizing else 0),
        wall_time=_time.perf_counter() - start_clock,
        success=bool(res.success),
        message=res.message,
        rtol=rtol,
        atol=atol,
        alignment=alignment,
        output_step=runs.output_step,
        overrides=runs.assignments(values),
        noise_source={name: how for name, (_, how) in noise.items()},
        channel_variance_ratio=per_channel,
        unexplained=unexplained,
        consistent=consistent,
        smooth_jacobian=quantizing,
        correlation_time=tau,
        quantization_shift=quantization_shift,
    )


# --------------------------------------------------------- the fitted model file
BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
HEADER = re.compile(r"^\s*\[(?P<path>[^\[\]]+)\]\s*(#.*)?$")


def _toml_key(key: str) -> str:
    return key if BARE_KEY.match(key) else json.dumps(key)


def toml_value(value: object) -> str:
    """A Python value as TOML text (numbers, booleans, strings, lists, tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _split_dotted(text: str) -> list[str]:
    keys, doc = [], tomllib.loads(f"[{text}]\n")
    while isinstance(doc, dict) and len(doc) == 1:
        key = next(iter(doc))
        keys.append(key)
        doc = doc[key]
    return keys


def _dump_toml(doc: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> list[str]:
    """A whole document as TOML text: plain keys first, then each table under its
    header (used when the file's own text cannot be edited in place)."""
    lines = []
    plain = {k: v for k, v in doc.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in doc.items() if isinstance(v, dict)}
    if prefix and (plain or not tables):
        lines.append("[" + ".".join(_toml_key(k) for k in prefix) + "]")
    lines += [f"{_toml_key(k)} = {toml_value(v)}" for k, v in plain.items()]
    if plain:
        lines.append("")
    for k, v in tables.items():
        lines += _dump_toml(v, prefix + (k,))
    return lines


def set_toml_values(
    text: str, assignments: Mapping[str, object], keep_comments: bool = True
) -> str:
    """The TOML `text` with the values at the dotted paths of `assignments` (path ->
    value) replaced, keeping the rest of the text and its comments. A value whose key
    is not written under its table's header is added after the header, a table without
    a header gets one at the end; when the text cannot be edited so (e.g. an inline
    table), the document is written out anew without its comments. The result always
    parses to the original document with the assignments made. keep_comments=False
    drops the comment at the end of each line whose value it replaces (it described
    the old value)."""
    expected = tomllib.loads(text)
    for path, value in assignments.items():
        _assign(expected, _keys(path), value)
    lines = text.splitlines()
    for path, value in assignments.items():
        keys = _keys(path)
        if not _edit_line(lines, keys[:-1], keys[-1], toml_value(value), keep_comments):
            lines += [
                "",
                "[" + ".".join(_toml_key(k) for k in keys[:-1]) + "]",
                f"{_toml_key(keys[-1])} = {toml_value(value)}",
            ]
    edited = "\n".join(lines) + "\n"
    try:
        if tomllib.loads(edited) == expected:
            return edited
    except tomllib.TOMLDecodeError:
        pass
    return "\n".join(_dump_toml(expected)).rstrip() + "\n"


def _edit_line(
    lines: list[str], table: Sequence[str], key: str, value_text: str, keep_comment: bool = True
) -> bool:
    """Replace (or add) `key = value` under the header [table]; False when the file has
    no such header."""
    start = None
    for i, line in enumerate(lines):
        m = HEADER.match(line)
        if m:
            if start is not None:
                end = i
                break
            try:
                if _split_dotted(m.group("path")) == table:
                    start = i
            except tomllib.TOMLDecodeError:
                continue
    else:
        end = len(lines)
    if start is None:
        return False
    key_pattern = re.compile(
        r"^(?P<lead>\s*(?:"
        + re.escape(key)
        + '|"'
        + re.escape(key)
        + "\"|'"
        + re.escape(key)
        + r"')\s*=\s*)(?P<value>[^#]*?)"
        r"(?P<tail>\s*(#.*)?)$"
    )
    for i in range(start + 1, end):
        m = key_pattern.match(lines[i])
        if m:
            lines[i] = m.group("lead") + value_text + (m.group("tail") if keep_comment else "")
            return True
    lines.insert(start + 1, f"{_toml_key(key)} = {value_text}")
    return True


def fitted_model_text(
    source_text: str,
    fit: FitResult,
    overrides: Sequence[str],
    model_path: str | os.PathLike[str],
    experiment_path: str | os.PathLike[str],
    map_path: str | os.PathLike[str],
) -> str:
    """The model file text with the --set overrides and the fitted values written in,
    under a comment header saying where they come from."""
    assignments = {}
    for override in list(overrides) + list(fit.overrides):
        path, _, value = override.partition("=")
        assignments[path.strip()] = _toml_value_of_text(value.strip())
    text = set_toml_values(source_text, assignments)
    now = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    head = [
        f"# Fitted by flexmbs {__version__} fit on {now}:",
        f"#   model {model_path}, experiment {experiment_path}, map {map_path}",
    ]
    if overrides:
        head.append("#   --set " + " --set ".join(overrides))
    if not fit.success:
        head.append(
            "#   UNCONVERGED: the fit stopped before it converged "
            f"({fit.message}); these are its best values, without uncertainty"
        )
    for v in fit.values:
        unit = " s" if v.path == OFFSET_NAME else ""
        spread = f" +- {v.std:.2g}{unit}" if math.isfinite(v.std) else f"{unit}"
        head.append(f"#   {v.path} = {v.value:.6g}{spread} (start {v.start:.6g})")
    return "\n".join(head) + "\n" + text


# ------------------------------------------------------------------- reports
def format_fit_report(fit: FitResult, markdown: bool = False) -> str:
    """The fitted values with their standard deviations and correlations, as text (or
    Markdown)."""
    rows = [
        (
            v.path,
            f"{v.start:.6g}",
            f"{v.value:.6g}",
            f"{v.std:.3g}" if math.isfinite(v.std) else "n/a",
            f"{100 * v.std / abs(v.value):.2g} %" if v.value and math.isfinite(v.std) else "-",
            f"{v.lower:g}:{v.upper:g}" + (" (at a bound)" if v.at_bound else ""),
        )
        for v in fit.values
    ]
    head = ("value", "start", "fitted", "std", "relative std", "bounds")
    names = [v.path for v in fit.values]
    out = []
    if markdown:
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
        out += [
            "  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip() for r in [head] + rows
        ]
    out.append("")
    out.append("correlations:")
    short = [n.split(".")[-2] + "." + n.split(".")[-1] if "." in n else n for n in names]
    width = max(len(s) for s in short)
    if markdown:
        out += ["", "| | " + " | ".join(short) + " |", "|" + "---|" * (len(short) + 1)]
        out += [
            f"| {s} | " + " | ".join(f"{x:+.3f}" for x in row) + " |"
            for s, row in zip(short, fit.correlation)
        ]
    else:
        out += [
            f"  {s:<{width}} " + " ".join(f"{x:+.3f}" for x in row)
            for s, row in zip(short, fit.correlation)
        ]
    out.append("")
    out.append(
        f"s^2 = {fit.variance_ratio:.4g} (residual variance / measurement noise; "
        f"1: the residuals are the noise); {sum(fit.samples.values())} residuals "
        f"from t = {fit.window[0]:.6g} to {fit.window[1]:.6g} s; noise sigma: "
        + ", ".join(f"{k} {fit.noise_source.get(k, f'{v:.3g}')}" for k, v in fit.noise.items())
    )
    if not fit.consistent and fit.success:
        out.append(
            f"THE MODEL MISSES SOMETHING: s^2 = {fit.variance_ratio:.4g} > "
            f"{S2_CONSISTENT:g}, the residuals are not the measurement noise, so the "
            "values carry no standard deviation (they would move by more than one "
            "says with any detail the model leaves out). Unexplained RMS per channel: "
            + ", ".join(
                f"{c} {u:.3g} (s^2 {fit.channel_variance_ratio.get(c, math.nan):.3g})"
                for c, u in fit.unexplained.items()
            )
        )
    if fit.correlation_time:
        out.append(
            "residuals correlated over (samples): "
            + ", ".join(f"{c} {v:.3g}" for c, v in fit.correlation_time.items())
            + "; the standard deviations count a channel's samples as 1 / max(1, g tau) "
            "of white ones"
        )
    if fit.smooth_jacobian:
        out.append(
            "Jacobian from runs without the quantization of "
            + ", ".join(f'"{n}"' for n in fit.smooth_jacobian)
            + " (its trend; the residuals are the quantized model's); the quantization "
            "moves the values by "
            + ", ".join(f"{v.path} {d:+.3g}" for v, d in zip(fit.values, fit.quantization_shift))
            + " from the trend's, counted in the standard deviations"
        )
    out.append(f"starting offset: {fit.alignment}")
    out.append(
        f"{fit.runs} runs (rtol {fit.rtol:g}, atol {fit.atol:g}), "
        f"{fit.wall_time:.1f} s; {fit.message}"
    )
    if not fit.success:
        out.append(
            "UNCONVERGED: the fit stopped before it converged; the values are its best "
            "point, and no standard deviation is given (raise --max-runs, or start "
            "nearer)"
        )
    return "\n".join(out)


@dataclass
class FitOutputs:
    """The files `write_fit_outputs` wrote and the comparison of the fitted run."""

    model_file: str
    result_file: str
    comparison: Comparison
    files: list[str]


def write_fit_outputs(
    fit: FitResult,
    model_path: str,
    experiment_path: str,
    map_path: str,
    overrides: Sequence[str],
    out_dir: str | os.PathLike[str],
    gaps: str | None = None,
    group: str | None = None,
    plots: bool = True,
) -> FitOutputs:
    """Into out_dir (created): MODEL_fitted.toml (the model file with the overrides and
    the fitted values), MODEL_fitted.h5 (its run over the record, at the fit's
    tolerances), the compare report of that run (report.md, report.json, plots) at the
    fitted offset, and fit.md, fit.json."""
    from ..model.toml_reader import load_model
    from ..simulation import simulate
    from .channel_map import load_channel_map
    from .compare import compare_files, write_report
    from .experiment import read_experiment

    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.splitext(os.path.basename(model_path))[0] + "_fitted"
    model_file = os.path.join(out_dir, stem + ".toml")
    source_text = load_model(model_path).source_text
    assert source_text is not None  # a model read from a file keeps its text
    with open(model_file, "w", encoding="utf-8") as f:
        f.write(
            fitted_model_text(source_text, fit, overrides, model_path, experiment_path, map_path)
        )
    model = load_model(model_file)
    channel_map = load_channel_map(map_path)
    experiment = read_experiment(
        experiment_path, channel_map.time_name, group if group is not None else channel_map.group
    )
    t_end = float(experiment.time[-1]) - fit.offset
    result_file = os.path.join(out_dir, stem + ".h5")
    sim = simulate(
        model, result_file, t_end=t_end, rtol=fit.rtol, atol=fit.atol, output_step=fit.output_step
    )
    if not sim.success:
        raise ExperimentError(
            f"the run of the fitted model failed: {sim.message}", source=model_file
        )
    comparison = compare_files(
        result_file, experiment_path, map_path, gaps=gaps, group=group, offset=fit.offset
    )
    comparison.alignment = (
        "offset fitted, starting from the map's alignment"
        if fit.offset_fitted
        else "the map's alignment"
    )
    files = [model_file, result_file] + write_report(comparison, out_dir, plots)
    md = os.path.join(out_dir, "fit.md")
    with open(md, "w", encoding="utf-8") as f:
        f.write(
            f"# Fit of {os.path.basename(model_path)} to "
            f"{os.path.basename(experiment_path)}\n\n"
            f"* model `{model_path}`"
            + ("".join(f" --set {o}" for o in overrides) if overrides else "")
            + "\n"
            f"* experiment `{experiment_path}`, map `{map_path}`\n"
            f"* fitted model `{os.path.basename(model_file)}`, its run "
            f"`{os.path.basename(result_file)}`, compared in `report.md`\n\n"
            "## Fitted values\n\n" + format_fit_report(fit, markdown=True) + "\n\n"
            "Standard deviations from the Jacobian at the optimum, "
            "cov = s^2 (J^T J)^-1 (flexmbs.analysis.fit).\n"
        )
    js = os.path.join(out_dir, "fit.json")
    with open(js, "w", encoding="utf-8") as f:
        json.dump(
            {
                "model": model_path,
                "experiment": experiment_path,
                "map": map_path,
                "overrides": list(overrides),
                "fit": fit.to_dict(),
                "fitted_model": model_file,
                "fitted_result": result_file,
                "comparison": comparison.to_dict(),
            },
            f,
            indent=1,
        )
    return FitOutputs(model_file, result_file, comparison, files + [md, js])
