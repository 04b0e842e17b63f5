"""The slave of a flexmbs FMU (flexmbs.fmu): a pythonfmu Fmi2Slave that steps a
flexmbs.Simulator on the model among the FMU's resources. An FMU's script subclasses
it under the FMU's model identifier."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, Real, String
from pythonfmu.enums import Fmi2Status

from .fmu import FMU_SETTINGS

__all__ = ["FlexmbsSlave", "TIME_MATCH"]

TIME_MATCH = 1e-9
"""A step must start where the last one ended, to this fraction of the step (s/s)."""


class FlexmbsSlave(Fmi2Slave):
    """The model's input ports as FMI inputs and its sensors' components as outputs;
    `result_file`, a parameter: where the co-simulation's result file goes ("": none).
    The Simulator is made when the importer leaves initialization mode (its kernels
    compile then on an empty cache)."""

    author = "flexmbs"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        folder = Path(self.resources) if self.resources else Path(".")
        self._folder = folder
        self._setup = json.loads((folder / FMU_SETTINGS).read_text())
        self.description = f"flexmbs model {self._setup['name']}"
        self._inputs = {name: float(start) for name, _, start in self._setup["inputs"]}
        self._outputs = {name: 0.0 for name, _ in self._setup["outputs"]}
        self.result_file = ""
        self._sim: Any = None
        for name, unit, _ in self._setup["inputs"]:
            self.register_variable(
                Real(
                    name,
                    causality=Fmi2Causality.input,
                    variability=Fmi2Variability.continuous,
                    description=f"input port, {unit}",
                    getter=lambda n=name: self._inputs[n],
                    setter=lambda v, n=name: self._inputs.__setitem__(n, float(v)),
                ),
                nested=False,
            )
        for name, unit in self._setup["outputs"]:
            self.register_variable(
                Real(
                    name,
                    causality=Fmi2Causality.output,
                    variability=Fmi2Variability.continuous,
                    description=f"sensor, {unit}",
                    getter=lambda n=name: self._outputs[n],
                ),
                nested=False,
            )
        self.register_variable(
            String(
                "result_file",
                causality=Fmi2Causality.parameter,
                variability=Fmi2Variability.fixed,
                description="the result file of the co-simulation (HDF5), '' for none",
            )
        )

    def exit_initialization_mode(self) -> None:
        from .simulator import Simulator

        model = self._folder / self._setup["model"]
        from .model.toml_reader import load_model

        self._sim = Simulator(
            load_model(model, self._setup["overrides"]),
            self.result_file or None,
            history=False if self.result_file else None,
            **self._setup["settings"],
        )
        self._read_outputs()

    def _read_outputs(self) -> None:
        for name, value in zip(self._outputs, self._sim.sensor_values):
            self._outputs[name] = float(value)

    def do_step(self, current_time: float, step_size: float) -> bool:
        sim = self._sim
        if abs(current_time - sim.time) > TIME_MATCH * max(step_size, 1e-300):
            self.log(
                f"a step from t = {current_time:g} s, where the unit is at t = {sim.time:g} s: "
                "it cannot go back",
                Fmi2Status.error,
            )
            return False
        try:
            sim.step(step_size, inputs=self._inputs)
        except Exception as exc:  # noqa: BLE001 - the importer is told through the status
            self.log(str(exc), Fmi2Status.error)
            return False
        self._read_outputs()
        return True

    def terminate(self) -> None:
        if self._sim is not None:
            self._sim.close()
