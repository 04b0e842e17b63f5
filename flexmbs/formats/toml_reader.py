"""The TOML model-file reader: a model file is a sequence of `Model.add_*` calls.

The file vocabulary is the builder API of `flexmbs.model.description`;
docs/reference/model-file.md documents it. Reading goes in four steps, each reporting a
`ModelError` that names the file, the item and the field:

1. parse the TOML text (tomllib);
2. apply the `--set dotted.path=value` overrides to the parsed tables;
3. check the structure: known sections and fields, required fields, value types;
4. build the model with the builder, whose value checks (positive mass, inertia, axes,
   names of bodies, markers and joints) report the rest.

The topology (tree, loops, bodies not connected to the ground) is checked later, by
`flexmbs.model.topology.build_topology`.
"""

from __future__ import annotations

import math
import os
import tomllib
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard, TypeVar

from ..checks.plausibility import plausibility_notes
from ..elements import (
    circle_section,
    general_section,
    material,
    rectangle_section,
    rectangular_tube_section,
    round_tube_section,
)
from ..errors import ModelError, PlausibilityWarning
from ..model.description import GROUND, SENSOR_TYPES, SOLVER_METHODS, BeamBody, FeBody, Model
from ..model.items import METHOD_FIELDS, method_fields
from ..model.timefunctions import TIME_FUNCTION_LAWS, TimeFunction

if TYPE_CHECKING:
    from ..elements.sections import Section

_T = TypeVar("_T")

__all__ = ["load_model", "loads_model"]

# ------------------------------------------------------------------- value kinds
# Each kind is also the text of "expected ..." in an error message.
STRING = "a string"
NUMBER = "a number"
INTEGER = "an integer"
BOOLEAN = "true or false"
VECTOR = "a list of numbers"
MATRIX = "a list of lists of numbers"
NUMBER_OR_VECTOR = "a number or a list of numbers"
VECTOR_OR_MATRIX = "a list of numbers or a list of lists of numbers"
INTEGER_OR_VECTOR = "an integer or a list of integers"
STRING_OR_LIST = '"all" or a list of strings'
STRING_OR_NUMBER = "a string or a number"
STRING_OR_VECTOR = "a string or a list of numbers"
STRING_NUMBER_OR_VECTOR = '"bands", a number or a list of numbers'
INTEGER_OR_STRING = 'an integer or "all"'
TABLE = "a table"
TABLES = "a list of tables"
INITIAL_STATE = "a string, a list of numbers, a table or a list of tables"

FOUND_TEXT_LENGTH = 60  # characters of a bad value quoted in an error message


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_vector(value: object) -> bool:
    return isinstance(value, list) and all(_is_number(v) for v in value)


def _is_matrix(value: object) -> bool:
    return isinstance(value, list) and all(_is_vector(row) for row in value)


_KIND_CHECKS = {
    STRING: lambda v: isinstance(v, str),
    NUMBER: _is_number,
    INTEGER: lambda v: isinstance(v, int) and not isinstance(v, bool),
    BOOLEAN: lambda v: isinstance(v, bool),
    VECTOR: _is_vector,
    MATRIX: _is_matrix,
    NUMBER_OR_VECTOR: lambda v: _is_number(v) or _is_vector(v),
    VECTOR_OR_MATRIX: lambda v: _is_vector(v) or _is_matrix(v),
    TABLE: lambda v: isinstance(v, dict),
    TABLES: lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v),
    INITIAL_STATE: lambda v: (
        isinstance(v, (str, dict))
        or _is_vector(v)
        or (isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v))
    ),
    INTEGER_OR_VECTOR: lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v))
    ),
    STRING_OR_NUMBER: lambda v: isinstance(v, str) or _is_number(v),
    STRING_OR_VECTOR: lambda v: isinstance(v, str) or _is_vector(v),
    STRING_NUMBER_OR_VECTOR: lambda v: isinstance(v, str) or _is_number(v) or _is_vector(v),
    INTEGER_OR_STRING: lambda v: (
        isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))
    ),
    STRING_OR_LIST: lambda v: (
        isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))
    ),
}


def _toml_type(value: object) -> str:
    """The TOML name of a parsed value's type, with its article."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return "a date/time"


def _found(value: object) -> str:
    """'a string "abc"', 'an array [1, "x"]', 'a table': what was found, for messages."""
    kind = _toml_type(value)
    if isinstance(value, dict):
        return kind
    text = f'"{value}"' if isinstance(value, str) else repr(value)
    if len(text) > FOUND_TEXT_LENGTH:
        text = text[: FOUND_TEXT_LENGTH - 3] + "..."
    return f"{kind} {text}"


# --------------------------------------------------------------------- schemas
@dataclass(frozen=True)
class _Schema:
    """The fields of one kind of table: name -> value kind, and the required ones."""

    fields: dict
    required: tuple = ()


_MODEL = _Schema({"name": STRING, "gravity": VECTOR})
_SOLVER = _Schema(
    {
        "method": STRING,
        "t_end": NUMBER,
        "rtol": NUMBER,
        "atol": NUMBER,
        "max_step": NUMBER,
        "formulation": STRING,
        "constraints": STRING,
        "rho_inf": NUMBER,
        "fixed_step": NUMBER,
        **{method: TABLE for method in SOLVER_METHODS},  # [solver.galpha]: its own settings
        "linear_solver": STRING,
    }
)
_SOLVER_METHOD = {m: _Schema({f: NUMBER for f in method_fields(m)}) for m in SOLVER_METHODS}
_OUTPUT = _Schema({"step": NUMBER, "vtk": BOOLEAN})
_GROUND = _Schema({"markers": TABLE})
_MARKER = _Schema({"position": VECTOR, "orientation": MATRIX, "euler_xyz": VECTOR})
_BODY = _Schema(
    {
        "type": STRING,
        "mass": NUMBER,
        "com": VECTOR,
        "inertia": VECTOR_OR_MATRIX,
        "inertia_about": STRING,
        "markers": TABLE,
    },
    required=("mass", "inertia", "inertia_about"),
)
_BEAM = _Schema(
    {
        "type": STRING,
        "points": MATRIX,
        "elements": INTEGER_OR_VECTOR,
        "section": TABLE,
        "material": TABLE,
        "reference": VECTOR,
        "fixed": TABLE,
        "node_masses": TABLE,
        "node_inertias": TABLE,
        "alpha": NUMBER,
        "beta": NUMBER,
        "initial": INITIAL_STATE,
        "initial_rates": VECTOR,
        "modal_damping": STRING_NUMBER_OR_VECTOR,
        "geometric": STRING,
        "markers": TABLE,
        "modes": INTEGER_OR_STRING,
        "correction_modes": BOOLEAN,
        "modes_below": NUMBER,
        "modal_derivatives": BOOLEAN,
    },
    required=("type", "points", "section", "material"),
)
_FE = _Schema(
    {
        "type": STRING,
        "mesh": STRING,
        "material": TABLE,
        "length_unit": STRING,
        "stiffness": STRING,
        "mass": STRING,
        "nodes": STRING,
        "units": STRING,
        "node_dofs": INTEGER,
        "dof_map": STRING,
        "modal": STRING,
        "interfaces": TABLE,
        "reduction": STRING,
        "modes": INTEGER,
        "modes_below": NUMBER,
        "frame": STRING,
        "alpha": NUMBER,
        "beta": NUMBER,
        "modal_damping": STRING_NUMBER_OR_VECTOR,
        "initial": INITIAL_STATE,
        "initial_rates": VECTOR,
        "markers": TABLE,
    },
    required=("type",),
)
_FE_INTERFACE = _Schema(
    {"set": STRING, "nodes": VECTOR, "box": MATRIX, "connection": STRING, "point": VECTOR}
)
_FE_MARKER = _Schema(
    {"interface": STRING, "node": INTEGER, "orientation": MATRIX, "euler_xyz": VECTOR}
)
_BEAM_MARKER = _Schema(
    {"node": INTEGER, "orientation": MATRIX, "euler_xyz": VECTOR}, required=("node",)
)
# section type: (constructor, schema of its fields)
SECTIONS: dict[str, tuple[Callable[..., Section], _Schema]] = {
    "rectangle": (
        rectangle_section,
        _Schema({"type": STRING, "width": NUMBER, "height": NUMBER}, required=("width", "height")),
    ),
    "circle": (
        circle_section,
        _Schema({"type": STRING, "diameter": NUMBER}, required=("diameter",)),
    ),
    "round_tube": (
        round_tube_section,
        _Schema(
            {"type": STRING, "outer_diameter": NUMBER, "wall_thickness": NUMBER},
            required=("outer_diameter", "wall_thickness"),
        ),
    ),
    "rectangular_tube": (
        rectangular_tube_section,
        _Schema(
            {"type": STRING, "width": NUMBER, "height": NUMBER, "wall_thickness": NUMBER},
            required=("width", "height", "wall_thickness"),
        ),
    ),
    "general": (
        general_section,
        _Schema(
            {
                "type": STRING,
                "area": NUMBER,
                "i_y": NUMBER,
                "i_z": NUMBER,
                "torsion_constant": NUMBER,
                "max_y": NUMBER,
                "max_z": NUMBER,
            },
            required=("area", "i_y", "i_z", "torsion_constant"),
        ),
    ),
}
_MATERIAL = _Schema(
    {"youngs_modulus": NUMBER, "density": NUMBER, "shear_modulus": NUMBER, "poisson_ratio": NUMBER},
    required=("youngs_modulus", "density"),
)
_JOINT = _Schema(
    {
        "type": STRING,
        "parent": STRING,
        "child": STRING,
        "parent_marker": STRING,
        "child_marker": STRING,
        "axis": VECTOR,
        "axes": MATRIX,
        "translation_axes": MATRIX,
        "rotation_axes": MATRIX,
        "initial": NUMBER_OR_VECTOR,
        "initial_rate": NUMBER_OR_VECTOR,
        "stiffness": NUMBER_OR_VECTOR,
        "damping": NUMBER_OR_VECTOR,
        "rest": NUMBER_OR_VECTOR,
        "cut": BOOLEAN,
        "limits": VECTOR_OR_MATRIX,
        "limit_stiffness": NUMBER_OR_VECTOR,
        "limit_damping": NUMBER_OR_VECTOR,
    },
    required=("type", "parent", "child"),
)
_DRIVER_BASE = {"joint": STRING, "coordinate": INTEGER}
_DRIVER_REQUIRED = ("joint",)
_FORCE = _Schema(
    {
        "type": STRING,
        "body": STRING,
        "marker": STRING,
        "vector": VECTOR,
        "frame": STRING,
        "function": TABLE,
    },
    required=("type", "body", "vector"),
)
_ACTUATOR = _Schema(
    {
        "joint": STRING,
        "coordinate": INTEGER,
        "type": STRING,
        "kp": NUMBER,
        "kd": NUMBER,
        "setpoint": TABLE,
        "torque": TABLE,
        "max_torque": NUMBER,
        "gear_ratio": NUMBER,
        "rotor_inertia": NUMBER,
        "motor_damping": NUMBER,
        "voltage": TABLE,
        "amplifier_gain": NUMBER,
        "max_voltage": NUMBER,
        "resistance": NUMBER,
        "inductance": NUMBER,
        "torque_constant": NUMBER,
        "back_emf_constant": NUMBER,
        "max_current": NUMBER,
        "efficiency": NUMBER,
    },
    required=("joint",),
)
_SPRING = _Schema(
    {
        "body1": STRING,
        "marker1": STRING,
        "body2": STRING,
        "marker2": STRING,
        "stiffness": NUMBER,
        "damping": NUMBER,
        "rest_length": NUMBER,
    },
    required=("body1", "marker1", "body2", "marker2", "stiffness"),
)
_INSTRUMENT = {
    "dead_time": NUMBER,
    "lag": NUMBER,
    "resolution": NUMBER,
    "controller_dead_time": NUMBER,
    "controller_lag": NUMBER,
    "controller_resolution": NUMBER,
}
ACTUATOR_COMMANDS = ("setpoint", "torque", "voltage")
"""The fields of an actuator that hold its command's time function."""
_ACTUATOR_SENSOR = _Schema({"type": STRING, "actuator": STRING}, required=("actuator",))
_STRAIN_SENSOR = _Schema(
    {"type": STRING, "body": STRING, "element": INTEGER, "at": STRING_OR_NUMBER, "point": VECTOR},
    required=("body", "point"),
)
_SECTION_SENSOR = _Schema(
    {"type": STRING, "body": STRING, "element": INTEGER, "at": STRING_OR_NUMBER}, required=("body",)
)
_CENTERLINE_SENSOR = _Schema(
    {"type": STRING, "body": STRING, "frame": STRING, "subdivisions": INTEGER}, required=("body",)
)
_BODY_SENSOR = _Schema({"type": STRING, "body": STRING}, required=("body",))
_CUT_JOINT_SENSOR = _Schema({"type": STRING, "joint": STRING, "frame": STRING}, required=("joint",))
_CONTACT_SENSOR = _Schema(
    {"type": STRING, "contact": STRING, "frame": STRING}, required=("contact",)
)
_CONTACT = _Schema(
    {
        "type": STRING,
        "disk": STRING,
        "disk_marker": STRING,
        "axis": VECTOR,
        "radius": NUMBER,
        "plane": STRING,
        "plane_marker": STRING,
        "normal": VECTOR,
    },
    required=("type", "disk", "plane"),
)
_FRICTION = _Schema(
    {
        "joint": STRING,
        "coordinate": INTEGER,
        "coulomb": NUMBER,
        "static": NUMBER,
        "stribeck_velocity": NUMBER,
        "viscous": NUMBER,
        "law": STRING,
        "regularization": NUMBER,
    },
    required=("joint",),
)
_BACKLASH = _Schema(
    {
        "joint": STRING,
        "coordinate": INTEGER,
        "gap": NUMBER,
        "center": NUMBER,
        "stiffness": NUMBER,
        "damping": NUMBER,
    },
    required=("joint", "gap", "stiffness"),
)
_CONTROLLER = _Schema(
    {
        "actuator": STRING,
        "command": STRING,
        "inputs": TABLES,
        "sample_time": NUMBER,
        "delay": NUMBER,
        "limits": NUMBER_OR_VECTOR,
        "offset": NUMBER,
    },
    required=("actuator", "inputs"),
)
_CONTROLLER_INPUT = _Schema(
    {
        "sensor": STRING,
        "component": INTEGER,
        "joint": STRING,
        "coordinate": INTEGER,
        "rate": BOOLEAN,
        "gain": NUMBER,
        "rate_gain": NUMBER,
        "integral_gain": NUMBER,
        "setpoint": TABLE,
        "rate_cutoff": NUMBER,
        "rate_filter_order": INTEGER,
    }
)
_USER_LAW = _Schema(
    {
        "function": STRING,
        "joint": STRING,
        "coordinate": INTEGER,
        "body": STRING,
        "marker": STRING,
        "frame": STRING,
        "params": VECTOR,
        "read_coordinates": STRING_OR_LIST,
    },
    required=("function",),
)
_JOINT_SENSOR = _Schema(
    {"type": STRING, "joint": STRING, "coordinate": INTEGER}, required=("joint",)
)
_MARKER_SENSOR = _Schema(
    {"type": STRING, "body": STRING, "marker": STRING, "frame": STRING}, required=("body", "marker")
)

# The fields of each time-function law (the dataclass fields of
# flexmbs.model.timefunctions) and those without a useful default.
LAW_FIELDS = {
    "constant": {"value": NUMBER},
    "rate": {"value": NUMBER, "rate": NUMBER},
    "polynomial": {"coefficients": VECTOR},
    "harmonic": {"amplitude": NUMBER, "omega": NUMBER, "phase": NUMBER, "offset": NUMBER},
    "spinup": {"rate": NUMBER, "duration": NUMBER},
    "table": {"time": VECTOR, "value": VECTOR, "interpolation": STRING},
    "steps": {"times": VECTOR, "values": VECTOR},
    "trajectory": {"times": VECTOR, "values": VECTOR, "profile": STRING},
}
LAW_REQUIRED = {
    "constant": ("value",),
    "rate": ("rate",),
    "polynomial": ("coefficients",),
    "harmonic": ("amplitude", "omega"),
    "spinup": ("rate", "duration"),
    "table": ("time", "value"),
    "steps": ("times", "values"),
    "trajectory": ("times", "values"),
}

# Sections holding one table of settings; `--set` may create them.
_SETTINGS_SECTIONS = {"model": _MODEL, "solver": _SOLVER, "output": _OUTPUT}
_SECTIONS = (
    "model",
    "solver",
    "output",
    "ground",
    "bodies",
    "joints",
    "drivers",
    "actuators",
    "forces",
    "springs",
    "contacts",
    "sensors",
    "frictions",
    "backlashes",
    "controllers",
    "user_laws",
)
_BODY_TYPES = ("rigid", "beam", "fe")


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
        _check_document(doc)
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


# ----------------------------------------------------------- structural checks
def _check_fields(table: object, schema: _Schema, item: str, prefix: str = "") -> None:
    """Known fields only, the required ones present, each of its kind.

    `prefix` is prepended to field names in messages (e.g. "function.")."""
    if not isinstance(table, dict):
        raise ModelError(f"expected a table, got {_found(table)}", item, prefix.rstrip(".") or None)
    for key in table:
        if key not in schema.fields:
            raise ModelError(
                f'unknown field "{key}"; allowed fields: {", ".join(schema.fields)}',
                item,
                prefix + key,
            )
    for key in schema.required:
        if key not in table:
            raise ModelError(f'missing required field "{key}"', item, prefix + key)
    for key, value in table.items():
        kind = schema.fields[key]
        if not _KIND_CHECKS[kind](value):
            raise ModelError(f"expected {kind}, got {_found(value)}", item, prefix + key)


def _check_named_tables(
    section: dict[str, Any],
    what: str,
    item_of: Callable[[str], str],
    check_one: Callable[[str, dict[str, Any], str], None],
) -> None:
    """A table of named item tables, e.g. [bodies.NAME]; check_one(table, item)."""
    for name, table in section.items():
        item = item_of(name)
        if not isinstance(table, dict):
            raise ModelError(
                f"expected a table of fields for the {what}, got {_found(table)}", item
            )
        check_one(name, table, item)


def _check_law(table: dict[str, Any], item: str, prefix: str = "") -> str:
    """A time function: `law` and that law's fields (finite numbers)."""
    if "law" not in table:
        raise ModelError(
            f'missing required field "law" (one of {", ".join(LAW_FIELDS)})', item, prefix + "law"
        )
    law = table["law"]
    if not isinstance(law, str) or law not in LAW_FIELDS:
        raise ModelError(
            f"expected a law, one of {', '.join(LAW_FIELDS)}; got {_found(law)}",
            item,
            prefix + "law",
        )
    return law


def _check_finite_law_values(table: dict[str, Any], law: str, item: str, prefix: str = "") -> None:
    """The numbers of a law's fields are finite (the builder does not check them)."""
    for key in LAW_FIELDS[law]:
        value = table.get(key)
        numbers = value if isinstance(value, list) else [value]
        if not all(math.isfinite(v) for v in numbers if _is_number(v)):
            raise ModelError(f"expected finite numbers, got {_found(value)}", item, prefix + key)


def _law_schema(
    law: str, base: Mapping[str, str] | None = None, required: Iterable[str] = ()
) -> _Schema:
    """The fields of a table holding a time function: `law`, `base`, the law's own."""
    fields = {"law": STRING, **(base or {}), **LAW_FIELDS[law]}
    return _Schema(fields, tuple(required) + LAW_REQUIRED[law])


def _check_marker(name: str, table: dict[str, Any], item: str) -> None:
    _check_fields(table, _MARKER, item)


def _check_body(name: str, table: dict[str, Any], item: str) -> None:
    body_type = table.get("type", "rigid")
    if not isinstance(body_type, str) or body_type not in _BODY_TYPES:
        raise ModelError(
            f"expected a body type, one of {', '.join(_BODY_TYPES)}; got {_found(body_type)}",
            item,
            "type",
        )
    if body_type == "beam":
        _check_beam(name, table, item)
        return
    if body_type == "fe":
        _check_fe(name, table, item)
        return
    _check_fields(table, _BODY, item)
    _check_named_tables(
        table.get("markers", {}),
        "marker",
        lambda m: f'marker "{m}" on body "{name}"',
        _check_marker,
    )


def _check_fe(name: str, table: dict[str, Any], item: str) -> None:
    _check_fields(table, _FE, item)
    _check_named_tables(
        table.get("interfaces", {}),
        "interface",
        lambda f: item,
        lambda f, t, it: _check_fields(t, _FE_INTERFACE, it, f"interfaces.{f}."),
    )
    _check_named_tables(
        table.get("markers", {}),
        "marker",
        lambda m: f'marker "{m}" on body "{name}"',
        lambda m, t, it: _check_fields(t, _FE_MARKER, it),
    )


def _check_beam(name: str, table: dict[str, Any], item: str) -> None:
    _check_fields(table, _BEAM, item)
    section = table["section"]
    kind = section.get("type")
    if not isinstance(kind, str) or kind not in SECTIONS:
        raise ModelError(
            f"expected a section type, one of {', '.join(SECTIONS)}; got {_found(kind)}",
            item,
            "section.type",
        )
    _check_fields(section, SECTIONS[kind][1], item, "section.")
    _check_fields(table["material"], _MATERIAL, item, "material.")
    for node, dofs in table.get("fixed", {}).items():
        if not _KIND_CHECKS[STRING_OR_LIST](dofs):
            raise ModelError(
                f"expected {STRING_OR_LIST}, got {_found(dofs)}", item, f"fixed.{node}"
            )
    for node, mass in table.get("node_masses", {}).items():
        if not _is_number(mass):
            raise ModelError(f"expected {NUMBER}, got {_found(mass)}", item, f"node_masses.{node}")
    for node, inertia in table.get("node_inertias", {}).items():
        if not _KIND_CHECKS[VECTOR_OR_MATRIX](inertia):
            raise ModelError(
                f"expected {VECTOR_OR_MATRIX}, got {_found(inertia)}", item, f"node_inertias.{node}"
            )
    _check_named_tables(
        table.get("markers", {}),
        "marker",
        lambda m: f'marker "{m}" on body "{name}"',
        lambda n, t, i: _check_fields(t, _BEAM_MARKER, i),
    )


def _check_joint(name: str, table: dict[str, Any], item: str) -> None:
    _check_fields(table, _JOINT, item)


def _check_driver(name: str, table: dict[str, Any], item: str) -> None:
    law = _check_law(table, item)
    _check_fields(table, _law_schema(law, _DRIVER_BASE, _DRIVER_REQUIRED), item)
    _check_finite_law_values(table, law, item)


def _check_actuator(name: str, table: dict[str, Any], item: str) -> None:
    _check_fields(table, _ACTUATOR, item)
    for key in ACTUATOR_COMMANDS:
        if key in table:
            function = table[key]
            law = _check_law(function, item, key + ".")
            _check_fields(function, _law_schema(law), item, key + ".")
            _check_finite_law_values(function, law, item, key + ".")


def _check_force(name: str, table: dict[str, Any], item: str) -> None:
    _check_fields(table, _FORCE, item)
    if "function" in table:
        function = table["function"]
        law = _check_law(function, item, "function.")
        _check_fields(function, _law_schema(law), item, "function.")
        _check_finite_law_values(function, law, item, "function.")


def _check_sensor(name: str, table: dict[str, Any], item: str) -> None:
    sensor_type = table.get("type")
    if sensor_type is None:
        raise ModelError('missing required field "type"', item, "type")
    if not isinstance(sensor_type, str) or sensor_type not in SENSOR_TYPES:
        raise ModelError(
            f"expected a sensor type, one of {', '.join(SENSOR_TYPES)}; got {_found(sensor_type)}",
            item,
            "type",
        )
    schema = (
        _CUT_JOINT_SENSOR
        if sensor_type in ("joint_reaction", "constraint_residual")
        else _JOINT_SENSOR
        if sensor_type.startswith("joint")
        else _ACTUATOR_SENSOR
        if sensor_type.startswith("actuator")
        else _STRAIN_SENSOR
        if sensor_type == "beam_strain"
        else _SECTION_SENSOR
        if sensor_type in ("beam_curvature", "beam_section_forces")
        else _CENTERLINE_SENSOR
        if sensor_type == "beam_centerline"
        else _CONTACT_SENSOR
        if sensor_type == "contact_reaction"
        else _BODY_SENSOR
        if sensor_type in ("strain_energy", "elastic_coordinates")
        else _MARKER_SENSOR
    )
    _check_fields(table, _Schema({**schema.fields, **_INSTRUMENT}, schema.required), item)


def _check_controller(name: str, table: dict[str, Any], item: str) -> None:
    _check_fields(table, _CONTROLLER, item)
    for k, entry in enumerate(table["inputs"]):
        _check_fields(entry, _CONTROLLER_INPUT, item, f"inputs[{k}].")
        if "setpoint" in entry:
            function = entry["setpoint"]
            at = f"inputs[{k}].setpoint."
            law = _check_law(function, item, at)
            _check_fields(function, _law_schema(law), item, at)
            _check_finite_law_values(function, law, item, at)


def _check_ground(table: dict[str, Any]) -> None:
    _check_fields(table, _GROUND, "ground")
    _check_named_tables(
        table.get("markers", {}),
        "marker",
        lambda m: f'marker "{m}" on body "{GROUND}"',
        _check_marker,
    )


_NAMED_SECTIONS = {
    # section: (what, item text of a name, check)
    "bodies": ("body", lambda n: f'body "{n}"', _check_body),
    "joints": ("joint", lambda n: f'joint "{n}"', _check_joint),
    "drivers": ("driver", lambda n: f'driver "{n}"', _check_driver),
    "actuators": ("actuator", lambda n: f'actuator "{n}"', _check_actuator),
    "forces": ("force", lambda n: f'force "{n}"', _check_force),
    "springs": ("spring", lambda n: f'spring "{n}"', lambda n, t, i: _check_fields(t, _SPRING, i)),
    "contacts": (
        "contact",
        lambda n: f'contact "{n}"',
        lambda n, t, i: _check_fields(t, _CONTACT, i),
    ),
    "sensors": ("sensor", lambda n: f'sensor "{n}"', _check_sensor),
    "frictions": (
        "friction",
        lambda n: f'friction "{n}"',
        lambda n, t, i: _check_fields(t, _FRICTION, i),
    ),
    "backlashes": (
        "backlash",
        lambda n: f'backlash "{n}"',
        lambda n, t, i: _check_fields(t, _BACKLASH, i),
    ),
    "controllers": ("controller", lambda n: f'controller "{n}"', _check_controller),
    "user_laws": (
        "user law",
        lambda n: f'user law "{n}"',
        lambda n, t, i: _check_fields(t, _USER_LAW, i),
    ),
}


def _check_document(doc: dict[str, Any]) -> None:
    """Every section known and a table; every item's fields known and of their kind."""
    for key, section in doc.items():
        item = f'section "{key}"'
        if key not in _SECTIONS:
            raise ModelError(
                f"unknown section [{key}]; allowed sections: {', '.join(_SECTIONS)}", item
            )
        if not isinstance(section, dict):
            raise ModelError(f"expected a table [{key}], got {_found(section)}", item)
    for key, schema in _SETTINGS_SECTIONS.items():
        _check_fields(doc.get(key, {}), schema, key)
    for method, schema in _SOLVER_METHOD.items():
        if method in doc.get("solver", {}):
            _check_fields(doc["solver"][method], schema, f"solver.{method}")
    _check_ground(doc.get("ground", {}))
    for key, (what, item_of, check_one) in _NAMED_SECTIONS.items():
        _check_named_tables(doc.get(key, {}), what, item_of, check_one)


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
    for name, table in doc.get("bodies", {}).items():
        if table.get("type") == "beam":
            _add_beam(model, name, table)
        elif table.get("type") == "fe":
            model.add_fe_body(name, base=base, **_without(table, "type", "markers"))
        else:
            model.add_rigid_body(name, **_without(table, "type", "markers"))
        for marker, marker_table in table.get("markers", {}).items():
            model.add_marker(name, marker, **marker_table)
    for name, table in doc.get("joints", {}).items():
        model.add_joint(name, **table)
    for name, table in doc.get("drivers", {}).items():
        _add_driver(model, name, table)
    for name, table in doc.get("actuators", {}).items():
        _add_actuator(model, name, table)
    for name, table in doc.get("forces", {}).items():
        _add_force(model, name, table)
    for name, table in doc.get("springs", {}).items():
        model.add_spring(name, **table)
    for name, table in doc.get("contacts", {}).items():
        model.add_contact(name, **table)
    for name, table in doc.get("sensors", {}).items():
        model.add_sensor(name, **table)
    for name, table in doc.get("frictions", {}).items():
        model.add_friction(name, **table)
    for name, table in doc.get("backlashes", {}).items():
        model.add_backlash(name, **table)
    for name, table in doc.get("controllers", {}).items():
        inputs = [
            {k: _time_function(v) if k == "setpoint" else v for k, v in entry.items()}
            for entry in table["inputs"]
        ]
        model.add_controller(name, inputs=inputs, **_without(table, "inputs"))
    for name, table in doc.get("user_laws", {}).items():
        _add_user_law(model, name, table, base)
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
