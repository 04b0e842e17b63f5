"""Sensors as instruments give them: a first-order lag, a dead time and a
resolution (an encoder's step, an ADC's), applied in that order to a sensor's
values (flexmbs.model.items.Sensor's `lag`, `dead_time`, `resolution`).

    tau y_f' = y - y_f                  (lag, time constant tau; y_f(t0) = y(t0))
    y_d(t) = y_f(t - d)                 (dead time d; y_f(t0) before t0 + d)
    y_m = r round(y_d / r)              (resolution r)

On the recorded series (`InstrumentFilter`, fed the outputs in order as the run
goes) the lag is integrated exactly for a signal linear between two outputs, and
the dead time interpolates the lagged series linearly: both exact to the output
step's interpolation. A sampled controller reads its sensors through
`SampledInstrument` at its own sample instants (flexmbs.simulation.sampled_control): the lag
integrated for a signal held between samples.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["InstrumentFilter", "SampledInstrument", "quantize", "lag_step"]


def quantize(values: np.ndarray | float, resolution: float) -> np.ndarray | float:
    """values rounded to the nearest multiple of `resolution` (0: as they are)."""
    if not resolution:
        return values
    return resolution * np.round(np.asarray(values) / resolution)


def lag_step(
    previous: np.ndarray, y0: np.ndarray, y1: np.ndarray, h: float, tau: float
) -> np.ndarray:
    """y_f(t + h) of tau y_f' = y - y_f from y_f(t) = previous, for y linear from y0
    to y1 over the step h: y1 - tau D + (previous - y0 + tau D) exp(-h / tau), with
    D = (y1 - y0) / h."""
    if h <= 0.0:
        return previous
    a = np.exp(-h / tau)
    slope = (y1 - y0) / h
    return y1 - tau * slope + (previous - y0 + tau * slope) * a


class InstrumentFilter:
    """The instruments of a run's recorded sensors (module text), applied to the
    output rows as they come. `columns[k]`: the value columns of sensor k."""

    def __init__(self, sensors: list, offsets: np.ndarray) -> None:
        self.items = []
        for k, s in enumerate(sensors):
            if s.lag or s.dead_time or s.resolution:
                cols = np.arange(offsets[k], offsets[k + 1])
                self.items.append(_Channel(cols, s.lag, s.dead_time, s.resolution))

    def __bool__(self) -> bool:
        return bool(self.items)

    def apply(self, t: np.ndarray, values: np.ndarray) -> np.ndarray:
        """The rows `values` (k, number of sensor values) at times t (increasing,
        after those of the previous call) as the instruments give them."""
        out = np.array(values, dtype=float, copy=True)
        for ch in self.items:
            out[:, ch.cols] = ch.apply(np.asarray(t, dtype=float), out[:, ch.cols])
        return out


class _Channel:
    """One sensor's lag, dead time and resolution over the rows as they come."""

    def __init__(self, cols: np.ndarray, lag: float, dead: float, resolution: float) -> None:
        self.cols, self.lag, self.dead, self.resolution = cols, lag, dead, resolution
        self.t_last: float | None = None
        self.raw_last: np.ndarray | None = None
        self.lag_last: np.ndarray | None = None
        self.hist_t: list[float] = []  # the lagged series kept for the dead time
        self.hist_y: list[np.ndarray] = []

    def apply(self, t: np.ndarray, y: np.ndarray) -> np.ndarray:
        lagged = np.empty_like(y)
        for k in range(len(t)):
            if self.t_last is None or self.raw_last is None or self.lag_last is None:
                f = y[k].copy()
            elif self.lag:
                f = lag_step(self.lag_last, self.raw_last, y[k], t[k] - self.t_last, self.lag)
            else:
                f = y[k].copy()
            self.t_last, self.raw_last, self.lag_last = float(t[k]), y[k].copy(), f
            lagged[k] = f
        if self.dead:
            self.hist_t += [float(v) for v in t]
            self.hist_y += [row for row in lagged]
            ht = np.array(self.hist_t)
            hy = np.array(self.hist_y)
            delayed = np.empty_like(lagged)
            for j in range(hy.shape[1]):
                delayed[:, j] = np.interp(t - self.dead, ht, hy[:, j])
            keep = max(0, int(np.searchsorted(ht, t[-1] - self.dead)) - 1)
            self.hist_t, self.hist_y = self.hist_t[keep:], self.hist_y[keep:]
            lagged = delayed
        return np.asarray(quantize(lagged, self.resolution))


class SampledInstrument:
    """One sensor value read at sample instants: its lag for a signal held between
    samples (y_f += (1 - exp(-h / tau)) (y - y_f)), then its resolution; the dead
    time is the caller's (it reads the sensor that much earlier)."""

    def __init__(self, lag: float, resolution: float) -> None:
        self.lag, self.resolution = lag, resolution
        self.t: float | None = None
        self.value = 0.0

    def read(self, t: float, y: float) -> float:
        if self.t is None or not self.lag:
            self.value = y
        else:
            self.value += (1.0 - math.exp(-(t - self.t) / self.lag)) * (y - self.value)
        self.t = t
        if not self.resolution:
            return float(self.value)
        # round(): to the nearest, halves to even, as np.round (quantize) on a float
        return self.resolution * round(self.value / self.resolution)
