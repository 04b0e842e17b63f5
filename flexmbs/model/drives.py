"""The checks of what drives and holds the joints: an actuator's command and its DC
motor's parameters, a joint's limits and their stops. The builder (flexmbs.model.
description) calls them as items are added; each raises a ModelError naming the item
and the field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from .field_checks import _per_coordinate, _scalar
from .timefunctions import check_time_function

if TYPE_CHECKING:
    from .timefunctions import TimeFunction

__all__ = ["check_command", "dc_motor_parameters", "joint_limits", "DC_MOTOR_DEFAULTS"]

DC_MOTOR_DEFAULTS: dict[str, float] = {
    "amplifier_gain": 1.0,
    "max_voltage": np.inf,
    "resistance": 0.0,
    "inductance": 0.0,
    "torque_constant": 0.0,
    "back_emf_constant": 0.0,
    "max_current": np.inf,
    "efficiency": 1.0,
}
"""The DC motor's fields and the values that mean "not given"."""

_COMMANDS = {"pd": "setpoint", "torque": "torque", "dc_motor": "voltage"}


def check_command(
    type: str, functions: Mapping[str, TimeFunction | None], kp: float, kd: float, item: str
) -> None:
    """The actuator of `type` has its command's time function (functions: setpoint,
    torque, voltage) and no other's; kp and kd only for "pd"."""
    own = _COMMANDS[type]
    command = functions[own]
    if command is None:
        raise ModelError(f'a "{type}" actuator needs a {own} (a time function)', item, own)
    for name, fn in functions.items():
        if name != own and fn is not None:
            kind = next(k for k, v in _COMMANDS.items() if v == name)
            raise ModelError(
                f'a "{type}" actuator takes no {name} function (that is type "{kind}")',
                item,
                name,
            )
    if type != "pd" and (kp or kd):
        raise ModelError(
            f'a "{type}" actuator takes no kp or kd (a PD law is type "pd")',
            item,
            "kp" if kp else "kd",
        )
    check_time_function(command, item, own)


def _limit(value: object, item: str, fld: str) -> float:
    """A positive number or inf."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ModelError(f"expected a positive number (or inf), got {value!r}", item, fld)
    if not value > 0:
        raise ModelError(f"expected a positive number (or inf), got {value!r}", item, fld)
    return float(value)


def dc_motor_parameters(type: str, fields: Mapping[str, Any], item: str) -> dict[str, float]:
    """The checked DC-motor fields of an actuator ({name: value}, DC_MOTOR_DEFAULTS'
    names): for a "dc_motor" a positive resistance and torque constant, the back-EMF
    constant defaulting to the torque constant (equal in SI units for an ideal
    motor), an efficiency in (0, 1], limits positive or inf; for any other type none
    of them given."""
    given = {k: v for k, v in fields.items() if v is not None}
    if type != "dc_motor":
        for name, value in given.items():
            if value != DC_MOTOR_DEFAULTS[name]:
                raise ModelError(f'only a "dc_motor" actuator takes {name}', item, name)
        return dict(DC_MOTOR_DEFAULTS)
    out = dict(DC_MOTOR_DEFAULTS)
    for name in ("resistance", "torque_constant"):
        if name not in given:
            raise ModelError(f'a "dc_motor" actuator needs its {name}', item, name)
        out[name] = _scalar(given[name], item, name, positive=True)
    out["back_emf_constant"] = _scalar(
        given.get("back_emf_constant", out["torque_constant"]),
        item,
        "back_emf_constant",
        positive=True,
    )
    out["inductance"] = _scalar(given.get("inductance", 0.0), item, "inductance", nonnegative=True)
    out["amplifier_gain"] = _scalar(
        given.get("amplifier_gain", 1.0), item, "amplifier_gain", positive=True
    )
    efficiency = _scalar(given.get("efficiency", 1.0), item, "efficiency", positive=True)
    if efficiency > 1.0:
        raise ModelError(f"expected a number in (0, 1], got {efficiency!r}", item, "efficiency")
    out["efficiency"] = efficiency
    for name in ("max_voltage", "max_current"):
        out[name] = _limit(given.get(name, np.inf), item, name)
    return out


def joint_limits(
    limits: object,
    stiffness: object,
    damping: object,
    ndof: int,
    initial: NDArray[np.float64],
    cut: bool,
    item: str,
) -> tuple[NDArray[np.float64] | None, NDArray[np.float64] | None, NDArray[np.float64] | None]:
    """(limits (ndof, 2), stiffness, damping (ndof,)) of a joint's stops, or three
    Nones without limits. `limits`: [lower, upper] (a joint of one coordinate) or
    one such pair per coordinate, -inf / inf where a side has none; a stiffness > 0
    where a limit is finite; the initial coordinates within them."""
    if limits is None:
        for fld, value in (("limit_stiffness", stiffness), ("limit_damping", damping)):
            if value is not None:
                raise ModelError("a stop's stiffness and damping need limits", item, fld)
        return None, None, None
    if cut:
        raise ModelError(
            "a cut joint has no coordinates of its own to limit (limit a joint of the tree)",
            item,
            "limits",
        )
    try:
        pairs = np.array(limits, dtype=float)
    except (TypeError, ValueError):
        pairs = np.zeros(0)
    if ndof == 1 and pairs.shape == (2,):
        pairs = pairs[None, :]
    if ndof == 0 or pairs.shape != (ndof, 2) or np.any(np.isnan(pairs)):
        shape = "[lower, upper]" if ndof == 1 else f"{ndof} pairs [lower, upper]"
        raise ModelError(
            f"expected {shape} (m or rad; -inf, inf: no limit on that side), got {limits!r}",
            item,
            "limits",
        )
    if np.any(pairs[:, 0] >= pairs[:, 1]):
        raise ModelError(f"expected lower < upper, got {limits!r}", item, "limits")
    k = (
        np.zeros(ndof)
        if stiffness is None
        else _per_coordinate(stiffness, ndof, item, "limit_stiffness")
    )
    c = np.zeros(ndof) if damping is None else _per_coordinate(damping, ndof, item, "limit_damping")
    limited = np.any(np.isfinite(pairs), axis=1)
    if np.any(limited & ~(k > 0)):
        raise ModelError(
            "a limit needs its stop's stiffness (N m/rad or N/m, > 0): the contact "
            "stiffness of the stop",
            item,
            "limit_stiffness",
        )
    if np.any(c < 0):
        raise ModelError("expected values >= 0", item, "limit_damping")
    outside = (initial < pairs[:, 0]) | (initial > pairs[:, 1])
    if np.any(outside):
        c0 = int(np.flatnonzero(outside)[0])
        raise ModelError(
            f"the initial coordinate {initial[c0]:g} lies outside its limits "
            f"[{pairs[c0, 0]:g}, {pairs[c0, 1]:g}]",
            item,
            "initial",
        )
    return pairs, k, c
