"""The structure of a parsed model file checked (step 3 of flexmbs.formats.toml_reader):
known sections and fields, the required ones present, each value of its kind
(flexmbs.formats.toml_schema). Each problem is a ModelError naming the item and the
field; the values themselves are checked by the builder."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..errors import ModelError
from ..model.description import GROUND, SENSOR_TYPES
from .toml_schema import (
    _ACTUATOR,
    _ACTUATOR_SENSOR,
    _BACKLASH,
    _BEAM,
    _BEAM_MARKER,
    _BODY,
    _BODY_SENSOR,
    _BODY_TYPES,
    _CENTERLINE_SENSOR,
    _CONTACT,
    _CONTACT_SENSOR,
    _CONTROLLER,
    _CONTROLLER_INPUT,
    _COUPLER,
    _COUPLER_SENSOR,
    _CUT_JOINT_SENSOR,
    _DRIVER_BASE,
    _DRIVER_REQUIRED,
    _FE,
    _FE_INTERFACE,
    _FE_MARKER,
    _FORCE,
    _FRICTION,
    _GROUND,
    _INSTRUMENT,
    _JOINT,
    _JOINT_SENSOR,
    _KIND_CHECKS,
    _MARKER,
    _MARKER_SENSOR,
    _MATERIAL,
    _SECTION_SENSOR,
    _SECTIONS,
    _SETTINGS_SECTIONS,
    _SHAPE,
    _SOLVER_METHOD,
    _SPRING,
    _STRAIN_SENSOR,
    _USER_LAW,
    ACTUATOR_COMMANDS,
    LAW_FIELDS,
    LAW_REQUIRED,
    NUMBER,
    SECTIONS,
    STRING,
    STRING_OR_LIST,
    VECTOR_OR_MATRIX,
    _found,
    _is_number,
    _Schema,
)

__all__ = ["check_document"]

_NODE_TABLES = (  # a beam's tables {node: value}: field, the kind of each value
    ("fixed", STRING_OR_LIST),
    ("node_masses", NUMBER),
    ("node_inertias", VECTOR_OR_MATRIX),
)


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


def _fields_of(schema: _Schema) -> Callable[[str, dict[str, Any], str], None]:
    """The check of a named table that is its fields alone."""
    return lambda name, table, item: _check_fields(table, schema, item)


def _check_markers(table: dict[str, Any], body: str, schema: _Schema = _MARKER) -> None:
    """The markers of a body (or the ground), [bodies.NAME.markers.MARKER]."""
    _check_named_tables(
        table.get("markers", {}),
        "marker",
        lambda m: f'marker "{m}" on body "{body}"',
        _fields_of(schema),
    )


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


def _check_time_function(
    table: dict[str, Any],
    item: str,
    prefix: str = "",
    base: Mapping[str, str] | None = None,
    required: Iterable[str] = (),
) -> None:
    """A table that holds a time function (a driver, an actuator's command, a force's
    function, a controller's setpoint): its `law`, the law's fields and `base`'s, the
    law's numbers finite."""
    law = _check_law(table, item, prefix)
    _check_fields(table, _law_schema(law, base, required), item, prefix)
    _check_finite_law_values(table, law, item, prefix)


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
    for k, shape in enumerate(table.get("shapes", [])):
        _check_fields(shape, _SHAPE, item, f"shapes[{k}].")
    _check_markers(table, name)


def _check_fe(name: str, table: dict[str, Any], item: str) -> None:
    _check_fields(table, _FE, item)
    _check_named_tables(
        table.get("interfaces", {}),
        "interface",
        lambda f: item,
        lambda f, t, it: _check_fields(t, _FE_INTERFACE, it, f"interfaces.{f}."),
    )
    _check_markers(table, name, _FE_MARKER)


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
    for fld, value_kind in _NODE_TABLES:
        for node, value in table.get(fld, {}).items():
            if not _KIND_CHECKS[value_kind](value):
                raise ModelError(
                    f"expected {value_kind}, got {_found(value)}", item, f"{fld}.{node}"
                )
    _check_markers(table, name, _BEAM_MARKER)


def _check_driver(name: str, table: dict[str, Any], item: str) -> None:
    _check_time_function(table, item, base=_DRIVER_BASE, required=_DRIVER_REQUIRED)


def _check_actuator(name: str, table: dict[str, Any], item: str) -> None:
    _check_fields(table, _ACTUATOR, item)
    for key in ACTUATOR_COMMANDS:
        if key in table:
            _check_time_function(table[key], item, key + ".")


def _check_force(name: str, table: dict[str, Any], item: str) -> None:
    _check_fields(table, _FORCE, item)
    if "function" in table:
        _check_time_function(table["function"], item, "function.")


def _sensor_schema(sensor_type: str) -> _Schema:
    """The fields of a sensor of `sensor_type`, without the instrument's."""
    if sensor_type in ("joint_reaction", "constraint_residual"):
        return _CUT_JOINT_SENSOR
    if sensor_type.startswith("joint"):
        return _JOINT_SENSOR
    if sensor_type.startswith("actuator"):
        return _ACTUATOR_SENSOR
    if sensor_type == "beam_strain":
        return _STRAIN_SENSOR
    if sensor_type in ("beam_curvature", "beam_section_forces"):
        return _SECTION_SENSOR
    if sensor_type == "beam_centerline":
        return _CENTERLINE_SENSOR
    if sensor_type == "contact_reaction":
        return _CONTACT_SENSOR
    if sensor_type == "coupler_reaction":
        return _COUPLER_SENSOR
    if sensor_type in ("strain_energy", "elastic_coordinates"):
        return _BODY_SENSOR
    return _MARKER_SENSOR


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
    schema = _sensor_schema(sensor_type)
    _check_fields(table, _Schema({**schema.fields, **_INSTRUMENT}, schema.required), item)


def _check_controller(name: str, table: dict[str, Any], item: str) -> None:
    _check_fields(table, _CONTROLLER, item)
    for k, entry in enumerate(table["inputs"]):
        _check_fields(entry, _CONTROLLER_INPUT, item, f"inputs[{k}].")
        if "setpoint" in entry:
            _check_time_function(entry["setpoint"], item, f"inputs[{k}].setpoint.")


_NAMED_SECTIONS: dict[str, tuple[str, Callable[[str, dict[str, Any], str], None]]] = {
    # section: (what its items are, the check of one); the item of NAME is 'what "NAME"'
    "bodies": ("body", _check_body),
    "joints": ("joint", _fields_of(_JOINT)),
    "drivers": ("driver", _check_driver),
    "couplers": ("coupler", _fields_of(_COUPLER)),
    "actuators": ("actuator", _check_actuator),
    "forces": ("force", _check_force),
    "springs": ("spring", _fields_of(_SPRING)),
    "contacts": ("contact", _fields_of(_CONTACT)),
    "sensors": ("sensor", _check_sensor),
    "frictions": ("friction", _fields_of(_FRICTION)),
    "backlashes": ("backlash", _fields_of(_BACKLASH)),
    "controllers": ("controller", _check_controller),
    "user_laws": ("user law", _fields_of(_USER_LAW)),
}


def check_document(doc: dict[str, Any]) -> None:
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
    ground = doc.get("ground", {})
    _check_fields(ground, _GROUND, "ground")
    _check_markers(ground, GROUND)
    for key, (what, check_one) in _NAMED_SECTIONS.items():
        _check_named_tables(doc.get(key, {}), what, _item_of(what), check_one)


def _item_of(what: str) -> Callable[[str], str]:
    """The item of a name in a section of `what`s: 'what "NAME"'."""
    return lambda name: f'{what} "{name}"'
