"""The channel map: which experiment channel is which simulation sensor, and how.

A channel map is a TOML file (docs/reference/experiment-files.md has the full format):

    [experiment]            how to read the experiment file
    time = "time"           the time column (CSV) or dataset (HDF5)
    gaps = "error"          missing values: "error", "interpolate" or "cut"

    [alignment]             where the simulation's t = 0 lies in experiment time
    method = "xcorr"        "offset", "release" or "xcorr"
    channel = "theta2"

    [channels.theta1]       one table per compared channel, named as in reports
    sensor = "theta1"       the simulation sensor (default: the table's name)
    experiment = "pot1"     the experiment channel (CSV column, HDF5 dataset)
    gain = 100.0            calibration, see below
    offset = 1.27
    sign = -1
    unit = "deg"
    lowpass = 20.0          optional zero-phase low-pass cutoff, Hz
    noise = 0.5             optional: the measurement noise's standard deviation, in
                            `unit` (else estimated from the record, `measurement_noise`)

Calibration of a raw experiment value r (in the file's unit, e.g. V) into the
simulation's SI unit:

    value = sign * (gain * (r - offset) + bias) * to_si(unit)          (1)

`gain * (r - offset) + bias` is the instrument's linear calibration, giving a value in
`unit` (deg, mm, ustrain, ...); `to_si` converts it (deg -> rad: pi/180); `sign` (+1 or
-1) matches the instrument's positive direction to the model's.

Time alignment: the simulation's time t_sim corresponds to the experiment time

    t_exp = t_sim + offset                                              (2)

where `offset` is given (method "offset"), found from the instant of release seen in one
channel ("release"), or is the lag of maximum cross-correlation between one channel of
the experiment and of the simulation ("xcorr") over the whole record; see
`find_offset`.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.interpolate import CubicSpline
from scipy.optimize import minimize_scalar
from scipy.signal import butter, correlate, sosfiltfilt

from ..checks.units import SI_QUANTITIES, sensor_type_units
from ..errors import ExperimentError
from ..io.results import component_labels
from .experiment import GAP_POLICIES, Experiment, resolve_gaps

__all__ = [
    "ChannelMap",
    "MappedChannel",
    "Alignment",
    "MeasuredSignals",
    "SimulatedSignals",
    "load_channel_map",
    "loads_channel_map",
    "UNITS",
    "ALIGNMENT_METHODS",
    "measured_signals",
    "simulated_signals",
    "sensor_quantities",
    "Quantity",
    "canonical_unit",
    "check_sensors",
    "find_offset",
    "release_offset",
    "cross_correlation_offset",
    "held_correlations",
    "lowpass_filter",
    "noise_power_gain",
    "measurement_noise",
    "record_quantum",
]

STANDARD_GRAVITY = 9.80665  # m/s^2 in one g (an accelerometer's unit)
# unit -> (quantity, factor to the SI unit of that quantity): the units of a
# data-acquisition file's channels after their calibration
UNITS = {
    "rad": ("angle", 1.0),
    "mrad": ("angle", 1e-3),
    "urad": ("angle", 1e-6),
    "deg": ("angle", math.pi / 180.0),
    "rev": ("angle", 2.0 * math.pi),
    "m": ("length", 1.0),
    "cm": ("length", 1e-2),
    "mm": ("length", 1e-3),
    "um": ("length", 1e-6),
    "1": ("dimensionless", 1.0),
    "strain": ("dimensionless", 1.0),
    "m/m": ("dimensionless", 1.0),
    "mm/m": ("dimensionless", 1e-3),
    "ustrain": ("dimensionless", 1e-6),
    "microstrain": ("dimensionless", 1e-6),
    "%": ("dimensionless", 1e-2),
    "rad/s": ("angular velocity", 1.0),
    "mrad/s": ("angular velocity", 1e-3),
    "deg/s": ("angular velocity", math.pi / 180.0),
    "rpm": ("angular velocity", 2.0 * math.pi / 60.0),
    "rev/s": ("angular velocity", 2.0 * math.pi),
    "m/s": ("velocity", 1.0),
    "cm/s": ("velocity", 1e-2),
    "mm/s": ("velocity", 1e-3),
    "m/s^2": ("acceleration", 1.0),
    "mm/s^2": ("acceleration", 1e-3),
    "g": ("acceleration", STANDARD_GRAVITY),
    "N": ("force", 1.0),
    "mN": ("force", 1e-3),
    "kN": ("force", 1e3),
    "N m": ("torque", 1.0),
    "N*m": ("torque", 1.0),
    "Nm": ("torque", 1.0),
    "mN m": ("torque", 1e-3),
    "N mm": ("torque", 1e-3),
    "N*mm": ("torque", 1e-3),
    "Nmm": ("torque", 1e-3),
    "kN m": ("torque", 1e3),
    "J": ("energy", 1.0),
    "mJ": ("energy", 1e-3),
    "kJ": ("energy", 1e3),
    "W": ("power", 1.0),
    "mW": ("power", 1e-3),
    "kW": ("power", 1e3),
    "1/m": ("curvature", 1.0),
    "1/mm": ("curvature", 1e3),
    "V": ("voltage", 1.0),
    "uV": ("voltage", 1e-6),
    "mV": ("voltage", 1e-3),
    "kV": ("voltage", 1e3),
    "A": ("current", 1.0),
    "uA": ("current", 1e-6),
    "mA": ("current", 1e-3),
    "Ohm": ("resistance", 1.0),
    "mOhm": ("resistance", 1e-3),
    "kOhm": ("resistance", 1e3),
    "MOhm": ("resistance", 1e6),
    "Hz": ("frequency", 1.0),
    "kHz": ("frequency", 1e3),
    "Pa": ("pressure", 1.0),
    "kPa": ("pressure", 1e3),
    "MPa": ("pressure", 1e6),
    "bar": ("pressure", 1e5),
    "mbar": ("pressure", 1e2),
}
UNIT_ALIASES = {"\u00b5": "u", "\u03bc": "u", "\u03a9": "Ohm", "\u2126": "Ohm", "ohm": "Ohm"}
"""Spellings a unit may also have: the micro sign and Greek mu for the prefix u, the
ohm sign and Greek Omega (or "ohm") for Ohm."""
SI_UNITS = {quantity: unit for unit, quantity in SI_QUANTITIES.items()}
ALIGNMENT_METHODS = ("offset", "release", "xcorr")
DEFAULT_LOWPASS_ORDER = 4
MAX_LOWPASS_ORDER = 10
DEFAULT_BASELINE = 0.2  # s of rest at the start of the record (release detection)
RELEASE_NOISE_MULTIPLE = 10.0  # default threshold: this many baseline standard deviations
RELEASE_RANGE_FRACTION = 0.05  # ... and at least this fraction of the channel's range
RELEASE_CONFIRM = 3  # samples in a row beyond the threshold make a departure
MIN_BASELINE_SAMPLES = 5
MIN_OVERLAP_FRACTION = 0.5  # xcorr: overlap of at least this fraction of the shorter record
OFFSET_XTOL = 1e-6  # of a sample interval: sub-sample refinement of a correlation peak
GRID_EPS = 1e-9  # of a sample interval: a time this close to a grid point is on it
UNIFORM_RTOL = 1e-3  # sample intervals within this of their median: uniform sampling
IMPULSE_DECAY_PERIODS = 200  # noise_power_gain: impulse-response length in 1/cutoff

_MAP_SECTIONS = ("experiment", "alignment", "channels")
_EXPERIMENT_FIELDS: dict[str, type | tuple[type, ...]] = {"time": str, "group": str, "gaps": str}
_ALIGNMENT_FIELDS: dict[str, type | tuple[type, ...]] = {
    "method": str,
    "offset": float,
    "channel": str,
    "threshold": float,
    "baseline": float,
    "search": list,
    "max_lag": float,
}
_ALIGNMENT_USES = {
    "offset": ("method", "offset", "max_lag"),
    "release": ("method", "channel", "threshold", "baseline", "max_lag"),
    "xcorr": ("method", "channel", "search", "max_lag"),
}
_CHANNEL_FIELDS: dict[str, type | tuple[type, ...]] = {
    "sensor": str,
    "component": (int, str),
    "experiment": str,
    "raw_unit": str,
    "gain": float,
    "offset": float,
    "bias": float,
    "sign": int,
    "unit": str,
    "lowpass": float,
    "lowpass_order": int,
    "noise": float,
}
_KIND_TEXT = {
    str: "a string",
    float: "a number",
    int: "an integer",
    list: "a list",
    (int, str): "an integer or a string",
}


# ---------------------------------------------------------------------- the map
@dataclass(frozen=True)
class MappedChannel:
    """One compared channel: experiment channel -> calibrated SI values <-> sensor.

    name : the map's name of the channel (its table name), used in reports.
    sensor, component : the simulation sensor and, for sensors of several values, the
        0-based index of the compared value (None: a sensor of one value).
    experiment : the experiment file's channel; raw_unit : the unit the file must give
        it ("" : not checked).
    gain, offset, bias, sign, unit : equation (1) of the module.
    lowpass : zero-phase low-pass cutoff (Hz) or None; lowpass_order : Butterworth
        order of the filter run once forward and once backward (the magnitude response
        is squared: -6 dB at the cutoff, roll-off 2 * order * 20 dB per decade).
    noise : the standard deviation of the measurement noise in `unit` (None: estimated
        from the record, `measurement_noise`).
    """

    name: str
    sensor: str
    experiment: str
    component: int | str | None = None
    raw_unit: str = ""
    gain: float = 1.0
    offset: float = 0.0
    bias: float = 0.0
    sign: int = 1
    unit: str = ""
    lowpass: float | None = None
    lowpass_order: int = DEFAULT_LOWPASS_ORDER
    noise: float | None = None

    @property
    def unit_factor(self) -> float:
        """to_si(unit) of equation (1); 1 when no unit is given (already SI)."""
        return UNITS[self.unit][1] if self.unit else 1.0

    @property
    def quantity(self) -> str | None:
        """The physical quantity of `unit` ("angle", "length", ...) or None."""
        return UNITS[self.unit][0] if self.unit else None

    @property
    def si_unit(self) -> str:
        return SI_UNITS[self.quantity] if self.quantity is not None else ""

    def calibrate(self, raw: ArrayLike) -> NDArray[np.float64]:
        """Equation (1): raw experiment values -> SI values of the sensor."""
        raw = np.asarray(raw, dtype=float)
        return self.sign * (self.gain * (raw - self.offset) + self.bias) * self.unit_factor

    def raw_from_si(self, value: ArrayLike) -> NDArray[np.float64]:
        """The inverse of equation (1): SI values -> the raw values an instrument with
        this calibration reads (used to write synthetic experiment files)."""
        value = np.asarray(value, dtype=float)
        return (value / (self.sign * self.unit_factor) - self.bias) / self.gain + self.offset


@dataclass(frozen=True)
class Alignment:
    """Equation (2) of the module: how the offset t_exp - t_sim is found.

    method "offset": `offset` (s) as given.
    method "release": `channel` (a map channel) leaves its rest value at the release;
        the rest value and its noise come from the first `baseline` s of the record;
        `threshold` (SI unit of the channel; None: the larger of 10 baseline standard
        deviations and 5 % of the channel's range) is the departure detected.
    method "xcorr": the offset in `search` = (lo, hi) s (None: from the first time of
        the record to half its length later) that maximises the correlation
        coefficient of `channel` in the experiment and in the simulation.
    max_lag: the largest delay (s) of a channel's simulation behind its experiment
        that the comparison's lag is searched within, after the alignment (None: a
        quarter of the channel's dominant period, at most a quarter of the record;
        flexmbs.analysis.compare.time_lag).
    """

    method: str = "offset"
    offset: float = 0.0
    channel: str | None = None
    threshold: float | None = None
    baseline: float = DEFAULT_BASELINE
    search: tuple[float, float] | None = None
    max_lag: float | None = None


@dataclass(frozen=True)
class ChannelMap:
    """A channel map file: experiment settings, alignment, channels (in file order)."""

    path: str
    channels: tuple[MappedChannel, ...]
    alignment: Alignment = field(default_factory=Alignment)
    time_name: str = "time"
    group: str | None = None
    gaps: str = "error"

    def channel(self, name: str) -> MappedChannel:
        return next(c for c in self.channels if c.name == name)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.channels]


def load_channel_map(path: str | os.PathLike[str]) -> ChannelMap:
    """Read and check a channel map file (TOML); raises ExperimentError naming the
    file, the section or channel, the field and what was expected."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise ExperimentError("no such channel map file", source=path) from None
    except (OSError, UnicodeDecodeError) as err:
        raise ExperimentError(f"cannot read the channel map: {err}", source=path) from None
    return loads_channel_map(text, path)


def _found(value: object) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "a table"
    return repr(value)


def _check_table(
    table: object, fields: Mapping[str, type | tuple[type, ...]], item: str, source: str
) -> None:
    """Known fields only, each of its kind (int accepted where a float is asked)."""
    if not isinstance(table, dict):
        raise ExperimentError(f"expected a table, got {_found(table)}", item, source=source)
    for key, value in table.items():
        if key not in fields:
            raise ExperimentError(
                f"unknown field; allowed fields: {', '.join(fields)}", item, key, source
            )
        kind = fields[key]
        ok = (
            isinstance(value, (int, float)) and not isinstance(value, bool)
            if kind is float
            else isinstance(value, kind) and not isinstance(value, bool)
        )
        if not ok:
            raise ExperimentError(
                f"expected {_KIND_TEXT[kind]}, got {_found(value)}", item, key, source
            )
        if kind is float and not math.isfinite(value):
            raise ExperimentError(f"expected a finite number, got {value}", item, key, source)


def loads_channel_map(text: str, source: str = "<string>") -> ChannelMap:
    """The ChannelMap of the TOML `text`; `source` names it in errors."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ExperimentError(f"not valid TOML: {err}", source=source) from None
    for key in doc:
        if key not in _MAP_SECTIONS:
            raise ExperimentError(
                f"unknown section [{key}]; allowed sections: {', '.join(_MAP_SECTIONS)}",
                f'section "{key}"',
                source=source,
            )
    exp = doc.get("experiment", {})
    _check_table(exp, _EXPERIMENT_FIELDS, 'section "experiment"', source)
    gaps = exp.get("gaps", "error")
    if gaps not in GAP_POLICIES:
        raise ExperimentError(
            f"expected one of {', '.join(GAP_POLICIES)}, got {_found(gaps)}",
            'section "experiment"',
            "gaps",
            source,
        )
    channels_doc = doc.get("channels", {})
    if not isinstance(channels_doc, dict) or not channels_doc:
        raise ExperimentError(
            "expected at least one [channels.NAME] table (the channels to compare)", source=source
        )
    channels = tuple(_channel(name, table, source) for name, table in channels_doc.items())
    alignment = _alignment(doc.get("alignment", {}), [c.name for c in channels], source)
    return ChannelMap(
        path=source,
        channels=channels,
        alignment=alignment,
        time_name=exp.get("time", "time"),
        group=exp.get("group"),
        gaps=gaps,
    )


def _channel(name: str, table: Any, source: str) -> MappedChannel:
    item = f'channel "{name}"'
    _check_table(table, _CHANNEL_FIELDS, item, source)
    if "experiment" not in table:
        raise ExperimentError(
            "missing required field: the experiment channel (CSV column "
            "or HDF5 dataset) compared with the sensor",
            item,
            "experiment",
            source,
        )
    if table.get("gain", 1.0) == 0:
        raise ExperimentError("expected a non-zero gain, got 0", item, "gain", source)
    if table.get("sign", 1) not in (1, -1):
        raise ExperimentError(f"expected 1 or -1, got {table['sign']}", item, "sign", source)
    unit = canonical_unit(table.get("unit", ""))
    if unit and unit not in UNITS:
        raise ExperimentError(
            f"unknown unit {_found(table['unit'])}; known units: {', '.join(UNITS)}",
            item,
            "unit",
            source,
        )
    if "lowpass" in table and not table["lowpass"] > 0:
        raise ExperimentError(
            f"expected a positive cutoff frequency (Hz), got {table['lowpass']}",
            item,
            "lowpass",
            source,
        )
    order = table.get("lowpass_order", DEFAULT_LOWPASS_ORDER)
    if not 1 <= order <= MAX_LOWPASS_ORDER:
        raise ExperimentError(
            f"expected an order from 1 to {MAX_LOWPASS_ORDER}, got {order}",
            item,
            "lowpass_order",
            source,
        )
    if "noise" in table and not table["noise"] > 0:
        raise ExperimentError(
            f"expected a positive standard deviation (in the channel's unit), got {table['noise']}",
            item,
            "noise",
            source,
        )
    if "lowpass_order" in table and "lowpass" not in table:
        raise ExperimentError(
            "lowpass_order without a lowpass cutoff: expected both or neither",
            item,
            "lowpass_order",
            source,
        )
    return MappedChannel(
        name=name,
        sensor=table.get("sensor", name),
        experiment=table["experiment"],
        component=table.get("component"),
        raw_unit=table.get("raw_unit", ""),
        gain=float(table.get("gain", 1.0)),
        offset=float(table.get("offset", 0.0)),
        bias=float(table.get("bias", 0.0)),
        sign=int(table.get("sign", 1)),
        unit=unit,
        lowpass=float(table["lowpass"]) if "lowpass" in table else None,
        lowpass_order=int(order),
        noise=float(table["noise"]) if "noise" in table else None,
    )


def _alignment(table: Any, names: Sequence[str], source: str) -> Alignment:
    item = 'section "alignment"'
    _check_table(table, _ALIGNMENT_FIELDS, item, source)
    if not table:
        return Alignment()
    method = table.get("method", "offset" if set(table) == {"max_lag"} else None)
    if method not in ALIGNMENT_METHODS:
        raise ExperimentError(
            f"expected one of {', '.join(ALIGNMENT_METHODS)}, got "
            f"{_found(method) if method is not None else 'none'}",
            item,
            "method",
            source,
        )
    for key in table:
        if key not in _ALIGNMENT_USES[method]:
            raise ExperimentError(
                f'not used by method "{method}", whose fields are '
                f"{', '.join(_ALIGNMENT_USES[method])}",
                item,
                key,
                source,
            )
    channel = table.get("channel")
    if method != "offset":
        if channel is None:
            raise ExperimentError(
                f'missing required field: method "{method}" needs the map channel it reads',
                item,
                "channel",
                source,
            )
        if channel not in names:
            raise ExperimentError(
                f'expected a channel of the map ({", ".join(names)}), got "{channel}"',
                item,
                "channel",
                source,
            )
    for key in ("threshold", "baseline", "max_lag"):
        if key in table and not table[key] > 0:
            raise ExperimentError(
                f"expected a positive number, got {table[key]}", item, key, source
            )
    search = table.get("search")
    if search is not None:
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in search)
        if len(search) != 2 or not numbers or not search[0] < search[1]:
            raise ExperimentError(
                f"expected [lo, hi], two numbers (s) with lo < hi, got {search}",
                item,
                "search",
                source,
            )
        search = (float(search[0]), float(search[1]))
    return Alignment(
        method=method,
        offset=float(table.get("offset", 0.0)),
        channel=channel,
        threshold=table.get("threshold"),
        baseline=float(table.get("baseline", DEFAULT_BASELINE)),
        search=search,
        max_lag=float(table["max_lag"]) if "max_lag" in table else None,
    )


# --------------------------------------------------------------- the simulation side
def _coordinate_quantity(
    joints: Mapping[str, Any], joint: Any, coordinate: Any, translation: str, rotation: str
) -> str | None:
    j = joints.get(joint)
    if j is None or coordinate is None:
        return None
    return translation if coordinate < len(j.get("translation_axes", [])) else rotation


Quantity = str | tuple[str | None, ...] | None
"""The physical quantity of a sensor's values ("angle", "length", ...): one for all its
columns, a tuple of one per column (a reaction's forces and torques), or None when
unknown."""


def sensor_quantities(model_json: str | None) -> dict[str, Quantity]:
    """Sensor name -> the physical quantity of its values (`Quantity`), from the
    normalised model of a result file (its /model/json): the quantities of the SI units
    flexmbs.checks.units gives each sensor type's columns, a joint's translation or
    rotation for the sensors of a joint or of an actuator on one."""
    import json

    try:
        model = json.loads(model_json) if model_json else {}
    except ValueError:
        return {}
    joints = model.get("joints", {})
    actuators = model.get("actuators", {})
    out: dict[str, Quantity] = {}
    for name, s in model.get("sensors", {}).items():
        kind = s.get("type")
        q: Quantity
        if kind == "joint_coordinate":
            q = _coordinate_quantity(joints, s.get("joint"), s.get("coordinate"), "length", "angle")
        elif kind == "joint_rate":
            q = _coordinate_quantity(
                joints, s.get("joint"), s.get("coordinate"), "velocity", "angular velocity"
            )
        elif kind == "actuator_torque":
            a = actuators.get(s.get("actuator"), {})
            q = _coordinate_quantity(joints, a.get("joint"), a.get("coordinate"), "force", "torque")
        elif kind == "beam_centerline":
            q = "length"
        else:
            units = sensor_type_units(kind) if isinstance(kind, str) else None
            columns = tuple(SI_QUANTITIES.get(u) for u in units or [])
            q = None if not columns else columns[0] if len(set(columns)) == 1 else columns
        out[name] = q
    return out


def canonical_unit(unit: str) -> str:
    """`unit` as UNITS spells it (UNIT_ALIASES replaced: "\u00b5V" -> "uV")."""
    for alias, spelling in UNIT_ALIASES.items():
        unit = unit.replace(alias, spelling)
    return unit


def _column_quantity(quantity: Quantity, column: int | None) -> str | None:
    """The quantity of one column (`column` None: a sensor of one value)."""
    if not isinstance(quantity, tuple):
        return quantity
    return quantity[column] if column is not None and column < len(quantity) else None


def _component_index(channel: MappedChannel, size: int, source: str) -> int | None:
    """The column of a sensor of `size` values that the channel compares."""
    item = f'channel "{channel.name}"'
    labels = component_labels(size)
    c = channel.component
    if size == 1:
        if c not in (None, 0, "value"):
            raise ExperimentError(
                f'sensor "{channel.sensor}" has one value: expected no component, got {_found(c)}',
                item,
                "component",
                source,
            )
        return None
    if c is None:
        raise ExperimentError(
            f'sensor "{channel.sensor}" has {size} values '
            f"({', '.join(labels)}): expected a component, its 0-based "
            "index or its label",
            item,
            "component",
            source,
        )
    if isinstance(c, str):
        if c not in labels:
            raise ExperimentError(
                f'expected one of {", ".join(labels)}, got "{c}"', item, "component", source
            )
        return labels.index(c)
    if not 0 <= c < size:
        raise ExperimentError(
            f"expected an index from 0 to {size - 1}, got {c}", item, "component", source
        )
    return c


def _a(quantity: str) -> str:
    """'an angle', 'a length', ...: the quantity with its article."""
    return ("an " if quantity[0] in "aeiou" else "a ") + quantity


def check_sensors(
    channel_map: ChannelMap,
    sensors: Mapping[str, ArrayLike],
    quantities: Mapping[str, Quantity],
    result_path: str | os.PathLike[str],
) -> dict[str, NDArray[np.float64]]:
    """Every mapped sensor in `sensors` (name -> array), a valid component, and a unit of
    the sensor's quantity. Returns name -> (n,) the compared values."""
    out = {}
    for ch in channel_map.channels:
        item = f'channel "{ch.name}"'
        if ch.sensor not in sensors:
            raise ExperimentError(
                f"the result file {result_path} has no sensor "
                f'"{ch.sensor}"; its sensors: '
                f"{', '.join(sensors) or '(none)'}",
                item,
                "sensor",
                channel_map.path,
            )
        values = np.asarray(sensors[ch.sensor], dtype=float)
        size = 1 if values.ndim == 1 else values.shape[1]
        k = _component_index(ch, size, channel_map.path)
        q = _column_quantity(quantities.get(ch.sensor), k)
        if ch.unit and q is not None and ch.quantity != q:
            assert ch.quantity is not None  # a unit has a quantity
            raise ExperimentError(
                f'"{ch.unit}" is {_a(ch.quantity)} unit, but sensor "{ch.sensor}" gives '
                f"{_a(q)} value ({SI_UNITS[q]}): expected {_a(q)} unit: "
                f"{', '.join(u for u, (qq, _) in UNITS.items() if qq == q)}",
                item,
                "unit",
                channel_map.path,
            )
        out[ch.name] = values if k is None else values[:, k]
    return out


@dataclass
class SimulatedSignals:
    """The mapped sensors of a run: time (n,) s from 0, values name -> (n,) SI, units
    name -> the SI unit ("" when unknown).

    `at(name, t)` interpolates with a cubic spline through the outputs; before the first
    output the value is held at the first (the model at rest before its release)."""

    time: np.ndarray
    values: dict[str, NDArray[np.float64]]
    units: dict[str, str] = field(default_factory=dict)
    _splines: dict[str, CubicSpline] = field(default_factory=dict, repr=False)

    @property
    def t_end(self) -> float:
        return float(self.time[-1])

    def spline(self, name: str) -> CubicSpline:
        if name not in self._splines:
            self._splines[name] = CubicSpline(self.time, self.values[name])
        return self._splines[name]

    def at(self, name: str, t: ArrayLike) -> NDArray[np.float64]:
        """Values of channel `name` at simulation times t (s), t <= t_end."""
        t = np.asarray(t, dtype=float)
        return np.where(
            t < self.time[0], self.values[name][0], self.spline(name)(np.maximum(t, self.time[0]))
        )

    def rate_at(self, name: str, t: ArrayLike) -> NDArray[np.float64]:
        """d/dt of `at` (0 before the first output)."""
        t = np.asarray(t, dtype=float)
        return np.where(t < self.time[0], 0.0, self.spline(name)(np.maximum(t, self.time[0]), 1))


def simulated_signals(
    time: ArrayLike,
    sensors: Mapping[str, ArrayLike],
    quantities: Mapping[str, Quantity],
    channel_map: ChannelMap,
    result_path: str | os.PathLike[str],
) -> SimulatedSignals:
    """SimulatedSignals of a run: `time` (n,) s, `sensors` name -> (n,) or (n, k) arrays,
    `quantities` from sensor_quantities (for the unit checks)."""
    time = np.asarray(time, dtype=float)
    if len(time) < 4:
        raise ExperimentError(
            f"the result file {result_path} holds {len(time)} output "
            "rows: expected at least 4 to compare"
        )
    values = check_sensors(channel_map, sensors, quantities, result_path)
    units = {}
    for ch in channel_map.channels:
        sensor = np.asarray(sensors[ch.sensor])
        k = _component_index(ch, 1 if sensor.ndim == 1 else sensor.shape[1], channel_map.path)
        q = _column_quantity(quantities.get(ch.sensor), k) or ch.quantity
        units[ch.name] = SI_UNITS[q] if q else ""
    return SimulatedSignals(time=time, values=values, units=units)


# ---------------------------------------------------------- the experiment side
@dataclass
class MeasuredSignals:
    """The mapped experiment channels, calibrated (equation (1)), not filtered.

    time (n,) s in experiment time, uniformly sampled at `sample_interval`;
    values name -> (n,) SI; notes: what was done to the record (gaps, resampling);
    experiment: the file as read."""

    time: np.ndarray
    values: dict[str, NDArray[np.float64]]
    sample_interval: float
    notes: list[str]
    experiment: Experiment

    @property
    def sample_rate(self) -> float:
        return 1.0 / self.sample_interval


def measured_signals(
    channel_map: ChannelMap, experiment: Experiment, gaps: str | None = None
) -> MeasuredSignals:
    """Check the experiment against the map, resolve its gaps (policy `gaps`, else the
    map's), calibrate, and resample to a uniform time base when the record is not
    uniformly sampled (linear interpolation at the median interval)."""
    src = channel_map.path
    raws = {}
    for ch in channel_map.channels:
        item = f'channel "{ch.name}"'
        experiment.require(ch.experiment, item, "experiment", src)
        file_unit = experiment.units.get(ch.experiment, "")
        if ch.raw_unit and file_unit != ch.raw_unit:
            raise ExperimentError(
                f'the experiment file {experiment.path} gives "{ch.experiment}" in '
                f'"{file_unit}": expected "{ch.raw_unit}"',
                item,
                "raw_unit",
                src,
            )
        raws[ch.name] = ch.experiment
    policy = gaps or channel_map.gaps
    used = list(dict.fromkeys(raws.values()))
    experiment, _, note = resolve_gaps(experiment, used, policy)
    notes = [note] if note else []
    if experiment.nsamples < 4:
        raise ExperimentError(
            f"{experiment.nsamples} samples: expected at least 4", source=experiment.path
        )
    t = experiment.time
    dt = np.diff(t)
    step = float(np.median(dt))
    values = {
        ch.name: ch.calibrate(experiment.channels[ch.experiment]) for ch in channel_map.channels
    }
    if np.max(np.abs(dt - step)) > UNIFORM_RTOL * step:
        n = int(np.floor((t[-1] - t[0]) / step + 1e-9)) + 1
        tu = t[0] + step * np.arange(n)
        values = {k: np.interp(tu, t, v) for k, v in values.items()}
        notes.append(
            f"sampling not uniform (intervals {dt.min():.6g} to {dt.max():.6g} s): "
            f"resampled linearly at the median interval {step:.6g} s"
        )
        t = tu
    for ch in channel_map.channels:
        if ch.lowpass is not None and not ch.lowpass < 0.5 / step:
            raise ExperimentError(
                f"expected a cutoff below the Nyquist frequency {0.5 / step:.6g} Hz of the "
                f"experiment's sampling ({1 / step:.6g} Hz), got {ch.lowpass:g} Hz",
                f'channel "{ch.name}"',
                "lowpass",
                src,
            )
    return MeasuredSignals(
        time=t, values=values, sample_interval=step, notes=notes, experiment=experiment
    )


# -------------------------------------------------------------------- filtering
def lowpass_filter(
    values: ArrayLike, sample_interval: float, cutoff: float, order: int = DEFAULT_LOWPASS_ORDER
) -> NDArray[np.float64]:
    """Zero-phase low-pass: a Butterworth filter of `order` and `cutoff` (Hz) run
    forward and backward (scipy.signal.sosfiltfilt) over uniformly sampled `values`.
    The magnitude response is |H(f)|^2 = 1 / (1 + (f / cutoff)^(2 order)), no phase."""
    sos = butter(order, cutoff, fs=1.0 / sample_interval, output="sos")
    return sosfiltfilt(sos, np.asarray(values, dtype=float))


def noise_power_gain(
    sample_interval: float, cutoff: float | None, order: int = DEFAULT_LOWPASS_ORDER
) -> float:
    """g = sum_k h_k^2 of the zero-phase filter's impulse response h: white noise of
    variance s^2 leaves it with variance g s^2 (g = 1 without a filter)."""
    if cutoff is None:
        return 1.0
    n = int(IMPULSE_DECAY_PERIODS / (cutoff * sample_interval)) * 2 + 1
    impulse = np.zeros(n)
    impulse[n // 2] = 1.0
    h = lowpass_filter(impulse, sample_interval, cutoff, order)
    return float(np.sum(h * h))


def filtered(
    channel: MappedChannel, values: ArrayLike, sample_interval: float
) -> NDArray[np.float64]:
    """The channel's low-pass filter applied to `values` (unchanged without one)."""
    if channel.lowpass is None:
        return np.asarray(values, dtype=float)
    return lowpass_filter(values, sample_interval, channel.lowpass, channel.lowpass_order)


# ------------------------------------------------------------------------ noise
MAD_TO_SD = 1.4826  # standard deviation / median absolute deviation, normal noise
D3_VARIANCE = 20.0  # var(D^3 w) / var(w) for white noise w
QUANTUM_RTOL = 1e-6  # of the step: a record's differences are whole steps within this
QUANTUM_MIN_LEVELS = 4  # a record on fewer distinct steps than this is not read as quantized
TRIM_MADS = 5.0  # third differences farther than this many robust deviations: the signal's


def third_difference_noise(values: ArrayLike) -> float:
    """sigma of white measurement noise on a finely sampled smooth signal, from its
    third differences D^3 x (a smooth signal has negligible ones; white noise of any
    distribution has var D^3 = 20 sigma^2): the standard deviation of D^3 over the
    samples within TRIM_MADS robust deviations of its median (1.4826 times the
    median absolute deviation), so that the few large ones of the signal's own
    jumps do not count, over sqrt(20). 0 when most third differences are 0."""
    d3 = np.diff(np.asarray(values, dtype=float), 3)
    mid = np.median(d3)
    spread = MAD_TO_SD * float(np.median(np.abs(d3 - mid)))
    if not spread > 0:
        return 0.0
    inliers = d3[np.abs(d3 - mid) <= TRIM_MADS * spread]
    return float(np.std(inliers) / math.sqrt(D3_VARIANCE))


def record_quantum(values: ArrayLike) -> float | None:
    """The step q of a quantized record (an encoder's count, an ADC's or a printed
    resolution): every difference of consecutive samples a whole multiple of the
    smallest non-zero one, within QUANTUM_RTOL; None when the record is not so."""
    d = np.abs(np.diff(np.asarray(values, dtype=float)))
    scale = float(np.max(np.abs(values))) if len(d) else 0.0
    d = d[d > 1e-12 * max(scale, 1e-300)]
    if len(d) < QUANTUM_MIN_LEVELS:
        return None
    q = float(np.min(d))
    counts = d / q
    if np.max(np.abs(counts - np.round(counts))) > QUANTUM_RTOL * max(1.0, float(counts.max())):
        return None
    return q


def measurement_noise(channel: MappedChannel, values: ArrayLike) -> tuple[float, str]:
    """(sigma, how): the standard deviation (SI) of the channel's measurement noise.

    Stated in the map (`noise`, in `unit`): that. Else from the record: the third
    differences' robust estimate (`third_difference_noise`) and, on a quantized
    record (`record_quantum`, step q) at least the rounding's q / sqrt(12): below
    about q / 2 the noise hardly moves the rounded samples, and on a slow signal the
    rounding's errors are not white (most third differences are 0)."""
    if channel.noise is not None:
        sigma = channel.noise * channel.unit_factor
        return sigma, f"{sigma:.3g} as stated in the map"
    d3 = third_difference_noise(values)
    q = record_quantum(values)
    if q is not None and d3 < q / math.sqrt(12.0):
        sigma = q / math.sqrt(12.0)
        return sigma, f"{sigma:.3g} from the record's quantization (step {q:.3g}, q/sqrt(12))"
    return d3, f"{d3:.3g} from the record's third differences"


# -------------------------------------------------------------------- alignment
def find_offset(
    channel_map: ChannelMap, measured: MeasuredSignals, simulated: SimulatedSignals
) -> tuple[float, str]:
    """The offset of equation (2) by the map's alignment method: (offset s, text)."""
    a = channel_map.alignment
    if a.method == "offset":
        return a.offset, f"offset {a.offset:.6g} s as given"
    if a.method == "release":
        return release_offset(channel_map, measured, simulated)
    return cross_correlation_offset(channel_map, measured, simulated)


def release_offset(
    channel_map: ChannelMap, measured: MeasuredSignals, simulated: SimulatedSignals
) -> tuple[float, str]:
    """Method "release": the offset from the instant the channel leaves its rest.

    The rest value x_r and its noise s come from the samples of the first `baseline` s;
    the departure is the first of RELEASE_CONFIRM samples in a row with
    |x - x_r| > threshold, timed by linear interpolation between the samples around the
    crossing (t_dep, experiment time). The simulation makes the same departure from its
    initial value at t_sim,dep (also interpolated); the release is at

        offset = t_dep - t_sim,dep,

    so that the time the rig takes to move `threshold` away from rest does not shift it.
    Its error is about s / |dx/dt| at the crossing.
    """
    a = channel_map.alignment
    name = a.channel
    assert name is not None  # the map's "release" alignment names its channel
    t, x = measured.time, measured.values[name]
    item, src = 'section "alignment"', channel_map.path
    rest = t <= t[0] + a.baseline
    if rest.sum() < MIN_BASELINE_SAMPLES:
        raise ExperimentError(
            f"the first {a.baseline:g} s hold {int(rest.sum())} samples: "
            f"expected at least {MIN_BASELINE_SAMPLES} at rest before the "
            "release",
            item,
            "baseline",
            src,
        )
    x_rest = float(np.mean(x[rest]))
    noise = float(np.std(x[rest], ddof=1))
    threshold = a.threshold
    if threshold is None:
        threshold = max(RELEASE_NOISE_MULTIPLE * noise, RELEASE_RANGE_FRACTION * float(np.ptp(x)))
    t_dep = _departure_time(t, x - x_rest, threshold, ~rest)
    if t_dep is None:
        raise ExperimentError(
            f'channel "{name}" never leaves its rest value {x_rest:.6g} by more than '
            f"{threshold:.6g} after the first {a.baseline:g} s: expected a release in the "
            "record (or a smaller threshold)",
            item,
            "threshold",
            src,
        )
    ts = simulated.time
    xs = simulated.values[name]
    t_sim = _departure_time(ts, xs - xs[0], threshold, np.ones(len(ts), dtype=bool))
    if t_sim is None:
        raise ExperimentError(
            f'in the simulation, channel "{name}" never leaves its initial value by more '
            f"than {threshold:.6g}: expected the same departure as in the experiment",
            item,
            "threshold",
            src,
        )
    offset = t_dep - t_sim
    text = (
        f'release: "{name}" leaves its rest value {x_rest:.6g} (noise {noise:.3g}) by '
        f"{threshold:.6g} at t = {t_dep:.6g} s in the experiment and at "
        f"{t_sim:.6g} s in the simulation; offset {offset:.6g} s"
    )
    return offset, text


def _departure_time(
    t: NDArray[np.float64],
    deviation: NDArray[np.float64],
    threshold: float,
    allowed: NDArray[np.bool_],
) -> float | None:
    """First time |deviation| exceeds threshold for RELEASE_CONFIRM samples in a row
    (only where `allowed`), linearly interpolated; None when it never does."""
    beyond = (np.abs(deviation) > threshold) & allowed
    run = np.convolve(beyond.astype(int), np.ones(RELEASE_CONFIRM, dtype=int), "valid")
    starts = np.flatnonzero(run == RELEASE_CONFIRM)
    if not len(starts):
        return None
    k = int(starts[0])
    if k == 0 or not allowed[k - 1]:
        return float(t[k])
    d0, d1 = abs(deviation[k - 1]), abs(deviation[k])
    frac = (threshold - d0) / (d1 - d0) if d1 != d0 else 1.0
    return float(t[k - 1] + min(max(frac, 0.0), 1.0) * (t[k] - t[k - 1]))


def _correlation(x: NDArray[np.float64], y: NDArray[np.float64]) -> float:
    x = x - x.mean()
    y = y - y.mean()
    den = math.sqrt(float(np.dot(x, x) * np.dot(y, y)))
    return float(np.dot(x, y) / den) if den > 0 else 0.0


def _grid_overlap(
    n: int, t_first: float, dt: float, lo: float, count: int, t0_sim: float, t1_sim: float
) -> NDArray[np.int64]:
    """For each offset lo + j dt (j < count): the number of the n record samples
    t_first + i dt that fall inside the run, t0_sim <= t - offset <= t1_sim."""
    j = np.arange(count)
    g0 = t_first - lo  # record sample i at offset j lies at run time g0 + (i - j) dt
    m0 = math.ceil((t0_sim - g0) / dt - GRID_EPS)
    m1 = math.floor((t1_sim - g0) / dt + GRID_EPS)
    first = np.maximum(0, m0 + j)
    last = np.minimum(n - 1, m1 + j)
    return np.maximum(0, last - first + 1)


def held_correlations(
    x: NDArray[np.float64],
    t_first: float,
    dt: float,
    lo: float,
    count: int,
    run: Any,
    t0_sim: float,
    t1_sim: float,
) -> NDArray[np.float64]:
    """The correlation coefficient of `cross_correlation_offset` at each offset
    lo + j dt (j < count) at once, for a record x sampled every dt from t_first.

    At offset j the record's sample i lies at the run's time g_(i-j), g_m = t_first -
    lo + m dt: every offset reads the run on the one grid g, evaluated once (held at
    its first value before t0_sim, absent after t1_sim). The pairs compared are
    (x_i, R_(i-j)) for the samples the run covers and (x_0, R_m) for the b_j run
    samples before the record's first, m = -j - b_j .. -j - 1; their sums come from
    cumulative sums and the cross term sum_i x_i R_(i-j) from one FFT correlation
    (scipy.signal.correlate), the series' means taken out first. -inf where fewer
    than two pairs."""
    n = len(x)
    j = np.arange(count)
    g0 = t_first - lo
    b = np.maximum(0, np.floor((g0 - j * dt - t0_sim) / dt + 1e-9)).astype(np.int64)
    m1 = math.floor((t1_sim - g0) / dt + GRID_EPS)  # the run's last grid point
    m_lo = int(min(-count, int(np.min(-j - b))))
    m = np.arange(m_lo, n)
    inside = m <= m1
    r = np.zeros(len(m))
    r[inside] = run(np.maximum(g0 + m[inside] * dt, t0_sim))
    xc = x - np.mean(x)
    rc = np.where(inside, r - (np.mean(r[inside]) if inside.any() else 0.0), 0.0)
    px = np.concatenate([[0.0], np.cumsum(xc)])
    pxx = np.concatenate([[0.0], np.cumsum(xc * xc)])
    pr = np.concatenate([[0.0], np.cumsum(rc)])
    prr = np.concatenate([[0.0], np.cumsum(rc * rc)])
    nx = np.clip(m1 + j + 1, 0, n)  # record samples the run covers: i - j <= m1
    start = -j - m_lo  # index of R_(-j) in r
    sx = b * xc[0] + px[nx]
    sxx = b * xc[0] ** 2 + pxx[nx]
    pre_r = pr[start] - pr[start - b]
    pre_rr = prr[start] - prr[start - b]
    sr = pre_r + pr[start + nx] - pr[start]
    srr = pre_rr + prr[start + nx] - prr[start]
    full = correlate(rc, xc, mode="full", method="fft")  # [k]: sum_i rc[i + k - n + 1] xc_i
    sxr = xc[0] * pre_r + full[n - 1 + start]
    count_pairs = b + nx
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = sxr - sx * sr / count_pairs
        den = np.sqrt(np.maximum(sxx - sx * sx / count_pairs, 0.0)) * np.sqrt(
            np.maximum(srr - sr * sr / count_pairs, 0.0)
        )
        out = np.where(den > 0, cov / np.where(den > 0, den, 1.0), 0.0)
    return np.where(count_pairs >= 2, out, -np.inf)


def cross_correlation_offset(
    channel_map: ChannelMap, measured: MeasuredSignals, simulated: SimulatedSignals
) -> tuple[float, str]:
    """Method "xcorr": the offset maximising the correlation coefficient between the
    channel's experiment values x(t_k) and simulated values s(t_k - offset), each
    side held at its first value before it starts (the rig at rest before the record
    and before the run): the record's samples before the run's start are compared
    with the run's initial value, and the run's, on the record's sample grid, before
    the record's first sample with that sample; samples after either side's end are
    left out. A shift that leaves the start of either side unexplained is paid for
    there, so that a repeated pattern (a square wave's holds) cannot match one part
    of the record by itself, and a run shorter or longer than the record is
    aligned on what both cover. The offsets tried are the experiment's sample grid over
    `search` (default: the run's start anywhere from half the record before the
    record's start to half of it after), with the run and the record overlapping by
    at least MIN_OVERLAP_FRACTION of the shorter, all scored at once
    (`held_correlations`); the best is refined between its neighbours (bounded
    scalar search on the spline of the simulation, to OFFSET_XTOL of a sample
    interval)."""
    a = channel_map.alignment
    name = a.channel
    assert name is not None  # the map's "xcorr" alignment names its channel
    t, x = measured.time, measured.values[name]
    dt = measured.sample_interval
    half = 0.5 * (t[-1] - t[0])
    lo, hi = a.search if a.search is not None else (t[0] - half, t[0] + half)
    min_overlap = MIN_OVERLAP_FRACTION * min(t[-1] - t[0], simulated.t_end - simulated.time[0])
    candidates = lo + dt * np.arange(int(np.floor((hi - lo) / dt)) + 1)
    spline = simulated.spline(name)

    def overlap(offset: float) -> NDArray[np.bool_]:
        ts = t - offset
        return (ts >= simulated.time[0]) & (ts <= simulated.t_end)

    t0_sim, t1_sim = simulated.time[0], simulated.t_end

    def corr(offset: float, mask: NDArray[np.bool_]) -> float:
        ts = t - offset
        covered = ts <= t1_sim + GRID_EPS * dt
        record = x[covered]
        run = spline(np.maximum(ts[covered], t0_sim))  # the run held before it starts
        before = int(np.floor((ts[0] - t0_sim) / dt + 1e-9))  # run samples before t[0]
        if before > 0:
            record = np.concatenate([np.full(before, x[0]), record])
            run = np.concatenate([spline(ts[0] - dt * np.arange(before, 0, -1)), run])
        return _correlation(record, run)

    scores = held_correlations(x, t[0], dt, lo, len(candidates), spline, t0_sim, t1_sim)
    covered = _grid_overlap(len(x), t[0], dt, lo, len(candidates), t0_sim, t1_sim)
    scores[covered * dt < min_overlap] = -np.inf
    if not np.isfinite(scores).any():
        raise ExperimentError(
            f"no offset in [{lo:.6g}, {hi:.6g}] s overlaps the run ({simulated.t_end:.6g} s) "
            f"and the record by at least {min_overlap:.6g} s: expected a search range that "
            "puts the run inside the record",
            'section "alignment"',
            "search",
            channel_map.path,
        )
    i = int(np.argmax(scores))
    best = float(candidates[i])
    mask = overlap(best - dt) & overlap(best + dt)  # fixed while refining
    res = minimize_scalar(
        lambda off: -corr(off, mask),
        bounds=(best - dt, best + dt),
        method="bounded",
        options={"xatol": OFFSET_XTOL * dt},
    )
    offset, score = (
        (float(res.x), -res.fun) if -res.fun >= corr(best, mask) else (best, corr(best, mask))
    )
    text = (
        f'cross-correlation of "{name}" over offsets {lo:.6g} to {hi:.6g} s: '
        f"offset {offset:.6g} s (correlation {score:.6f})"
    )
    return offset, text
