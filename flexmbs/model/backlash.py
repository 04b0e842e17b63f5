"""Backlash: the play of a gear or a joint as a dead-band spring and damper on one
joint coordinate.

On a coordinate x (rad or m), with the play b (`gap`, the whole free travel) about
the centre x_c (`center`), the element is free while |x - x_c| <= b / 2 and past an
edge by d = |x - x_c| - b / 2 pushes back with

    Q = -sgn(x - x_c) (k d) - c x'        (while past an edge)

(N m or N): the teeth's (or the stops') contact stiffness k and damping c, as a
joint's compliant stops are (flexmbs.dynamics.stops, Kelvin and Voigt's contact),
the edges of the play being its two stops. Its spring holds k d^2 / 2 (in V_s) and
its damper takes c x'^2 (in W_nc), so the energy balance closes through the play;
`bdf` and `galpha` locate the times the coordinate reaches and leaves an edge as
state events.

A gear's backlash is the play between the driving and the driven side: the driven
body on a joint of its own relative to the driving one (its coordinate the gear's
lost motion, in the driven side's units), the backlash on that joint. Under a
static load F the coordinate rests F / k past an edge: the dead band of the
transmission is the play b, within which no load is carried.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .field_checks import _check_joint_coordinate, _check_not_prescribed, _scalar

__all__ = ["Backlash", "backlash_item"]


@dataclass
class Backlash:
    """The play `gap` b (rad or m) about `center` x_c of coordinate `coordinate`
    of `joint`, its edges a contact of `stiffness` k (N m/rad or N/m) and
    `damping` c (N m s/rad or N s/m) (module text)."""

    name: str
    joint: str
    coordinate: int
    gap: float
    stiffness: float
    damping: float
    center: float

    @property
    def edges(self) -> tuple[float, float]:
        """(x_c - b / 2, x_c + b / 2): where the contact begins on either side."""
        return self.center - 0.5 * self.gap, self.center + 0.5 * self.gap


def backlash_item(
    model: Any,
    name: str,
    joint: str,
    gap: float,
    stiffness: float,
    coordinate: int = 0,
    damping: float = 0.0,
    center: float = 0.0,
) -> Backlash:
    """A checked Backlash for `model` (Model.add_backlash's arguments)."""
    item = f'backlash "{name}"'
    _check_joint_coordinate(model.joints, joint, coordinate, item)
    _check_not_prescribed(model.drivers.values(), joint, coordinate, item, "a backlash")
    b = _scalar(gap, item, "gap", positive=True)
    k = _scalar(stiffness, item, "stiffness", positive=True)
    c = _scalar(damping, item, "damping", nonnegative=True)
    xc = _scalar(center, item, "center")
    return Backlash(name, joint, int(coordinate), b, k, c, xc)
