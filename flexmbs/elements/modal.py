"""Modal reduction of a beam body (docs/explanation/formulation.md section 8; Huang H3.4).

The nodal elastic coordinates of a beam body are its free nodal coordinates x (size
n: nodal translations in m and small rotations in rad, body axes). Modal reduction
replaces them by nm amplitudes eta with

    x = Phi eta,        Phi (n, nm),

whose columns are

* the lowest eigenvectors of the body under its reference conditions,
  K phi = w^2 M phi, mass-normalised (phi^T M phi = 1, so eta is in kg^(1/2) m for a
  mode that mostly translates): K = K_ff, M = M_ff plus the rotary inertias at nodes
  (PS_k^T J_k PS_k; docs/explanation/formulation.md section 2). Rigid-body modes that the reference
  conditions leave free are left out (the floating frame carries those motions).
  Modes of equal frequency (the bending pairs of a symmetric section) are turned
  within their pair so that each is as pure as possible in one kind of strain energy;
  the sign makes the largest entry positive;
* optionally static correction modes at the marker nodes: for each free coordinate c
  of a node that carries a marker, the static shape with x_c = 1 and the other
  coordinates of the marker nodes held at zero (the interior follows,
  x_i = -K_ii^-1 K_ic: Craig and Bampton's constraint modes), made M-orthogonal to
  the free rigid-body motions (if any), the kept modes and the corrections before it
  (Gram-Schmidt in the M inner product), normalised, and dropped when almost nothing
  of it is left (DEPENDENT_TOL). With them a load at a marker node, and the stretch
  of the beam by it, are represented exactly in statics (for a body held by its
  reference conditions);
* optionally modal derivatives (Idelsohn and Cardona 1985): for each pair i <= j of
  the kept modes, the second-order static response

      theta_ij = d^2 x / d eta_i d eta_j = -K^+ (dK_t/d eta_j) phi_i,

  K_t(x) the tangent stiffness of the consistent geometric stiffness
  (flexmbs.elements.geometric, docs/explanation/formulation.md section 6), whose
  derivative at x = 0 applied to element coordinates d_i, d_j is

      B_e(d_i, d_j) = EA [(a . d_j) G d_i + (a . d_i) G d_j + (d_i^T G d_j) a]

  (a the axial-strain row, G the slope matrix of the element), and K^+ the inverse of
  K on the elastic modes (sum over them of phi_k phi_k^T / w_k^2). For bending modes of
  a straight beam free to shorten (a cantilever) theta_ij is the axial displacement
  that cancels the membrane strain u' + sbar/2 of the bent beam (its foreshortening):
  without it a reduced beam with
  geometric stiffness has no axial freedom to relax into, and the foreshortening
  energy stiffens its bending (membrane locking). The derivatives are made
  M-orthogonal to everything before them, normalised, and dropped when less than
  DEPENDENT_TOL of the largest one is left (many pairs give the same shape, or none).

Every invariant projects (docs/explanation/formulation.md sections 2 and 8):

    Sbar -> Sbar Phi,  N[a][b] -> N[a][b] Phi,  SS[a][b] -> Phi^T SS[a][b] Phi,
    K -> Phi^T K Phi,  and m, int rho u0, Th0 unchanged;

a node's rows (S_k, PS_k) become S_k Phi, PS_k Phi, and structural damping
alpha K + beta M_ff projects with them. The kernels see only these.

A mode is described by how its strain energy 1/2 phi^T K phi splits between the four
decoupled parts of the element stiffness (docs/explanation/formulation.md section 3): axial (EA),
torsion (GJ), bending y (the deflection v along the section's y axis, EI_z: bending in
the element's x-y plane) and bending z (w along z, EI_y: the x-z plane).

The functions take a beam body (`flexmbs.model.items.BeamBody`: nodes,
connectivity, reference, section, material, free, node_inertias, nodal_invariants and,
when reduced, basis).
"""

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from .beam import element_frame, element_length, element_stiffness, element_transformation
from .invariants import NODE_DOFS, Invariants

__all__ = [
    "ENERGY_PARTS", "ModalBasis", "BodyModes", "strain_energy_matrices",
    "rotary_inertia_mass", "body_mass_matrix", "rigid_mode_count", "body_modes",
    "correction_shapes", "modal_basis", "project_invariants", "describe_fractions",
    "axial_stretch_capability", "basis_record", "max_modes", "modal_derivative_shapes",
    "geometric_second_order_force", "kept_mode_count",
]

ENERGY_PARTS = ("axial", "torsion", "bending y", "bending z")
# element coordinates (u1 v1 w1 tx1 ty1 tz1 u2 v2 w2 tx2 ty2 tz2) of each part
_PART_DOFS = ((0, 6), (3, 9), (1, 5, 7, 11), (2, 4, 8, 10))
_DOF_NAMES = ("u", "v", "w", "tx", "ty", "tz")

DEGENERATE_TOL = 1e-8  # relative difference of w^2 within which modes are one cluster
DEPENDENT_TOL = 1e-6  # M-norm of a correction shape left after orthogonalisation,
#                       relative to its M-norm before: below this it is dropped
RIGID_TOL = 1e-9  # singular value (relative) below which a rigid motion is left free
ROUND_OFF_ZERO = 1e-13  # |entry| of a mode below this times its largest: 0
PURE_FRACTION = 0.99  # a mode with this much of one part is called by that part alone
MENTION_FRACTION = 0.05  # parts with at least this much are named in a mixed mode
_CLUSTER_WEIGHTS = (1.0, 2.0, 4.0, 3.0)  # axial, torsion, bending y, bending z: the
#                       order in which modes of one cluster come (largest first)


@dataclass(frozen=True)
class ModalBasis:
    """The elastic coordinates of a reduced beam body, eta, with x = vectors @ eta.

    vectors : Phi (n, nm), x per unit eta: m (rad) per kg^(1/2) m; M-orthonormal,
        Phi^T M Phi = I with M = M_ff plus the nodes' rotary inertias.
    kinds : (nm,) "mode" (an eigenvector), "correction" (a static correction mode) or
        "derivative" (a modal derivative).
    names : (nm,) coordinate names, BODY.modeK, BODY.correctionK and BODY.derivativeK.
    frequencies : (nm,) Hz: w / 2 pi of each mode; for a correction mode or a modal
        derivative the Rayleigh quotient sqrt(phi^T K phi) / 2 pi (it is no
        eigenvector).
    reduced_frequencies : (nm,) Hz: the natural frequencies of the reduced body,
        Phi^T K Phi y = w^2 y.
    energy_fractions : (nm, 4) the strain energy of each column split as ENERGY_PARTS.
    descriptions : (nm,) text, e.g. "bending y", "torsion", "static correction for w
        at node 1 (tip): bending z".
    sources : (nm, 2) for a correction mode its (node, dof) (dof 0..5 in u v w tx ty
        tz order); for a modal derivative its two modes (i, j), counted from 1 as in
        BODY.modeK; (-1, -1) for a mode.
    requested_modes : the number of modes kept (`modes`, or as many as lie below
        `modes_below`).
    dropped_corrections : the correction shapes dropped as (nearly) dependent, as
        (node, dof) pairs.
    modes_below : the frequency (Hz) below which modes were kept, or None.
    """
    vectors: np.ndarray
    kinds: tuple
    names: tuple
    frequencies: np.ndarray
    reduced_frequencies: np.ndarray
    energy_fractions: np.ndarray
    descriptions: tuple
    sources: np.ndarray
    requested_modes: int
    dropped_corrections: tuple = ()
    modes_below: float | None = None

    @property
    def nm(self):
        """Number of elastic coordinates eta."""
        return self.vectors.shape[1]


@dataclass(frozen=True)
class BodyModes:
    """The natural modes of a beam body alone under its reference conditions (the
    nodal eigenproblem K phi = w^2 M phi): frequencies (n,) Hz, ascending; vectors
    (n, n) mass-normalised, columns; energy_fractions (n, 4); descriptions (n,);
    rigid (n,) bool, the rigid-body motions the reference conditions leave free."""
    frequencies: np.ndarray
    vectors: np.ndarray
    energy_fractions: np.ndarray
    descriptions: tuple
    rigid: np.ndarray


# --------------------------------------------------------------- nodal matrices
def _selection(node, free, n_nodes):
    """(6, n): node `node`'s u v w tx ty tz as rows over the free nodal coordinates."""
    rows = np.zeros((NODE_DOFS, len(free)))
    where = {int(k): j for j, k in enumerate(free)}
    for d in range(NODE_DOFS):
        j = where.get(NODE_DOFS * node + d)
        if j is not None:
            rows[d, j] = 1.0
    return rows


def _element_map(beam, element):
    """(12, n): the element's coordinates (element frame) over the free nodal
    coordinates, e = T [sel(a); sel(b)] x (docs/explanation/formulation.md section 3: T B1 B2)."""
    a, b = beam.connectivity[element]
    n_nodes = len(beam.nodes)
    frame = element_frame(beam.nodes[a], beam.nodes[b], beam.reference)
    return element_transformation(frame) @ np.vstack(
        [_selection(a, beam.free, n_nodes), _selection(b, beam.free, n_nodes)])


def strain_energy_matrices(beam):
    """(4, n, n): the nodal stiffness split into ENERGY_PARTS, K = sum of the four
    (each the element stiffness's block on that part's coordinates, section 3);
    1/2 x^T K_p x is the strain energy of part p (J)."""
    n = len(beam.free)
    out = np.zeros((len(ENERGY_PARTS), n, n))
    for e, (a, b) in enumerate(beam.connectivity):
        length = element_length(beam.nodes[a], beam.nodes[b])
        ke = element_stiffness(length, beam.section, beam.material)
        te = _element_map(beam, e)
        for p, dofs in enumerate(_PART_DOFS):
            idx = np.array(dofs)
            out[p] += te[idx].T @ ke[np.ix_(idx, idx)] @ te[idx]
    return 0.5 * (out + out.transpose(0, 2, 1))


def rotary_inertia_mass(beam):
    """(n, n) kg m^2: the rotary inertias J_k at nodes as mass terms of the small
    nodal rotations, sum_k PS_k^T J_k PS_k (docs/explanation/formulation.md section 2)."""
    n = len(beam.free)
    out = np.zeros((n, n))
    for node, inertia in (beam.node_inertias or {}).items():
        ps = _selection(int(node), beam.free, len(beam.nodes))[3:]
        out += ps.T @ np.asarray(inertia, dtype=float) @ ps
    return out


def body_mass_matrix(beam):
    """M (n, n) of the eigenproblem: M_ff of the nodal invariants (the beam and its
    point masses) plus `rotary_inertia_mass`."""
    return beam.nodal_invariants.mass_matrix() + rotary_inertia_mass(beam)


def rigid_mode_count(beam):
    """How many independent rigid-body motions (3 translations, 3 small rotations
    about the body origin) the reference conditions leave free: those whose nodal
    coordinates vanish at every held coordinate."""
    n_nodes = len(beam.nodes)
    motion = np.zeros((NODE_DOFS * n_nodes, 6))
    for k, x in enumerate(beam.nodes):
        at = NODE_DOFS * k
        skew = np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])
        motion[at:at + 3, :3] = np.eye(3)
        motion[at:at + 3, 3:] = skew.T  # d = theta x x = -(x x theta)
        motion[at + 3:at + 6, 3:] = np.eye(3)
    held = np.setdiff1d(np.arange(NODE_DOFS * n_nodes), beam.free)
    if len(held) == 0:
        return 6
    s = np.linalg.svd(motion[held], compute_uv=False)
    scale = max(1.0, float(np.abs(beam.nodes).max()))
    return int(6 - np.sum(s > RIGID_TOL * scale))


def max_modes(beam):
    """The most modes a body can keep: its nodal coordinates less its free rigid-body
    motions."""
    return len(beam.free) - rigid_mode_count(beam)


def _fractions(vectors, parts):
    """(m, 4): the strain-energy split of each column (zeros for a rigid motion)."""
    energy = np.einsum("im,pij,jm->mp", vectors, parts, vectors)
    energy = np.clip(energy, 0.0, None)
    total = energy.sum(axis=1, keepdims=True)
    scale = max(float(total.max()) if total.size else 0.0, 1e-300)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(total > 1e-12 * scale, energy / np.where(total > 0, total, 1.0), 0.0)
    return out


def describe_fractions(fractions):
    """A mode's kind from its strain-energy split (4,) (ENERGY_PARTS order): the
    part's name when it holds at least PURE_FRACTION, else the parts holding at least
    MENTION_FRACTION with their percentages; "rigid-body motion" without strain."""
    f = np.asarray(fractions, dtype=float)
    if not np.any(f > 0):
        return "rigid-body motion"
    order = np.argsort(-f)
    if f[order[0]] >= PURE_FRACTION:
        return ENERGY_PARTS[order[0]]
    return " + ".join(f"{ENERGY_PARTS[p]} {100 * f[p]:.0f} %" for p in order
                      if f[p] >= MENTION_FRACTION)


def _align_clusters(w2, vectors, parts, mass, first):
    """Turn each cluster of equal eigenvalues (from index `first` on) so that its
    modes diagonalise sum_p c_p K_p (weights _CLUSTER_WEIGHTS), purest first; then
    zero the round-off entries, normalise (phi^T M phi = 1) and fix the signs
    (largest entry positive)."""
    weighted = np.einsum("p,pij->ij", np.array(_CLUSTER_WEIGHTS), parts)
    k = first
    n = len(w2)
    while k < n:
        j = k + 1
        while j < n and w2[j] - w2[k] <= DEGENERATE_TOL * max(abs(w2[k]), 1e-300):
            j += 1
        if j - k > 1:
            v = vectors[:, k:j]
            _, turn = np.linalg.eigh(v.T @ weighted @ v)
            vectors[:, k:j] = v @ turn[:, ::-1]
        k = j
    for m in range(vectors.shape[1]):
        column = vectors[:, m]
        # round-off where a mode has no component (1e-17) would become needless
        # marker terms in the kernels
        column[np.abs(column) <= ROUND_OFF_ZERO * np.abs(column).max()] = 0.0
        column /= np.sqrt(column @ mass @ column)
        big = np.argmax(np.abs(column))
        if column[big] < 0:
            column *= -1.0
        column += 0.0  # no -0.0
    return vectors


def body_modes(beam):
    """BodyModes of `beam` alone under its reference conditions: the full nodal
    eigenproblem K_ff phi = w^2 M phi (scipy.linalg.eigh; M with the rotary
    inertias at nodes), w in Hz, the rigid-body motions first (0 Hz)."""
    import scipy.linalg  # here, not at the top: a rigid model does without it

    k = beam.nodal_invariants.stiffness
    m = body_mass_matrix(beam)
    w2, vectors = scipy.linalg.eigh(k, m)
    nrigid = rigid_mode_count(beam)
    w2[:nrigid] = 0.0
    parts = strain_energy_matrices(beam)
    vectors = _align_clusters(w2, vectors, parts, m, nrigid)
    fractions = _fractions(vectors, parts)
    fractions[:nrigid] = 0.0
    rigid = np.arange(len(w2)) < nrigid
    return BodyModes(
        frequencies=np.sqrt(np.clip(w2, 0.0, None)) / (2 * np.pi), vectors=vectors,
        energy_fractions=fractions,
        descriptions=tuple(describe_fractions(f) for f in fractions), rigid=rigid)


# ------------------------------------------------------------ correction modes
def correction_shapes(stiffness, free, nodes, item=None):
    """Static constraint shapes (n, nb) at the free coordinates of `nodes`, and their
    (node, dof) labels: column c has x_c = 1, the other coordinates of `nodes` 0 and
    the interior x_i = -K_ii^-1 K_ic (statically condensed). `free` are the body's
    free nodal coordinates (indices 6 node + dof)."""
    import scipy.linalg  # here, not at the top: a rigid model does without it

    free = np.asarray(free)
    boundary = [j for j, k in enumerate(free) if int(k) // NODE_DOFS in set(nodes)]
    labels = [(int(free[j]) // NODE_DOFS, int(free[j]) % NODE_DOFS) for j in boundary]
    n = len(free)
    interior = np.setdiff1d(np.arange(n), boundary)
    shapes = np.zeros((n, len(boundary)))
    shapes[boundary, np.arange(len(boundary))] = 1.0
    if len(boundary) and len(interior):
        k = np.asarray(stiffness)
        try:
            shapes[interior] = -scipy.linalg.solve(
                k[np.ix_(interior, interior)], k[np.ix_(interior, boundary)],
                assume_a="pos")
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
            raise ModelError("static correction modes need the reference conditions and "
                             "the marker nodes to hold the body (the rest of it is free "
                             "to move rigidly)", item, "correction_modes") from None
    return shapes, labels


def _m_orthogonalise(shape, basis, mass):
    """shape less its M-projections on the (M-orthonormal) columns of basis, twice
    (classical Gram-Schmidt with one re-orthogonalisation)."""
    for _ in range(2):
        if basis.shape[1]:
            shape = shape - basis @ (basis.T @ (mass @ shape))
    return shape


# ---------------------------------------------------------- modal derivatives
def geometric_second_order_force(beam, x1, x2):
    """B(x1, x2) (n,), N and N m on the free nodal coordinates: the symmetric bilinear
    derivative of the consistent geometric stiffness, d/ds [K_t(s x2) x1] at s = 0
    (module docstring), summed over the elements."""
    from .geometric_assembly import BeamGeometry

    return BeamGeometry(beam).second_order(np.asarray(x1, dtype=float),
                                           np.asarray(x2, dtype=float))


def modal_derivative_shapes(beam, phi, alone=None):
    """The modal derivatives theta_ij (n, p) of the columns of phi (n, k), pairs
    i <= j in the order (1,1), (1,2), ..., (k,k), and the pairs (p, 2) counted from 1:
    theta_ij = -K^+ B(phi_i, phi_j) (module docstring), K^+ through the body's elastic
    modes (`alone`, its BodyModes, computed when not given), so that a body with free
    rigid-body motions has derivatives without them. m per (kg^(1/2) m)^2 for
    mass-normalised phi."""
    alone = body_modes(beam) if alone is None else alone
    elastic = ~alone.rigid
    vectors = alone.vectors[:, elastic]
    w2 = (2 * np.pi * alone.frequencies[elastic]) ** 2
    from .geometric_assembly import BeamGeometry

    geometry = BeamGeometry(beam)
    pairs, shapes = [], []
    for i in range(phi.shape[1]):
        for j in range(i, phi.shape[1]):
            rhs = geometry.second_order(phi[:, i], phi[:, j])
            shapes.append(-vectors @ ((vectors.T @ rhs) / w2))
            pairs.append((i + 1, j + 1))
    n = len(beam.free)
    return (np.column_stack(shapes) if shapes else np.zeros((n, 0)),
            np.array(pairs, dtype=np.int64).reshape(-1, 2))


def kept_mode_count(beam, modes, modes_below=None, alone=None, item=None):
    """How many of the lowest elastic modes a basis keeps: `modes` (a positive
    integer, or "all" for no limit by count), and of those only the ones below
    `modes_below` Hz when given. Raises ModelError when that leaves none, or when
    `modes` asks for more than the body has."""
    if modes != "all" and (isinstance(modes, bool) or not isinstance(modes, (int, np.integer))
                           or modes < 1):
        raise ModelError(f'expected a positive integer or "all", got {modes!r}', item,
                         "modes")
    limit = max_modes(beam)
    if modes != "all" and modes > limit:
        rigid = " less its free rigid-body motions" if limit < len(beam.free) else ""
        raise ModelError(f"expected at most {limit} modes (the body's {len(beam.free)} "
                         f"elastic coordinates{rigid}), got {modes}", item, "modes")
    count = limit if modes == "all" else int(modes)
    if modes_below is None:
        return count
    alone = body_modes(beam) if alone is None else alone
    elastic = alone.frequencies[~alone.rigid]
    below = int(np.sum(elastic < modes_below))
    if below == 0:
        raise ModelError(f"no mode is below {modes_below:g} Hz: the lowest is at "
                         f"{elastic[0]:.4g} Hz", item, "modes_below")
    return min(count, below)


# ------------------------------------------------------------------ the basis
def _add_shape(shape, scale, phi, rigid, mass):
    """`shape` made M-orthogonal to the rigid motions and the columns of phi,
    normalised and signed (largest entry positive), or None when less than
    DEPENDENT_TOL of `scale` (an M-norm) is left."""
    left = _m_orthogonalise(shape, np.column_stack([rigid, phi]), mass)
    after = np.sqrt(max(left @ mass @ left, 0.0))
    if not after > DEPENDENT_TOL * scale:
        return None
    left = left / after
    big = np.argmax(np.abs(left))
    return left if left[big] > 0 else -left


def modal_basis(beam, modes, correction_nodes=(), marker_names=None, item=None,
                modes_below=None, derivatives=False):
    """The ModalBasis of `beam` with its `modes` lowest elastic modes ("all": no limit
    by count), of those only the ones below `modes_below` Hz when given; for each node
    of `correction_nodes` the static correction modes of its free coordinates; and
    with `derivatives` the modal derivatives of the kept modes, last (module
    docstring). `marker_names` {node: [names]} name the nodes in the descriptions."""
    import scipy.linalg  # here, not at the top: a rigid model does without it

    if modes == "all" and modes_below is None:
        raise ModelError('expected a positive integer, or "all" with modes_below', item,
                         "modes")
    alone = body_modes(beam)
    modes = kept_mode_count(beam, modes, modes_below, alone, item)
    first = int(np.sum(alone.rigid))
    rigid = alone.vectors[:, :first]  # the floating frame's motions: never in the basis
    phi = alone.vectors[:, first:first + modes]
    freq = list(alone.frequencies[first:first + modes])
    kinds = ["mode"] * modes
    descriptions = list(alone.descriptions[first:first + modes])
    sources = [(-1, -1)] * modes
    k = beam.nodal_invariants.stiffness
    mass = body_mass_matrix(beam)
    parts = strain_energy_matrices(beam)
    dropped = []
    nodes = sorted({int(n) for n in correction_nodes})
    if nodes:
        shapes, labels = correction_shapes(k, beam.free, nodes, item)
        for col, (node, dof) in enumerate(labels):
            shape = shapes[:, col]
            left = _add_shape(shape, np.sqrt(max(shape @ mass @ shape, 0.0)), phi, rigid,
                              mass)
            if left is None:
                dropped.append((node, dof))
                continue
            phi = np.column_stack([phi, left])
            freq.append(np.sqrt(max(left @ k @ left, 0.0)) / (2 * np.pi))
            kinds.append("correction")
            where = ", ".join((marker_names or {}).get(node, []))
            kind = describe_fractions(_fractions(left[:, None], parts)[0])
            descriptions.append(f"static correction for {_DOF_NAMES[dof]} at node {node}"
                                f"{f' ({where})' if where else ''}: {kind}")
            sources.append((node, dof))
    if derivatives:
        shapes, pairs = modal_derivative_shapes(beam, phi[:, :modes], alone)
        norms = np.sqrt(np.clip(np.einsum("ip,ij,jp->p", shapes, mass, shapes), 0.0, None))
        scale = float(norms.max()) if len(norms) else 0.0
        for col in range(shapes.shape[1]):
            left = (None if scale == 0.0
                    else _add_shape(shapes[:, col], scale, phi, rigid, mass))
            if left is None:
                continue
            phi = np.column_stack([phi, left])
            freq.append(np.sqrt(max(left @ k @ left, 0.0)) / (2 * np.pi))
            kinds.append("derivative")
            i, j = (int(v) for v in pairs[col])
            kind = describe_fractions(_fractions(left[:, None], parts)[0])
            descriptions.append(f"modal derivative of modes {i} and {j}: {kind}")
            sources.append((i, j))
    fractions = _fractions(phi, parts)
    reduced = scipy.linalg.eigvalsh(phi.T @ k @ phi, phi.T @ mass @ phi)
    counts = {"mode": 0, "correction": 0, "derivative": 0}
    names = []
    for kind in kinds:
        counts[kind] += 1
        names.append(f"{beam.name}.{kind}{counts[kind]}")
    return ModalBasis(
        vectors=np.ascontiguousarray(phi), kinds=tuple(kinds), names=tuple(names),
        frequencies=np.array(freq), reduced_frequencies=np.sqrt(np.clip(reduced, 0.0, None))
        / (2 * np.pi), energy_fractions=fractions, descriptions=tuple(descriptions),
        sources=np.array(sources, dtype=np.int64).reshape(-1, 2), requested_modes=int(modes),
        dropped_corrections=tuple(dropped),
        modes_below=None if modes_below is None else float(modes_below))


def project_invariants(inv, phi):
    """The Invariants of eta for x = Phi eta (docs/explanation/formulation.md section 8): Sbar Phi,
    N[a][b] Phi, Phi^T SS[a][b] Phi, Phi^T K Phi; m, int rho u0 and Th0 unchanged."""
    phi = np.asarray(phi, dtype=float)
    nm = phi.shape[1]
    ss, k = np.zeros((3, 3, nm, nm)), np.zeros((nm, nm))
    for block in inv.blocks:  # element by element: Phi_e^T SS_e Phi_e
        pb = phi[block.dofs]
        ss += np.einsum("ia,xyij,jb->xyab", pb, block.ss, pb, optimize=True)
        k += pb.T @ block.stiffness @ pb
    return Invariants(
        mass=inv.mass, first_moment=inv.first_moment, sbar=inv.sbar @ phi, th0=inv.th0,
        n=inv.n @ phi, ss=ss, stiffness=0.5 * (k + k.T))


# ------------------------------------------------------------------ capability
def axial_stretch_capability(beam):
    """How far the elastic coordinates of `beam` can stretch it axially: the largest
    share of axial strain energy that any deformation they represent has,

        max over eta of  (eta^T Phi^T K_axial Phi eta) / (eta^T Phi^T K Phi eta)

    (K_axial the EA part of K_ff, `strain_energy_matrices`; Phi the identity for a
    nodal body), a float in [0, 1]. 1 for nodal coordinates, and whenever a pure
    stretch is representable (a correction mode for u at a marker node of a straight
    beam); 0 (to round-off) when the basis holds only bending and torsion modes of a
    straight beam: then the axial strain u' that the axial force (geometric
    stiffness, docs/explanation/formulation.md section 6) needs stays zero. Intermediate
    values mean
    that stretching comes only with bending or torsion (a bent beam)."""
    parts = strain_energy_matrices(beam)
    basis = getattr(beam, "basis", None)
    phi = np.eye(len(beam.free)) if basis is None else basis.vectors
    k = phi.T @ beam.nodal_invariants.stiffness @ phi
    ka = phi.T @ parts[0] @ phi
    w, v = np.linalg.eigh(0.5 * (k + k.T))
    if not len(w) or not w.max() > 0:
        return 0.0
    keep = w > 1e-12 * w.max()
    t = v[:, keep] / np.sqrt(w[keep])
    share = np.linalg.eigvalsh(t.T @ (0.5 * (ka + ka.T)) @ t)
    return float(np.clip(share.max(), 0.0, 1.0))


# ---------------------------------------------------------------- result file
def basis_record(beam):
    """The datasets and attributes of the result file's /modes/<body> group for a
    reduced beam (docs/results.md): {"datasets": {name: array}, "attrs": {name:
    value}}."""
    b = beam.basis
    nodal_names = [f"{beam.name}.n{k // NODE_DOFS}.{_DOF_NAMES[k % NODE_DOFS]}"
                   for k in beam.free]
    return {
        "datasets": {
            "basis": b.vectors,
            "nodal_coordinates": list(nodal_names),
            "coordinates": list(b.names),
            "kinds": list(b.kinds),
            "frequencies": b.frequencies,
            "reduced_frequencies": b.reduced_frequencies,
            "descriptions": list(b.descriptions),
            "strain_energy_fractions": b.energy_fractions,
            "sources": b.sources,
        },
        "attrs": {
            "modes": b.requested_modes,
            "correction_modes": bool(beam.correction_modes),
            "modal_derivatives": bool(beam.with_modal_derivatives),
            **({} if b.modes_below is None else {"modes_below": b.modes_below}),
            "axial_stretch_capability": axial_stretch_capability(beam),
            "energy_parts": list(ENERGY_PARTS),
        },
    }
