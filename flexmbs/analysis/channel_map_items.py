"""The items of a channel map: a channel (its calibration, equation (1) of
flexmbs.analysis.channel_map, its unit and filter), the alignment (equation (2)) and
the map, as read from its file (flexmbs.analysis.channel_map.load_channel_map).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .channel_units import SI_UNITS, UNITS

DEFAULT_LOWPASS_ORDER = 4
DEFAULT_BASELINE = 0.2  # s of rest at the start of the record (release detection)


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
