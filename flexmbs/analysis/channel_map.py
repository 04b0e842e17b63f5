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
from typing import Any

from ..errors import ExperimentError
from .channel_map_items import (
    DEFAULT_BASELINE,
    DEFAULT_LOWPASS_ORDER,
    Alignment,
    ChannelMap,
    MappedChannel,
)
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
    cross_correlation_offset,
    find_offset,
    held_correlations,
    release_offset,
)
from .record_noise import (
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
    order = table.get("lowpass_order", DEFAULT_LOWPASS_ORDER)
    unit = canonical_unit(table.get("unit", ""))
    refusals = (  # (refused, field, what was expected)
        (
            "experiment" not in table,
            "experiment",
            "missing required field: the experiment channel (CSV column or HDF5 dataset) "
            "compared with the sensor",
        ),
        (table.get("gain", 1.0) == 0, "gain", "expected a non-zero gain, got 0"),
        (table.get("sign", 1) not in (1, -1), "sign", f"expected 1 or -1, got {table.get('sign')}"),
        (
            bool(unit) and unit not in UNITS,
            "unit",
            f"unknown unit {_found(table.get('unit'))}; known units: {', '.join(UNITS)}",
        ),
        (
            "lowpass" in table and not table["lowpass"] > 0,
            "lowpass",
            f"expected a positive cutoff frequency (Hz), got {table.get('lowpass')}",
        ),
        (
            not 1 <= order <= MAX_LOWPASS_ORDER,
            "lowpass_order",
            f"expected an order from 1 to {MAX_LOWPASS_ORDER}, got {order}",
        ),
        (
            "noise" in table and not table["noise"] > 0,
            "noise",
            "expected a positive standard deviation (in the channel's unit), got "
            f"{table.get('noise')}",
        ),
        (
            "lowpass_order" in table and "lowpass" not in table,
            "lowpass_order",
            "lowpass_order without a lowpass cutoff: expected both or neither",
        ),
    )
    for refused, key, text in refusals:
        if refused:
            raise ExperimentError(text, item, key, source)
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
