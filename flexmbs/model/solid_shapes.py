"""Solids of uniform density: the mass, centre of mass and inertia of a rigid body that
its shapes and a density give (a body's `density` and `shapes`; MuJoCo's inertia from
geometry, which the URDF import uses for links without <inertial>).

Each shape is a solid of uniform density rho (kg/m^3), its inertia about its centre in
its own axes:

* box of edges a x b x c (along its x, y, z): m = rho a b c,
  I = m/12 diag(b^2 + c^2, a^2 + c^2, a^2 + b^2);
* cylinder of radius r and length h along its z: m = rho pi r^2 h,
  I = diag(m (3 r^2 + h^2)/12, same, m r^2/2);
* sphere of radius r: m = rho 4/3 pi r^3, I = 2/5 m r^2 (each axis);
* mesh (a file trimesh reads, scaled along its x, y, z): its volume, centre and
  inertia as trimesh computes them (the divergence theorem over its triangles); a
  mesh that does not close a volume counts as its convex hull (as MuJoCo does).

A shape sits in the body frame at `position` (m) with axes `orientation` (columns in
body axes, R). The shapes add: m = sum m_k, c = sum m_k c_k / m,
I = sum R_k I_k R_k^T + m_k (|c_k - c|^2 1 - (c_k - c)(c_k - c)^T), c_k = p_k + R_k c'_k.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

__all__ = ["SHAPE_TYPES", "Shape", "Solid", "mesh_solid", "shape_solid", "shapes_solid"]

SHAPE_TYPES = ("box", "cylinder", "sphere", "mesh")

Solid = tuple[float, NDArray[np.float64], NDArray[np.float64]]
"""(mass kg, centre of mass m, inertia about it kg m^2)."""


@dataclass
class Shape:
    """A solid shape of a rigid body (the module docstring): `type` one of
    SHAPE_TYPES; a box's edges `size` (m); a cylinder's `radius` and `length` (m, along
    its z); a sphere's `radius`; a mesh's `file` and `scale`; its place in the body
    frame, `position` (m) and `orientation` (columns: its axes in body axes)."""

    type: str
    position: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))
    orientation: NDArray[np.float64] = field(default_factory=lambda: np.eye(3))
    size: NDArray[np.float64] | None = None
    radius: float | None = None
    length: float | None = None
    file: str | None = None
    scale: NDArray[np.float64] | None = None


def mesh_solid(
    path: str | os.PathLike[str], scale: Sequence[float] | NDArray[np.float64], density: float
) -> Solid:
    """(mass, centre, inertia about it) in the mesh's own axes of the mesh file `path`
    scaled by `scale` at `density`, by trimesh; its convex hull where it closes no
    volume. ImportError without trimesh; ValueError for a file trimesh cannot read or
    a mesh without volume. Mass and inertia are linear in the density: each file is
    read once (per scale and modification time) at unit density."""
    file = os.path.abspath(os.fspath(path))
    try:
        stamp = os.stat(file).st_mtime_ns
    except OSError:
        raise ValueError("no such file") from None
    volume, centre, inertia = _unit_mesh_solid(file, stamp, tuple(float(x) for x in scale))
    return density * volume, centre.copy(), density * inertia


@functools.lru_cache(maxsize=256)
def _unit_mesh_solid(file: str, stamp: int, scale: tuple[float, ...]) -> Solid:
    """mesh_solid at unit density (`stamp`: the file's modification time, a key)."""
    import trimesh

    try:
        loaded = trimesh.load(file, force="mesh", process=True)
    except Exception as exc:  # noqa: BLE001 - any reading failure: not a mesh
        raise ValueError(f"not a mesh trimesh reads ({type(exc).__name__}: {exc})") from None
    if not hasattr(loaded, "vertices") or len(loaded.vertices) < 4:
        raise ValueError("a mesh of fewer than 4 vertices encloses no volume")
    mesh = loaded.copy()
    mesh.apply_transform(np.diag([*scale, 1.0]))
    if not mesh.is_volume:
        try:
            mesh = mesh.convex_hull
        except Exception:  # noqa: BLE001 - a flat or degenerate mesh has no hull
            raise ValueError("the mesh (and its convex hull) encloses no volume") from None
    if not mesh.volume > 0.0:
        raise ValueError("the mesh (and its convex hull) encloses no volume")
    mesh.density = 1.0
    inertia = np.asarray(mesh.moment_inertia, float)  # about the centre of mass
    return float(mesh.mass), np.asarray(mesh.center_mass, float), 0.5 * (inertia + inertia.T)


def shape_solid(shape: Shape, density: float) -> Solid:
    """(mass, centre, inertia about it) of one shape at `density`, in the shape's own
    axes (the module docstring); mesh_solid's errors for a mesh."""
    if shape.type == "box":
        a, b, c = np.asarray(shape.size, float)
        m = density * a * b * c
        return m, np.zeros(3), m / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    if shape.type == "cylinder":
        r, h = float(shape.radius or 0.0), float(shape.length or 0.0)
        m = density * np.pi * r * r * h
        side = m * (3.0 * r * r + h * h) / 12.0
        return m, np.zeros(3), np.diag([side, side, 0.5 * m * r * r])
    if shape.type == "sphere":
        r = float(shape.radius or 0.0)
        m = density * 4.0 / 3.0 * np.pi * r**3
        return m, np.zeros(3), 0.4 * m * r * r * np.eye(3)
    if shape.type == "mesh":
        scale = np.ones(3) if shape.scale is None else shape.scale
        return mesh_solid(shape.file or "", scale, density)
    raise ValueError(f"expected a shape type, one of {', '.join(SHAPE_TYPES)}")


def shapes_solid(shapes: Sequence[Shape], density: float) -> Solid:
    """(mass, centre of mass, inertia about it) in the body frame of `shapes` at
    `density`, added as the module docstring says; shape_solid's errors."""
    parts = []
    for shape in shapes:
        m, c, inertia = shape_solid(shape, density)
        r = np.asarray(shape.orientation, float)
        parts.append((m, r @ c + np.asarray(shape.position, float), r @ inertia @ r.T))
    mass = float(sum(p[0] for p in parts))
    com: NDArray[np.float64] = np.sum([p[0] * p[1] for p in parts], axis=0) / mass
    total = np.zeros((3, 3))
    for m, c, i in parts:
        d = c - com
        total += i + m * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, com, 0.5 * (total + total.T)
