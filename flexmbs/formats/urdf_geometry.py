"""A URDF link's shapes: where their mesh files are, and the mass and inertia they have
at a density (MuJoCo's inertia from geometry, for links the URDF gives no <inertial>).

Mesh paths (`resolve_mesh`): as ROS finds them, through ROS_PACKAGE_PATH, the URDF's
own folder tree and the description packages installed with Python
(flexmbs.formats.mesh_paths).

Mass and inertia (`shapes_inertial`), each shape a solid of uniform density rho
(kg/m^3), its inertia about its centre in its own axes:

* box a x b x c: m = rho a b c, I = m/12 diag(b^2 + c^2, a^2 + c^2, a^2 + b^2);
* cylinder of radius r, length h along z: m = rho pi r^2 h,
  I = diag(m (3 r^2 + h^2)/12, same, m r^2/2);
* sphere of radius r: m = rho 4/3 pi r^3, I = 2/5 m r^2 (each axis);
* mesh: its volume, centre and inertia (trimesh), scaled; a mesh that does not close
  a volume counts as its convex hull (as MuJoCo does).

The shapes add in the link frame: m = sum m_k, c = sum m_k c_k / m,
I = sum R_k I_k R_k^T + m_k ([c_k - c]^2 1 - (c_k - c)(c_k - c)^T).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from .mesh_paths import resolve_mesh_path
from .urdf_reader import UrdfGeometry

__all__ = ["resolve_mesh", "shapes_inertial"]


def resolve_mesh(filename: str, urdf: str | os.PathLike[str]) -> Path | None:
    """The file a URDF's mesh `filename` names (flexmbs.formats.mesh_paths), the URDF
    being the file `urdf`; None when it is nowhere to be found."""
    return resolve_mesh_path(filename, Path(urdf).resolve().parent)


def _solid(
    shape: UrdfGeometry, density: float, urdf: str | os.PathLike[str]
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]] | None:
    """(mass, centre in the shape's frame, inertia about it in the shape's axes) of one
    shape; None for a mesh file that cannot be found or read."""
    s = shape.size
    if shape.kind == "box":
        m = density * float(np.prod(s))
        a, b, c = s
        return m, np.zeros(3), m / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    if shape.kind == "cylinder":
        r, h = s
        m = density * np.pi * r * r * h
        side = m * (3.0 * r * r + h * h) / 12.0
        return m, np.zeros(3), np.diag([side, side, 0.5 * m * r * r])
    if shape.kind == "sphere":
        r = s[0]
        m = density * 4.0 / 3.0 * np.pi * r**3
        return m, np.zeros(3), 0.4 * m * r * r * np.eye(3)
    path = resolve_mesh(shape.filename, urdf)
    if path is None:
        return None
    try:
        import trimesh
    except ImportError:
        return None
    try:
        loaded = trimesh.load(os.fspath(path), force="mesh", process=True)
    except Exception:  # noqa: BLE001 - a mesh trimesh cannot read counts as absent
        return None
    if not hasattr(loaded, "vertices") or len(loaded.vertices) < 4:
        return None
    mesh = loaded.copy()
    mesh.apply_transform(np.diag([*s, 1.0]))
    if not mesh.is_volume:
        try:
            mesh = mesh.convex_hull
        except Exception:  # noqa: BLE001 - a flat or degenerate mesh has no volume
            return None
    mesh.density = density
    if not mesh.volume > 0.0:
        return None
    m = float(mesh.mass)
    c = np.asarray(mesh.center_mass, float)
    inertia = np.asarray(mesh.moment_inertia, float)  # about the centre of mass
    return m, c, 0.5 * (inertia + inertia.T)


def shapes_inertial(
    shapes: Sequence[UrdfGeometry], density: float, urdf: str | os.PathLike[str]
) -> tuple[float, NDArray[np.float64], NDArray[np.float64], list[str]] | None:
    """(mass kg, centre of mass m, inertia about it kg m^2, in the link frame, and the
    mesh files that were not found or read) of `shapes` at `density` (the module
    docstring); None when no shape has a volume."""
    parts = []
    missing = []
    for shape in shapes:
        solid = _solid(shape, density, urdf)
        if solid is None:
            if shape.kind == "mesh":
                missing.append(shape.filename)
            continue
        m, c, inertia = solid
        if not m > 0.0:
            continue
        r = shape.origin[:3, :3]
        parts.append((m, shape.origin[:3, :3] @ c + shape.origin[:3, 3], r @ inertia @ r.T))
    if not parts:
        return None
    mass = float(sum(p[0] for p in parts))
    com: NDArray[np.float64] = np.sum([p[0] * p[1] for p in parts], axis=0) / mass
    inertia = np.zeros((3, 3))
    for m, c, i in parts:
        d = c - com
        inertia += i + m * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, com, 0.5 * (inertia + inertia.T), missing
