"""What the viewer draws of a finite-element body (flexmbs.model.fe_body.FeBody): the
outer surface of its mesh as triangles, or its nodes as points when the data have no
cells, with the nodes' translations per unit elastic coordinate, so that the page
moves every drawn node as the run does:

    x = r + A (X + K Phi_t eta)    (m, global axes)

with X the node's undeformed position (body frame), Phi_t its three rows of the reduced
basis (m per unit eta, body axes; x = Phi eta, flexmbs.elements.fe_body), eta the
body's elastic coordinates, K the deflection scale and r, A the body frame's pose.

The outer surface is the faces that belong to one tetrahedron only, turned so that
their normals point out of it; a face of a quadratic tetrahedron is drawn as the four
triangles of its corners and mid-side nodes, so that the drawn surface bends as the
element does. The elements' edges on the surface are drawn over it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.spatial import cKDTree

from ..model.fe_body import FeBody

__all__ = ["FeSurface", "fe_surface", "outer_faces", "outer_triangles", "outer_edges"]

# the faces of a tetrahedron: its corners (local indices) and the corner opposite
_FACES = ((1, 2, 3, 0), (0, 3, 2, 1), (0, 1, 3, 2), (0, 2, 1, 3))
# column of the mid-side node of edge (i, j) in a tetra10 (meshio's and Abaqus' order:
# the edges 01, 12, 02, 03, 13, 23 after the corners)
_MIDDLE = np.zeros((4, 4), dtype=np.int64)
for _col, (_i, _j) in enumerate(((0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3))):
    _MIDDLE[_i, _j] = _MIDDLE[_j, _i] = 4 + _col
POINT_SPACING = 0.3  # a node's dot: this fraction of the distance to its nearest neighbour
SMALLEST_DOT = 0.005  # and at least this fraction of the body's size


@dataclass
class FeSurface:
    """The drawing of one FE body: `nodes` (k,) the drawn nodes (indices in the body's
    node table), `local` (k, 3) their undeformed positions (m, body frame), `modes`
    (3 k, nf) their translations per unit eta (m, body axes, u v w per node),
    `triangles` (m, 3) the outer faces as indices into `local`, normals outward ((0, 3)
    when the data have no cells: the nodes are drawn as dots), `edges` (e, 2) the
    elements' edges on the surface, indices into `local`, `point_radius` the dots'
    radius (m)."""

    nodes: NDArray[np.int64]
    local: NDArray[np.float64]
    modes: NDArray[np.float64]
    triangles: NDArray[np.int64]
    edges: NDArray[np.int64]
    point_radius: float


def outer_faces(
    nodes: NDArray[np.float64], tets: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64] | None]:
    """(corners (m, 3), mid-side nodes (m, 3) of the edges ab, bc, ca or None for
    linear tetrahedra): the faces of tetrahedra `tets` ((ne, 4) linear or (ne, 10)
    quadratic, node indices into `nodes` (n, 3)) that belong to one of them only, each
    ordered so that (b - a) x (c - a) points out of its tetrahedron."""
    t = np.asarray(tets, dtype=np.int64)
    x = np.asarray(nodes, dtype=float)
    ne = len(t)
    corners = np.concatenate([np.tile(np.array(f[:3]), (ne, 1)) for f in _FACES])
    opposite = np.concatenate([np.full(ne, f[3]) for f in _FACES])
    owner = np.tile(np.arange(ne), len(_FACES))
    faces = t[owner[:, None], corners]
    _, first, count = np.unique(
        np.sort(faces, axis=1), axis=0, return_index=True, return_counts=True
    )
    keep = np.sort(first[count == 1])
    faces, corners, owner = faces[keep], corners[keep], owner[keep]
    a = x[faces[:, 0]]
    normal = np.cross(x[faces[:, 1]] - a, x[faces[:, 2]] - a)
    inward = np.einsum("ij,ij->i", normal, x[t[owner, opposite[keep]]] - a) > 0.0
    faces[inward] = faces[inward][:, [0, 2, 1]]
    corners[inward] = corners[inward][:, [0, 2, 1]]
    if t.shape[1] == 4:
        return faces, None

    def middle(i: int, j: int) -> NDArray[np.int64]:
        return t[owner, _MIDDLE[corners[:, i], corners[:, j]]]

    return faces, np.stack([middle(0, 1), middle(1, 2), middle(2, 0)], axis=1)


def outer_triangles(nodes: NDArray[np.float64], tets: NDArray[np.int64]) -> NDArray[np.int64]:
    """(m, 3) node indices of the triangles of the outer surface of `tets` (outer_faces),
    normals outward; a quadratic face as the four triangles of its corners and
    mid-side nodes."""
    faces, middles = outer_faces(nodes, tets)
    if middles is None:
        return faces
    fa, fb, fc = faces.T
    ab, bc, ca = middles.T
    return np.concatenate(
        [
            np.stack([fa, ab, ca], axis=1),
            np.stack([ab, fb, bc], axis=1),
            np.stack([ca, bc, fc], axis=1),
            np.stack([ab, bc, ca], axis=1),
        ]
    )


def outer_edges(nodes: NDArray[np.float64], tets: NDArray[np.int64]) -> NDArray[np.int64]:
    """(e, 2) node pairs, each once: the elements' edges on the outer surface of `tets`
    (outer_faces), a quadratic edge as its two halves through its mid-side node."""
    faces, middles = outer_faces(nodes, tets)
    ends = [(0, 1), (1, 2), (2, 0)]
    if middles is None:
        pairs = [faces[:, [i, j]] for i, j in ends]
    else:
        pairs = [np.stack([faces[:, i], middles[:, k]], axis=1) for k, (i, _) in enumerate(ends)]
        pairs += [np.stack([middles[:, k], faces[:, j]], axis=1) for k, (_, j) in enumerate(ends)]
    return np.unique(np.sort(np.concatenate(pairs), axis=1), axis=0)


def _dot_radius(points: NDArray[np.float64]) -> float:
    """POINT_SPACING times the median distance from a node to its nearest neighbour, at
    least SMALLEST_DOT of the body's size (a thin plate's nodes are close through its
    thickness; 1 cm for a single node)."""
    size = float(np.linalg.norm(np.ptp(points, axis=0))) if len(points) else 0.0
    if len(points) < 2 or size <= 0.0:
        return 0.01
    distance, _ = cKDTree(points).query(points, k=2)
    spacing = float(np.median(distance[:, 1]))
    return max(POINT_SPACING * spacing, SMALLEST_DOT * size)


def fe_surface(body: FeBody) -> FeSurface:
    """The FeSurface of `body` (module docstring): the outer faces of its tetrahedra
    (every cell block of its data), or every node as a dot."""
    x = np.asarray(body.data.nodes, dtype=float)
    blocks = [
        np.asarray(c, dtype=np.int64)
        for kind, c in body.data.cells
        if kind in ("tetra", "tetra10") and len(c)
    ]
    if blocks:
        tri = np.concatenate([outer_triangles(x, c) for c in blocks])
        used, inverse = np.unique(tri, return_inverse=True)
        triangles = inverse.reshape(tri.shape).astype(np.int64)
        edges = np.searchsorted(used, np.concatenate([outer_edges(x, c) for c in blocks]))
        radius = 0.0
    else:
        used = np.arange(len(x))
        triangles = np.zeros((0, 3), dtype=np.int64)
        edges = np.zeros((0, 2), dtype=np.int64)
        radius = _dot_radius(x)
    modes = body.node_translation_rows(used)
    return FeSurface(used, x[used], modes, triangles, edges, radius)
