"""The signals a channel map compares: a run's sensors by channel (their quantities,
components and units checked against the map) and the experiment's channels,
calibrated, equation (1) of flexmbs.analysis.channel_map.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.interpolate import CubicSpline

from ..checks.units import SI_QUANTITIES, sensor_type_units
from ..errors import ExperimentError
from ..io.results import component_labels
from .channel_units import SI_UNITS, UNITS, _found
from .experiment import Experiment, resolve_gaps

if TYPE_CHECKING:
    from .channel_map_items import ChannelMap, MappedChannel


UNIFORM_RTOL = 1e-3  # sample intervals within this of their median: uniform sampling


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
