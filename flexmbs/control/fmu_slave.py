"""The slave of a flexmbs FMU (flexmbs.control.fmu): a pythonfmu Fmi2Slave that steps a
flexmbs.Simulator on the model among the FMU's resources. An FMU's script subclasses
it under the FMU's model identifier."""

from __future__ import annotations

import ctypes
import json
import sys
from pathlib import Path
from typing import Any

from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, Real, String
from pythonfmu.enums import Fmi2Status

from .fmu import FMU_SETTINGS

__all__ = ["FlexmbsSlave", "TIME_MATCH", "keep_script_namespace", "release_binary_at_exit"]

TIME_MATCH = 1e-9
"""A step must start where the last one ended, to this fraction of the step (s/s)."""


def keep_script_namespace(namespace: dict[str, Any], local: dict[str, Any]) -> None:
    """Called by the FMU's script at its top level: keeps the script module's namespace
    alive and sys.path free of repeats, however many units the importer instantiates.

    pythonfmu's binary (0.7) instantiates a unit by importing the script module, running
    the script's code again with that module's namespace as globals and a fresh
    mapping as locals, and then releasing a reference to the namespace that it only
    borrowed (from PyModule_GetDict). Each instantiation so takes one reference too
    many: the namespace is freed while its module still uses it, and the next
    instantiation, or the garbage collector, works on freed memory (a crash, or the
    C library's "corrupted double-linked list"). Run in that way (`local` is not
    `namespace`), the script takes the reference the binary will release; run as the
    module's import, it takes none. The binary also puts the unit's resources folder
    at the head of sys.path at every instantiation: the repeats are removed."""
    if local is not namespace:
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(namespace))
    seen: set[str] = set()
    sys.path[:] = [p for p in sys.path if not (p in seen or seen.add(p))]  # type: ignore[func-returns-value]


_BINARIES: dict[str, ctypes.CDLL] = {}
"""The FMU binaries (shared libraries) whose state `release_binary_at_exit` releases,
held loaded."""


def release_binary_at_exit(binary: Path) -> None:
    """Has the process's exit release the interpreter state that pythonfmu's Linux
    binary keeps, while the binary is still whole.

    The binary keeps that state in a static shared pointer, whose destructor the C++
    runtime registers with the C library's exit handlers when the binary is loaded; the
    binary's own library destructor, which runs after every exit handler, resets the
    pointer again: it releases freed memory, which corrupts the heap of an importer
    that exits with the unit's library loaded (fmpy's simulate_fmu leaves it loaded,
    and so do tools written in C; the C library aborts later, on "corrupted
    double-linked list", or not, as the heap lies). An exit handler registered after
    the binary was loaded runs before that destructor: it resets the pointer through
    the binary's own `finalizePythonInterpreter` (which, where the binary started the
    interpreter itself, finalizes it from the binary's thread, as the destructor would
    have), leaving nothing for either to release. The binary is held loaded from then
    on, so that the handler never calls into an unloaded library; its interpreter state
    then also outlives an importer's unloading and reloading of the unit. On Windows
    the library's detach handler runs before its static destructors: nothing to do."""
    if sys.platform != "linux" or not binary.is_file():
        return
    path = str(binary.resolve())
    if path in _BINARIES:
        return
    library = ctypes.CDLL(path)
    register = ctypes.CDLL(None).__cxa_atexit
    register.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    register.restype = ctypes.c_int
    register(ctypes.cast(library.finalizePythonInterpreter, ctypes.c_void_p), None, None)
    _BINARIES[path] = library


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
        release_binary_at_exit(folder.parent / "binaries" / "linux64" / f"{type(self).__name__}.so")
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
        from ..formats.toml_reader import load_model

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
