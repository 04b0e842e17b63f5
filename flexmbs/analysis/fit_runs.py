"""The runs of a fit: one record's model at given values, the last few kept, made
here or side by side on an executor, and counted in the fit's budget of runs.
"""

from __future__ import annotations

import os
import time as _time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ..errors import ExperimentError, ModelError
from .channel_map import (
    simulated_signals,
)
from .fit_values import FitParameter

if TYPE_CHECKING:
    from ..model.compiled import CompiledModel
    from ..model.description import Model
    from .channel_map import ChannelMap, Quantity, SimulatedSignals


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
        from ..formats.toml_reader import load_model

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
    from ..formats.toml_reader import load_model
    from ..model.compiled import compile_model
    from ..simulation.run import simulate

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
