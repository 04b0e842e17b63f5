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
compared sensor by more than VERIFY_LIMIT (1e-4) of its scale, so that the
integration error stays below the difference steps' share of a derivative.

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

import copy
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
from .fit_tolerance import MIN_RTOL, TIGHTENING_FACTOR, fit_tolerance

if TYPE_CHECKING:
    from ..model.compiled import CompiledModel
    from ..model.description import Model
    from .channel_map import ChannelMap, Quantity, SimulatedSignals
    from .compare import Comparison
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
]

VERIFY_LIMIT = 1e-4  # largest change of a compared sensor, of its scale, at 10x tighter
ATOL_PER_RTOL = 1e-2  # atol = this * rtol
FD_STEP = 1e-4  # relative finite-difference step of the model values
OFFSET_RANGE = 0.1  # s: the fitted offset stays within this of its starting value
OUTPUT_SUBSTEPS = 10  # run outputs per experiment sample interval
TOLERANCE_SHIFT = 0.5  # most the optimum may move at ten times tighter, of a standard deviation
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


def _child(table: object, key: str) -> object:
    """table[key] of a table, or of an array by its 0-based index; KeyError without."""
    if isinstance(table, dict) and key in table:
        return table[key]
    if isinstance(table, list) and key.isdigit() and int(key) < len(table):
        return table[int(key)]
    raise KeyError(key)


def _assign(doc: dict[str, Any], keys: Sequence[str], value: object) -> None:
    table: Any = doc
    for key in keys[:-1]:
        if isinstance(table, dict):
            table = table.setdefault(key, {})
        else:
            try:
                table = _child(table, key)
            except KeyError:
                return
    if isinstance(table, dict):
        table[keys[-1]] = value
    elif isinstance(table, list) and keys[-1].isdigit() and int(keys[-1]) < len(table):
        table[int(keys[-1])] = value


def _document(text: str, overrides: Iterable[str]) -> dict[str, Any]:
    """The parsed model file with the --set overrides applied (already checked by the
    reader: the model was loaded with them)."""
    doc = tomllib.loads(text)
    for override in overrides:
        path, _, value = str(override).partition("=")
        _assign(doc, _keys(path), _toml_value_of_text(value.strip()))
    return doc


QUANTIZING_FIELDS = ("resolution", "controller_resolution")


def quantizing_sensors(doc: Mapping[str, Any]) -> list[str]:
    """The sensors of the model document `doc` that quantize what they read: a nonzero
    `resolution` (the record's and, unless given apart, the controller's) or
    `controller_resolution` (the controller's alone)."""
    sensors = doc.get("sensors", {})
    return [
        name
        for name, table in sensors.items()
        if isinstance(table, Mapping)
        and any(float(table.get(key, 0.0) or 0.0) != 0.0 for key in QUANTIZING_FIELDS)
    ]


def unquantized_overrides(doc: Mapping[str, Any]) -> list[str]:
    """The --set assignments that take the quantization out of the model document
    `doc`'s sensors (every `resolution` and `controller_resolution` given: 0)."""
    sensors = doc.get("sensors", {})
    return [
        f"sensors.{_toml_key(name)}.{key}=0.0"
        for name in quantizing_sensors(doc)
        for key in QUANTIZING_FIELDS
        if key in sensors[name]
    ]


def _start_value(
    doc: Mapping[str, Any], parameter: FitParameter, source: str | os.PathLike[str]
) -> float:
    item = f'--param "{parameter.path}"'
    table: Any = doc
    keys = _keys(parameter.path)
    for depth, key in enumerate(keys):
        try:
            _child(table, key)
        except KeyError:
            where = ".".join(keys[:depth]) or "the top level"
            has = (
                ", ".join(table)
                if isinstance(table, dict)
                else f"indices 0 to {len(table) - 1}"
                if isinstance(table, list)
                else "(not a table)"
            )
            raise ModelError(
                f'no value "{key}" in {where} of the model file (after --set); '
                f"it has: {has}; give a starting value with --set "
                f"{parameter.path}=VALUE",
                item,
                source=source,
            ) from None
        table = _child(table, key)
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


# ------------------------------------------------------------------------ fit
# ------------------------------------------------------------------------ fit
@dataclass
class FitRecord:
    """One record of a fit: the model file with its `overrides` (every --set of the
    record, the fit's own included), the Experiment and its ChannelMap, the record's
    own `parameters` (values of this record alone, e.g. its initial state), the
    `window` (t0, t1) of model time whose samples the cost counts (None: from the
    release to the end of the record), its `name` (unique in a fit of several), the
    gap policy `gaps` (None: the map's), `offset` the starting time offset (s; None:
    the map's alignment, from a run of the starting model) and `group` the HDF5
    group it was read from (for the outputs)."""

    model_path: str | os.PathLike[str]
    experiment: Experiment
    channel_map: ChannelMap
    overrides: Sequence[str] = ()
    parameters: Sequence[FitParameter] = ()
    window: tuple[float, float] | None = None
    name: str = ""
    gaps: str | None = None
    offset: float | None = None
    group: str | None = None


class _OutOfRuns(Exception):
    """The next step of the search needs more runs than the budget has left."""

    def __init__(self, needed: int) -> None:
        super().__init__(needed)
        self.needed = needed


class _Budget:
    """The runs the fit may make (`max_runs`) and has made."""

    def __init__(self, max_runs: int) -> None:
        self.max_runs = max_runs
        self.made = 0
        self.clock = _time.perf_counter()
        self.first_search_run: tuple[int, float] | None = None

    def take(self, k: int, reserve: int = 0) -> None:
        """Count k runs about to be made; _OutOfRuns when they and `reserve` more (the
        runs the step they belong to needs after them) exceed the budget."""
        if self.made + k + reserve > self.max_runs:
            raise _OutOfRuns(k + reserve)
        self.made += k

    def left(self) -> int:
        return self.max_runs - self.made


def _duration(seconds: float) -> str:
    """A duration as '42 s', '3 min 05 s' or '1 h 02 min'."""
    s = int(round(seconds))
    if s < 60:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


class _Runs:
    """Runs of one record's model at given values of its fitted values, the last few
    kept (least_squares asks for the residual and the Jacobian at the same point)."""

    KEEP = 4

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
        quantities: Mapping[str, Quantity],
    ) -> None:
        self.model_path = model_path
        self.overrides = list(overrides)
        self.parameters = parameters
        self.t_end, self.rtol, self.atol = t_end, rtol, atol
        self.output_step = output_step
        self.channel_map = channel_map
        self.quantities = quantities
        self.cache: dict[tuple[float, ...], SimulatedSignals] = {}

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

    def job(
        self, values: NDArray[np.float64]
    ) -> tuple[
        str, list[str], float | None, float, float, float, Mapping[str, Quantity], ChannelMap
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

    def has(self, values: NDArray[np.float64]) -> bool:
        return _key(values) in self.cache

    def forget_old(self) -> None:
        """Keep only the KEEP newest runs."""
        while len(self.cache) > self.KEEP:
            self.cache.pop(next(iter(self.cache)))

    def keep(self, values: NDArray[np.float64], outcome: SimulatedSignals | str) -> None:
        if isinstance(outcome, str):
            raise ExperimentError(
                f"the run failed at {', '.join(self.assignments(values)) or 'the start'}: "
                f"{outcome}; expected bounds (--param PATH=lo:hi) that keep the model "
                "valid",
                source=self.model_path,
            )
        self.cache[_key(values)] = outcome

    def signals(self, values: NDArray[np.float64]) -> SimulatedSignals:
        return self.cache[_key(values)]


def _key(values: NDArray[np.float64]) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


def _run_all(
    wanted: Sequence[tuple[_Runs, NDArray[np.float64]]],
    budget: _Budget,
    executor: Executor | None,
    reserve: int = 0,
    log: Callable[[str], object] | None = None,
) -> None:
    """Make the runs of `wanted` ((runs, values) pairs) that are not kept yet, all at
    once on `executor` (None: here, one after another), counted in `budget` with
    `reserve` runs kept for what must follow them (_OutOfRuns when they do not fit)."""
    todo: list[tuple[_Runs, NDArray[np.float64]]] = []
    seen: set[tuple[int, tuple[float, ...]]] = set()
    for runs, values in wanted:
        key = (id(runs), _key(values))
        if not runs.has(values) and key not in seen:
            seen.add(key)
            todo.append((runs, values))
    if not todo:
        return
    budget.take(len(todo), reserve)
    for runs in {id(r): r for r, _ in todo}.values():
        runs.forget_old()
    jobs = [runs.job(values) for runs, values in todo]
    if executor is not None:
        outcomes = list(executor.map(_simulated_signals, *zip(*jobs)))
    else:
        outcomes = [_simulated_signals(*job, log=log) for job in jobs]
    for (runs, values), outcome in zip(todo, outcomes):
        runs.keep(values, outcome)


def _simulated_signals(
    model_path: str,
    overrides: Sequence[str],
    t_end: float | None,
    rtol: float,
    atol: float,
    output_step: float,
    quantities: Mapping[str, Quantity],
    channel_map: ChannelMap,
    log: Callable[[str], object] | None = None,
) -> SimulatedSignals | str:
    """The simulated signals of one run of the model file with `overrides`, or the
    run's failure message. Runs where the fit sends it (a dask worker, or here)."""
    from ..model.compiled import compile_model
    from ..model.toml_reader import load_model
    from ..simulation import simulate

    model = load_model(model_path, overrides)
    sim = simulate(
        model,
        None,
        t_end=t_end,
        rtol=rtol,
        atol=atol,
        output_step=output_step,
        log=log,
    )
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


class _Record:
    """One record of the fit as the search sees it: its runs, the experiment's
    samples in its window, their targets and weights, and where its values sit in
    the vector the search moves (`index`: the shared values, then its own;
    `offset_index`: its offset's, None when the offset is held)."""

    def __init__(
        self,
        spec: FitRecord,
        label: str,
        parameters: Sequence[FitParameter],
        index: Sequence[int],
    ) -> None:
        from ..model.serialize import model_to_json
        from ..model.toml_reader import load_model

        self.spec, self.label = spec, label
        self.parameters = list(parameters)
        self.index = list(index)
        self.offset_index: int | None = None
        self.channel_map = spec.channel_map
        model = load_model(spec.model_path, spec.overrides)
        assert model.source_text is not None  # a model read from a file keeps its text
        self.doc = _document(model.source_text, spec.overrides)
        self.measured = measured_signals(spec.channel_map, spec.experiment, spec.gaps)
        _check_record_moves(self.measured, spec.channel_map, spec.experiment.path)
        self.dt = self.measured.sample_interval
        self.quantities = sensor_quantities(model_to_json(model))
        self.t_record = float(self.measured.time[-1] - self.measured.time[0])
        self.model_tolerance = (model.solver.rtol, model.solver.atol)
        rtol, atol = self.model_tolerance
        step = self.dt / OUTPUT_SUBSTEPS

        def runs(overrides: Sequence[str]) -> _Runs:
            return _Runs(
                spec.model_path,
                overrides,
                parameters,
                None,
                rtol,
                atol,
                step,
                spec.channel_map,
                self.quantities,
            )

        self.runs = runs(spec.overrides)
        self.quantizing = quantizing_sensors(self.doc)
        smooth = unquantized_overrides(self.doc)
        self.smooth_runs = runs(list(spec.overrides) + smooth) if self.quantizing else self.runs
        self.offset0 = 0.0
        self.alignment = ""
        self.t = np.zeros(0)
        self.target: dict[str, NDArray[np.float64]] = {}
        self.sigma: dict[str, float] = {}
        self.noise_source: dict[str, str] = {}
        self.gain: dict[str, float] = {}

    def sensor_noise(self) -> dict[str, float]:
        """The compared sensors with their channels' measurement noise (SI; the
        smallest of a sensor's channels)."""
        noise: dict[str, float] = {}
        for c in self.channel_map.channels:
            sigma, _ = measurement_noise(c, self.measured.values[c.name])
            noise[c.sensor] = min(sigma, noise.get(c.sensor, math.inf))
        return noise

    def set_tolerance(self, rtol: float, atol: float) -> None:
        """The tolerance of the record's runs (its kept runs forgotten)."""
        for runs in (self.runs, self.smooth_runs):
            runs.rtol, runs.atol = rtol, atol
            runs.cache.clear()

    @property
    def jacobian_runs(self) -> int:
        return len(self.index) + (1 if self.quantizing else 0)

    def values(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(x[self.index], dtype=float)

    def offset(self, x: NDArray[np.float64]) -> float:
        return float(x[self.offset_index]) if self.offset_index is not None else self.offset0

    def window(self) -> tuple[float, float]:
        """The window of model time (s)."""
        if self.spec.window is not None:
            return self.spec.window
        return (0.0, self.t_record)

    def set_samples(self, offset0: float, alignment: str, fit_offset: bool) -> None:
        """The experiment's samples of the window, from the starting offset, with their
        targets, noise and filter gains; the runs' end."""
        cm = self.channel_map
        self.offset0, self.alignment = offset0, alignment
        t0, t1 = self.window()
        measured = self.measured
        last = min(float(measured.time[-1]), offset0 + t1)
        inside = (measured.time >= offset0 + t0) & (measured.time <= last)
        self.t = measured.time[inside]
        self.runs.t_end = (last - offset0) + (OFFSET_RANGE if fit_offset else 0.0)
        self.smooth_runs.t_end = self.runs.t_end
        self.runs.cache.clear()
        noise = {c.name: measurement_noise(c, measured.values[c.name]) for c in cm.channels}
        self.sigma = {name: sd for name, (sd, _) in noise.items()}
        self.noise_source = {name: how for name, (_, how) in noise.items()}
        for name, s in self.sigma.items():
            if not s > 0:
                raise ExperimentError(
                    "the measurement has no noise to weigh it by (its third differences "
                    "vanish and it is not quantized): state it in the map, noise = the "
                    "standard deviation in the channel's unit",
                    f'channel "{name}"',
                    "noise",
                    source=cm.path,
                )
        self.gain = {
            c.name: noise_power_gain(self.dt, c.lowpass, c.lowpass_order) for c in cm.channels
        }
        self.target = {
            c.name: filtered(c, measured.values[c.name][inside], self.dt) for c in cm.channels
        }

    @property
    def rows(self) -> int:
        return len(self.t) * len(self.channel_map.channels)

    def residual(
        self, x: NDArray[np.float64], smooth: bool = False, runs: _Runs | None = None
    ) -> NDArray[np.float64]:
        """Equation (1) over the record's channels and samples (its runs made; of
        `runs` when given)."""
        if runs is None:
            runs = self.smooth_runs if smooth else self.runs
        sim = runs.signals(self.values(x))
        offset = self.offset(x)
        parts = []
        for c in self.channel_map.channels:
            s = filtered(c, sim.at(c.name, self.t - offset), self.dt)
            parts.append((s - self.target[c.name]) / self.sigma[c.name])
        return np.concatenate(parts)

    def offset_column(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """d r / d offset = -F ds/dt / sigma, exact from the spline."""
        sim = self.runs.signals(self.values(x))
        offset = self.offset(x)
        return np.concatenate(
            [
                -filtered(c, sim.rate_at(c.name, self.t - offset), self.dt) / self.sigma[c.name]
                for c in self.channel_map.channels
            ]
        )


def _runs_needed_for_a_step(records: Sequence[_Record]) -> tuple[int, int]:
    """(runs of one evaluation of the residuals, runs of one Jacobian):

    per evaluation: one run per record
    per Jacobian:   sum over records of (its fitted values + 1 if it quantizes)"""
    return len(records), sum(r.jacobian_runs for r in records)


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
        and ten times tighter (flexmbs.convergence) to the end of its window; a
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
    labels = _labels(records)
    shared = [_default_bounds(p) for p in parameters]
    recs: list[_Record] = []
    n_shared = len(shared)
    names = [p.path for p in shared]
    bounds = [(p.lower, p.upper) for p in shared]
    x0_parts: list[float] = []
    for spec, label in zip(records, labels):
        _check_window(spec, spec.model_path)
        own = [_default_bounds(p) for p in spec.parameters]
        paths = [p.path for p in shared + own]
        for p in shared + own:
            if paths.count(p.path) > 1:
                raise ModelError(
                    "given twice: expected each value once",
                    f'--param "{p.path}"',
                    source=spec.model_path,
                )
        first = len(names)
        index = list(range(n_shared)) + list(range(first, first + len(own)))
        rec = _Record(spec, label, shared + own, index)
        starts = [_start_value(rec.doc, p, spec.model_path) for p in shared + own]
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
    rtol, atol, tolerance_note = _tolerance(recs, x0, rtol, atol, verify_limit, executor, log)
    # the starting offsets, from runs of the starting models over the records
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
            names.append("offset" if len(recs) == 1 else f"{rec.label}:offset")
            bounds.append((rec.offset0 - OFFSET_RANGE, rec.offset0 + OFFSET_RANGE))
    x_start = np.array(start, dtype=float)
    search = _Search(recs, names, x_start, bounds, budget, executor, log, jacobian_runs)
    outcome = search.run()
    while rtol_free and outcome.stop == "converged":
        shift = _tolerance_shift(search, outcome)
        if shift is None or shift <= TOLERANCE_SHIFT or rtol / TIGHTENING_FACTOR < MIN_RTOL:
            if shift is not None:
                tolerance_note += (
                    f"; at the optimum, ten times tighter moves the values by at most "
                    f"{shift:.2g} of their standard deviations"
                )
            break
        rtol, atol = rtol / TIGHTENING_FACTOR, atol / TIGHTENING_FACTOR
        tolerance_note += (
            f"; at the optimum ten times tighter moved the values by {shift:.2g} of their "
            f"standard deviations (more than {TOLERANCE_SHIFT:g}): tightened to {rtol:g}"
        )
        if log:
            log(f"the search goes on at rtol {rtol:g}: {tolerance_note.rsplit('; ', 1)[-1]}")
        for rec in recs:
            rec.set_tolerance(rtol, atol)
        search = _Search(
            recs, names, x_start, bounds, budget, executor, log, jacobian_runs, outcome.x
        )
        outcome = search.run()
    fit = _fit_result(search, outcome, shared, fit_offset, rtol, atol, start_clock)
    fit.tolerance = tolerance_note
    return fit


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
    normal = np.linalg.pinv(jac.T @ jac)
    step = -normal @ (jac.T @ (r_tight - r))
    s2 = max(float(r @ r) / max(len(r) - len(x), 1), 1e-300)
    sd = np.sqrt(np.maximum(np.diag(normal) * s2, 1e-300))
    return float(np.max(np.abs(step) / sd))


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
    x, jac, r = outcome.x, outcome.jac, outcome.r
    several = len(recs) > 1
    labels: list[str] = []
    gains: list[float] = []
    counts: list[int] = []
    for rec in recs:
        for c in rec.channel_map.names:
            labels.append(f"{rec.label}:{c}" if several else c)
            gains.append(rec.gain[c])
            counts.append(len(rec.t))
    m_eff = sum(g * m for g, m in zip(gains, counts))
    dof = m_eff - len(x)
    variance_ratio = float(r @ r) / dof if dof > 0 else math.nan
    blocks, row = [], 0
    for m in counts:
        blocks.append(slice(row, row + m))
        row += m
    tau = {lab: integrated_autocorrelation_time(r[b]) for lab, b in zip(labels, blocks)}
    row_weight = np.concatenate(
        [np.full(m, 1.0 / max(1.0, g * tau[lab])) for lab, g, m in zip(labels, gains, counts)]
    )
    weighted_normal = np.linalg.pinv(jac.T @ (row_weight[:, None] * jac))
    cov = variance_ratio * weighted_normal
    quantizing = any(rec.quantizing for rec in recs)
    quantization_shift: list[float] = []
    if quantizing:  # the quantization's share: what it moves the values by, from the trend
        parts, row = [], 0
        for rec in recs:  # the trend's residuals; a record that does not quantize is its own
            parts.append(
                rec.residual(x, smooth=True) if rec.quantizing else r[row : row + rec.rows]
            )
            row += rec.rows
        smooth = np.concatenate(parts)
        shift = weighted_normal @ (jac.T @ (row_weight * (r - smooth)))
        cov = cov + np.outer(shift, shift)
        quantization_shift = [float(v) for v in shift]
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = cov / np.outer(std, std)
    per_channel = {
        lab: float(r[b] @ r[b]) / (g * m) for lab, b, g, m in zip(labels, blocks, gains, counts)
    }
    sigma: dict[str, float] = {}
    noise_source: dict[str, str] = {}
    noise_gain: dict[str, float] = {}
    for rec in recs:
        for c in rec.channel_map.names:
            lab = f"{rec.label}:{c}" if several else c
            sigma[lab] = rec.sigma[c]
            noise_source[lab] = rec.noise_source[c]
            noise_gain[lab] = rec.gain[c]
    unexplained = {lab: sigma[lab] * math.sqrt(max(v - 1.0, 0.0)) for lab, v in per_channel.items()}
    consistent = bool(variance_ratio <= S2_CONSISTENT)
    stopped_on_budget = outcome.stop == "budget"
    if not consistent or outcome.stop == "failed":  # no noise, or no point: no uncertainty
        std = np.full_like(std, math.nan)
    fitted = []
    x_start = search.x_start
    for i, name in enumerate(search.names):
        lo, hi = search.bounds[i]
        record = None
        path = name
        if several and ":" in name:
            record, _, path = name.partition(":")
        fitted.append(
            FittedValue(path, float(x_start[i]), float(x[i]), float(std[i]), lo, hi, record)
        )
    record_reports = []
    row = 0
    for rec in recs:
        rr = r[row : row + rec.rows]
        row += rec.rows
        m_rec = sum(rec.gain[c] * len(rec.t) for c in rec.channel_map.names)
        record_reports.append(
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
    rec0 = recs[0]
    return FitResult(
        values=fitted,
        offset=rec0.offset(x),
        offset_fitted=fit_offset,
        correlation=corr,
        noise=sigma,
        noise_gain=noise_gain,
        variance_ratio=variance_ratio,
        cost=0.5 * float(r @ r),
        samples={lab: m for lab, m in zip(labels, counts)},
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
        noise_source=noise_source,
        channel_variance_ratio=per_channel,
        unexplained=unexplained,
        consistent=consistent,
        smooth_jacobian=sorted({n for rec in recs for n in rec.quantizing}),
        correlation_time=tau,
        quantization_shift=quantization_shift,
        stop=outcome.stop,
        std_at="last point" if stopped_on_budget else "optimum",
        max_runs=search.budget.max_runs,
        shared=[_parameter_text(p) for p in shared],
        records=record_reports,
    )


def _parameter_text(p: FitParameter) -> str:
    """The --param form of a FitParameter: PATH or PATH=lo:hi."""
    if p.lower == -math.inf and p.upper == math.inf:
        return p.path
    lo = "" if p.lower == -math.inf else repr(p.lower)
    hi = "" if p.upper == math.inf else repr(p.upper)
    return f"{p.path}={lo}:{hi}"


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
    record: str | None = None,
) -> str:
    """The model file text with the --set overrides and the fitted values written in,
    under a comment header saying where they come from. `record`: the record whose
    model it is in a fit of several (its own values and the shared ones)."""
    own = next((r for r in fit.records if r["name"] == record), None)
    fitted = own["assignments"] if own is not None else fit.overrides
    assignments = {}
    for override in list(overrides) + list(fitted):
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
    if fit.stop == "budget":
        head.append(
            f"#   UNCONVERGED: the fit stopped on its budget ({fit.message}); these are "
            "its last point's values, their standard deviations computed there"
        )
    elif not fit.success:
        head.append(
            "#   UNCONVERGED: the fit stopped before it converged "
            f"({fit.message}); these are its best values, without uncertainty"
        )
    several = len(fit.records) > 1
    for v in fit.values:
        if several and v.record not in (None, record):
            continue
        unit = " s" if v.path == OFFSET_NAME else ""
        spread = f" +- {v.std:.2g}{unit}" if math.isfinite(v.std) else f"{unit}"
        head.append(f"#   {v.path} = {v.value:.6g}{spread} (start {v.start:.6g})")
    return "\n".join(head) + "\n" + text


# ------------------------------------------------------------------- reports
def _table(head: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> list[str]:
    if markdown:
        return [
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
            *["| " + " | ".join(r) + " |" for r in rows],
        ]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    return ["  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip() for r in [head, *rows]]


def format_fit_report(fit: FitResult, markdown: bool = False, resume: str | None = None) -> str:
    """The fitted values with their standard deviations and correlations, as text (or
    Markdown); per record when there are several. `resume`: the fit.json a stopped
    fit is resumed from (named in the report)."""
    at_last = fit.std_at == "last point"
    std_head = "std (last point)" if at_last else "std"
    rows = [
        (
            v.name,
            f"{v.start:.6g}",
            f"{v.value:.6g}",
            f"{v.std:.3g}" if math.isfinite(v.std) else "n/a",
            f"{100 * v.std / abs(v.value):.2g} %" if v.value and math.isfinite(v.std) else "-",
            f"{v.lower:g}:{v.upper:g}" + (" (at a bound)" if v.at_bound else ""),
        )
        for v in fit.values
    ]
    out = _table(("value", "start", "fitted", std_head, "relative std", "bounds"), rows, markdown)
    out.append("")
    out.append("correlations:")
    names = [v.name for v in fit.values]
    short = [".".join(n.split(".")[-2:]) for n in names]
    if len(fit.records) > 1:
        short = [
            (v.record + ":" if v.record else "") + ".".join(v.path.split(".")[-2:])
            for v in fit.values
        ]
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
    if len(fit.records) > 1:
        out.append("records:")
        rec_rows = [
            (
                r["name"],
                os.path.basename(str(r["experiment"])),
                str(r["samples"]),
                f"{r['samples_from']:.6g} to {r['samples_to']:.6g}",
                f"{r['offset']:.6g}",
                f"{r['cost']:.6g}",
                f"{r['variance_ratio']:.4g}",
            )
            for r in fit.records
        ]
        head = ("record", "experiment", "residuals", "t (s, experiment)", "offset", "cost", "s^2")
        out += _table(head, rec_rows, markdown)
        out.append("")
    out.append(
        f"s^2 = {fit.variance_ratio:.4g} (residual variance / measurement noise; "
        f"1: the residuals are the noise); {sum(fit.samples.values())} residuals "
        + (
            f"from t = {fit.window[0]:.6g} to {fit.window[1]:.6g} s"
            if len(fit.records) <= 1
            else f"over {len(fit.records)} records"
        )
        + "; noise sigma: "
        + ", ".join(f"{k} {fit.noise_source.get(k, f'{v:.3g}')}" for k, v in fit.noise.items())
    )
    if not fit.consistent and fit.stop == "budget":
        out.append(
            f"s^2 = {fit.variance_ratio:.4g} > {S2_CONSISTENT:g} at the last point: the "
            "search stopped before its residuals came down to the measurement noise (or "
            "the model misses something), so the values carry no standard deviation. "
            "RMS not yet explained per channel: "
            + ", ".join(
                f"{c} {u:.3g} (s^2 {fit.channel_variance_ratio.get(c, math.nan):.3g})"
                for c, u in fit.unexplained.items()
            )
        )
    elif not fit.consistent and fit.stop != "failed":
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
            + ", ".join(f"{v.name} {d:+.3g}" for v, d in zip(fit.values, fit.quantization_shift))
            + " from the trend's, counted in the standard deviations"
        )
    for r in fit.records if len(fit.records) > 1 else []:
        out.append(f"starting offset of {r['name']}: {r['alignment']}")
    if len(fit.records) <= 1:
        out.append(f"starting offset: {fit.alignment}")
    out.append(
        f"{fit.runs} runs of at most {fit.max_runs} (rtol {fit.rtol:g}, atol {fit.atol:g}"
        + (f": {fit.tolerance}" if fit.tolerance else "")
        + f"), {fit.wall_time:.1f} s; {fit.message}"
    )
    if fit.stop == "budget":
        out.append(
            "UNCONVERGED: the fit stopped on its budget of runs before it converged; the "
            "values are its last point (its lowest cost), the standard deviations "
            "computed there: they describe that point, not a minimum"
            + (f"; go on with flexmbs fit --resume {resume}" if resume else "")
        )
    elif not fit.success:
        out.append(
            "UNCONVERGED: the fit stopped before it converged; the values are its best "
            "point, and no standard deviation is given (start nearer)"
        )
    return "\n".join(out)


@dataclass
class FitOutputs:
    """The files `write_fit_outputs` wrote and the comparisons of the fitted runs
    (`comparison` the first record's, `comparisons` by record)."""

    model_file: str
    result_file: str
    comparison: Comparison
    files: list[str]
    comparisons: dict[str, Comparison] = field(default_factory=dict)


def _write_record_outputs(
    fit: FitResult, record: Mapping[str, Any], folder: str, plots: bool
) -> tuple[str, str, Comparison, list[str]]:
    """Into `folder`: the record's fitted model file, its run over the record and the
    compare report of that run at the fitted offset."""
    from ..model.toml_reader import load_model
    from ..simulation import simulate
    from .channel_map import load_channel_map
    from .compare import compare_files, write_report
    from .experiment import read_experiment

    os.makedirs(folder, exist_ok=True)
    model_path, experiment_path = str(record["model"]), str(record["experiment"])
    map_path, overrides = str(record["map"]), list(record["overrides"])
    gaps, group = record.get("gaps"), record.get("group")
    stem = os.path.splitext(os.path.basename(model_path))[0] + "_fitted"
    model_file = os.path.join(folder, stem + ".toml")
    source_text = load_model(model_path).source_text
    assert source_text is not None  # a model read from a file keeps its text
    name = record["name"] if len(fit.records) > 1 else None
    with open(model_file, "w", encoding="utf-8") as f:
        f.write(
            fitted_model_text(
                source_text, fit, overrides, model_path, experiment_path, map_path, name
            )
        )
    model = load_model(model_file)
    channel_map = load_channel_map(map_path)
    experiment = read_experiment(
        experiment_path, channel_map.time_name, group if group is not None else channel_map.group
    )
    offset = float(record["offset"])
    t_end = float(experiment.time[-1]) - offset
    result_file = os.path.join(folder, stem + ".h5")
    sim = simulate(
        model,
        result_file,
        t_end=t_end,
        rtol=fit.rtol,
        atol=fit.atol,
        output_step=record.get("output_step", fit.output_step),
    )
    if not sim.success:
        raise ExperimentError(
            f"the run of the fitted model failed: {sim.message}", source=model_file
        )
    window = record.get("window")
    comparison = compare_files(
        result_file,
        experiment_path,
        map_path,
        gaps=gaps,
        group=group,
        offset=offset,
        window=None if window is None else (float(window[0]), float(window[1])),
    )
    comparison.alignment = (
        "offset fitted, starting from the map's alignment"
        if fit.offset_fitted
        else "the map's alignment"
    )
    files = [model_file, result_file] + write_report(comparison, folder, plots)
    return model_file, result_file, comparison, files


def write_fit_outputs(
    fit: FitResult,
    out_dir: str | os.PathLike[str],
    plots: bool = True,
    options: Mapping[str, Any] | None = None,
) -> FitOutputs:
    """Into out_dir (created): for each record (in a folder of its name when there
    are several) MODEL_fitted.toml (the model file with the overrides and the fitted
    values), MODEL_fitted.h5 (its run over the record, at the fit's tolerances) and
    the compare report of that run (report.md, report.json, plots) at the fitted
    offset; and fit.md, fit.json (the fit, with what `flexmbs fit --resume` needs:
    the records, the parameters and `options`, the fit's settings)."""
    out = os.fspath(out_dir)
    os.makedirs(out, exist_ok=True)
    several = len(fit.records) > 1
    files: list[str] = []
    comparisons: dict[str, Comparison] = {}
    first: tuple[str, str] | None = None
    for record in fit.records:
        folder = os.path.join(out, str(record["name"])) if several else out
        model_file, result_file, comparison, written = _write_record_outputs(
            fit, record, folder, plots
        )
        comparisons[str(record["name"])] = comparison
        files += written
        if first is None:
            first = (model_file, result_file)
    assert first is not None  # a fit has a record
    md = os.path.join(out, "fit.md")
    js = os.path.join(out, "fit.json")
    lines = []
    for record in fit.records:
        lines.append(
            (f"* record {record['name']}: " if several else "* ")
            + f"model `{record['model']}`"
            + "".join(f" --set {o}" for o in record["overrides"])
            + f", experiment `{record['experiment']}`, map `{record['map']}`"
        )
    with open(md, "w", encoding="utf-8") as f:
        r0 = fit.records[0]
        f.write(
            f"# Fit of {os.path.basename(str(r0['model']))} to "
            + ", ".join(os.path.basename(str(r["experiment"])) for r in fit.records)
            + "\n\n"
            + "\n".join(lines)
            + "\n"
            + f"* fitted model `{os.path.relpath(first[0], out)}`, its run "
            f"`{os.path.relpath(first[1], out)}`, compared in `report.md`"
            + (" (one folder per record)" if several else "")
            + "\n\n## Fitted values\n\n"
            + format_fit_report(fit, markdown=True, resume=js)
            + "\n\nStandard deviations from the Jacobian at "
            + ("the optimum" if fit.std_at == "optimum" else "the search's last point")
            + ", cov = s^2 (J^T J)^-1 (flexmbs.analysis.fit).\n"
        )
    with open(js, "w", encoding="utf-8") as f:
        json.dump(
            {
                "model": str(r0["model"]),
                "experiment": str(r0["experiment"]),
                "map": str(r0["map"]),
                "overrides": list(r0["overrides"]),
                "options": dict(options or {}),
                "fit": fit.to_dict(),
                "fitted_model": first[0],
                "fitted_result": first[1],
                "comparison": comparisons[str(r0["name"])].to_dict(),
                "comparisons": {k: c.to_dict() for k, c in comparisons.items()}
                if several
                else None,
            },
            f,
            indent=1,
        )
    c0 = comparisons[str(r0["name"])]
    return FitOutputs(first[0], first[1], c0, files + [md, js], comparisons)
