"""Joint friction: the friction of one joint coordinate, its laws and their checks.

On a coordinate x (rad or m) sliding at the rate v = x' the friction force is

    f(v) = -F(v) sgn(v) - c_v v,    F(v) = F_c + (F_s - F_c) exp(-(v / v_s)^2)

(N m or N): Coulomb's kinetic level F_c, the static level F_s >= F_c to which the
Stribeck curve rises at rest (v_s its velocity; without one F = F_c), and viscous
friction c_v. Two laws give sgn(v) a meaning at rest:

* "regularized": sgn(v) = tanh(v / v_eps), smooth, with the regularisation
  velocity v_eps (the joint creeps at about v_eps under a load below F_s);
* "stick-slip": the joint slides with the sign it had since it last stopped, and a
  stop is a state event: at v = 0 it sticks when the force that holds it still
  is at most F_s, else it slides on; stuck, it breaks away as a state event where
  the holding force reaches F_s (flexmbs.dynamics.stick_slip).

The friction's work is part of W_nc, so the energy balance of a run closes with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ModelError
from .field_checks import _check_joint_coordinate, _check_not_prescribed, _scalar
from .timefunctions import MAX_MAGNITUDE

__all__ = ["Friction", "FRICTION_LAWS", "friction_item", "DEFAULT_REGULARIZATION"]

FRICTION_LAWS = {"regularized": 0, "stick-slip": 1}
"""The friction laws and their codes in the kernels (flexmbs.dynamics.friction)."""

DEFAULT_REGULARIZATION = 1e-3
"""v_eps (rad/s or m/s) of a regularized law that names none."""


@dataclass
class Friction:
    """The friction of coordinate `coordinate` of `joint` (module text): `coulomb`
    F_c and `static` F_s (N m or N), `stribeck_velocity` v_s (rad/s or m/s, inf:
    no Stribeck curve), `viscous` c_v (N m s/rad or N s/m), `law` ("regularized"
    or "stick-slip") and, for a regularized law, `regularization` v_eps."""

    name: str
    joint: str
    coordinate: int
    coulomb: float
    static: float
    stribeck_velocity: float
    viscous: float
    law: str
    regularization: float


def _bounded(value: float, item: str, fld: str) -> float:
    """`value`, or ModelError past MAX_MAGNITUDE."""
    if value > MAX_MAGNITUDE:
        raise ModelError(
            f"expected a number of magnitude at most {MAX_MAGNITUDE:g} (N m or N: the "
            f"friction is summed with the other forces, which it would drown), got {value:g}",
            item,
            fld,
        )
    return value


def friction_item(
    model: Any,
    name: str,
    joint: str,
    coordinate: int = 0,
    coulomb: float = 0.0,
    static: float | None = None,
    stribeck_velocity: float = np.inf,
    viscous: float = 0.0,
    law: str = "regularized",
    regularization: float = DEFAULT_REGULARIZATION,
) -> Friction:
    """A checked Friction for `model` (Model.add_friction's arguments)."""
    item = f'friction "{name}"'
    _check_joint_coordinate(model.joints, joint, coordinate, item)
    for other in model.frictions.values():
        if (other.joint, other.coordinate) == (joint, coordinate):
            raise ModelError(
                f'coordinate {coordinate} of joint "{joint}" already has friction '
                f'"{other.name}" (a coordinate takes one)',
                item,
                "coordinate",
            )
    _check_not_prescribed(model.drivers.values(), joint, coordinate, item, "friction")
    if law not in FRICTION_LAWS:
        raise ModelError(
            f"expected a friction law, one of {', '.join(FRICTION_LAWS)}; got {law!r}",
            item,
            "law",
        )
    fc = _bounded(_scalar(coulomb, item, "coulomb", nonnegative=True), item, "coulomb")
    fs = fc if static is None else _scalar(static, item, "static", nonnegative=True)
    fs = _bounded(fs, item, "static")
    if fs < fc:
        raise ModelError(
            f"expected a static level at least the Coulomb level {fc:g}, got {fs:g}",
            item,
            "static",
        )
    if (
        isinstance(stribeck_velocity, bool)
        or not isinstance(stribeck_velocity, (int, float, np.floating, np.integer))
        or not stribeck_velocity > 0
    ):
        raise ModelError(
            f"expected a positive number (or inf), got {stribeck_velocity!r}",
            item,
            "stribeck_velocity",
        )
    cv = _bounded(_scalar(viscous, item, "viscous", nonnegative=True), item, "viscous")
    eps = _scalar(regularization, item, "regularization", positive=True)
    return Friction(name, joint, int(coordinate), fc, fs, float(stribeck_velocity), cv, law, eps)
