"""The TOML model-file reader: a model file is a sequence of `Model.add_*` calls.

The file vocabulary is the builder API of `flexmbs.model.description`;
docs/reference/model-file.md documents it. Reading goes in four steps, each reporting a
`ModelError` that names the file, the item and the field:

1. parse the TOML text (tomllib);
2. apply the `--set dotted.path=value` overrides to the parsed tables;
3. check the structure: known sections and fields, required fields, value types
   (flexmbs.formats.toml_checks, against the schemas of flexmbs.formats.toml_schema);
4. build the model with the builder, whose value checks (positive mass, inertia, axes,
   names of bodies, markers and joints) report the rest.

The topology (tree, loops, bodies not connected to the ground) is checked later, by
`flexmbs.model.topology.build_topology`.
"""

from __future__ import annotations

import os
import tomllib
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from ..checks.plausibility import plausibility_notes
from ..elements import material
from ..errors import ModelError, PlausibilityWarning
from ..model.description import GROUND, SOLVER_METHODS, BeamBody, FeBody, Model
from ..model.items import METHOD_FIELDS
from ..model.timefunctions import TIME_FUNCTION_LAWS, TimeFunction
from .toml_checks import check_document
from .toml_schema import (
    _SETTINGS_SECTIONS,
    ACTUATOR_COMMANDS,
    LAW_FIELDS,
    SECTIONS,
    _is_number,
    _toml_type,
)

_T = TypeVar("_T")

__all__ = ["load_model", "loads_model"]


# ---------------------------------------------------------------- public API
def load_model(path: str | os.PathLike[str], overrides: Iterable[str] = ()) -> Model:
    """Read the model file `path` (TOML), apply `overrides` ("dotted.path=value"
    strings, as given to `--set`) and build the `Model`.

    Raises ModelError naming the file, the item and the field of the first problem.
    """
    source = str(path)
    given = overrides
    overrides = [] if isinstance(given, (str, bytes)) else list(given)
    if isinstance(given, (str, bytes)) or not all(isinstance(o, str) for o in overrides):
        raise ModelError(
            f'expected a list of "dotted.path=value" texts, got {given!r}',
            "overrides",
            source=source,
        )
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # a byte-order mark is left out
    except OSError as err:
        raise ModelError(
            f"cannot read the model file: {err.strerror or err}", source=source
        ) from None
    except UnicodeDecodeError as err:
        raise ModelError(f"expected a UTF-8 text file: {err}", source=source) from None
    model = loads_model(text, source=source, overrides=overrides)
    model.source_path = source
    return model


def loads_model(
    text: str, source: str = "<string>", overrides: Iterable[str] = (), base: str | None = None
) -> Model:
    """Build the `Model` described by the TOML `text`; `source` names it in errors;
    the files it names are in the folder `base` (default: the folder of `source` when
    it is a file, else the working directory).

    The model keeps `source_text` (the text as read) and `overrides` (the list given).
    A value legal but unlikely in SI units (flexmbs.checks.plausibility) is a
    PlausibilityWarning naming the file, the item and the field.
    """
    overrides = list(overrides)
    try:
        doc = _parse(text)
        _keep_tolerances_with_their_method(doc, overrides)
        for override in overrides:
            _apply_override(doc, override)
        check_document(doc)
        model = _build_model(doc, base if base else _folder_of(source))
    except ModelError as err:
        raise err.with_source(source) from None
    model.source_text = text
    model.overrides = overrides
    for note in plausibility_notes(model):
        warnings.warn(PlausibilityWarning(f"{source}: {note}"), stacklevel=2)
    return model


# --------------------------------------------------------- parse and overrides
def _parse(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text.removeprefix("\ufeff"))
    except tomllib.TOMLDecodeError as err:
        raise ModelError(f"not valid TOML: {err}") from None


def _override_value(text: str) -> Any:
    """The value of `--set path=text`: a TOML value, or else the text as a string."""
    try:
        return tomllib.loads("v = " + text)["v"]
    except tomllib.TOMLDecodeError:
        return text


def _apply_override(doc: dict[str, Any], override: str) -> None:
    """Set one "dotted.path=value" in the parsed tables; its parent tables must exist
    (except the settings sections model, solver and output, created when missing). A
    key that is a whole number indexes an array (of tables, or the value's own list)
    from 0: controllers.servo.inputs.0.gain."""
    path, equals, value = str(override).partition("=")
    path = path.strip()
    item = f'--set "{path}"'
    keys = path.split(".")
    if not equals or not all(k.strip() for k in keys):
        raise ModelError(
            f"expected dotted.path=value (e.g. solver.rtol=1e-9), got {override!r}", item
        )
    keys = [k.strip() for k in keys]
    if len(keys) > 1 and keys[0] in _SETTINGS_SECTIONS:
        doc.setdefault(keys[0], {})
    if len(keys) > 2 and keys[0] == "solver" and keys[1] in SOLVER_METHODS:
        doc["solver"].setdefault(keys[1], {})
    table: Any = doc
    for depth, key in enumerate(keys[:-1]):
        where = ".".join(keys[:depth]) or "the top level of the file"
        if isinstance(table, list):
            table = table[_array_index(table, key, where, item)]
            continue
        if key not in table:
            existing = ", ".join(table) or "(none)"
            raise ModelError(f'no table "{key}" in {where}; existing keys: {existing}', item)
        if not isinstance(table[key], (dict, list)):
            raise ModelError(f'"{key}" in {where} is {_toml_type(table[key])}, not a table', item)
        table = table[key]
    if isinstance(table, list):
        table[_array_index(table, keys[-1], ".".join(keys[:-1]), item)] = _override_value(
            value.strip()
        )
    else:
        table[keys[-1]] = _override_value(value.strip())


def _array_index(array: list[Any], key: str, where: str, item: str) -> int:
    """The 0-based index `key` into the array at `where` (ModelError unless a whole
    number within it)."""
    if not (key.isdigit() and int(key) < len(array)):
        raise ModelError(
            f'"{where}" is an array of {len(array)}, not a table: expected an index from 0 to '
            f'{len(array) - 1} after it, got "{key}"',
            item,
        )
    return int(key)


def _keep_tolerances_with_their_method(doc: dict[str, Any], overrides: list[str]) -> None:
    """With an override of solver.method, the tolerances of [solver] stay the settings
    of the method the file names: moved to its own table [solver.METHOD] (unless it
    gives them too, which the checks then refuse), so that the method set in their
    place runs with its own."""
    if not any(str(o).partition("=")[0].strip() == "solver.method" for o in overrides):
        return
    solver = doc.get("solver")
    if not isinstance(solver, dict):
        return
    method = solver.get("method", "bdf")
    own = solver.get(method, {}) if isinstance(method, str) else None
    if not isinstance(own, dict):
        return
    moved = {k: solver.pop(k) for k in METHOD_FIELDS if k in solver and k not in own}
    if moved:
        solver[method] = {**own, **moved}


# ---------------------------------------------------------------- building
def _time_function(table: dict[str, Any]) -> TimeFunction:
    """The timefunctions dataclass of a checked law table (numbers as floats)."""
    law = table["law"]
    values = {}
    for key in LAW_FIELDS[law]:
        if key in table:
            value = table[key]
            if isinstance(value, list):
                value = tuple(float(v) for v in value)
            elif _is_number(value):
                value = float(value)
            values[key] = value
    return TIME_FUNCTION_LAWS[law](**values)


def _without(table: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in table.items() if k not in keys}


def _add_driver(model: Model, name: str, table: dict[str, Any]) -> None:
    """add_driver, with the law's fields reported as fields of the driver table (the
    file has no "function" sub-table for a driver)."""
    try:
        model.add_driver(
            name,
            function=_time_function(table),
            **_without(table, "law", *LAW_FIELDS[table["law"]]),
        )
    except ModelError as err:
        if err.field is None or not err.field.startswith("function"):
            raise
        field = err.field.removeprefix("function").removeprefix(".") or None
        raise ModelError(err.message, err.item, field, err.source) from None


def _prefixed(fn: Callable[..., _T], prefix: str, **kwargs: Any) -> _T:
    """fn(**kwargs) with the field of a ModelError it raises put under `prefix`."""
    try:
        return fn(**kwargs)
    except ModelError as err:
        raise ModelError(
            err.message, err.item, prefix + (err.field or "").lstrip("."), err.source
        ) from None


def _add_beam(model: Model, name: str, table: dict[str, Any]) -> None:
    item = f'body "{name}"'
    section = table["section"]
    section = _prefixed(
        SECTIONS[section["type"]][0], "section.", item=item, **_without(section, "type")
    )
    mat = _prefixed(material, "material.", item=item, **table["material"])
    model.add_beam_body(
        name,
        section=section,
        material=mat,
        **_without(table, "type", "markers", "section", "material"),
    )


def _add_actuator(model: Model, name: str, table: dict[str, Any]) -> None:
    functions: dict[str, Any] = {
        k: _time_function(table[k]) for k in ACTUATOR_COMMANDS if k in table
    }
    model.add_actuator(name, **_without(table, *ACTUATOR_COMMANDS), **functions)


def _add_force(model: Model, name: str, table: dict[str, Any]) -> None:
    function = _time_function(table["function"]) if "function" in table else None
    model.add_force(name, function=function, **_without(table, "function"))


def _add_user_law(model: Model, name: str, table: dict[str, Any], base: str | None) -> None:
    """A user law named by its `function` ("module:function" or "file.py:function",
    the file relative to the model's folder; flexmbs.model.user_laws.load_law)."""
    from ..model.user_laws import load_law

    item = f'user law "{name}"'
    law = load_law(table["function"], base, item)
    read = table.get("read_coordinates", ())
    model.add_user_law(
        name,
        law,
        read_coordinates=[read] if isinstance(read, str) else read,
        **_without(table, "function", "read_coordinates"),
    )


def _folder_of(source: str) -> str | None:
    """The folder of the model file `source`, where the files it names are (None for
    text that is no file: the working directory)."""
    return os.path.dirname(os.path.abspath(source)) if os.path.isfile(source) else None


def _add_body(model: Model, name: str, table: dict[str, Any], base: str | None) -> None:
    """A body of any type, and its markers."""
    if table.get("type") == "beam":
        _add_beam(model, name, table)
    elif table.get("type") == "fe":
        model.add_fe_body(name, base=base, **_without(table, "type", "markers"))
    else:
        model.add_rigid_body(name, base=base, **_without(table, "type", "markers"))
    for marker, marker_table in table.get("markers", {}).items():
        model.add_marker(name, marker, **marker_table)


def _add_controller(model: Model, name: str, table: dict[str, Any]) -> None:
    """A controller, the setpoints of its inputs time functions."""
    inputs = [
        {k: _time_function(v) if k == "setpoint" else v for k, v in entry.items()}
        for entry in table["inputs"]
    ]
    model.add_controller(name, inputs=inputs, **_without(table, "inputs"))


def _fields_to(method: str) -> Callable[[Model, str, dict[str, Any], str | None], object]:
    """The adding of an item whose table holds the builder method's arguments."""
    return lambda model, name, table, base: getattr(model, method)(name, **table)


def _named(
    add: Callable[[Model, str, dict[str, Any]], None],
) -> Callable[[Model, str, dict[str, Any], str | None], object]:
    """The adding of an item that needs no folder."""
    return lambda model, name, table, base: add(model, name, table)


_BUILDERS: dict[str, Callable[[Model, str, dict[str, Any], str | None], object]] = {
    # section: the adding of one of its items (model, name, table, folder), in this order
    "bodies": _add_body,
    "joints": _fields_to("add_joint"),
    "drivers": _named(_add_driver),
    "couplers": _fields_to("add_coupler"),
    "actuators": _named(_add_actuator),
    "forces": _named(_add_force),
    "springs": _fields_to("add_spring"),
    "contacts": _fields_to("add_contact"),
    "sensors": _fields_to("add_sensor"),
    "frictions": _fields_to("add_friction"),
    "backlashes": _fields_to("add_backlash"),
    "controllers": _named(_add_controller),
    "user_laws": _add_user_law,
}


def _build_model(doc: dict[str, Any], base: str | None = None) -> Model:
    """The sequence of builder calls that the checked tables describe; `base` is the
    folder of the files they name."""
    model = Model(**doc.get("model", {}))
    solver = doc.get("solver", {})
    model.set_solver(
        **_without(solver, *SOLVER_METHODS),
        methods={m: solver[m] for m in SOLVER_METHODS if m in solver},
    )
    model.set_output(**doc.get("output", {}))
    for name, table in doc.get("ground", {}).get("markers", {}).items():
        model.add_marker(GROUND, name, **table)
    for section, add in _BUILDERS.items():
        for name, table in doc.get(section, {}).items():
            add(model, name, table, base)
    _check_torque_laws(doc, model)
    _mode_bases(model)
    return model


def _check_torque_laws(doc: dict[str, Any], model: Model) -> None:
    """A torque actuator of a model file has its torque law, or a controller that
    drives it (the reference's "required for torque")."""
    driven = {c.actuator for c in model.controllers.values()}
    for name, table in doc.get("actuators", {}).items():
        if table.get("type") == "torque" and "torque" not in table and name not in driven:
            raise ModelError(
                'required for type "torque": the motor torque, a time function (N m), '
                "unless a controller drives the actuator",
                f'actuator "{name}"',
                "torque",
            )


def _mode_bases(model: Model) -> list[object]:
    """The mode bases of the reduced beams, made now (compiling would make them) so
    that a file asking a beam for more modes than it has is refused when it is read."""
    return [
        body.basis
        for body in model.bodies.values()
        if isinstance(body, FeBody) or (isinstance(body, BeamBody) and body.reduced)
    ]
