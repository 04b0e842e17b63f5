"""A URDF link's shapes: where their mesh files are, and the mass and inertia they have
at a density (MuJoCo's inertia from geometry, for links the URDF gives no <inertial>).

Mesh paths (`resolve_mesh`): as ROS finds them, through ROS_PACKAGE_PATH, the URDF's
own folder tree and the description packages installed with Python
(flexmbs.formats.mesh_paths).

Mass and inertia (`shapes_inertial`): each shape a solid of uniform density, added in
the link frame, by flexmbs.model.solid_shapes (the code that computes a model file
body's `density` and `shapes`); `link_shapes` gives the shapes as that module takes
them, mesh files resolved, those that are not found or enclose no volume left out.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..model.solid_shapes import Shape, shape_solid, shapes_solid
from .mesh_paths import resolve_mesh_path
from .urdf_joints import toml_key, toml_matrix, toml_number, toml_vector
from .urdf_reader import UrdfGeometry

__all__ = ["density_lines", "link_shapes", "posed_shape", "resolve_mesh", "shapes_inertial"]


def resolve_mesh(filename: str, urdf: str | os.PathLike[str]) -> Path | None:
    """The file a URDF's mesh `filename` names (flexmbs.formats.mesh_paths), the URDF
    being the file `urdf`; None when it is nowhere to be found."""
    return resolve_mesh_path(filename, Path(urdf).resolve().parent)


def _model_shape(shape: UrdfGeometry, urdf: str | os.PathLike[str]) -> Shape | None:
    """The URDF shape as flexmbs.model.solid_shapes takes it, in the link frame; None
    for a mesh file that cannot be found, read (trimesh), or that encloses no volume."""
    origin = np.asarray(shape.origin, float)
    position, axes = origin[:3, 3].copy(), origin[:3, :3].copy()
    s = np.asarray(shape.size, float)
    if shape.kind == "box":
        return Shape("box", position, axes, size=s.copy())
    if shape.kind == "cylinder":
        return Shape("cylinder", position, axes, radius=float(s[0]), length=float(s[1]))
    if shape.kind == "sphere":
        return Shape("sphere", position, axes, radius=float(s[0]))
    path = resolve_mesh(shape.filename, urdf)
    if path is None:
        return None
    mesh = Shape("mesh", position, axes, file=os.fspath(path.resolve()), scale=s.copy())
    try:
        shape_solid(mesh, 1.0)
    except (ImportError, ValueError):
        return None
    return mesh


def link_shapes(
    shapes: Sequence[UrdfGeometry], urdf: str | os.PathLike[str]
) -> tuple[list[Shape], list[str]]:
    """(the shapes of a link that have a volume, as flexmbs.model.solid_shapes takes
    them; the mesh files not found or not read) of `shapes`, the URDF being `urdf`."""
    found, missing = [], []
    for shape in shapes:
        model_shape = _model_shape(shape, urdf)
        if model_shape is None:
            if shape.kind == "mesh":
                missing.append(shape.filename)
            continue
        if shape_solid(model_shape, 1.0)[0] > 0.0:
            found.append(model_shape)
    return found, missing


def shapes_inertial(
    shapes: Sequence[UrdfGeometry], density: float, urdf: str | os.PathLike[str]
) -> tuple[float, NDArray[np.float64], NDArray[np.float64], list[str]] | None:
    """(mass kg, centre of mass m, inertia about it kg m^2, in the link frame, and the
    mesh files that were not found or read) of `shapes` at `density` (the module
    docstring); None when no shape has a volume."""
    found, missing = link_shapes(shapes, urdf)
    if not found:
        return None
    mass, com, inertia = shapes_solid(found, density)
    return mass, com, inertia, missing


def posed_shape(shape: Shape, pose: NDArray[np.float64]) -> Shape:
    """`shape` (in a link frame) in the frame where that link frame is at `pose` (4 x 4)."""
    r = pose[:3, :3]
    return replace(
        shape, position=r @ shape.position + pose[:3, 3], orientation=r @ shape.orientation
    )


def density_lines(body: str, density: float, mass: float, shapes: Sequence[Shape]) -> list[str]:
    """The `density` and `shapes` of a body's table (flexmbs.model.solid_shapes), the
    mass they make noted."""
    lines = [
        f"density = {toml_number(density)}  # kg/m^3, filling the shapes below: "
        f"{mass:.6g} kg (--density)"
    ]
    for shape in shapes:
        lines += ["", f"[[bodies.{toml_key(body)}.shapes]]", f'type = "{shape.type}"']
        if shape.type == "box":
            lines.append(f"size = {toml_vector(np.asarray(shape.size))}  # m")
        elif shape.type == "mesh":
            lines.append(f"file = {toml_key(str(shape.file))}")
            scale = np.ones(3) if shape.scale is None else shape.scale
            if not np.array_equal(scale, np.ones(3)):
                lines.append(f"scale = {toml_vector(scale)}")
        else:
            lines.append(f"radius = {toml_number(float(shape.radius or 0.0))}  # m")
            if shape.type == "cylinder":
                lines.append(
                    f"length = {toml_number(float(shape.length or 0.0))}  # m, along its z"
                )
        if np.any(shape.position != 0.0):
            lines.append(f"position = {toml_vector(shape.position)}  # m, link frame")
        if not np.array_equal(shape.orientation, np.eye(3)):
            lines.append(
                f"orientation = {toml_matrix(shape.orientation)}  # columns: the shape's axes"
            )
    return lines
