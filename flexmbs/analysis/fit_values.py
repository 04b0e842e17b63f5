"""The values a fit identifies: their dotted paths in the model file (as for --set),
bounds and starting values, and the model document they are read from.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ModelError
from .fit_toml import _child, _keys, _toml_key

# fields whose values cannot be negative (a default lower bound of 0)
NON_NEGATIVE_FIELDS = (
    "stiffness",
    "damping",
    "alpha",
    "beta",
    "mass",
    "density",
    "youngs_modulus",
    "shear_modulus",
    "rotor_inertia",
    "motor_damping",
    "kp",
    "kd",
    "max_torque",
    "gear_ratio",
    "coulomb",
    "static",
    "viscous",
    "stribeck_velocity",
    "regularization",
    "sample_time",
    "delay",
    "dead_time",
    "lag",
    "resolution",
    "controller_resolution",
    "gap",
    "torque_constant",
    "resistance",
)


NON_NEGATIVE_TABLES = ("node_masses",)


@dataclass(frozen=True)
class FitParameter:
    """A model value to identify: its dotted path (as for --set) and bounds."""

    path: str
    lower: float = -math.inf
    upper: float = math.inf


def parse_parameter(text: str) -> FitParameter:
    """'PATH' or 'PATH=lo:hi' (either bound may be left out: 'PATH=0:') -> FitParameter."""
    path, equals, bounds = str(text).partition("=")
    path = path.strip()
    item = f'--param "{text}"'
    if not path or not all(k.strip() for k in path.split(".")):
        raise ModelError(
            "expected PATH or PATH=lo:hi with a dotted path, e.g. joints.joint2.damping=0:1", item
        )
    if not equals:
        return FitParameter(path)
    lo, colon, hi = bounds.partition(":")
    if not colon:
        raise ModelError(f'expected bounds lo:hi after "=", got "{bounds}"', item)
    try:
        lower = float(lo) if lo.strip() else -math.inf
        upper = float(hi) if hi.strip() else math.inf
    except ValueError:
        raise ModelError(
            f'expected numbers (or nothing) on each side of ":", got "{bounds}"', item
        ) from None
    if not lower < upper:
        raise ModelError(f"expected lo < hi, got {lower:g}:{upper:g}", item)
    return FitParameter(path, lower, upper)


QUANTIZING_FIELDS = ("resolution", "controller_resolution")


def quantizing_sensors(doc: Mapping[str, Any]) -> list[str]:
    """The sensors of the model document `doc` that quantize what they read: a nonzero
    `resolution` (the record's and, unless given apart, the controller's) or
    `controller_resolution` (the controller's alone)."""
    sensors = doc.get("sensors", {})
    return [
        name
        for name, table in sensors.items()
        if isinstance(table, Mapping)
        and any(float(table.get(key, 0.0) or 0.0) != 0.0 for key in QUANTIZING_FIELDS)
    ]


def unquantized_overrides(doc: Mapping[str, Any]) -> list[str]:
    """The --set assignments that take the quantization out of the model document
    `doc`'s sensors (every `resolution` and `controller_resolution` given: 0)."""
    sensors = doc.get("sensors", {})
    return [
        f"sensors.{_toml_key(name)}.{key}=0.0"
        for name in quantizing_sensors(doc)
        for key in QUANTIZING_FIELDS
        if key in sensors[name]
    ]


def _start_value(
    doc: Mapping[str, Any], parameter: FitParameter, source: str | os.PathLike[str]
) -> float:
    item = f'--param "{parameter.path}"'
    table: Any = doc
    keys = _keys(parameter.path)
    for depth, key in enumerate(keys):
        try:
            _child(table, key)
        except KeyError:
            where = ".".join(keys[:depth]) or "the top level"
            has = (
                ", ".join(table)
                if isinstance(table, dict)
                else f"indices 0 to {len(table) - 1}"
                if isinstance(table, list)
                else "(not a table)"
            )
            raise ModelError(
                f'no value "{key}" in {where} of the model file (after --set); '
                f"it has: {has}; give a starting value with --set "
                f"{parameter.path}=VALUE",
                item,
                source=source,
            ) from None
        table = _child(table, key)
    value: object = table
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kind = "a list (one value per coordinate)" if isinstance(value, list) else repr(value)
        raise ModelError(f"expected a number to fit, got {kind}", item, source=source)
    value = float(value)
    if not parameter.lower <= value <= parameter.upper:
        raise ModelError(
            f"the starting value {value:g} is outside the bounds "
            f"{parameter.lower:g}:{parameter.upper:g}",
            item,
            source=source,
        )
    return value


def _default_bounds(parameter: FitParameter) -> FitParameter:
    keys = _keys(parameter.path)
    non_negative = keys[-1] in NON_NEGATIVE_FIELDS or (
        len(keys) > 1 and keys[-2] in NON_NEGATIVE_TABLES
    )
    if non_negative and parameter.lower == -math.inf:
        return FitParameter(parameter.path, 0.0, parameter.upper)
    return parameter


def _parameter_text(p: FitParameter) -> str:
    """The --param form of a FitParameter: PATH or PATH=lo:hi."""
    if p.lower == -math.inf and p.upper == math.inf:
        return p.path
    lo = "" if p.lower == -math.inf else repr(p.lower)
    hi = "" if p.upper == math.inf else repr(p.upper)
    return f"{p.path}={lo}:{hi}"
