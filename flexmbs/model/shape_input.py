"""A rigid body's `density` and `shapes` as the Model builder takes them: each shape's
fields checked (one message naming the body and the field, e.g. `shapes[1].radius`)
and made a flexmbs.model.solid_shapes.Shape, and the body's mass, centre of mass and
inertia computed from them (`density_solid`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import ModelError
from ..rotations import rotation_from_euler_xyz
from .field_checks import _rotation, _scalar, _vector
from .solid_shapes import SHAPE_TYPES, Shape, Solid, shapes_solid

__all__ = ["SHAPE_FIELDS", "density_solid", "shape_of"]

SHAPE_FIELDS = {
    # shape type: (its required fields, its optional ones), besides type and placement
    "box": (("size",), ()),
    "cylinder": (("radius", "length"), ()),
    "sphere": (("radius",), ()),
    "mesh": (("file",), ("scale",)),
}
PLACEMENT = ("position", "orientation", "euler_xyz")


def _placement(fields: Mapping[str, Any], item: str, at: str) -> dict[str, Any]:
    """{"position", "orientation"} of a shape from its fields (as a marker's)."""
    if "orientation" in fields and "euler_xyz" in fields:
        raise ModelError("give 'orientation' or 'euler_xyz', not both", item, at + "euler_xyz")
    if "euler_xyz" in fields:
        axes = rotation_from_euler_xyz(_vector(fields["euler_xyz"], 3, item, at + "euler_xyz"))
    elif "orientation" in fields:
        axes = _rotation(fields["orientation"], item, at + "orientation")
    else:
        axes = np.eye(3)
    return {
        "position": _vector(fields.get("position", (0, 0, 0)), 3, item, at + "position"),
        "orientation": axes,
    }


def _mesh_file(value: object, base: str | None, item: str, fld: str) -> str:
    """The mesh file `value` names, relative to `base`; ModelError when it is no file."""
    if not isinstance(value, (str, os.PathLike)) or not os.fspath(value):
        raise ModelError(f"expected a mesh file's name, got {value!r}", item, fld)
    path = os.path.join(base or os.getcwd(), os.fspath(value))
    if not os.path.isfile(path):
        raise ModelError(f"no such file: {path}", item, fld)
    return os.path.normpath(path)


def shape_of(fields: object, k: int, base: str | None, item: str) -> Shape:
    """The k-th shape of a body from its fields (a Shape passes as it is); a mesh
    file relative to `base`."""
    if isinstance(fields, Shape):
        fields = {f: v for f, v in vars(fields).items() if v is not None}
    at = f"shapes[{k}]."
    if not isinstance(fields, Mapping):
        raise ModelError(f"expected a table, got {fields!r}", item, at.rstrip("."))
    kind = fields.get("type")
    if kind not in SHAPE_TYPES:
        raise ModelError(
            f"expected a shape type, one of {', '.join(SHAPE_TYPES)}; got {kind!r}",
            item,
            at + "type",
        )
    required, optional = SHAPE_FIELDS[kind]
    for key in fields:
        if key not in ("type", *required, *optional, *PLACEMENT):
            allowed = ", ".join(("type", *required, *optional, *PLACEMENT))
            raise ModelError(
                f'unknown field "{key}" of a {kind}; allowed fields: {allowed}', item, at + key
            )
    for key in required:
        if key not in fields:
            raise ModelError(f'missing required field "{key}" of a {kind}', item, at + key)
    place = _placement(fields, item, at)
    if kind == "box":
        size = _vector(fields["size"], 3, item, at + "size")
        if not np.all(size > 0.0):
            raise ModelError(
                f"expected three edges > 0, m; got {fields['size']!r}", item, at + "size"
            )
        return Shape("box", size=size, **place)
    if kind == "mesh":
        scale = _vector(fields.get("scale", (1, 1, 1)), 3, item, at + "scale")
        if not np.all(scale > 0.0):
            raise ModelError(
                f"expected three factors > 0; got {fields['scale']!r}", item, at + "scale"
            )
        file = _mesh_file(fields["file"], base, item, at + "file")
        return Shape("mesh", file=file, scale=scale, **place)
    radius = _scalar(fields["radius"], item, at + "radius", positive=True)
    if kind == "sphere":
        return Shape("sphere", radius=radius, **place)
    length = _scalar(fields["length"], item, at + "length", positive=True)
    return Shape("cylinder", radius=radius, length=length, **place)


def density_solid(
    density: object, shapes: Sequence[object], base: str | None, item: str
) -> tuple[float, list[Shape], Solid]:
    """(the density, the shapes, their solid: mass kg, centre of mass m, inertia about
    it kg m^2 in body axes; flexmbs.model.solid_shapes) of a body's `density` (kg/m^3)
    and `shapes`, mesh files relative to `base`."""
    rho = _scalar(density, item, "density")
    if not rho > 0.0:
        raise ModelError(f"expected a density > 0, kg/m^3; got {density!r}", item, "density")
    if isinstance(shapes, (str, bytes, Mapping)) or not isinstance(shapes, Sequence):
        raise ModelError(f"expected a list of shape tables, got {shapes!r}", item, "shapes")
    if not shapes:
        raise ModelError(
            "a density fills the body's shapes, and it has none: give `shapes` (boxes, "
            "cylinders, spheres, meshes), or a mass and an inertia instead of the density",
            item,
            "density",
        )
    parsed = [shape_of(fields, k, base, item) for k, fields in enumerate(shapes)]
    for k, shape in enumerate(parsed):
        if shape.type != "mesh":
            continue
        try:
            shapes_solid([shape], rho)
        except ImportError:
            raise ModelError(
                "a mesh's volume needs trimesh (pip install trimesh)", item, f"shapes[{k}].file"
            ) from None
        except ValueError as exc:
            raise ModelError(f"{exc}: {shape.file}", item, f"shapes[{k}].file") from None
    return rho, parsed, shapes_solid(parsed, rho)
