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
empty kernel cache; flexmbs.runtime.config caches them for later runs). The result file of
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

from ..errors import ModelError

__all__ = ["export_fmu", "check_fmu_settings", "fmu_interface", "FMU_SETTINGS", "FMU_SOLVER_FIELDS"]

FMU_SETTINGS = "flexmbs_fmu.json"
"""The FMU's description of its model, among its resources."""

FMU_SOLVER_FIELDS = ("method", "rtol", "atol", "max_step", "fixed_step")
"""The solver settings an FMU may carry over its model file's (the Simulator's)."""

SCRIPT = '''"""The FMU's slave: {name}, the flexmbs model {model}."""
from flexmbs.control.fmu_slave import FlexmbsSlave, keep_script_namespace

keep_script_namespace(globals(), locals())


class {identifier}(FlexmbsSlave):
    """{name} (flexmbs)."""
'''
"""The FMU's script. pythonfmu's binary runs it again at every instantiation, with the
module's namespace as globals, and then releases a reference to that namespace it
never owned: `keep_script_namespace` gives it one to release."""


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
    from ..analysis.statespace import port_values
    from ..checks.units import sensor_units
    from ..formats.toml_reader import load_model
    from ..model.compiled import compile_model

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


def check_fmu_settings(
    model_path: Path, overrides: Sequence[str], settings: dict[str, Any]
) -> dict[str, float]:
    """Refuses solver settings the unit could not run with, as `flexmbs run` refuses
    them (ModelError naming the model file and the field): the model's [solver]
    section with `settings` over it. Returns the unit's default experiment (FMI 2.0
    DefaultExperiment: start and stop time and output step in s, relative
    tolerance)."""
    from ..formats.toml_reader import load_model

    unknown = sorted(set(settings) - set(FMU_SOLVER_FIELDS))
    if unknown:
        raise ValueError(f"unknown FMU solver settings {unknown}: expected {FMU_SOLVER_FIELDS}")
    model = load_model(model_path, overrides)
    try:
        solver = model.solver.with_changes(**settings)
    except ModelError as exc:
        raise exc.with_source(str(model_path)) from None
    return {
        "startTime": 0.0,
        "stopTime": solver.t_end,
        "tolerance": solver.rtol,
        "stepSize": model.output.step,
    }


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
    settings = {k: v for k, v in (settings or {}).items() if v is not None}
    experiment = check_fmu_settings(model_path, overrides, settings)
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
            settings=settings,
        )
        (work / FMU_SETTINGS).write_text(json.dumps(description, indent=1))
        output.parent.mkdir(parents=True, exist_ok=True)
        built = Path(
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
    units = {name: unit for name, unit, *_ in interface["inputs"] + interface["outputs"]}
    _describe_units(built, units, experiment)
    return built


def _describe_units(fmu: Path, units: dict[str, str], experiment: dict[str, float]) -> None:
    """Completes the FMU's modelDescription.xml: the variables' units (FMI 2.0
    UnitDefinitions, each unit with its SI base-unit exponents where `base_units`
    knows them), the unit's DefaultExperiment, and its outputs among the
    InitialUnknowns (computed when the importer leaves initialization mode)."""
    import xml.etree.ElementTree as ET
    import zipfile

    with zipfile.ZipFile(fmu) as archive:
        entries = [(info, archive.read(info)) for info in archive.infolist()]
    for k, (info, data) in enumerate(entries):
        if info.filename != "modelDescription.xml":
            continue
        root = ET.fromstring(data)
        used = []
        for variable in root.iter("ScalarVariable"):
            real = variable.find("Real")
            unit = units.get(variable.get("name", ""))
            if real is not None and unit and unit != "1":
                real.set("unit", unit)
                used.append(unit)
        definitions = ET.Element("UnitDefinitions")
        for unit in sorted(set(used)):
            element = ET.SubElement(definitions, "Unit", name=unit)
            exponents = base_units(unit)
            if exponents:
                ET.SubElement(element, "BaseUnit", {b: str(e) for b, e in exponents.items()})
        after = [e.tag for e in root].index("CoSimulation") + 1
        if used:
            root.insert(after, definitions)
        default = ET.Element("DefaultExperiment", {k: repr(v) for k, v in experiment.items()})
        tags = [e.tag for e in root]
        root.insert(tags.index("ModelVariables"), default)
        structure = root.find("ModelStructure")
        outputs = root.find("ModelStructure/Outputs")
        if structure is not None and outputs is not None:
            if structure.find("InitialUnknowns") is None:
                initial = ET.Element("InitialUnknowns")
                for unknown in outputs:
                    ET.SubElement(initial, "Unknown", index=unknown.get("index", ""))
                structure.insert([e.tag for e in structure].index("Outputs") + 1, initial)
        ET.indent(root, "\t")
        text = ET.tostring(root, encoding="UTF-8", xml_declaration=True)
        entries[k] = (info, text)
    with zipfile.ZipFile(fmu, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, data in entries:
            archive.writestr(info, data)


_BASE = {
    "m": {"m": 1},
    "s": {"s": 1},
    "kg": {"kg": 1},
    "A": {"A": 1},
    "K": {"K": 1},
    "rad": {"rad": 1},
    "N": {"kg": 1, "m": 1, "s": -2},
    "J": {"kg": 1, "m": 2, "s": -2},
    "W": {"kg": 1, "m": 2, "s": -3},
    "V": {"kg": 1, "m": 2, "s": -3, "A": -1},
    "Ohm": {"kg": 1, "m": 2, "s": -3, "A": -2},
    "Pa": {"kg": 1, "m": -1, "s": -2},
    "Hz": {"s": -1},
}


def base_units(unit: str) -> dict[str, int]:
    """The SI base-unit exponents of a flexmbs unit ("N m" -> kg m^2 s^-2, "rad/s",
    "1/m", "kg^(1/2) m" -> {} as FMI takes whole exponents only): {} where a factor is
    not a whole power of a unit of `_BASE`."""
    total: dict[str, int] = {}
    numerator, _, denominator = unit.partition("/")
    for sign, part in ((1, numerator), (-1, denominator)):
        for factor in part.split():
            name, _, power = factor.partition("^")
            if name == "1" and not power:
                continue
            if name not in _BASE or not (power or "1").lstrip("-").isdigit():
                return {}
            for base, exponent in _BASE[name].items():
                total[base] = total.get(base, 0) + sign * int(power or 1) * exponent
    return {base: e for base, e in total.items() if e}
