"""How well a reduced beam's basis answers the loads a beam sees, with its geometric
stiffness (docs/explanation/formulation.md sections 6 and 8): the static response of the
basis against that of the nodal beam.

The static response to a nodal load F (n,) on the free nodal coordinates x (m, rad,
body axes) solves

    K x + g(x) = F,    g(x) = sum_e T_e^T dU_g/de (T_e x),

with U_g = U3 + U4bar of the consistent geometric stiffness per element
(flexmbs.elements.geometric: the axial part of the strain energy is
1/2 EA l (u' + sbar/2)^2), by Newton's method in load steps; the reduced response is
x = Phi eta with Phi^T (K Phi eta + g(Phi eta) - F) = 0. Both see the same loads,
each scaled so that the nodal beam's linear response moves a node by
RESPONSE_FRACTION of the beam's length (half the small-deformation range,
flexmbs.elements.deformation_range), the range over which the run's equations hold:

* a uniform acceleration across the beam (its weight, or the inertia of a base that
  accelerates), along each of the two axes of the body normal to its first segment:
  F = M r_a, r_a the nodal field of a unit translation;
* a force at each node that carries a marker (joints, springs and loads act there),
  along the same two axes;
* a spin about the first of those axes through the body origin at the beam's first
  bending frequency (its centrifugal tension, M omega^2 r_perp, of the undeformed
  beam), together with the uniform transverse load of the first case: the stiffening
  of a spinning beam.

The difference of a case is the largest nodal translation difference over the largest
nodal translation of the nodal response; the beams of the thesis's variants
("huang-*") are checked with the consistent energy.
"""

from dataclasses import dataclass

import numpy as np

from .geometric_assembly import DENSE_LIMIT, BeamGeometry
from .invariants import NODE_DOFS

__all__ = ["RESPONSE_FRACTION", "BASIS_TOLERANCE", "BasisCase", "static_response",
           "basis_static_differences"]

RESPONSE_FRACTION = 0.05  # the nodal linear response's largest translation, of the length
BASIS_TOLERANCE = 0.05  # a reduced response further than this from the nodal one is warned of
LOAD_STEPS = 4
NEWTON_TOL = 1e-8  # Newton's step, relative to the response
NEWTON_ITERATIONS = 30


@dataclass(frozen=True)
class BasisCase:
    """One load case: its name, the largest translation of the nodal response (m) and
    the difference of the reduced one (relative to it)."""
    name: str
    nodal_translation: float
    difference: float


def static_response(beam, load, phi=None, elements=None):
    """The free nodal coordinates x (n,) that balance the nodal load `load` (n,; N,
    N m, body axes) with the linear stiffness and the consistent geometric stiffness
    (module docstring); with `phi` (n, k) within x = phi eta. Newton's method in
    LOAD_STEPS equal load steps. Raises ArithmeticError when an iteration does not
    converge."""
    import scipy.sparse
    import scipy.sparse.linalg

    elements = BeamGeometry(beam) if elements is None else elements
    k = beam.nodal_invariants.stiffness
    sparse = len(k) > DENSE_LIMIT
    k = scipy.sparse.csr_matrix(k) if sparse else k
    load = np.asarray(load, dtype=float)
    phi = None if phi is None else np.asarray(phi, dtype=float)
    eta = np.zeros(len(load) if phi is None else phi.shape[1])
    for step in range(1, LOAD_STEPS + 1):
        target = load * step / LOAD_STEPS
        for _ in range(NEWTON_ITERATIONS):
            x = eta if phi is None else phi @ eta
            force, tangent = elements.force_and_tangent(x)
            residual = k @ x + force - target
            total = k + tangent
            if phi is None:
                delta = (scipy.sparse.linalg.spsolve(total.tocsc(), -residual) if sparse
                         else np.linalg.solve(total, -residual))
                moved = delta
            else:
                delta = np.linalg.solve(phi.T @ (total @ phi), -(phi.T @ residual))
                moved = phi @ delta
            eta += delta
            x = eta if phi is None else phi @ eta
            if np.abs(moved).max() <= NEWTON_TOL * max(np.abs(x).max(), 1e-300):
                break
        else:
            raise ArithmeticError("the static response did not converge")
    return eta if phi is None else phi @ eta


def _translation_field(beam, direction):
    """(n,): every node translated by `direction` (3,), rotations zero."""
    free = np.asarray(beam.free)
    out = np.zeros(len(free))
    translation = free % NODE_DOFS < 3
    out[translation] = np.asarray(direction)[free[translation] % NODE_DOFS]
    return out


def _load_cases(beam):
    """[(name, load (n,), whether it is the spin)] before scaling (module
    docstring)."""
    from .modal import body_mass_matrix, body_modes

    mass = body_mass_matrix(beam)
    axis = beam.nodes[1] - beam.nodes[0]
    axis = axis / np.linalg.norm(axis)
    normals = [np.eye(3)[k] for k in np.argsort(np.abs(axis))[:2]]
    normals = [v - (v @ axis) * axis for v in normals]
    normals = [v / np.linalg.norm(v) for v in normals]
    labels = "xyz"
    cases = []
    for v in normals:
        name = labels[int(np.argmax(np.abs(v)))]
        cases.append((f"uniform load along {name}", mass @ _translation_field(beam, v), False))
    marker_nodes = sorted({int(m.node) for m in beam.markers.values() if m.node is not None})
    where = {int(k): j for j, k in enumerate(beam.free)}
    for node in marker_nodes:
        for v in normals:
            load = np.zeros(len(beam.free))
            for d in range(3):
                j = where.get(NODE_DOFS * node + d)
                if j is not None:
                    load[j] = v[d]
            if np.any(load):
                name = labels[int(np.argmax(np.abs(v)))]
                cases.append((f"force along {name} at node {node}", load, False))
    alone = body_modes(beam)
    elastic = alone.frequencies[~alone.rigid]
    if len(elastic):
        omega = 2 * np.pi * elastic[0]
        spin = normals[0]
        radial = np.zeros(len(beam.free))
        free = np.asarray(beam.free)
        for j, k in enumerate(free):
            node, dof = divmod(int(k), NODE_DOFS)
            if dof < 3:
                p = beam.nodes[node]
                radial[j] = (p - (p @ spin) * spin)[dof]
        name = labels[int(np.argmax(np.abs(spin)))]
        cases.append((f"spin about {name} at its first natural frequency with a uniform "
                      "load", mass @ (omega**2 * radial), True))
    return cases


def basis_static_differences(beam):
    """[BasisCase] of a reduced beam (`beam.basis`): for each load case of the module
    docstring the nodal and the reduced static response, with geometric stiffness,
    and their difference; none for a beam whose reference conditions leave it free to
    move rigidly (it has no static response to a load)."""
    from .modal import rigid_mode_count

    if rigid_mode_count(beam):
        return []
    import scipy.linalg

    phi = beam.basis.vectors
    stiffness = scipy.linalg.cho_factor(beam.nodal_invariants.stiffness)
    elements = BeamGeometry(beam)
    free = np.asarray(beam.free)
    translation = free % NODE_DOFS < 3
    length = float(np.linalg.norm(np.diff(np.asarray(beam.points, dtype=float), axis=0),
                                  axis=1).sum())
    wanted = RESPONSE_FRACTION * length
    transverse = None
    out = []
    for name, load, spin in _load_cases(beam):
        if spin:
            if transverse is None:
                continue
            load = load + transverse
        else:
            moved = np.abs(scipy.linalg.cho_solve(stiffness, load)[translation]).max()
            if not moved > 0:
                continue  # the reference conditions hold the beam against this load
            load = load * wanted / moved
            if transverse is None:
                transverse = load
        try:
            nodal = static_response(beam, load, None, elements)
            reduced = static_response(beam, load, phi, elements)
        except (ArithmeticError, np.linalg.LinAlgError):
            continue
        top = float(np.abs(nodal[translation]).max())
        diff = float(np.abs(nodal[translation] - reduced[translation]).max())
        out.append(BasisCase(name, top, diff / top if top > 0 else 0.0))
    return out
