"""Inertia invariants and stiffness of beam elements and of a flexible body
(docs/explanation/formulation.md sections 2 and 3; Huang H2.25-2.68, H2.7-2.14, appendix B).

For a body with elastic coordinates qf (nodal, size nf) and points u = u0 + S(u0) qf
(body frame), the constant invariants are

    m = int rho dV                    Sbar = int rho S dV
    int rho u0 dV                     Th0 = int rho u0 u0^T dV
    N[a][b] = int rho u0_a S_b dV     SS[a][b] = int rho S_a^T S_b dV

(a, b = 0, 1, 2 the body axes, S_b row b of S). Per element they are computed in the
body frame for the element's 12 body-frame nodal coordinates, S = C S_elem T, by
exact quadrature: Gauss-Legendre along the axis and the section moments

    int dA = A, int y dA = int z dA = int y z dA = 0, int y^2 dA = I_z, int z^2 dA = I_y.

Every integrand is f g with f, g linear in (y, z) (S = S0 + y Sy + z Sz, u0 = p + y cy
+ z cz), so int f g dA = A f0 g0 + I_z fy gy + I_y fz gz exactly. Along the axis the
highest degree in xi is 6 (S0^T S0, cubic times cubic): 4 Gauss points (exact to
degree 7) integrate it exactly. The body invariants are the sums over elements,
selected by connectivity (B1) and the free coordinates (B2), plus point masses.

A beam body keeps SS and K_ff as that sum (`BlockInvariants`): one `InvariantBlock`
per element and per point mass, each on the few coordinates of its nodes, so that
what the kernels do with them costs in proportion to the number of elements (the
dense nf x nf arrays are formed only when asked for). Any body's invariants give
their blocks (`Invariants.blocks`: a dense body, a reduced beam say, is one block
on all its coordinates); the compiled model takes them in that form.
"""

import functools
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from .beam import (
    ELEMENT_DOFS,
    element_frame,
    element_length,
    element_stiffness,
    element_transformation,
    shape_matrix_parts,
)

__all__ = [
    "NODE_DOFS", "GAUSS_POINTS_ALONG_AXIS", "Invariants", "InvariantBlock",
    "BlockInvariants", "element_invariants",
    "free_coordinates", "node_selections", "assemble_body_invariants",
    "beam_body_invariants",
]

NODE_DOFS = 6  # u v w tx ty tz of a node, body axes (m, rad)
GAUSS_POINTS_ALONG_AXIS = 4  # exact to degree 7; the integrands reach degree 6
_LEGENDRE = np.polynomial.legendre.leggauss(GAUSS_POINTS_ALONG_AXIS)


def _frozen_array(a, shape):
    out = np.ascontiguousarray(np.asarray(a, dtype=np.float64).reshape(shape))
    out.flags.writeable = False
    return out


def _frozen_int_array(a):
    out = np.ascontiguousarray(np.asarray(a, dtype=np.int64))
    out.flags.writeable = False
    return out


@dataclass(frozen=True)
class Invariants:
    """Inertia invariants and stiffness of an element (nf = 12, its body-frame nodal
    coordinates) or of a flexible body (nf = its free elastic coordinates), body frame.

    Coordinates are nodal translations (m) and small rotations (rad), body axes; the
    units of a row or column of length nf follow its coordinate (below: "kg (kg m)"
    means kg for a translation, kg m for a rotation coordinate).

    mass : m = int rho dV (kg).
    first_moment : int rho u0 dV (3,), kg m.
    sbar : Sbar = int rho S dV (3, nf), kg (kg m).
    th0 : Th0 = int rho u0 u0^T dV (3, 3), kg m^2 (the second moment of mass of the
        undeformed body; Ibar0 = tr(Th0) I3 - Th0).
    n : N[a, b] = int rho u0_a S_b dV (3, 3, nf), kg m (kg m^2).
    ss : SS[a, b] = int rho S_a^T S_b dV (3, 3, nf, nf), kg (kg m, kg m^2).
    stiffness : K_ff (nf, nf), N/m (N, N m/rad).

    All arrays are float64, C-contiguous and read-only.
    """
    mass: float
    first_moment: np.ndarray
    sbar: np.ndarray
    th0: np.ndarray
    n: np.ndarray
    ss: np.ndarray
    stiffness: np.ndarray

    def __post_init__(self):
        nf = np.shape(self.sbar)[-1]
        object.__setattr__(self, "mass", float(self.mass))
        for name, shape in (("first_moment", (3,)), ("sbar", (3, nf)), ("th0", (3, 3)),
                            ("n", (3, 3, nf)), ("ss", (3, 3, nf, nf)),
                            ("stiffness", (nf, nf))):
            object.__setattr__(self, name, _frozen_array(getattr(self, name), shape))

    @property
    def nf(self):
        """Number of elastic coordinates."""
        return self.sbar.shape[1]

    def mass_matrix(self):
        """M_ff = SS[0][0] + SS[1][1] + SS[2][2] = int rho S^T S dV (nf, nf)
        (docs/explanation/formulation.md section 2)."""
        return self.ss[0, 0] + self.ss[1, 1] + self.ss[2, 2]

    @property
    def blocks(self):
        """SS and K_ff as one InvariantBlock on every coordinate (a dense body)."""
        return (InvariantBlock(np.arange(self.nf), self.ss, self.stiffness),)


@dataclass(frozen=True)
class InvariantBlock:
    """The part of SS and K_ff that one element or point mass adds to a body, on the
    body's elastic coordinates `dofs` ((nb,) indices into qf, distinct): ss (3, 3, nb,
    nb) and stiffness (nb, nb), symmetric (to round-off), in the units of `Invariants`.
    The body's SS is the sum over its blocks of ss placed at (dofs, dofs), and so is
    K_ff."""
    dofs: np.ndarray
    ss: np.ndarray
    stiffness: np.ndarray

    def __post_init__(self):
        dofs = np.asarray(self.dofs, dtype=np.int64).reshape(-1)
        nb = len(dofs)
        object.__setattr__(self, "dofs", _frozen_int_array(dofs))
        for name, shape in (("ss", (3, 3, nb, nb)), ("stiffness", (nb, nb))):
            object.__setattr__(self, name, _frozen_array(getattr(self, name), shape))


@dataclass(frozen=True)
class BlockInvariants:
    """The invariants of a body (`Invariants`' fields and units) with SS and K_ff kept
    as the sum of `blocks` (InvariantBlock, one per element and point mass): mass,
    first_moment (3,), sbar (3, nf), th0 (3, 3), n (3, 3, nf) as in Invariants.
    `ss`, `stiffness` and `mass_matrix()` form the dense arrays on first use (9 nf^2
    values: for the model's analysis, not for its kernels, which take the blocks)."""
    mass: float
    first_moment: np.ndarray
    sbar: np.ndarray
    th0: np.ndarray
    n: np.ndarray
    blocks: tuple

    def __post_init__(self):
        nf = np.shape(self.sbar)[-1]
        object.__setattr__(self, "mass", float(self.mass))
        for name, shape in (("first_moment", (3,)), ("sbar", (3, nf)), ("th0", (3, 3)),
                            ("n", (3, 3, nf))):
            object.__setattr__(self, name, _frozen_array(getattr(self, name), shape))
        object.__setattr__(self, "blocks", tuple(self.blocks))
        for b in self.blocks:
            if len(b.dofs) and (b.dofs.min() < 0 or b.dofs.max() >= nf):
                raise ValueError(f"a block's coordinates {b.dofs} are not among the "
                                 f"{nf} elastic coordinates")

    @property
    def nf(self):
        """Number of elastic coordinates."""
        return self.sbar.shape[1]

    @functools.cached_property
    def ss(self):
        """SS (3, 3, nf, nf), the sum of the blocks (read-only)."""
        nf = self.nf
        ss = np.zeros((3, 3, nf, nf))
        for b in self.blocks:
            ss[:, :, b.dofs[:, None], b.dofs[None, :]] += b.ss
        return _frozen_array(ss, ss.shape)

    @functools.cached_property
    def stiffness(self):
        """K_ff (nf, nf), the sum of the blocks, symmetrized (read-only)."""
        nf = self.nf
        k = np.zeros((nf, nf))
        for b in self.blocks:
            k[np.ix_(b.dofs, b.dofs)] += b.stiffness
        return _frozen_array(0.5 * (k + k.T), k.shape)

    def mass_matrix(self):
        """M_ff = SS[0][0] + SS[1][1] + SS[2][2] (nf, nf)."""
        return self.ss[0, 0] + self.ss[1, 1] + self.ss[2, 2]


def element_invariants(node1, node2, reference, section, material, item=None):
    """Invariants (nf = 12) of one beam element in the body frame, for its body-frame
    nodal coordinates q = [node 1: u v w tx ty tz, node 2: u v w tx ty tz].

    node1, node2 : node positions (m, body frame). reference : a vector (body frame)
    whose component normal to the axis is the section's y axis. section : Section.
    material : Material.

    S = C S_elem T (docs/explanation/formulation.md section 3, H2.7-2.14) and u0 = x1 + C
    (x, y, z); stiffness = T^T K_e T. Integrals by 4-point Gauss-Legendre along xi and the
    section moments (module docstring): exact.
    """
    c = element_frame(node1, node2, reference, item)
    l = element_length(node1, node2, item)
    t = element_transformation(c)
    x1 = np.asarray(node1, dtype=float)
    rho, area, i_y, i_z = material.density, section.area, section.i_y, section.i_z
    xg, wg = _LEGENDRE
    xis, wxs = 0.5 * (xg + 1.0), 0.5 * wg

    # channel k of a field f = f0 + y fy + z fz: (f0, fy, fz); weights rho l w (A, I_z, I_y)
    nchan = len(xis) * 3
    weight = np.empty(nchan)
    u0 = np.empty((nchan, 3))
    s = np.empty((nchan, 3, ELEMENT_DOFS))
    for g, (xi, w) in enumerate(zip(xis, wxs)):
        parts = shape_matrix_parts(xi, l)
        weight[3 * g:3 * g + 3] = rho * l * w * np.array([area, i_z, i_y])
        u0[3 * g:3 * g + 3] = [x1 + xi * l * c[:, 0], c[:, 1], c[:, 2]]
        s[3 * g:3 * g + 3] = [c @ p @ t for p in parts]
    axis = slice(0, nchan, 3)

    return Invariants(
        mass=rho * area * l,
        first_moment=np.einsum("k,ka->a", weight[axis], u0[axis]),
        sbar=np.einsum("k,kai->ai", weight[axis], s[axis]),
        th0=np.einsum("k,ka,kb->ab", weight, u0, u0),
        n=np.einsum("k,ka,kbi->abi", weight, u0, s),
        ss=np.einsum("k,kai,kbj->abij", weight, s, s),
        stiffness=t.T @ element_stiffness(l, section, material) @ t,
    )


def free_coordinates(free, n_nodes, item=None):
    """Indices (int array, size nf) of the free coordinates among the 6 n_nodes nodal
    coordinates (node-major, u v w tx ty tz per node; B2 of docs/explanation/formulation.md
    section 3).

    free : a boolean mask of length 6 n_nodes, or a list of distinct indices (their
    order is the order of qf).
    """
    f = np.asarray(free)
    ncoord = NODE_DOFS * n_nodes
    if f.dtype == bool:
        if f.shape != (ncoord,):
            raise ModelError(f"expected a boolean mask of length 6 x {n_nodes} nodes = "
                             f"{ncoord}, got shape {f.shape}", item, "free")
        return np.flatnonzero(f)
    if f.ndim != 1 or (f.size and not np.issubdtype(f.dtype, np.integer)):
        raise ModelError("expected a boolean mask or a list of integer coordinate "
                         f"indices, got {free!r}", item, "free")
    f = f.astype(np.int64)
    if f.size and (f.min() < 0 or f.max() >= ncoord):
        raise ModelError(f"expected coordinate indices in 0..{ncoord - 1} (6 per node), "
                         f"got {free!r}", item, "free")
    if len(np.unique(f)) != len(f):
        raise ModelError(f"expected distinct coordinate indices, got {free!r}", item, "free")
    return f


def node_selections(node, free_indices, n_nodes):
    """(S_k, PS_k), each 3 x nf: the rows of qf that are node k's translation (m) and
    small rotation (rad) in body axes; fixed coordinates give zero columns."""
    nf = len(free_indices)
    full = np.zeros((NODE_DOFS, NODE_DOFS * n_nodes))
    full[:, NODE_DOFS * node:NODE_DOFS * (node + 1)] = np.eye(NODE_DOFS)
    sel = full[:, free_indices].reshape(NODE_DOFS, nf)
    return np.ascontiguousarray(sel[:3]), np.ascontiguousarray(sel[3:])


def _connectivity(connectivity, n_nodes, n_elements, item):
    conn = np.asarray(connectivity)
    if (conn.shape != (n_elements, 2) or
            (conn.size and not np.issubdtype(conn.dtype, np.integer))):
        raise ModelError(f"expected {n_elements} pairs of node indices (one per element), "
                         f"got {connectivity!r}", item, "connectivity")
    if conn.size and (conn.min() < 0 or conn.max() >= n_nodes):
        raise ModelError(f"expected node indices in 0..{n_nodes - 1}, got {connectivity!r}",
                         item, "connectivity")
    if np.any(conn[:, 0] == conn[:, 1]):
        raise ModelError("expected two different nodes per element", item, "connectivity")
    return conn


def assemble_body_invariants(element_invariants, connectivity, node_positions, free,
                             node_masses=None, item=None):
    """Body invariants (nf free coordinates): the sum over elements of their invariants
    placed by connectivity and restricted to the free coordinates (S_body = S_e B1 B2,
    docs/explanation/formulation.md section 3), plus point masses at nodes; a
    BlockInvariants whose SS and K_ff are one block per element and per point mass.

    element_invariants : sequence of Invariants (nf = 12), one per element.
    connectivity : (n_elements, 2) node indices, node 1 then node 2 of each element.
    node_positions : (n_nodes, 3) undeformed node positions (m, body frame).
    free : boolean mask or index list of the free coordinates (`free_coordinates`).
    node_masses : (n_nodes,) point masses at the nodes (kg), or None. A point mass m_k
        at x_k adds like a volume of zero size with S = S_k (`node_selections`):
        m += m_k, int rho u0 += m_k x_k, Sbar += m_k S_k, Th0 += m_k x_k x_k^T,
        N[a][b] += m_k x_k[a] S_k[b], SS[a][b] += m_k S_k[a]^T S_k[b]. Its rotary
        inertia is not included.
    """
    pos = np.asarray(node_positions, dtype=float)
    if pos.ndim != 2 or pos.shape[1] != 3 or not np.all(np.isfinite(pos)):
        raise ModelError("expected an (n_nodes, 3) array of finite node positions",
                         item, "node_positions")
    n_nodes = len(pos)
    conn = _connectivity(connectivity, n_nodes, len(element_invariants), item)
    idx = free_coordinates(free, n_nodes, item)
    nf = len(idx)
    to_free = -np.ones(NODE_DOFS * n_nodes, dtype=np.int64)
    to_free[idx] = np.arange(nf)

    mass = 0.0
    first = np.zeros(3)
    sbar = np.zeros((3, nf))
    th0 = np.zeros((3, 3))
    n = np.zeros((3, 3, nf))
    blocks = []
    for e, ((n1, n2), inv) in enumerate(zip(conn, element_invariants)):
        if inv.nf != ELEMENT_DOFS:
            raise ModelError(f"expected element invariants of size {ELEMENT_DOFS}, got "
                             f"{inv.nf} for element {e}", item, "element_invariants")
        dofs = np.r_[NODE_DOFS * n1:NODE_DOFS * (n1 + 1), NODE_DOFS * n2:NODE_DOFS * (n2 + 1)]
        rows = to_free[dofs]
        keep = rows >= 0
        fr = rows[keep]
        mass += inv.mass
        first += inv.first_moment
        th0 += inv.th0
        sbar[:, fr] += inv.sbar[:, keep]
        n[:, :, fr] += inv.n[:, :, keep]
        blocks.append(InvariantBlock(fr, inv.ss[:, :, keep][:, :, :, keep],
                                     inv.stiffness[np.ix_(keep, keep)]))

    if node_masses is not None:
        mk = np.asarray(node_masses, dtype=float)
        if mk.shape != (n_nodes,) or not np.all(np.isfinite(mk)) or np.any(mk < 0):
            raise ModelError(f"expected {n_nodes} point masses >= 0 (kg), one per node, "
                             f"got {node_masses!r}", item, "node_masses")
        for node in np.flatnonzero(mk):
            m, x = mk[node], pos[node]
            s, _ = node_selections(node, idx, n_nodes)
            mass += m
            first += m * x
            th0 += m * np.outer(x, x)
            sbar += m * s
            n += m * np.einsum("a,bi->abi", x, s)
            fr = np.flatnonzero(np.any(s != 0.0, axis=0))
            sk = s[:, fr]
            blocks.append(InvariantBlock(fr, m * np.einsum("ai,bj->abij", sk, sk),
                                         np.zeros((len(fr), len(fr)))))

    return BlockInvariants(mass=mass, first_moment=first, sbar=sbar, th0=th0, n=n,
                           blocks=tuple(blocks))


def beam_body_invariants(node_positions, connectivity, reference, section, material, free,
                         node_masses=None, item=None):
    """Body invariants of a beam whose elements share one section, material and
    section-y reference vector (body frame): `element_invariants` of every element,
    then `assemble_body_invariants`."""
    pos = np.asarray(node_positions, dtype=float)
    conn = np.asarray(connectivity)
    if conn.ndim != 2 or conn.shape[1:] != (2,):
        raise ModelError(f"expected pairs of node indices, got {connectivity!r}",
                         item, "connectivity")
    _connectivity(conn, len(pos), len(conn), item)
    elements = [element_invariants(pos[a], pos[b], reference, section, material,
                                   f"{item}, element {e}" if item else f"element {e}")
                for e, (a, b) in enumerate(conn)]
    return assemble_body_invariants(elements, conn, pos, free, node_masses, item)
