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

from ..errors import ExperimentError
from .channel_units import SI_UNITS, UNITS, _found, canonical_unit
from .experiment import GAP_POLICIES
from .mapped_signals import (
    MeasuredSignals,
    Quantity,
    SimulatedSignals,
    check_sensors,
    measured_signals,
    sensor_quantities,
    simulated_signals,
)
from .record_alignment import (
    DEFAULT_BASELINE,
    cross_correlation_offset,
    find_offset,
    held_correlations,
    release_offset,
)
from .record_noise import (
    DEFAULT_LOWPASS_ORDER,
    filtered,
    lowpass_filter,
    measurement_noise,
    noise_power_gain,
    record_quantum,
    third_difference_noise,
)

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
    "SI_UNITS",
    "filtered",
    "third_difference_noise",
]

ALIGNMENT_METHODS = ("offset", "release", "xcorr")
MAX_LOWPASS_ORDER = 10

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


# ---------------------------------------------------------- the experiment side


# -------------------------------------------------------------------- filtering


# ------------------------------------------------------------------------ noise


# -------------------------------------------------------------------- alignment
