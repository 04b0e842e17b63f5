"""Tetrahedral meshes read for a finite-element body (flexmbs.elements.fe_files), through
meshio (gmsh .msh and the other formats it reads), and assembled with a material."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..errors import ModelError
from .fe_body import FeData
from .fe_units import LENGTH_UNITS, check_plausible_units, data_file
from .gmsh_text import check_gmsh_text

__all__ = ["read_mesh", "fe_data_from_mesh"]

TET_CELLS = {"tetra": 4, "tetra10": 10}
MESH_FLAT_TOL = 1e-12  # a tetrahedron's 6 V / extent^3 at or below this has no volume


def read_mesh(
    path: str | os.PathLike[str], item: str | None = None, base: str | None = None
) -> tuple[NDArray[np.float64], NDArray[np.int64], dict[str, NDArray[np.int64]], tuple]:
    """(points (n, 3), tets (ne, 4 or 10), node sets {physical group: node indices},
    cells for drawing) of a mesh file read by meshio (gmsh .msh and the other formats
    meshio reads). Only the nodes of the tetrahedra are kept."""
    p = data_file(path, base, item, "mesh")
    try:
        import meshio
    except ImportError:
        raise ModelError(
            "a body from a mesh needs meshio: pip install 'flexmbs[fe]'", item, "mesh"
        ) from None
    if p.suffix.lower() == ".msh":
        try:
            check_gmsh_text(p)
        except (ValueError, OSError) as err:
            raise ModelError(f"{p.name}: {err}", item, "mesh") from None
    said = io.StringIO()
    try:  # meshio prints what it could not read and exits when no reader takes the file
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            mesh = meshio.read(str(p))
    except (Exception, SystemExit) as err:  # meshio raises many kinds on a bad file
        words = " ".join(str(err).split() if str(err) not in ("", "1") else said.getvalue().split())
        raise ModelError(
            f"{p.name}: expected a tetrahedral mesh in a format meshio reads (gmsh .msh, "
            f".vtk, .vtu, .inp, ...), whole; meshio: {words[:300] or type(err).__name__}",
            item,
            "mesh",
        ) from None
    blocks = [(c.type, np.asarray(c.data, dtype=np.int64)) for c in mesh.cells]
    tets = [d for t, d in blocks if t in TET_CELLS]
    kinds = {t for t, _ in blocks if t in TET_CELLS}
    if not tets:
        found = ", ".join(sorted({t for t, _ in blocks})) or "none"
        raise ModelError(
            f"{p.name}: expected tetrahedra (tetra or tetra10 cells), found {found}",
            item,
            "mesh",
        )
    if len(kinds) > 1:
        raise ModelError(f"{p.name}: linear and quadratic tetrahedra mixed", item, "mesh")
    tet = np.vstack(tets)
    used = np.unique(tet)
    new = -np.ones(len(mesh.points), dtype=np.int64)
    new[used] = np.arange(len(used))
    points = np.asarray(mesh.points, dtype=float)[used]
    if points.shape[1] == 2:
        points = np.hstack([points, np.zeros((len(points), 1))])
    _check_mesh_geometry(points, new[tet], p.name, item)
    sets: dict[str, NDArray[np.int64]] = {}
    for name, per_block in (mesh.cell_sets or {}).items():
        if name.startswith("gmsh:"):
            continue
        members: list[int] = []
        for (_, data), rows in zip(blocks, per_block):
            if rows is not None and len(rows):
                members += list(np.unique(data[np.asarray(rows, dtype=np.int64)]))
        kept = new[np.array(members, dtype=np.int64)] if members else np.zeros(0, np.int64)
        sets[name] = np.unique(kept[kept >= 0])
    for name, idx in (mesh.point_sets or {}).items():
        kept = new[np.asarray(idx, dtype=np.int64)]
        sets[name] = np.unique(kept[kept >= 0])
    return (
        points,
        new[tet],
        sets,
        (("tetra10" if 10 in {t.shape[1] for t in tets} else "tetra", new[tet]),),
    )


def _check_mesh_geometry(
    points: NDArray[np.float64], tets: NDArray[np.int64], name: str, item: str | None
) -> None:
    """A one-line ModelError for a mesh that is no solid: a coordinate that is not a
    finite number, all nodes in a plane, or a tetrahedron of no volume (its corners in
    a plane: |det| <= MESH_FLAT_TOL of the mesh's extent cubed)."""
    bad = np.flatnonzero(~np.all(np.isfinite(points), axis=1))
    if len(bad):
        raise ModelError(
            f"{name}: node {bad[0] + 1} (of the tetrahedra's, in order) is at "
            f"{points[bad[0]].tolist()}: expected finite coordinates",
            item,
            "mesh",
        )
    span = np.ptp(points, axis=0)
    if span.max() <= 0.0 or span.min() <= MESH_FLAT_TOL * span.max():
        axis = "xyz"[int(np.argmin(span))]
        raise ModelError(
            f"{name}: the mesh is flat, every node at {axis} = {points[0, 'xyz'.index(axis)]:g}: "
            "expected a solid spanning x, y and z (a plate's thickness meshed)",
            item,
            "mesh",
        )
    a, b, c, d = (points[tets[:, k]] for k in range(4))
    six_volume = np.abs(np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a))
    flat = np.flatnonzero(six_volume <= MESH_FLAT_TOL * float(span.max()) ** 3)
    if len(flat):
        raise ModelError(
            f"{name}: tetrahedron {flat[0] + 1} (of {len(tets)}) has no volume, its corners in "
            f"a plane{f' (and {len(flat) - 1} more)' if len(flat) > 1 else ''}: expected "
            "tetrahedra of a solid",
            item,
            "mesh",
        )


def fe_data_from_mesh(
    path: str,
    youngs_modulus: float,
    poisson_ratio: float,
    density: float,
    length_unit: str = "m",
    item: str | None = None,
    base: str | None = None,
) -> FeData:
    """FeData of a tetrahedral mesh file (read_mesh) and an isotropic material (SI),
    assembled with scikit-fem (flexmbs.elements.solid.solid_matrices)."""
    from .solid import solid_matrices

    if length_unit not in LENGTH_UNITS:
        raise ModelError(
            f"expected one of {', '.join(LENGTH_UNITS)}, got {length_unit!r}",
            item,
            "length_unit",
        )
    points, tets, sets, cells = read_mesh(path, item, base)
    points = points * LENGTH_UNITS[length_unit]
    extent = float(np.ptp(points, axis=0).max())
    name = Path(str(path)).name
    check_plausible_units(youngs_modulus, density, extent, length_unit, name, item)
    k, ms = solid_matrices(points, tets, youngs_modulus, poisson_ratio, density, item)
    m = sp.kron(ms, sp.identity(3), format="csr")
    return FeData(points, np.arange(1, len(points) + 1), 3, k, m, sets, cells, name)
