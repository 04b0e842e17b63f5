"""The stiffness and mass matrices of a solid meshed with tetrahedra, assembled with
scikit-fem (the `fe` extra): linear (4 nodes) or quadratic (10 nodes) tetrahedra of a
linear elastic, isotropic material (docs/explanation/formulation.md section 12).

    K = int B^T C B dV    (C of Young's modulus E and Poisson's ratio nu, Lame form)
    Ms = int rho n n^T dV (the scalar mass matrix of the shape functions n),
    M = Ms x I3           (consistent mass: M[3 i + a, 3 j + b] = delta_ab Ms[i, j])

in the nodes' coordinates, node-major (u v w per node). Quadratic tetrahedra are taken
with straight edges: their mid-side nodes sit at the edge midpoints (a mid-side node of
a curved edge is moved there).
"""

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from ..errors import ModelError

__all__ = ["solid_matrices", "box_mesh", "TET_NODES"]

TET_NODES = {4: "linear", 10: "quadratic"}


def _skfem(item):
    try:
        import skfem  # noqa: F401
    except ImportError:
        raise ModelError("a body from a mesh needs scikit-fem: pip install "
                         "'flexmbs[fe]'", item, "mesh") from None
    import skfem
    return skfem


def solid_matrices(points, tets, youngs_modulus, poisson_ratio, density, item=None):
    """(K (3 n, 3 n), Ms (n, n)), scipy CSR, N/m and kg (module docstring). points
    (n, 3) m; tets (ne, 4) or (ne, 10) node indices (the corners first; every node
    must belong to a tetrahedron); E (Pa), nu, rho (kg/m^3)."""
    skfem = _skfem(item)
    from skfem.models.elasticity import lame_parameters

    x = np.asarray(points, dtype=float)
    t = np.asarray(tets, dtype=np.int64)
    n = len(x)
    corners = np.unique(t[:, :4])
    to_vertex = -np.ones(n, dtype=np.int64)
    to_vertex[corners] = np.arange(len(corners))
    tv = to_vertex[t[:, :4]]
    # positive volumes: swap two corners of an inverted tetrahedron
    p = x[corners]
    a, b, c, d = (p[tv[:, k]] for k in range(4))
    inverted = np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a) < 0
    tv[inverted, 0], tv[inverted, 1] = tv[inverted, 1], tv[inverted, 0].copy()
    mesh = skfem.MeshTet(p.T.copy(), tv.T.copy())
    quadratic = t.shape[1] == 10
    scalar_element = skfem.ElementTetP2() if quadratic else skfem.ElementTetP1()
    scalar = skfem.Basis(mesh, scalar_element, intorder=4 if quadratic else 2)
    lam, mu = lame_parameters(youngs_modulus, poisson_ratio)
    # element matrices from the scalar gradients g[i] = grad n_i at the quadrature
    # points, vectorised over the elements:
    #   K_e[(i, a), (j, b)] = int lam g_ia g_jb + mu (g_ib g_ja + delta_ab g_i . g_j)
    grads = np.stack([scalar.basis[i][0].grad for i in range(scalar.Nbfun)])  # (f, 3, e, q)
    values = np.stack([scalar.basis[i][0].value for i in range(scalar.Nbfun)])  # (f, e, q)
    dx = scalar.dx  # (e, q): weights times the Jacobian
    gg = np.einsum("iaeq,jbeq,eq->eijab", grads, grads, dx, optimize=True)
    dot = np.einsum("eijaa->eij", gg)
    ke = lam * gg + mu * gg.transpose(0, 1, 2, 4, 3)
    ke = ke + mu * dot[..., None, None] * np.eye(3)
    me = density * np.einsum("ieq,jeq,eq->eij", values, values, dx, optimize=True)
    # mesh node -> scalar dof (corners: their vertex; mid-side nodes: the edge's dof)
    node_dof = -np.ones(n, dtype=np.int64)
    node_dof[corners] = scalar.nodal_dofs[0, np.arange(len(corners))]
    if quadratic:
        mids = np.setdiff1d(np.unique(t[:, 4:]), corners)
        edges = mesh.edges  # (2, nedges) vertex indices
        centres = 0.5 * (p[edges[0]] + p[edges[1]])
        _, nearest = cKDTree(centres).query(x[mids])
        node_dof[mids] = scalar.edge_dofs[0, nearest]
    if np.any(node_dof < 0):
        raise ModelError("the mesh has nodes that belong to no tetrahedron", item, "mesh")
    if len(np.unique(node_dof)) != n or scalar.N != n:
        raise ModelError("the mesh's mid-side nodes do not match its edges (each edge of "
                         "a quadratic tetrahedron needs one mid-side node)", item, "mesh")
    # scalar dof -> mesh node
    node_of = np.empty(n, dtype=np.int64)
    node_of[node_dof] = np.arange(n)
    edofs = node_of[scalar.element_dofs]  # (f, e) mesh nodes of each element's functions
    nf, ne = edofs.shape
    rows = np.broadcast_to(edofs.T[:, :, None], (ne, nf, nf))
    cols = np.broadcast_to(edofs.T[:, None, :], (ne, nf, nf))
    ms = sp.coo_matrix((me.ravel(), (rows.ravel(), cols.ravel())), shape=(n, n)).tocsr()
    vr = 3 * edofs.T[:, :, None] + np.arange(3)  # (e, f, 3)
    rows = np.broadcast_to(vr[:, :, None, :, None], (ne, nf, nf, 3, 3))
    cols = np.broadcast_to(vr[:, None, :, None, :], (ne, nf, nf, 3, 3))
    k = sp.coo_matrix((ke.ravel(), (rows.ravel(), cols.ravel())), shape=(3 * n, 3 * n))
    return k.tocsr(), ms


def box_mesh(length, width, height, divisions, quadratic=True):
    """(points (n, 3), tets (ne, 4 or 10)): the box [0, length] x [-width/2, width/2] x
    [-height/2, height/2] (m) cut into divisions = (nx, ny, nz) bricks of six
    tetrahedra each, linear or quadratic (the mid-side nodes in meshio's order of a
    tetra10: the edges 01, 12, 02, 03, 13, 23 after the corners)."""
    nx, ny, nz = (int(v) for v in divisions)
    gx = np.linspace(0.0, length, nx + 1)
    gy = np.linspace(-0.5 * width, 0.5 * width, ny + 1)
    gz = np.linspace(-0.5 * height, 0.5 * height, nz + 1)
    index = np.arange((nx + 1) * (ny + 1) * (nz + 1)).reshape(nx + 1, ny + 1, nz + 1)
    points = np.stack(np.meshgrid(gx, gy, gz, indexing="ij"), axis=-1).reshape(-1, 3)
    # the six tetrahedra of a brick around its diagonal from corner 0 to corner 7
    cube = ((0, 1, 3, 7), (0, 1, 7, 5), (0, 4, 5, 7), (0, 2, 7, 3), (0, 6, 7, 2),
            (0, 4, 7, 6))
    i, j, k = np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij")
    corner = np.stack([index[i + a, j + b, k + c] for a in (0, 1) for b in (0, 1)
                       for c in (0, 1)], axis=-1).reshape(-1, 8)
    tets = np.concatenate([corner[:, list(tet)] for tet in cube])
    if not quadratic:
        return points, tets
    pairs = np.array(((0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3)))
    ends = np.sort(np.stack([tets[:, pairs[:, 0]], tets[:, pairs[:, 1]]], axis=-1), axis=-1)
    unique, inverse = np.unique(ends.reshape(-1, 2), axis=0, return_inverse=True)
    mids = 0.5 * (points[unique[:, 0]] + points[unique[:, 1]])
    out = np.hstack([tets, len(points) + inverse.reshape(-1, 6)])
    return np.vstack([points, mids]), out
