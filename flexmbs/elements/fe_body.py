"""Flexible bodies of any shape from finite-element matrices: interfaces, the reduced
basis (Craig-Bampton or free-free with attachment modes), the floating frame and the
inertia invariants of the reduced body (docs/explanation/formulation.md section 12).

The body's finite-element data are its nodes X (n, 3; m, body frame), the stiffness K
and the mass M (N x N, N = d n, d = 3 translations per node, or 6 with small rotations;
N/m and kg, consistent or lumped), in the nodal coordinates x (node-major: u v w [tx
ty tz] per node, body axes). The elastic coordinates are amplitudes eta of a basis,

    x = Phi eta,        Phi (N, nm),    Phi^T M Phi = I,    Phi^T K Phi = diag(w^2),

built from the interfaces, named node sets where markers attach:

* each interface k has a reference point p_k and moves as z_k = G_k x (6 values: the
  translation of p_k, m, and a small rotation, rad): the weighted least-squares rigid
  motion of its nodes (centroid c, r_i = X_i - c, weights w_i),

      u_c = sum w_i u_i / sum w_i,
      theta = J^-1 sum w_i r_i x u_i,   J = sum w_i (|r_i|^2 I - r_i r_i^T),
      u_p = u_c + theta x (p - c),

  (a single node with rotations: its own six coordinates). An "average" interface
  (as RBE3 does) only reads the motion of its nodes; a "rigid" one (as RBE2 does)
  also ties them: u_i = u_p + theta x (X_i - p) (and their rotations to theta),
  which stiffens the body there;
* Craig-Bampton (Craig and Bampton 1968): with the boundary coordinates z of all the
  interfaces and the rest y_r (their nodal coordinates less one dependent set per
  interface), the fixed-interface modes (K_rr phi = w^2 M_rr phi, z = 0), chosen by
  count or by frequency, and the constraint modes (z_j = 1, the other z zero, y_r =
  -K_rr^-1 K_rz), which represent any static state of the interfaces exactly;
* free-free: the body's lowest free modes and, for each boundary coordinate, an
  attachment mode (the static response to a unit load on z_j, balanced by the
  rigid-body inertia forces: inertia relief);
* the floating frame: six linear conditions L x = 0 that the deformation meets, so
  that the frame carries the rigid motions. "mean axes": L = R^T M (R the six rigid
  motions; the linearised Tisserand conditions of Agrawal and Shabana 1985: the
  deformation adds no linear or angular momentum about the frame); an interface k:
  L = G_k (the interface does not move relative to the frame: a clamped interface,
  the frame of the fixed-interface modes). The basis is projected,
  x -> x - R (L R)^-1 L x, the six rigid directions dropped, and the result
  orthonormalised and diagonalised (the reduced eigenproblem).

The inertia invariants of the reduced body (the integrals of formulation section 2 with
S = N(X) Phi) follow from the mass matrix when its translational part is the scalar
mass matrix Ms of the shape functions times I3 (M[d i + a, d j + b] = delta_ab
Ms[i, j]: consistent mass of isoparametric solid elements, or lumped mass), exactly:

    m = 1^T Ms 1,  int rho u0 = X^T Ms 1,  Th0 = X^T Ms X,
    Sbar[a] = 1^T Ms Phi_a,  N[a][b] = X_a^T Ms Phi_b,  SS[a][b] = Phi_a^T Ms Phi_b,

Phi_a (n, nm) the rows of Phi that are translation a of each node. What M holds
beyond (the small rotations' inertia of beam or shell models, or a mass matrix that
is not of that form) enters M_ff = Phi^T M Phi exactly, spread evenly over SS[0][0],
SS[1][1], SS[2][2]; `mass_form_error` measures it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ModelError
from .invariants import Invariants

if TYPE_CHECKING:  # scipy is imported where it is used: a run of beams needs none of it
    import scipy.sparse as sp

__all__ = [
    "FeData", "FeModal", "Interface", "FeBasis", "CONNECTIONS", "REDUCTIONS",
    "MEAN_AXES", "check_fe_data", "interface_rows", "rigid_motions", "fe_basis",
    "modal_basis_from_file", "fe_invariants", "node_mass_matrix", "mass_form_error",
]

CONNECTIONS = ("rigid", "average")
REDUCTIONS = ("craig-bampton", "free")
MEAN_AXES = "mean_axes"

SYMMETRY_TOL = 1e-8  # |K - K^T| (or M), relative to the largest |entry|: symmetric
RIGID_MOTION_TOL = 1e-4  # |K r| / (|K| |r|) of a rigid motion r above this: K is not free
DEPENDENT_TOL = 1e-10  # eigenvalue of the Gram matrix of the projected basis, its columns
#                       scaled to unit M-norm before the projection, below which a
#                       direction is dropped (a rigid motion: |left| < 1e-5 of it)
DEGENERATE_TOL = 1e-9  # smallest eigenvalue of J / largest: nodes on a line (or one node)
ROUND_OFF_ZERO = 1e-12  # |entry| of an interface row below this times its largest: 0
RIGID_TOL = 1e-6  # w^2 of a free mode below this times the shift: a rigid-body motion
MASS_FORM_TOL = 1e-6  # mass_form_error above which the invariants are approximate


@dataclass(frozen=True)
class FeData:
    """The finite-element data of a body: `nodes` X (n, 3), m, body frame; `labels`
    (n,) the node numbers of the file; `node_dofs` d, 3 (u v w) or 6 (u v w tx ty tz)
    coordinates per node; `stiffness` and `mass` K and M, scipy sparse (d n, d n), N/m,
    N, N m/rad and kg, kg m, kg m^2 by coordinate pair; `sets` {name: node indices} of
    the file (gmsh physical groups, Abaqus NSETs); `cells` ((meshio cell type, (ne, k)
    node indices), ...) for drawing, may be (); `source` the file or files the data
    came from (for messages)."""
    nodes: np.ndarray
    labels: np.ndarray
    node_dofs: int
    stiffness: sp.spmatrix
    mass: sp.spmatrix
    sets: dict = field(default_factory=dict)
    cells: tuple = ()
    source: str = "<python>"

    @property
    def ndof(self):
        return self.node_dofs * len(self.nodes)


@dataclass(frozen=True)
class FeModal:
    """A body already reduced (an MBDyn modal file): nodes (n, 3) m and labels (n,);
    shapes Phi (6 n, nm) at the nodes' u v w tx ty tz; mass and stiffness (nm, nm) of
    the modal coordinates; damping (nm, nm) or None; lumped (n, 6), the diagonal of the
    lumped mass matrix at the nodes (kg, kg m^2); cells for drawing; source."""
    nodes: np.ndarray
    labels: np.ndarray
    shapes: np.ndarray
    mass: np.ndarray
    stiffness: np.ndarray
    lumped: np.ndarray
    damping: np.ndarray | None = None
    cells: tuple = ()
    source: str = "<python>"
    node_dofs: int = 6

    @property
    def ndof(self):
        return self.node_dofs * len(self.nodes)


@dataclass(frozen=True)
class Interface:
    """A named node set where markers attach: `nodes` (indices), `connection` ("rigid"
    or "average"), `point` p (3,) m body frame, `weights` (per node, None: equal)."""
    name: str
    nodes: np.ndarray
    connection: str = "rigid"
    point: np.ndarray | None = None
    weights: np.ndarray | None = None


@dataclass(frozen=True)
class FeBasis:
    """The reduced basis of a finite-element body.

    vectors : Phi (N, nm), M-orthonormal and K-orthogonal. frequencies : (nm,) Hz,
    of the reduced body (Phi^T K Phi = diag((2 pi f)^2)). names : BODY.modeK.
    frame : what the floating frame is ("mean axes", or "interface NAME").
    reduction : "craig-bampton", "free" or "file". interface_rows : {name: (6, nm)},
    the interface's translation (m) and small rotation (rad) per unit eta.
    component_frequencies : (k,) Hz, of the fixed-interface modes (Craig-Bampton) or
    of the free modes (free) that went into the basis. requested_modes : how many
    of those were kept; modes_below : the frequency below which they were kept, or
    None. boundary : the number of interface coordinates that went in.
    """
    vectors: np.ndarray
    frequencies: np.ndarray
    names: tuple
    frame: str
    reduction: str
    interface_rows: dict
    component_frequencies: np.ndarray
    requested_modes: int
    modes_below: float | None = None
    boundary: int = 0
    damping: np.ndarray | None = None

    @property
    def nm(self):
        return self.vectors.shape[1]


# ------------------------------------------------------------------- checks
def _symmetry_error(a):
    import scipy.sparse as sp
    a = sp.csr_matrix(a)
    big = abs(a).max() if a.nnz else 0.0
    if big == 0.0:
        return 0.0, None
    d = (a - a.T).tocoo()
    if d.nnz == 0:
        return 0.0, None
    k = int(np.argmax(np.abs(d.data)))
    return float(abs(d.data[k]) / big), (int(d.row[k]), int(d.col[k]))


def _dof_text(data, index):
    names = ("u", "v", "w", "tx", "ty", "tz")
    node, dof = divmod(int(index), data.node_dofs)
    return f"node {data.labels[node]} {names[dof]}"


def check_fe_data(data, item=None, fld=None):
    """Raise ModelError unless `data` (FeData) is usable: finite node positions, K
    and M square of size d n and symmetric (to SYMMETRY_TOL), M with a non-negative
    diagonal and a positive mass."""
    import scipy.sparse as sp
    where = f"{data.source}: "
    x = np.asarray(data.nodes)
    if x.ndim != 2 or x.shape[1] != 3 or len(x) == 0 or not np.all(np.isfinite(x)):
        raise ModelError(f"{where}expected finite node coordinates (n, 3)", item, fld)
    if data.node_dofs not in (3, 6):
        raise ModelError(f"{where}expected 3 or 6 coordinates per node, got "
                         f"{data.node_dofs}", item, fld)
    n = data.ndof
    for what, a in (("stiffness", data.stiffness), ("mass", data.mass)):
        if a.shape != (n, n):
            raise ModelError(f"{where}the {what} matrix is {a.shape[0]} x {a.shape[1]}, "
                             f"expected {n} x {n} ({len(x)} nodes x {data.node_dofs} "
                             "coordinates): do the node table and the matrices belong "
                             "together?", item, fld)
        values = sp.csr_matrix(a).data
        if not np.all(np.isfinite(values)):
            raise ModelError(f"{where}the {what} matrix has entries that are not finite",
                             item, fld)
        err, at = _symmetry_error(a)
        if err > SYMMETRY_TOL:
            raise ModelError(f"{where}the {what} matrix is not symmetric: entry "
                             f"({_dof_text(data, at[0])}, {_dof_text(data, at[1])}) differs "
                             f"from its transpose by {err:.2g} of the largest entry",
                             item, fld)
    _check_free_stiffness(data, item, fld)
    diag = data.mass.diagonal()
    if np.any(diag < 0):
        k = int(np.argmin(diag))
        raise ModelError(f"{where}the mass matrix has a negative diagonal entry at "
                         f"{_dof_text(data, k)}: expected a positive semi-definite "
                         "mass matrix", item, fld)
    if not node_mass_matrix(data).sum() > 0:
        raise ModelError(f"{where}the mass matrix gives the body no mass", item, fld)


def _check_free_stiffness(data, item, fld):
    """Raise ModelError unless K is a free body's: not zero, and strained by no rigid
    motion r (rigid_motions): |K r|_2 <= RIGID_MOTION_TOL |K|_inf |r|_2 for each, the
    norm of K its largest absolute row sum (at least its largest eigenvalue). A K
    with supports, or read with another body's node table, fails."""
    import scipy.sparse as sp
    k = sp.csr_matrix(data.stiffness)
    norm = float(abs(k).sum(axis=1).max()) if k.nnz else 0.0
    if not norm > 0.0:
        raise ModelError(f"{data.source}: the stiffness matrix is zero: expected the body's "
                         "stiffness (is the file the mass matrix, or empty?)", item, fld)
    r = rigid_motions(data.nodes, data.node_dofs)
    ratio = np.linalg.norm(k @ r, axis=0) / (norm * np.linalg.norm(r, axis=0))
    worst = int(np.argmax(ratio))
    if ratio[worst] > RIGID_MOTION_TOL:
        motion = ("a translation along " if worst < 3 else "a rotation about ") + "xyz"[worst % 3]
        raise ModelError(f"{data.source}: the stiffness matrix resists {motion}: |K r| is "
                         f"{ratio[worst]:.2g} of |K| |r| where a free body's is 0 (expected "
                         "the stiffness of the free body, without supports or boundary "
                         "conditions, and the node table it was assembled on)", item, fld)


def node_mass_matrix(data):
    """Ms (n, n) sparse, kg: the mean of the three translational blocks of M,
    Ms[i, j] = sum_a M[d i + a, d j + a] / 3 (module docstring)."""
    import scipy.sparse as sp
    d = data.node_dofs
    m = sp.csr_matrix(data.mass)
    return sum(m[a::d, a::d] for a in range(3)) / 3.0


def mass_form_error(data):
    """How far the translational part of M is from Ms x I3: the largest |M[di+a,
    dj+b] - delta_ab Ms[i, j]| relative to the largest |Ms| (0 for consistent solid
    or lumped mass)."""
    import scipy.sparse as sp
    d = data.node_dofs
    m = sp.csr_matrix(data.mass)
    ms = node_mass_matrix(data)
    big = abs(ms).max()
    worst = 0.0
    for a in range(3):
        for b in range(3):
            block = m[a::d, b::d] - (ms if a == b else 0 * ms)
            if block.nnz:
                worst = max(worst, abs(block).max())
    return float(worst / big) if big > 0 else 0.0


# --------------------------------------------------------------- interfaces
def rigid_motions(nodes, node_dofs):
    """R (d n, 6): the nodal coordinates of the rigid motions: unit translations
    along x, y, z, then unit small rotations about the body axes through the origin
    (u_i = theta x X_i; rotations theta)."""
    x = np.asarray(nodes, dtype=float)
    n, d = len(x), node_dofs
    r = np.zeros((d * n, 6))
    for a in range(3):
        r[a::d, a] = 1.0
        e = np.eye(3)[a]
        r[np.arange(n)[:, None] * d + np.arange(3), 3 + a] = np.cross(e, x)
        if d == 6:
            r[3 + a::d, 3 + a] = 1.0
    return r


def _skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def interface_rows(data, interface, item=None):
    """G (6, N) dense: the interface's motion z = [u_p; theta] (m, rad) from the
    nodal coordinates (module docstring); a single node with six coordinates gives
    its own. ModelError when the nodes cannot define a rotation (one node without
    rotations, or all on a line)."""
    d = data.node_dofs
    nodes = np.asarray(interface.nodes, dtype=np.int64)
    x = np.asarray(data.nodes, dtype=float)
    p = _interface_point(data, interface)
    g = np.zeros((6, data.ndof))
    if len(nodes) == 1 and d == 6:
        k = nodes[0]
        g[:, d * k:d * k + 6] = np.eye(6)
        arm = p - x[k]
        g[:3, d * k + 3:d * k + 6] += -_skew(arm)  # u_p = u_k + theta x (p - X_k)
        return g
    w = (np.ones(len(nodes)) if interface.weights is None
         else np.asarray(interface.weights, dtype=float))
    w = w / w.sum()
    c = w @ x[nodes]
    r = x[nodes] - c
    j = sum(wi * (ri @ ri * np.eye(3) - np.outer(ri, ri)) for wi, ri in zip(w, r))
    ev = np.linalg.eigvalsh(j)
    if not ev[0] > DEGENERATE_TOL * max(ev[-1], 1e-300):
        what = "one node" if len(nodes) == 1 else "nodes that lie on a line"
        raise ModelError(f'interface "{interface.name}" has {what}: the rotation about '
                         "it is not defined; take a node set that spans a surface (or "
                         "nodes with rotations)", item, f"interfaces.{interface.name}")
    jinv = np.linalg.inv(j)
    for wi, ri, k in zip(w, r, nodes):
        cols = slice(d * k, d * k + 3)
        g[:3, cols] += wi * np.eye(3)
        # theta = J^-1 sum w r x u: r x u = ~r u
        g[3:, cols] += wi * jinv @ _skew(ri)
    g[:3] += -_skew(p - c) @ g[3:]  # u_p = u_c + theta x (p - c) = u_c - ~(p - c) theta
    return g


def _interface_point(data, interface):
    if interface.point is not None:
        return np.asarray(interface.point, dtype=float)
    x = np.asarray(data.nodes, dtype=float)[np.asarray(interface.nodes)]
    w = (np.ones(len(x)) if interface.weights is None
         else np.asarray(interface.weights, dtype=float))
    return (w / w.sum()) @ x


def _check_interfaces(data, interfaces, item):
    seen = {}
    for f in interfaces:
        nodes = np.asarray(f.nodes, dtype=np.int64)
        fld = f"interfaces.{f.name}"
        if nodes.size == 0:
            raise ModelError(f'interface "{f.name}" has no nodes', item, fld)
        if f.connection not in CONNECTIONS:
            raise ModelError(f"expected one of {', '.join(CONNECTIONS)}, got "
                             f"{f.connection!r}", item, f"{fld}.connection")
        if len(np.unique(nodes)) != len(nodes):
            raise ModelError(f'interface "{f.name}" lists a node twice', item, fld)
        for k in nodes:
            if int(k) in seen:
                raise ModelError(f'interfaces "{seen[int(k)]}" and "{f.name}" share node '
                                 f"{data.labels[k]}: an interface's nodes are its own",
                                 item, fld)
            seen[int(k)] = f.name


# ------------------------------------------------------- rigid (RBE2) elimination
def _rigid_elimination(data, interfaces):
    """(T (N, ny) sparse, {name: columns of its six master coordinates in y}, kept
    nodal coordinates (indices in x of the columns 0..nkept-1)): x = T y with the
    coordinates of the rigid interfaces' nodes replaced by their masters."""
    import scipy.sparse as sp
    d = data.node_dofs
    x = np.asarray(data.nodes, dtype=float)
    tied = np.zeros(data.ndof, dtype=bool)
    for f in interfaces:
        if f.connection == "rigid":
            for k in f.nodes:
                tied[d * k:d * k + d] = True
    kept = np.flatnonzero(~tied)
    rows, cols, vals = list(kept), list(range(len(kept))), [1.0] * len(kept)
    masters = {}
    col = len(kept)
    for f in interfaces:
        if f.connection != "rigid":
            continue
        p = _interface_point(data, f)
        masters[f.name] = np.arange(col, col + 6)
        for k in f.nodes:
            arm = x[k] - p
            block = np.hstack([np.eye(3), -_skew(arm)])  # u_k = u_p + theta x arm
            for a in range(3):
                for b in range(6):
                    if block[a, b] != 0.0:
                        rows.append(d * k + a)
                        cols.append(col + b)
                        vals.append(block[a, b])
            if d == 6:
                for a in range(3):
                    rows.append(d * k + 3 + a)
                    cols.append(col + 3 + a)
                    vals.append(1.0)
        col += 6
    t = sp.csr_matrix((vals, (rows, cols)), shape=(data.ndof, col))
    return t, masters, kept


# ------------------------------------------------------------------ helpers
def _factor(k, item, what):
    """A sparse LU of the symmetric k with symmetric pivoting (diagonal pivots), and
    the count of its negative pivots (Sylvester's law of inertia: its negative
    eigenvalues). ModelError when singular."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    k = sp.csc_matrix(k)
    try:
        lu = spla.splu(k, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                       options={"SymmetricMode": True})
    except RuntimeError:
        raise ModelError(f"{what} is singular: the interfaces do not hold the body (a "
                         "part of the mesh free to move, or nodes with rotations that "
                         "no element stiffens)", item, "interfaces") from None
    pivots = lu.U.diagonal()
    return lu, int(np.sum(pivots < 0)), pivots


def _operator(lu, n):
    import scipy.sparse.linalg as spla
    return spla.LinearOperator((n, n), matvec=lu.solve, dtype=float)


def _lowest_modes(k, m, count, below, lu, item, shift=0.0):
    """(w^2, vectors) of the `count` lowest eigenpairs of K v = w^2 M v (shift-invert
    about -shift with the given factor of K + shift M), or of those below `below`
    Hz (of the lowest `count` when both are given)."""
    import scipy.sparse.linalg as spla
    n = k.shape[0]
    limit = n - 1
    want = count if count is not None else 8
    want = min(want, limit)
    while True:
        w2, v = spla.eigsh(k, k=want, M=m, sigma=-shift, which="LM",
                           OPinv=_operator(lu, n))
        order = np.argsort(w2)
        w2, v = w2[order], v[:, order]
        if below is None:
            return w2, v
        top = (2 * np.pi * below) ** 2
        inside = w2 < top
        if not inside.all() or want >= limit or (count is not None and want >= count):
            keep = inside if count is None else inside & (np.arange(len(w2)) < count)
            return w2[keep], v[:, keep]
        want = min(2 * want, limit)


# ------------------------------------------------------------------- the basis
def fe_basis(data, interfaces, reduction="craig-bampton", modes=None, modes_below=None,
             frame=None, name="body", item=None):
    """The FeBasis of `data` (FeData) with `interfaces` (sequence of Interface), by
    `reduction` ("craig-bampton" or "free") keeping `modes` fixed-interface (or free)
    modes, or those below `modes_below` Hz, and the floating frame `frame`
    (MEAN_AXES or an interface's name; None: the first interface for Craig-Bampton,
    mean axes for free). Module docstring."""
    import scipy.sparse as sp
    interfaces = list(interfaces)
    frame = _checked_reduction(data, interfaces, reduction, modes, modes_below, frame, item)
    g = {f.name: interface_rows(data, f, item) for f in interfaces}
    k_full = sp.csr_matrix(data.stiffness)
    m_full = sp.csr_matrix(data.mass)
    k_full = 0.5 * (k_full + k_full.T)
    m_full = 0.5 * (m_full + m_full.T)
    t, masters, kept = _rigid_elimination(data, interfaces)
    ky = (t.T @ k_full @ t).tocsr()
    my = (t.T @ m_full @ t).tocsr()
    c, dependent = _boundary_coordinates(data, interfaces, g, masters, kept, ky.shape[0])
    what = f'{data.source}: body "{name}"'
    if reduction == "craig-bampton":
        basis, component = _craig_bampton(ky, my, c, dependent, t, modes, modes_below,
                                          item, what)
    else:
        basis, component = _free_with_attachments(ky, my, c, t, data, modes, modes_below,
                                                  item, what)
    phi, w2, frame_text = _in_floating_frame(basis, data, k_full, m_full, g, frame)
    nm = phi.shape[1]
    return FeBasis(
        vectors=np.ascontiguousarray(phi),
        frequencies=np.sqrt(np.clip(w2, 0.0, None)) / (2 * np.pi),
        names=tuple(f"{name}.mode{k + 1}" for k in range(nm)), frame=frame_text,
        reduction=reduction, interface_rows=_interface_rows_of(phi, interfaces, g, frame),
        component_frequencies=component, requested_modes=len(component),
        modes_below=None if modes_below is None else float(modes_below), boundary=c.shape[0])


def _checked_reduction(data, interfaces, reduction, modes, modes_below, frame, item):
    """The floating frame of fe_basis's settings (its default when None), once they
    are checked: a known reduction, interfaces that fit the body, a number of modes or
    a frequency, an interface for Craig-Bampton, a frame that is mean axes or an
    interface. ModelError naming the field otherwise."""
    if reduction not in REDUCTIONS:
        raise ModelError(f"expected one of {', '.join(REDUCTIONS)}, got {reduction!r}",
                         item, "reduction")
    _check_interfaces(data, interfaces, item)
    if modes is None and modes_below is None:
        raise ModelError("expected the number of modes (modes = n) or a frequency "
                         "(modes_below = f)", item, "modes")
    if reduction == "craig-bampton" and not interfaces:
        raise ModelError("Craig-Bampton reduction needs at least one interface "
                         '(or reduction = "free")', item, "interfaces")
    names = [f.name for f in interfaces]
    if frame is None:
        frame = names[0] if reduction == "craig-bampton" else MEAN_AXES
    if frame != MEAN_AXES and frame not in names:
        raise ModelError(f'expected "{MEAN_AXES}" or an interface ({", ".join(names) or "none"}'
                         f"), got {frame!r}", item, "frame")
    return frame


def _boundary_coordinates(data, interfaces, g, masters, kept, ny):
    """(C, dependent): the boundary coordinates z = C y (6 an interface: a rigid one's
    master motion, an averaged one's rows G) of the coordinates y left after the rigid
    interfaces' elimination, and one dependent set of y per interface (its master
    motion, or the 6 columns a pivoted QR of its rows picks)."""
    import scipy.linalg
    to_y = -np.ones(data.ndof, dtype=np.int64)
    to_y[kept] = np.arange(len(kept))
    c_rows, dependent = [], []
    for f in interfaces:
        if f.connection == "rigid":
            rows = np.zeros((6, ny))
            rows[np.arange(6), masters[f.name]] = 1.0
            dependent += list(masters[f.name])
        else:
            cols = np.flatnonzero(np.any(g[f.name] != 0.0, axis=0))
            rows = np.zeros((6, ny))
            rows[:, to_y[cols]] = g[f.name][:, cols]
            _, _, piv = scipy.linalg.qr(g[f.name][:, cols], pivoting=True)
            dependent += list(to_y[cols[piv[:6]]])
        c_rows.append(rows)
    c = np.vstack(c_rows) if c_rows else np.zeros((0, ny))
    return c, np.array(dependent, dtype=np.int64)


def _craig_bampton(ky, my, c, dependent, t, modes, modes_below, item, what):
    """(basis in the full coordinates, frequencies of its modes in Hz): the
    fixed-interface modes of K y = w^2 M y with the boundary coordinates z held, and
    the constraint modes (a unit motion of each of z, the rest in static equilibrium),
    with y = P [y_r; z] (y_rest = y_r, y_dep = Cd^-1 (z - Cr y_r))."""
    import scipy.sparse as sp
    ny, nb = ky.shape[0], c.shape[0]
    rest = np.setdiff1d(np.arange(ny), dependent)
    cd_inv = np.linalg.inv(c[:, dependent])
    nr = len(rest)
    dep_r = -cd_inv @ c[:, rest]  # (nb, nr), non-zero only at averaged nodes
    rr, cc = np.nonzero(dep_r)
    rows = np.concatenate([rest, dependent[rr], np.repeat(dependent, nb)])
    cols = np.concatenate([np.arange(nr), cc, nr + np.tile(np.arange(nb), nb)])
    vals = np.concatenate([np.ones(nr), dep_r[rr, cc], cd_inv.ravel()])
    p = sp.csr_matrix((vals, (rows, cols)), shape=(ny, nr + nb))
    kw = (p.T @ ky @ p).tocsr()
    mw = (p.T @ my @ p).tocsr()
    krr, mrr = kw[:nr, :nr], mw[:nr, :nr]
    krz = kw[:nr, nr:].toarray()
    lu, negative, _ = _factor(krr, item, f"{what}: the stiffness with the interfaces "
                              "held")
    if negative:
        raise ModelError(f"{what}: the stiffness matrix is indefinite: with the "
                         f"interfaces held it has {negative} negative "
                         "eigenvalue(s); expected a positive semi-definite stiffness",
                         item, "stiffness")
    count = None if modes is None else int(modes)
    if count is not None and count > nr - 1:
        raise ModelError(f"expected at most {nr - 1} modes (the body's coordinates "
                         f"less its interfaces'), got {count}", item, "modes")
    if count == 0:
        w2, vecs = np.zeros(0), np.zeros((nr, 0))
    else:
        w2, vecs = _lowest_modes(krr, mrr, count, modes_below, lu, item)
    if modes_below is not None and len(w2) == 0:
        raise ModelError(f"no fixed-interface mode is below {modes_below:g} Hz",
                         item, "modes_below")
    constraint = -lu.solve(np.asfortranarray(krz)) if nb else np.zeros((nr, 0))
    basis_w = np.block([[vecs, constraint],
                        [np.zeros((nb, vecs.shape[1])), np.eye(nb)]])
    return t @ (p @ basis_w), np.sqrt(np.clip(w2, 0.0, None)) / (2 * np.pi)


def _free_with_attachments(ky, my, c, t, data, modes, modes_below, item, what):
    """(basis in the full coordinates, frequencies of its modes in Hz): the rigid
    motions, the free body's lowest elastic modes (its 6 rigid-body motions found and
    left out) and the attachment modes of the boundary coordinates z = C y."""
    scale = ky.diagonal().mean() / max(my.diagonal().mean(), 1e-300)
    shift = 1e-6 * scale
    lu, negative, _ = _factor(ky + shift * my, item,
                              f"{what}: the stiffness of the free body")
    if negative:
        raise ModelError(f"{what}: the stiffness matrix is indefinite: it has "
                         f"{negative} negative eigenvalue(s); expected a positive "
                         "semi-definite stiffness", item, "stiffness")
    count = None if modes is None else int(modes) + 6
    w2, vecs = _lowest_modes(ky, my, count, modes_below, lu, item, shift=shift)
    rigid = w2 < RIGID_TOL * shift
    nrigid = int(np.sum(rigid))
    if nrigid != 6:
        raise ModelError(f"{what}: the free body has {nrigid} rigid-body motions, "
                         "expected 6 (a mesh in parts, or coordinates no element "
                         "stiffens?)", item, "stiffness")
    w2, vecs = w2[~rigid], vecs[:, ~rigid]
    if modes_below is not None and len(w2) == 0:
        raise ModelError(f"no free mode is below {modes_below:g} Hz", item,
                         "modes_below")
    ry = _rigid_in(t, data)
    attach = _attachment_modes(ky, my, c, ry, item, what)
    basis = t @ np.hstack([vecs, attach])
    basis = np.hstack([rigid_motions(data.nodes, data.node_dofs), basis])
    return basis, np.sqrt(np.clip(w2, 0.0, None)) / (2 * np.pi)


def _in_floating_frame(basis, data, k_full, m_full, g, frame):
    """(Phi, w^2, the frame's text): the basis with the rigid motions R taken out in
    the floating frame (mean axes: (M R)^T Phi = 0; an interface: its rows G Phi = 0),
    Phi = basis - R (L R)^-1 L basis, then made M-orthonormal (_orthonormal)."""
    r = rigid_motions(data.nodes, data.node_dofs)
    if frame == MEAN_AXES:
        ell = (m_full @ r).T
        frame_text = "mean axes"
    else:
        ell = g[frame]
        frame_text = f'interface "{frame}"'
    before = np.sqrt(np.clip(np.einsum("ij,ij->j", basis, m_full @ basis), 0.0, None))
    basis = basis - r @ np.linalg.solve(ell @ r, ell @ basis)
    phi, w2 = _orthonormal(basis, k_full, m_full, before)
    return phi, w2, frame_text


def _interface_rows_of(phi, interfaces, g, frame):
    """{interface: G Phi (6, nm)}: each interface's motion per modal coordinate, its
    round-off zeroed, the floating frame's interface all zero."""
    rows = {}
    for f in interfaces:
        row = g[f.name] @ phi
        big = np.abs(row).max() if row.size else 0.0
        row[np.abs(row) <= ROUND_OFF_ZERO * max(big, 1e-300)] = 0.0
        if f.name == frame:
            row[:] = 0.0
        rows[f.name] = np.ascontiguousarray(row)
    return rows


def _rigid_in(t, data):
    """The rigid motions in y (least squares through T: exact, T reproduces them)."""
    import scipy.sparse.linalg as spla
    r = rigid_motions(data.nodes, data.node_dofs)
    tt = (t.T @ t).tocsc()
    return spla.splu(tt).solve(np.asfortranarray(t.T @ r))


def _attachment_modes(ky, my, c, ry, item, what):
    """Attachment modes (ny, nb) of the free body: the static response to the unit
    loads C^T e_j on the boundary coordinates, less the rigid-body inertia forces
    that balance them (inertia relief), with the rigid motions taken out (M-orthogonal
    to them). Solved with six coordinates held where the rigid motions are
    independent (a statically determinate support: no reaction under a balanced
    load)."""
    import scipy.linalg
    nb = c.shape[0]
    if nb == 0:
        return np.zeros((ky.shape[0], 0))
    mr = my @ ry
    f = c.T
    f = f - mr @ np.linalg.solve(ry.T @ mr, ry.T @ f)
    _, _, piv = scipy.linalg.qr(ry.T, pivoting=True)
    held = np.sort(piv[:6])
    free = np.setdiff1d(np.arange(ky.shape[0]), held)
    lu, _, _ = _factor(ky[free][:, free], item, f"{what}: the stiffness of the free body "
                       "on six supports")
    x = np.zeros((ky.shape[0], nb))
    x[free] = lu.solve(np.asfortranarray(f[free]))
    x = x - ry @ np.linalg.solve(ry.T @ mr, mr.T @ x)
    return x


def _orthonormal(basis, k, m, before):
    """(Phi, w^2): the span of `basis` less its (numerically) dependent directions,
    M-orthonormal and K-orthogonal, w^2 ascending. `before`: the M-norm of each
    column before the frame's projection, its scale: a direction of which less than
    sqrt(DEPENDENT_TOL) is left was a rigid motion and is dropped."""
    b = basis / np.where(before > 0, before, 1.0)
    gram = b.T @ (m @ b)
    ev, vec = np.linalg.eigh(0.5 * (gram + gram.T))
    keep = ev > DEPENDENT_TOL
    q = vec[:, keep] / np.sqrt(ev[keep])
    bq = b @ q
    kb = bq.T @ (k @ bq)
    w2, y = np.linalg.eigh(0.5 * (kb + kb.T))
    phi = bq @ y
    for j in range(phi.shape[1]):
        big = np.argmax(np.abs(phi[:, j]))
        if phi[big, j] < 0:
            phi[:, j] *= -1.0
    return phi, w2


def modal_basis_from_file(modal, interfaces, name="body", item=None):
    """The FeBasis of an already reduced body (FeModal): its shapes, diagonalised
    (Phi^T M Phi = I); the frame is the one the file's modes were made in."""
    import scipy.linalg
    _check_interfaces(modal, interfaces, item)
    mass = 0.5 * (modal.mass + modal.mass.T)
    stiff = 0.5 * (modal.stiffness + modal.stiffness.T)
    try:
        w2, y = scipy.linalg.eigh(stiff, mass)
    except np.linalg.LinAlgError:
        raise ModelError(f"{modal.source}: the modal mass matrix is not positive "
                         "definite", item, "modal") from None
    if np.any(w2 < -SYMMETRY_TOL * max(abs(w2).max(), 1e-300)):
        raise ModelError(f"{modal.source}: the modal stiffness matrix is indefinite "
                         f"(lowest eigenvalue {w2.min():.3g})", item, "modal")
    phi = modal.shapes @ y
    damping = None if modal.damping is None else y.T @ modal.damping @ y
    g = {f.name: interface_rows(modal, f, item) for f in interfaces}
    rows = {f.name: np.ascontiguousarray(g[f.name] @ phi) for f in interfaces}
    freq = np.sqrt(np.clip(w2, 0.0, None)) / (2 * np.pi)
    return FeBasis(vectors=np.ascontiguousarray(phi), frequencies=freq,
                   names=tuple(f"{name}.mode{k + 1}" for k in range(len(freq))),
                   frame="the frame of the file's modes", reduction="file",
                   interface_rows=rows, component_frequencies=freq,
                   requested_modes=len(freq), damping=damping), y


# --------------------------------------------------------------- invariants
def fe_invariants(nodes, node_mass, node_dofs, phi, mass_ff, stiffness):
    """Invariants (flexmbs.elements.Invariants) of the elastic coordinates eta of
    x = Phi eta (module docstring): nodes X (n, 3) m; node_mass Ms (n, n) sparse kg;
    node_dofs d; phi (d n, nm); mass_ff Phi^T M Phi and stiffness Phi^T K Phi (nm,
    nm). SS[a][a] carries (mass_ff - sum_a Phi_a^T Ms Phi_a) / 3 each, so that
    SS00 + SS11 + SS22 = mass_ff."""
    import scipy.sparse as sp
    x = np.asarray(nodes, dtype=float)
    ms = sp.csr_matrix(node_mass)
    d = node_dofs
    nm = phi.shape[1]
    phis = [np.asarray(phi[a::d]) for a in range(3)]
    ones = np.ones(len(x))
    ms1 = ms @ ones
    msx = ms @ x
    msphi = [ms @ p for p in phis]
    sbar = np.array([ms1 @ p for p in phis])
    n = np.array([[x[:, a] @ msphi[b] for b in range(3)] for a in range(3)])
    ss = np.array([[phis[a].T @ msphi[b] for b in range(3)] for a in range(3)])
    rest = np.asarray(mass_ff) - (ss[0, 0] + ss[1, 1] + ss[2, 2])
    rest = 0.5 * (rest + rest.T)
    for a in range(3):
        ss[a, a] += rest / 3.0
    ss = 0.5 * (ss + ss.transpose(1, 0, 3, 2))
    return Invariants(mass=float(ms1.sum()), first_moment=ones @ msx, sbar=sbar,
                      th0=x.T @ msx, n=n.reshape(3, 3, nm), ss=ss,
                      stiffness=0.5 * (stiffness + np.asarray(stiffness).T))
