"""The model file's vocabulary as the reader checks it (flexmbs.formats.toml_checks):
the kinds of values, each also the text of "expected ..." in an error message, and
the schema of each kind of table (its fields, their kinds, the required ones); the
time-function laws' fields; the sections of a file. docs/reference/model-file.md
lists every field named here (a test keeps them together)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeGuard

from ..elements import (
    circle_section,
    general_section,
    rectangle_section,
    rectangular_tube_section,
    round_tube_section,
)
from ..model.description import SOLVER_METHODS
from ..model.items import method_fields

if TYPE_CHECKING:
    from ..elements.sections import Section

__all__ = ["SECTIONS", "LAW_FIELDS", "LAW_REQUIRED", "ACTUATOR_COMMANDS"]

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


_ON_COORDINATE = {"joint": STRING, "coordinate": INTEGER}  # what an item acts on
_AXES = {"orientation": MATRIX, "euler_xyz": VECTOR}  # a marker's axes, either of them


def _typed(fields: dict[str, str], required: tuple[str, ...] = ()) -> _Schema:
    """The schema of a table whose `type` (a string) says which fields follow."""
    return _Schema({"type": STRING, **fields}, required)


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
_MARKER = _Schema({"position": VECTOR, **_AXES})
_BODY = _typed(
    {
        "mass": NUMBER,
        "com": VECTOR,
        "inertia": VECTOR_OR_MATRIX,
        "inertia_about": STRING,
        "density": NUMBER,
        "shapes": TABLES,
        "markers": TABLE,
    },
)  # mass, inertia and inertia_about, or density and shapes (the builder checks which)
_SHAPE = _typed(
    {
        "size": VECTOR,
        "radius": NUMBER,
        "length": NUMBER,
        "file": STRING,
        "scale": VECTOR,
        "position": VECTOR,
        **_AXES,
    },
    ("type",),
)
_BEAM = _typed(
    {
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
    ("type", "points", "section", "material"),
)
_FE = _typed(
    {
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
    ("type",),
)
_FE_INTERFACE = _Schema(
    {"set": STRING, "nodes": VECTOR, "box": MATRIX, "connection": STRING, "point": VECTOR}
)
_FE_MARKER = _Schema({"interface": STRING, "node": INTEGER, **_AXES})
_BEAM_MARKER = _Schema({"node": INTEGER, **_AXES}, ("node",))


def _section(required: tuple[str, ...], optional: tuple[str, ...] = ()) -> _Schema:
    """A section's schema: its `type` and its dimensions (numbers: m, m^2, m^4)."""
    return _typed(dict.fromkeys(required + optional, NUMBER), required)


# section type: (constructor, schema of its fields)
SECTIONS: dict[str, tuple[Callable[..., Section], _Schema]] = {
    "rectangle": (rectangle_section, _section(("width", "height"))),
    "circle": (circle_section, _section(("diameter",))),
    "round_tube": (round_tube_section, _section(("outer_diameter", "wall_thickness"))),
    "rectangular_tube": (
        rectangular_tube_section,
        _section(("width", "height", "wall_thickness")),
    ),
    "general": (
        general_section,
        _section(("area", "i_y", "i_z", "torsion_constant"), ("max_y", "max_z")),
    ),
}
_MATERIAL = _Schema(
    {"youngs_modulus": NUMBER, "density": NUMBER, "shear_modulus": NUMBER, "poisson_ratio": NUMBER},
    ("youngs_modulus", "density"),
)
_JOINT = _typed(
    {
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
    ("type", "parent", "child"),
)
_DRIVER_BASE = _ON_COORDINATE
_DRIVER_REQUIRED = ("joint",)
_FORCE = _typed(
    {
        "body": STRING,
        "marker": STRING,
        "vector": VECTOR,
        "frame": STRING,
        "function": TABLE,
    },
    ("type", "body", "vector"),
)
_ACTUATOR = _Schema(
    {
        **_ON_COORDINATE,
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
    ("joint",),
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
    ("body1", "marker1", "body2", "marker2", "stiffness"),
)
_COUPLER = _Schema(
    {
        **_ON_COORDINATE,
        "leader": STRING,
        "leader_coordinate": INTEGER,
        "multiplier": NUMBER,
        "offset": NUMBER,
    },
    ("joint", "leader"),
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
_ACTUATOR_SENSOR = _typed({"actuator": STRING}, ("actuator",))
_STRAIN_SENSOR = _typed(
    {"body": STRING, "element": INTEGER, "at": STRING_OR_NUMBER, "point": VECTOR},
    ("body", "point"),
)
_SECTION_SENSOR = _typed({"body": STRING, "element": INTEGER, "at": STRING_OR_NUMBER}, ("body",))
_CENTERLINE_SENSOR = _typed({"body": STRING, "frame": STRING, "subdivisions": INTEGER}, ("body",))
_BODY_SENSOR = _typed({"body": STRING}, ("body",))
_CUT_JOINT_SENSOR = _typed({"joint": STRING, "frame": STRING}, ("joint",))
_CONTACT_SENSOR = _typed({"contact": STRING, "frame": STRING}, ("contact",))
_COUPLER_SENSOR = _typed({"coupler": STRING}, ("coupler",))
_CONTACT = _typed(
    {
        "disk": STRING,
        "disk_marker": STRING,
        "axis": VECTOR,
        "radius": NUMBER,
        "plane": STRING,
        "plane_marker": STRING,
        "normal": VECTOR,
    },
    ("type", "disk", "plane"),
)
_FRICTION = _Schema(
    {
        **_ON_COORDINATE,
        "coulomb": NUMBER,
        "static": NUMBER,
        "stribeck_velocity": NUMBER,
        "viscous": NUMBER,
        "law": STRING,
        "regularization": NUMBER,
    },
    ("joint",),
)
_BACKLASH = _Schema(
    {
        **_ON_COORDINATE,
        "gap": NUMBER,
        "center": NUMBER,
        "stiffness": NUMBER,
        "damping": NUMBER,
    },
    ("joint", "gap", "stiffness"),
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
    ("actuator", "inputs"),
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
    ("function",),
)
_JOINT_SENSOR = _typed({"joint": STRING, "coordinate": INTEGER}, ("joint",))
_MARKER_SENSOR = _typed({"body": STRING, "marker": STRING, "frame": STRING}, ("body", "marker"))

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
    "couplers",
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
