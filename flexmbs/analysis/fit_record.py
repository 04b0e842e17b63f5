"""One record of a fit as the search sees it: its model's runs, the experiment's
samples in its window with their targets and noise, and its residuals, equation (1)
of flexmbs.analysis.fit.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ExperimentError
from .channel_map import (
    filtered,
    measured_signals,
    measurement_noise,
    noise_power_gain,
    sensor_quantities,
)
from .fit_runs import _Runs
from .fit_toml import _document
from .fit_values import FitParameter, quantizing_sensors, unquantized_overrides

if TYPE_CHECKING:
    from .channel_map import ChannelMap
    from .experiment import Experiment


OFFSET_RANGE = 0.1  # s: the fitted offset stays within this of its starting value
OUTPUT_SUBSTEPS = 10  # run outputs per experiment sample interval


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
        from ..formats.serialize import model_to_json
        from ..formats.toml_reader import load_model

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
