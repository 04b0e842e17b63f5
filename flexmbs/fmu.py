"""A model as an FMI 2.0 co-simulation unit (FMU): `flexmbs export-fmu MODEL.toml -o
arm.fmu`.

The FMU is built with pythonfmu (the `fmu` extra): its binaries (Linux x86-64 and
Windows x64) start a Python interpreter in the importing tool and run the slave class
of the FMU's script, a subclass of `FlexmbsSlave`, on the model file and the files it
names, which the FMU carries among its resources with `flexmbs_fmu.json` (the model's
overrides, solver settings, inputs and outputs). The slave steps a flexmbs.Simulator:

* inputs: the model's input ports (flexmbs.model.ports, "motor.voltage",
  "push.function"), real, continuous; each holds the value the importer sets over a
  communication step (the port's law is replaced by it; its start value is the law's
  value at t = 0);
* outputs: every sensor's components ("tip[0]", "angle"), real, continuous, at the
  end of each communication step;
* `doStep(t, h)` is `Simulator.step(h, inputs)`; t must be where the last step ended
  (the unit cannot roll back: canGetAndSetFMUstate is false); a failed integration is
  fmi2Error, its message in the FMU's log.

The target machine needs: Linux x86-64 or Windows x64; a Python 3.11 or newer whose
shared library the importer can load, with flexmbs (numpy, scipy, numba, h5py) and
pythonfmu installed; the kernels compile on the first instantiation (minutes on an
empty kernel cache; flexmbs.config caches them for later runs). The result file of
the co-simulation is written where the FMU's `result_file` parameter says (none by
default).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["export_fmu", "fmu_interface", "FMU_SETTINGS"]

FMU_SETTINGS = "flexmbs_fmu.json"
"""The FMU's description of its model, among its resources."""

SCRIPT = '''"""The FMU's slave: {name}, the flexmbs model {model}."""
from flexmbs.fmu_slave import FlexmbsSlave


class {identifier}(FlexmbsSlave):
    """{name} (flexmbs)."""
'''


def _identifier(output: Path) -> str:
    """A C identifier from the FMU's file name: its model identifier."""
    name = re.sub(r"\W", "_", output.stem)
    return name if re.match(r"[A-Za-z_]", name) else "fmu_" + name


def _named_files(doc: object, folder: Path) -> set[Path]:
    """The files of `folder` a model file's values name (meshes, matrices, modal files)."""
    found: set[Path] = set()
    if isinstance(doc, dict):
        for value in doc.values():
            found |= _named_files(value, folder)
    elif isinstance(doc, list):
        for value in doc:
            found |= _named_files(value, folder)
    elif isinstance(doc, str) and doc and (folder / doc).is_file():
        found.add(Path(doc))
    return found


def fmu_interface(
    model_path: str | os.PathLike[str], overrides: Sequence[str] = ()
) -> dict[str, Any]:
    """The inputs ([name, unit, start]) and outputs ([name, unit]) of a model file's FMU
    (the model compiled once: its ports' values at t = 0)."""
    from .analysis.statespace import port_values
    from .model.compiled import compile_model
    from .model.toml_reader import load_model
    from .model.units import sensor_units

    model = load_model(model_path, overrides)
    cm = compile_model(model)
    start = port_values(cm, 0.0)
    inputs = [[name, port.unit, start[name]] for name, port in cm.ports.items()]
    outputs = []
    for name, size in zip(cm.sensor_names, cm.sensor_sizes):
        units = sensor_units(model, name, size)
        names = [name] if size == 1 else [f"{name}[{k}]" for k in range(size)]
        outputs += [[n, u] for n, u in zip(names, units)]
    return {"inputs": inputs, "outputs": outputs, "name": model.name}


def export_fmu(
    model_path: str | os.PathLike[str],
    output: str | os.PathLike[str],
    overrides: Iterable[str] = (),
    settings: dict[str, Any] | None = None,
) -> Path:
    """Build the FMU `output` of the model file `model_path` with its `overrides`
    (--set) and solver `settings` ({method, rtol, atol, max_step, fixed_step}: the
    Simulator's; None each for the model file's). Returns its path."""
    try:
        from pythonfmu import FmuBuilder
    except ImportError:
        raise ImportError("export-fmu needs pythonfmu: pip install 'flexmbs[fmu]'") from None
    import tomllib

    model_path = Path(model_path)
    output = Path(output)
    overrides = list(overrides)
    interface = fmu_interface(model_path, overrides)
    folder = model_path.resolve().parent
    doc = tomllib.loads(model_path.read_text())
    identifier = _identifier(output)
    with tempfile.TemporaryDirectory(prefix="flexmbs_fmu_") as tmp:
        work = Path(tmp)
        script = work / f"{identifier}.py"
        script.write_text(
            SCRIPT.format(name=interface["name"], model=model_path.name, identifier=identifier)
        )
        files = work / "model"
        files.mkdir()
        shutil.copy2(model_path, files / model_path.name)
        for relative in _named_files(doc, folder):
            (files / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(folder / relative, files / relative)
        description = dict(
            interface,
            model=f"model/{model_path.name}",
            overrides=overrides,
            settings={k: v for k, v in (settings or {}).items() if v is not None},
        )
        (work / FMU_SETTINGS).write_text(json.dumps(description, indent=1))
        output.parent.mkdir(parents=True, exist_ok=True)
        return Path(
            FmuBuilder.build_FMU(
                script,
                dest=output,
                project_files=[files, work / FMU_SETTINGS],
                needsExecutionTool="true",
                canHandleVariableCommunicationStepSize="true",
                canGetAndSetFMUstate="false",
                canSerializeFMUstate="false",
            )
        )
