"""The checks of the values a model is described with: each turns a value into what the
description keeps (a float, a unit vector, a rotation matrix, ...) or raises
ModelError naming the item and the field, and says what was expected."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from .vocabulary import (
    AXIS_NORM_MIN,
    BEAM_BYTES_PER_ELEMENT,
    BEAM_INITIAL_STATES,
    INDEPENDENT_AXES_TOL,
    MAX_BEAM_ELEMENTS,
    MAX_SUBDIVISIONS,
    ORTHONORMAL_TOL,
    RTOL_RANGE,
    SHAPE_MEMORY_LIMIT,
)


class _HasCoordinates(Protocol):
    """What a coordinate check reads of a joint (flexmbs.model.items.Joint)."""

    @property
    def ndof(self) -> int: ...


_EX, _EY, _EZ = np.eye(3)


def _vector(value: object, n: int, item: str, fld: str, what: str = "a") -> NDArray[np.float64]:
    try:
        v = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(
            f"expected {what} {n}-vector of numbers, got {value!r}", item, fld
        ) from None
    if v.shape != (n,):
        raise ModelError(f"expected {what} {n}-vector of numbers, got {value!r}", item, fld)
    if not np.all(np.isfinite(v)):
        raise ModelError(f"expected finite numbers, got {value!r}", item, fld)
    return v


def _axis(value: object, item: str, fld: str) -> NDArray[np.float64]:
    """The unit vector along `value` (scaled by its largest component first, so that
    components near the float64 limit do not overflow the norm)."""
    v = _vector(value, 3, item, fld, "an axis as a")
    scale = np.abs(v).max()
    n = np.linalg.norm(v / scale) if scale > 0.0 else 0.0
    if not n * scale > AXIS_NORM_MIN:
        raise ModelError(f"expected a non-zero axis, got {value!r}", item, fld)
    return v / scale / n


def _axes(
    value: Iterable[object], item: str, fld: str, count: int | None = None
) -> NDArray[np.float64]:
    try:
        rows = list(value)
    except TypeError:
        raise ModelError(f"expected a list of 3-vectors, got {value!r}", item, fld) from None
    if count is not None and len(rows) != count:
        raise ModelError(f"expected {count} axes, got {len(rows)}", item, fld)
    return np.array([_axis(r, item, f"{fld}[{k}]") for k, r in enumerate(rows)]).reshape(-1, 3)


def _node_index(node: object, n: int) -> int | None:
    """A node index 0..n-1 from an int or a string of digits (TOML keys); negative
    indices count from the last node (-1). None if it is not one."""
    text = str(node)
    if isinstance(node, bool) or not text.lstrip("-").isdigit():
        return None
    k = int(text)
    k = k + n if k < 0 else k
    return k if 0 <= k < n else None


def _scalar(
    value: object, item: str, fld: str, positive: bool = False, nonnegative: bool = False
) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ModelError(f"expected a number, got {value!r}", item, fld)
    v = float(value)
    if not np.isfinite(v):
        raise ModelError(f"expected a finite number, got {value!r}", item, fld)
    if positive and not v > 0:
        raise ModelError(f"expected a positive number, got {value!r}", item, fld)
    if nonnegative and v < 0:
        raise ModelError(f"expected a number >= 0, got {value!r}", item, fld)
    return v


def _rotation(value: object, item: str, fld: str) -> NDArray[np.float64]:
    try:
        c = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"expected a 3x3 rotation matrix, got {value!r}", item, fld) from None
    if c.shape != (3, 3) or not np.all(np.isfinite(c)):
        raise ModelError(f"expected a 3x3 rotation matrix, got {value!r}", item, fld)
    if np.abs(c.T @ c - np.eye(3)).max() > ORTHONORMAL_TOL or np.linalg.det(c) < 0:
        raise ModelError("expected a proper orthonormal matrix (C^T C = I, det C = +1)", item, fld)
    return c


def _inertia_matrix(value: object, item: str, fld: str) -> NDArray[np.float64]:
    """Accepts [Ixx, Iyy, Izz], [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] or a 3x3 matrix."""
    try:
        a = np.array(value, dtype=float)
    except (TypeError, ValueError):
        a = None
    if a is None or not np.all(np.isfinite(a)):
        raise ModelError(
            "expected 3 (diagonal), 6 (Ixx Iyy Izz Ixy Ixz Iyz) or 3x3 "
            f"finite numbers, got {value!r}",
            item,
            fld,
        )
    if a.shape == (3,):
        return np.diag(a)
    if a.shape == (6,):
        ixx, iyy, izz, ixy, ixz, iyz = a
        return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if a.shape == (3, 3):
        if np.abs(a - a.T).max() > 1e-12 * max(1.0, np.abs(a).max()):
            raise ModelError("expected a symmetric inertia matrix", item, fld)
        return 0.5 * (a + a.T)
    raise ModelError(
        f"expected 3 (diagonal), 6 (Ixx Iyy Izz Ixy Ixz Iyz) or 3x3 numbers, got {value!r}",
        item,
        fld,
    )


def _per_coordinate(value: object, n: int, item: str, fld: str) -> NDArray[np.float64]:
    """A scalar (the same for every coordinate) or a list of n numbers."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return _vector(value, n, item, fld, "a")
    return np.full(n, _scalar(value, item, fld))


def _physical_memory() -> float:
    """Bytes of physical memory of this machine (inf where it cannot be read)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return float("inf")


def _check_beam_memory(elements: int, item: str) -> None:
    """ModelError (field "elements") when building a beam of that many elements would
    need more memory than the machine has: BEAM_BYTES_PER_ELEMENT an element."""
    need = BEAM_BYTES_PER_ELEMENT * float(elements)
    have = _physical_memory()
    if need > have:
        raise ModelError(
            f"{elements} elements need about {need / 2**30:.3g} GiB to build, more than "
            f"this machine's {have / 2**30:.3g} GiB: expected fewer elements (or "
            f"modal reduction of a coarser mesh)",
            item,
            "elements",
        )


def _check_beam_elements(elements: int, before: int, item: str) -> None:
    """ModelError (field "elements") when a beam of `elements` elements takes the
    model's beams (`before` elements in the others) past MAX_BEAM_ELEMENTS."""
    if elements + before > MAX_BEAM_ELEMENTS:
        others = f" and its other beams {before}" if before else ""
        raise ModelError(
            f"{elements} elements{others}: a model has at most {MAX_BEAM_ELEMENTS} beam "
            f"elements in all: expected fewer elements, or a coarser mesh reduced to its "
            f"modes (modes = N)",
            item,
            "elements",
        )


def _check_centerline(subdivisions: int, elements: int, coordinates: int, item: str) -> None:
    """ModelError (field "subdivisions") above MAX_SUBDIVISIONS points per element, or
    when the matrix from the beam's `coordinates` nodal coordinates to its centre-line
    points (3 rows a point) would pass SHAPE_MEMORY_LIMIT."""
    if subdivisions > MAX_SUBDIVISIONS:
        raise ModelError(
            f"expected at most {MAX_SUBDIVISIONS} points per element (the cubic shape "
            f"functions are drawn smooth by far fewer), got {subdivisions}",
            item,
            "subdivisions",
        )
    points = elements * subdivisions + 1
    need = 8.0 * 3 * points * coordinates
    if need > SHAPE_MEMORY_LIMIT:
        raise ModelError(
            f"{points} centre-line points of a beam of {coordinates} nodal coordinates "
            f"need a {need / 2**30:.3g} GiB matrix (at most {SHAPE_MEMORY_LIMIT / 2**30:g} "
            "GiB): expected fewer subdivisions",
            item,
            "subdivisions",
        )


def _relative_tolerance(value: object, item: str) -> float:
    """rtol, checked to lie in RTOL_RANGE (ModelError naming the field otherwise)."""
    rtol = _scalar(value, item, "rtol", positive=True)
    low, high = RTOL_RANGE
    if not low <= rtol <= high:
        raise ModelError(
            f"expected a relative tolerance between {low:.1e} (100 times "
            f"the float64 resolution) and {high:g}, got {rtol:g}",
            item,
            "rtol",
        )
    return rtol


def _check_independent(
    tr: NDArray[np.float64],
    ro: NDArray[np.float64],
    item: str,
    tr_field: str,
    ro_field: str,
) -> None:
    """Translation axes linearly independent; consecutive rotation axes not parallel
    (either would make M* singular in every configuration)."""
    if len(tr) > 1 and np.linalg.svd(tr, compute_uv=False).min() < INDEPENDENT_AXES_TOL:
        raise ModelError("expected linearly independent translation axes", item, tr_field)
    for k in range(len(ro) - 1):
        if np.linalg.norm(np.cross(ro[k], ro[k + 1])) < INDEPENDENT_AXES_TOL:
            raise ModelError(
                f"rotation axes {k} and {k + 1} are parallel: two consecutive "
                "rotations about the same axis are one degree of freedom",
                item,
                ro_field,
            )


def _joint_axes(
    jtype: str,
    item: str,
    axis: object = None,
    axes: Iterable[object] | None = None,
    translation_axes: Iterable[object] | None = None,
    rotation_axes: Iterable[object] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(translation_axes, rotation_axes) of a joint type, from its `axis`/`axes` fields."""

    def need_none(**kw: object) -> None:
        for k, v in kw.items():
            if v is not None:
                raise ModelError(f"a {jtype} joint takes no '{k}'", item, k)

    if jtype != "general":
        need_none(translation_axes=translation_axes, rotation_axes=rotation_axes)
    empty = np.zeros((0, 3))
    if jtype in ("revolute", "prismatic", "cylindrical", "planar"):
        need_none(axes=axes)
        a = _EZ if axis is None else _axis(axis, item, "axis")
        if jtype == "revolute":
            return empty, a[None, :]
        if jtype == "prismatic":
            return a[None, :], empty
        if jtype == "cylindrical":
            return a[None, :], a[None, :]
        # planar: two in-plane translations, then the rotation about the normal a
        e1 = _EX - (_EX @ a) * a
        if np.linalg.norm(e1) < INDEPENDENT_AXES_TOL:
            e1 = _EY - (_EY @ a) * a
        e1 /= np.linalg.norm(e1)
        return np.array([e1, np.cross(a, e1)]), a[None, :]
    if jtype in ("universal", "spherical"):
        need_none(axis=axis)
        n = 2 if jtype == "universal" else 3
        default = np.eye(3)[:n]
        rot = default if axes is None else _axes(axes, item, "axes", n)
        _check_independent(empty, rot, item, "axes", "axes")
        return empty, rot
    if jtype in ("free", "fixed"):
        need_none(axis=axis, axes=axes)
        return (np.eye(3), np.eye(3)) if jtype == "free" else (empty, empty)
    # general
    need_none(axis=axis, axes=axes)
    tr = empty if translation_axes is None else _axes(translation_axes, item, "translation_axes")
    ro = empty if rotation_axes is None else _axes(rotation_axes, item, "rotation_axes")
    if len(tr) > 3:
        raise ModelError(
            f"expected 0 to 3 translation axes, got {len(tr)}", item, "translation_axes"
        )
    if len(ro) > 3:
        raise ModelError(f"expected 0 to 3 rotation axes, got {len(ro)}", item, "rotation_axes")
    if len(tr) + len(ro) == 0:
        raise ModelError(
            "expected at least one translation or rotation axis (1 to 6 coordinates in all)",
            item,
            "rotation_axes",
        )
    _check_independent(tr, ro, item, "translation_axes", "rotation_axes")
    return tr, ro


def _beam_initial_state(
    initial: object, item: str, fld: str = "initial"
) -> str | NDArray[np.float64]:
    """A BEAM_INITIAL_STATES name (`initial` only), or the elastic coordinates (or
    rates) as a float array."""
    if isinstance(initial, str):
        if fld != "initial":
            raise ModelError(f"expected a list of the elastic rates, got {initial!r}", item, fld)
        if initial not in BEAM_INITIAL_STATES:
            raise ModelError(
                f"expected one of {', '.join(BEAM_INITIAL_STATES)} or a list "
                f"of the elastic coordinates, got {initial!r}",
                item,
                "initial",
            )
        return initial
    try:
        values = np.asarray(initial, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(
            f"expected a name or a list of numbers, got {initial!r}", item, fld
        ) from None
    if not np.all(np.isfinite(values)):
        raise ModelError("expected finite elastic coordinates", item, fld)
    return values


def _modal_damping(spec: object, item: str) -> float | str | NDArray[np.float64] | None:
    """None, "bands", or damping ratios >= 0 (a float or a float array); the count
    of a list is checked against the body's modes when the model is compiled."""
    if spec is None:
        return None
    if isinstance(spec, str):
        if spec != "bands":
            raise ModelError(
                f'expected "bands", a number or a list of numbers, got {spec!r}',
                item,
                "modal_damping",
            )
        return spec
    try:
        ratios = np.asarray(spec, dtype=float)
    except (TypeError, ValueError):
        ratios = None
    if (
        ratios is None
        or ratios.ndim > 1
        or ratios.size == 0
        or not np.all(np.isfinite(ratios))
        or np.any(ratios < 0)
    ):
        raise ModelError(f"expected damping ratios >= 0, got {spec!r}", item, "modal_damping")
    return float(ratios) if ratios.ndim == 0 else ratios


def _check_inertia(
    i_c: NDArray[np.float64],
    mass: float,
    item: str,
    about: str,
    positive_definite: bool = True,
    fld: str = "inertia",
) -> None:
    """Symmetric positive definite (semi-definite if not `positive_definite`), principal
    moments obeying the triangle inequality."""
    where = {
        "com": "about the centre of mass",
        "origin": "about the centre of mass (converted from the frame origin)",
        "node": "about the node",
    }[about]
    w = np.linalg.eigvalsh(i_c)
    scale = max(abs(w).max(), 1e-300)
    if w.min() <= (1e-12 if positive_definite else -1e-12) * scale:
        what = "positive definite" if positive_definite else "positive semi-definite"
        raise ModelError(
            f"expected a {what} inertia; {where} its principal "
            f"moments are {np.array2string(w, precision=6)}",
            item,
            fld,
        )
    tol = 1e-9 * scale
    a, b, c = w
    if a + b < c - tol:
        raise ModelError(
            f"principal moments {np.array2string(w, precision=6)} {where} "
            "violate the triangle inequality (I1 + I2 >= I3): no mass "
            "distribution has them",
            item,
            fld,
        )


def _check_joint_coordinate(
    joints: Mapping[str, _HasCoordinates],
    joint: object,
    coordinate: object,
    item: str,
    fields: tuple[str, str] = ("joint", "coordinate"),
) -> None:
    """ModelError (naming fields[0], the joint's field, or fields[1], the coordinate's)
    unless `joint` names one of `joints` and `coordinate` is the index of one of its
    coordinates."""
    if not isinstance(joint, str) or joint not in joints:
        raise ModelError(f'unknown joint "{joint}"', item, fields[0])
    nd = joints[joint].ndof
    if (
        isinstance(coordinate, bool)
        or not isinstance(coordinate, (int, np.integer))
        or not 0 <= coordinate < nd
    ):
        raise ModelError(
            f'expected a coordinate index 0..{nd - 1} of joint "{joint}", got {coordinate!r}'
            + (" (a fixed joint has none)" if nd == 0 else ""),
            item,
            fields[1],
        )


def _check_not_prescribed(
    drivers: Iterable[Any], joint: str, coordinate: int, item: str, what: str
) -> None:
    """ModelError when a driver prescribes coordinate `coordinate` of `joint`: `what`
    (a friction, a backlash) acts on a free coordinate."""
    for driver in drivers:
        if (driver.joint, driver.coordinate) == (joint, coordinate):
            raise ModelError(
                f'coordinate {coordinate} of joint "{joint}" is prescribed by driver '
                f'"{driver.name}": {what} acts on a free coordinate',
                item,
                "joint",
            )


SECTION_HELPERS = {  # the section types of a model file: the helper that makes each
    "rectangle": "rectangle_section(width, height)",
    "circle": "circle_section(diameter)",
    "round_tube": "round_tube_section(outer_diameter, wall_thickness)",
    "rectangular_tube": "rectangular_tube_section(width, height, wall_thickness)",
    "general": "general_section(area, i_y, i_z, torsion_constant)",
}


def _check_section_and_material(section: object, material: object, item: str) -> None:
    """Raise ModelError unless `section` is a flexmbs.elements.Section and `material` a
    flexmbs.elements.Material, naming the helper that makes one from what was given
    (a model file's table, in Python, is a call of that helper)."""
    from ..elements import Material, Section

    if not isinstance(section, Section):
        kind = section.get("type") if isinstance(section, dict) else None
        if kind in SECTION_HELPERS:
            hint = (
                f"got a table of a model file ({section!r}): in Python, write "
                f"flexmbs.elements.{SECTION_HELPERS[kind]}"
            )
        else:
            hint = f"got {type(section).__name__} {section!r}: write one of flexmbs.elements' " + (
                ", ".join(SECTION_HELPERS.values())
            )
        raise ModelError(f"expected a Section; {hint}", item, "section")
    if not isinstance(material, Material):
        got = (
            f"a table of a model file ({material!r})"
            if isinstance(material, dict)
            else f"{type(material).__name__} {material!r}"
        )
        raise ModelError(
            f"expected a Material; got {got}: in Python, write flexmbs.elements.material("
            "youngs_modulus, density, shear_modulus=None, poisson_ratio=None)",
            item,
            "material",
        )


def _check_section_point(beam: object, point: NDArray[np.float64], item: str) -> None:
    """Raise ModelError unless the section point [y, z] (m) lies on the beam's section:
    within its outer fibres max_y and max_z where the section gives them."""
    section = getattr(beam, "section", None)
    for k, (axis, extent) in enumerate(
        (("y", getattr(section, "max_y", None)), ("z", getattr(section, "max_z", None)))
    ):
        if extent is not None and abs(point[k]) > extent * (1.0 + 1e-9):
            raise ModelError(
                f"{axis} = {point[k]:g} m lies off the section of body "
                f'"{getattr(beam, "name", "?")}", whose outer fibre is at |{axis}| = {extent:g} m: '
                "expected a point on the section (m; mm where m are expected?)",
                item,
                "point",
            )
