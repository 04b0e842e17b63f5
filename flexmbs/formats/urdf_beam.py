"""A URDF link made a beam (`flexmbs import-urdf --flexible LINK[:AXIS[:ELEMENTS]]`).

* The axis: x, y, z (or -x, ...) of the link frame, or any direction as three numbers
  `X,Y,Z`; without one, the direction from the link frame to the frame of the joint the
  link carries (or, carrying none, to its farthest marker). The beam runs from the link
  frame along the axis to the point nearest that joint's frame, then on to the frame
  when it lies off the axis (the UR5's upper arm: 0.425 m along z, then 0.12 m across).
* The elements: ELEMENTS along the axis, else one per ELEMENT_LENGTH of it (at least
  MIN_ELEMENTS, at most MAX_ELEMENTS), and one on the segment across.
* The reference (the section's y): normal to every segment, the normal of their plane
  when there are two, else the link frame's axis most normal to the beam, made normal.
* The section: the link's collision cylinder or box (the largest, when several), its
  size across the beam the tube's outer size (a cylinder along the beam a round tube of
  its diameter; anything else a rectangular tube of the shape's extent along the
  reference and across both), the wall set so that the beam has the link's mass
  (A = m / (rho L)); a solid section of that area when even the solid is too light.
  Without such a shape, a round tube of outer diameter ten times its wall of the
  link's mass (noted).
* The material (`material`): aluminium (the default), steel, titanium, or
  "E,DENSITY[,POISSON]" (Pa, kg/m^3).
* The dynamics: the beam reduced to its BEAM_MODES lowest modes with their modal
  derivatives (the motion of a robot's link excites its lowest modes; the nodal
  beam's kHz modes would set the step) and static correction modes at the nodes that
  carry markers (the joint at its last node: without them the UR5's forearm answers
  a spin with a uniform load 15.8 % away from the nodal beam's deflection, with them
  0.6 %), its modes damped by BEAM_MODAL_DAMPING (an undamped stiff link rings in its
  kHz modes for the whole run, and an error-controlled integrator follows every ring),
  started undeformed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..model.vocabulary import MAX_BEAM_ELEMENTS
from .urdf_reader import UrdfError, UrdfGeometry, UrdfLink

__all__ = [
    "FlexibleSpec",
    "flexible_specs",
    "beam_material",
    "beam_lines",
    "MATERIALS",
    "ELEMENT_LENGTH",
    "BEAM_MODES",
    "BEAM_MODAL_DAMPING",
]

MATERIALS = {
    "aluminium": (7.0e10, 2700.0, 0.33),
    "aluminum": (7.0e10, 2700.0, 0.33),
    "steel": (2.1e11, 7850.0, 0.30),
    "titanium": (1.14e11, 4430.0, 0.34),
}
"""name -> (Young's modulus Pa, density kg/m^3, Poisson's ratio)."""
AXES = {"x": 0, "y": 1, "z": 2}
ELEMENT_LENGTH = 0.08
"""m: one element per this length of the beam's axis when ELEMENTS is not given."""
MIN_ELEMENTS = 2
MAX_ELEMENTS = 8
TUBE_RATIO = 10.0
"""Outer diameter over wall of the tube of a link with no shape to take a size from."""
BEAM_MODES = 4
"""The lowest natural modes a beam is reduced to (with their modal derivatives)."""
BEAM_MODAL_DAMPING = "bands"
"""The damping ratios of the beam's modes: 1 % below 100 Hz, 10 % below 1 kHz, critical
above (the default of ADAMS and RecurDyn for flexible bodies): a link's ringing in its
kHz modes, struck by a joint stop, dies out instead of setting the step."""


@dataclass
class FlexibleSpec:
    link: str
    axis: NDArray[np.float64] | None
    elements: int | None
    text: str


def _axis(spec: str, word: str) -> NDArray[np.float64]:
    sign = -1.0 if word.startswith("-") else 1.0
    if word.lstrip("+-") in AXES:
        out = np.zeros(3)
        out[AXES[word.lstrip("+-")]] = sign
        return out
    try:
        values = np.array([float(x) for x in word.split(",")])
    except ValueError:
        values = np.zeros(0)
    if values.shape != (3,) or not np.all(np.isfinite(values)) or not np.linalg.norm(values) > 0:
        raise UrdfError(
            f"--flexible {spec!r}: AXIS must be x, y, z, -x, -y, -z or a non-zero "
            f"direction X,Y,Z, got {word!r}"
        )
    return values / np.linalg.norm(values)


def flexible_specs(specs: Sequence[str]) -> dict[str, FlexibleSpec]:
    """{link: spec} of the --flexible specs LINK[:AXIS[:ELEMENTS]]."""
    out: dict[str, FlexibleSpec] = {}
    for spec in specs:
        parts = spec.split(":")
        if not 1 <= len(parts) <= 3 or not parts[0]:
            raise UrdfError(f"--flexible {spec!r}: expected LINK[:AXIS[:ELEMENTS]]")
        axis = _axis(spec, parts[1]) if len(parts) > 1 and parts[1] else None
        elements = None
        if len(parts) == 3:
            if not parts[2].isdigit() or not 1 <= int(parts[2]) <= MAX_BEAM_ELEMENTS:
                raise UrdfError(
                    f"--flexible {spec!r}: ELEMENTS must be a whole number 1 .. {MAX_BEAM_ELEMENTS}"
                )
            elements = int(parts[2])
        if parts[0] in out:
            raise UrdfError(f"--flexible {spec!r}: the link {parts[0]!r} is named twice")
        out[parts[0]] = FlexibleSpec(parts[0], axis, elements, spec)
    return out


def beam_material(spec: str | None) -> tuple[str, tuple[float, float, float]]:
    """(its name, (E Pa, density kg/m^3, Poisson's ratio)) of a --material value."""
    if spec is None:
        return "aluminium", MATERIALS["aluminium"]
    if spec.lower() in MATERIALS:
        return spec.lower(), MATERIALS[spec.lower()]
    try:
        values = [float(x) for x in spec.split(",")]
    except ValueError:
        values = []
    if len(values) == 2:
        values.append(0.3)
    if (
        len(values) != 3
        or not all(math.isfinite(v) for v in values)
        or not (values[0] > 0 and values[1] > 0 and 0 <= values[2] < 0.5)
    ):
        raise UrdfError(
            f"--material {spec!r}: expected one of {', '.join(sorted(MATERIALS))} or "
            "E,DENSITY[,POISSON] (Pa, kg/m^3; E and DENSITY > 0, 0 <= POISSON < 0.5)"
        )
    return "E,DENSITY,POISSON " + spec, (values[0], values[1], values[2])


def _points(
    axis: NDArray[np.float64], end: NDArray[np.float64], link: str, notes: list[str]
) -> list[NDArray[np.float64]]:
    """The beam's polyline: from the link frame along the line of `axis` (either way)
    to the point nearest `end`, then to `end` when it lies off the line; straight to
    `end` when `end` lies across the axis (noted)."""
    size = float(np.linalg.norm(end))
    if not size > 0.0:
        raise UrdfError(
            f"--flexible {link}: its child joint is at the link frame; a beam needs a length"
        )
    along = (end @ axis) * axis
    if not np.linalg.norm(along) > 1e-9 * size:
        notes.append(
            f'link "{link}": its joint lies across the axis given; the beam runs straight to it'
        )
        return [np.zeros(3), end.copy()]
    points = [np.zeros(3), along]
    if np.linalg.norm(end - along) > 1e-9 * size:
        points.append(end.copy())
    return points


def _reference(points: list[NDArray[np.float64]]) -> NDArray[np.float64]:
    """A unit vector normal to every segment of the polyline."""
    segments = [b - a for a, b in zip(points, points[1:])]
    first = segments[0] / np.linalg.norm(segments[0])
    if len(segments) > 1:
        n = np.cross(segments[0], segments[1])
        if np.linalg.norm(n) > 1e-9 * np.linalg.norm(segments[0]) * np.linalg.norm(segments[1]):
            return n / np.linalg.norm(n)
    e = np.eye(3)[int(np.argmin(np.abs(first)))]
    r = e - (e @ first) * first
    return r / np.linalg.norm(r)


def _extent(shape: UrdfGeometry, direction: NDArray[np.float64]) -> float:
    """The shape's size along `direction` (a unit vector of the link frame), m."""
    d = shape.origin[:3, :3].T @ direction
    if shape.kind == "box":
        return float(np.abs(d) @ shape.size)
    radius, length = shape.size
    along = abs(d[2])
    return float(length * along + 2.0 * radius * math.sqrt(max(0.0, 1.0 - along * along)))


def _volume(shape: UrdfGeometry) -> float:
    if shape.kind == "box":
        return float(np.prod(shape.size))
    return float(math.pi * shape.size[0] ** 2 * shape.size[1])


def _wall(area: float, perimeter_half: float) -> float:
    """The wall t of a tube whose outer shape gives A = 2 t P_half - 4 t^2 (rectangle,
    P_half = w + h) ... solved for the smaller root."""
    disc = perimeter_half * perimeter_half - 4.0 * area
    return (perimeter_half - math.sqrt(max(disc, 0.0))) / 4.0


def _section(
    link: UrdfLink, mass: float, length: float, density: float, axis: NDArray, ref: NDArray
) -> tuple[list[str], str | None]:
    """(the section's lines, a note when it is not from the link's shape)."""
    area = mass / (density * length)
    shapes = [s for s in link.collisions if s.kind in ("box", "cylinder") and _volume(s) > 0]
    if not shapes:
        k = 1.0 / TUBE_RATIO
        outer = math.sqrt(area / (math.pi * (1.0 - (1.0 - 2.0 * k) ** 2) / 4.0))
        lines = [
            "# a round tube of the link's mass (the link has no collision box or cylinder)",
            'type = "round_tube"',
            f"outer_diameter = {outer!r}  # m",
            f"wall_thickness = {k * outer!r}  # m",
        ]
        return (
            lines,
            "its section a round tube of its mass and length (no collision box or cylinder)",
        )
    across = np.cross(axis, ref)
    long = [s for s in shapes if _extent(s, axis) >= max(_extent(s, ref), _extent(s, across))]
    if not long:
        k = 1.0 / TUBE_RATIO
        outer = math.sqrt(area / (math.pi * (1.0 - (1.0 - 2.0 * k) ** 2) / 4.0))
        lines = [
            "# a round tube of the link's mass (its collision shapes are not long along it)",
            'type = "round_tube"',
            f"outer_diameter = {outer!r}  # m",
            f"wall_thickness = {k * outer!r}  # m",
        ]
        return lines, (
            "its section a round tube of its mass and length (its collision shapes are "
            "not long along the beam)"
        )
    shape = max(long, key=_volume)
    if shape.kind == "cylinder" and abs((shape.origin[:3, :3].T @ axis)[2]) > 0.99:
        outer = 2.0 * float(shape.size[0])
        solid = math.pi * outer * outer / 4.0
        if area >= solid:
            diameter = math.sqrt(4.0 * area / math.pi)
            return [
                "# a solid round of the link's mass (its collision cylinder is lighter)",
                'type = "circle"',
                f"diameter = {diameter!r}  # m",
            ], None
        wall = (outer - math.sqrt(outer * outer - 4.0 * area / math.pi)) / 2.0
        return [
            f"# the collision cylinder's diameter, the wall for the link's mass ({mass:.4g} kg)",
            'type = "round_tube"',
            f"outer_diameter = {outer!r}  # m",
            f"wall_thickness = {wall!r}  # m",
        ], None
    width, height = _extent(shape, ref), _extent(shape, across)
    if area >= width * height:
        side = math.sqrt(area * width / height), math.sqrt(area * height / width)
        return [
            f"# a solid rectangle of the link's mass (its collision {shape.kind} is lighter)",
            'type = "rectangle"',
            f"width = {side[0]!r}  # m, along the reference",
            f"height = {side[1]!r}  # m",
        ], None
    wall = _wall(area, width + height)
    return [
        f"# the collision {shape.kind}'s size across the beam, the wall for the link's mass",
        'type = "rectangular_tube"',
        f"width = {width!r}  # m, along the reference",
        f"height = {height!r}  # m",
        f"wall_thickness = {wall!r}  # m",
    ], None


def beam_lines(
    key: str,
    link: UrdfLink,
    mass: float,
    flex: FlexibleSpec,
    end: NDArray[np.float64],
    material: str | None,
    notes: list[str],
) -> list[str]:
    """The `[bodies.KEY]` table of the beam (the module docstring) of a link of `mass`
    (kg) whose joint (or farthest marker) is at `end` (m, link frame)."""
    norm = float(np.linalg.norm(end))
    axis: NDArray[np.float64] = np.array([1.0, 0.0, 0.0]) if not norm > 0.0 else end / norm
    if flex.axis is not None:
        axis = flex.axis
    points = _points(axis, end, flex.link, notes)
    length = sum(float(np.linalg.norm(b - a)) for a, b in zip(points, points[1:]))
    along = float(np.linalg.norm(points[1] - points[0]))
    count = flex.elements or min(MAX_ELEMENTS, max(MIN_ELEMENTS, round(along / ELEMENT_LENGTH)))
    elements = [count] + [1] * (len(points) - 2)
    reference = _reference(points)
    name, (young, density, poisson) = beam_material(material)
    if not mass > 0.0:
        raise UrdfError(
            f"--flexible {flex.link}: the link carries no mass, so a beam of it would "
            "weigh nothing; give it an <inertial>, or import with --density"
        )
    section, note = _section(link, mass, length, density, axis, reference)
    if note:
        notes.append(f'link "{flex.link}": {note}')
    lines = [
        "",
        f"[bodies.{key}]  # a beam instead of the rigid link ({mass!r} kg)",
        'type = "beam"',
        f"points = [{', '.join('[' + ', '.join(repr(float(x)) for x in p) + ']' for p in points)}]"
        "  # m, link frame",
        f"elements = {elements if len(elements) > 1 else count}",
        f"reference = [{', '.join(repr(float(x)) for x in reference)}]  # the section's y",
        f"modes = {BEAM_MODES}  # its lowest modes, with their modal derivatives",
        "correction_modes = true  # static shapes of the loads at the joint's node",
        f"modal_damping = {BEAM_MODAL_DAMPING!r}  # 1 % below 100 Hz, 10 % below 1 kHz, "
        "critical above",
        "",
        f"[bodies.{key}.section]",
        *section,
        "",
        f"[bodies.{key}.material]  # {name}",
        f"youngs_modulus = {young!r}  # Pa",
        f"poisson_ratio = {poisson!r}",
        f"density = {density!r}  # kg/m^3",
    ]
    return lines
