"""What a URDF allows and a flexmbs model does not, made to fit, each change a note.

* Names: URDF keeps links and joints in two namespaces and allows any characters;
  flexmbs names bodies and joints in one namespace (they name the coordinates) of
  letters, digits, '_' and '-' (`vocabulary.NAME_PATTERN`). `legal_names` maps every
  link and joint to a legal name: each run of other characters (with the underscores
  around it) becomes one '_' (`joint_8.0` -> `joint_8_0`, `iris__/imu_link` ->
  `iris_imu_link`); a moving joint named like a link gets `_joint` after its name; a
  name taken twice after that gets `_2`, `_3`, ...
* Inertias: the inertia about the centre of mass of each body the import makes (its
  links merged) must be positive definite and its principal moments I1 <= I2 <= I3
  must obey the triangle inequality I1 + I2 >= I3, as for any mass distribution.
  `repaired_inertia` keeps the principal axes and changes only the moments that break
  this (as MuJoCo's `balanceinertia` does): moments at or below zero become the floor
  2/5 m r^2 with r = INERTIA_FLOOR_RADIUS (a ball of that radius: the point mass the
  data describes, held as a small ball); when I1 + I2 < I3, I1 and I2 are raised by the
  same amount to I1 + I2 = I3. A negative moment beyond round-off, or inertia without
  mass, is refused: a repair would invent the data.
* The start: `start_within` moves a coordinate whose zero lies outside its limits
  inside them, START_MARGIN past the nearer limit (never at it: a stop touched at the
  start is an impact at t = 0).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

from ..model.vocabulary import GROUND, ORIGIN

__all__ = [
    "legal_names",
    "legal_name",
    "repaired_inertia",
    "start_within",
    "INERTIA_FLOOR_RADIUS",
    "START_MARGIN",
]

INERTIA_FLOOR_RADIUS = 1e-3
"""m: a principal moment at or below zero becomes that of a ball of this radius."""
NEGATIVE_ROUNDOFF = 1e-9
"""A principal moment below -NEGATIVE_ROUNDOFF times the largest is an error in the data."""
START_MARGIN = {"rad": math.radians(1.0), "m": 1e-3}
"""How far inside the nearer limit a start outside the limits is put (at most a tenth of
the range)."""
RESERVED = {GROUND, ORIGIN}
_ILLEGAL = re.compile(r"_*[^A-Za-z0-9_\-]+_*")


def legal_name(name: str) -> str:
    """`name` with each run of characters no flexmbs name has (with the underscores
    around it) replaced by one '_' (a leading '-' too: a name starts with a letter, a
    digit or '_')."""
    out = _ILLEGAL.sub("_", name)
    if out.startswith("-"):
        out = "_" + out[1:]
    return out or "_"


def _unique(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    k = 2
    while f"{name}_{k}" in taken:
        k += 1
    return f"{name}_{k}"


def legal_names(
    links: Iterable[str], joints: Iterable[tuple[str, bool]]
) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """({link: its name in the model}, {joint: its name}, notes) for the links and the
    joints ((name, moves)) of a URDF (the module docstring)."""
    notes: list[str] = []
    link_names: dict[str, str] = {}
    taken: set[str] = set()
    for name in links:
        new = legal_name(name)
        if new in RESERVED:
            new = new + "_link"
        new = _unique(new, taken)
        taken.add(new)
        link_names[name] = new
        if new != name:
            notes.append(f'link "{name}" is named "{new}" (a flexmbs name)')
    joint_names: dict[str, str] = {}
    joints_taken: set[str] = set()
    for name, moves in joints:
        new = legal_name(name)
        if new in RESERVED:
            new = new + "_joint"
        why = "a flexmbs name"
        if moves and new in taken:
            new = new + "_joint"
            why = "a link has its name, and bodies and joints name the coordinates"
        new = _unique(new, joints_taken | taken)
        joints_taken.add(new)
        joint_names[name] = new
        if new != name and moves:
            notes.append(f'joint "{name}" is named "{new}" ({why})')
    return link_names, joint_names, notes


def _principal(inertia: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    w, v = np.linalg.eigh(0.5 * (inertia + inertia.T))
    return w, v


def repaired_inertia(
    mass: float, inertia: NDArray[np.float64]
) -> tuple[NDArray[np.float64], str | None, str | None]:
    """(inertia, note, refusal) for a body of `mass` (kg) with `inertia` (kg m^2, about
    its centre of mass): the inertia unchanged and no note when it is one a mass
    distribution has; else the repaired inertia and a note saying what changed; or a
    refusal (why) where the repair would invent the data (the module docstring).
    The checks are those of the model reader (flexmbs.model.field_checks), with margin."""
    w, v = _principal(inertia)
    scale = float(np.abs(w).max())
    if mass <= 0.0:
        return inertia, None, "inertia without mass"
    floor = 0.4 * mass * INERTIA_FLOOR_RADIUS**2
    if w.min() < -NEGATIVE_ROUNDOFF * max(scale, floor):
        return (
            inertia,
            None,
            f"principal moments {_moments(w)} kg m^2 about the centre of mass, one "
            "negative: no mass distribution has them, and no repair would know the "
            "right ones",
        )
    new = w.copy()
    changes = []
    low = new <= max(1e-11 * scale, 1e-6 * floor)
    if np.any(low):
        new[low] = np.maximum(floor, 1e-10 * scale)
        changes.append(
            f"moments at zero held as a ball of {INERTIA_FLOOR_RADIUS * 1e3:g} mm "
            "radius (2/5 m r^2)"
        )
    order = np.argsort(new)
    a, b, c = new[order]
    if a + b < c * (1.0 - 1e-8):
        lift = 0.5 * (c - a - b) + 1e-8 * c
        new[order[0]] += lift
        new[order[1]] += lift
        changes.append("the two smaller raised alike to meet the triangle inequality I1 + I2 >= I3")
    if not changes:
        return inertia, None, None
    repaired = (v * new) @ v.T
    note = (
        f"principal moments {_moments(w)} kg m^2 about the centre of mass become "
        f"{_moments(new)} ({'; '.join(changes)})"
    )
    return 0.5 * (repaired + repaired.T), note, None


def _moments(w: NDArray[np.float64]) -> str:
    return "[" + ", ".join(f"{x:.4g}" for x in w) + "]"


def start_within(lower: float, upper: float, unit: str) -> float | None:
    """A start inside [lower, upper] when 0 lies outside (None when 0 is inside):
    START_MARGIN past the nearer limit, at most a tenth of the range."""
    if lower < 0.0 < upper or (lower == 0.0 == upper):
        return None
    if lower == 0.0 or upper == 0.0:
        margin = min(START_MARGIN[unit], 0.1 * (upper - lower))
        return margin if lower == 0.0 else -margin
    margin = min(START_MARGIN[unit], 0.1 * (upper - lower))
    return lower + margin if lower > 0.0 else upper - margin
