"""Static equilibrium under gravity, springs, constant loads and the elastic and
geometric stiffness (FORMULATION.md section 9), with the loops closed.

At rest (u = 0) at time t the reduced equations are

    R(q) = N(q)^T Q*(q, 0, t) = 0,    Phi(q) = 0

(N spans the null space of Phi_q, S001 (20); for a tree N = I and R = Q*). Newton's
method on the independent coordinates y (chosen as in flexmbs.analysis.linearize):
dy = K^-1 R with the reduced stiffness K = -dR/dq J_y by central differences (it
holds the geometric stiffness and the pre-load of the constraint forces), dq = J_y dy;
the dependent coordinates then close the loops again (Gauss-Newton on Phi); a step
that does not lower |R| is halved (line search). Where K is not positive definite
(far from a stable equilibrium: an arm held out sideways, a pendulum upside down)
Newton's step may lead to an unstable equilibrium or a saddle; there the step uses
K with its eigenvalues replaced by their magnitudes (floored at 1e-3 of the largest),
which for a conservative model goes downhill in potential energy, limited to
MAX_STEP (m or rad) and taken without the line search. Converged when the Newton step
is below STEP_TOLERANCE (m or rad). The equilibrium is stable when the reduced
stiffness is positive definite (flexmbs.analysis.linearize at the result).
"""

from dataclasses import dataclass

import numpy as np

from ..dynamics import api
from ..dynamics.constrained import active_rows
from ..errors import FlexmbsError, ModelError
from .linearize import _null_basis, central_differences, independent_coordinates

__all__ = ["Equilibrium", "static_equilibrium", "equilibrium_assignments",
           "close_loops", "STEP_TOLERANCE", "MAX_ITERATIONS"]

STEP_TOLERANCE = 1e-12  # m or rad (scaled by 1 + |q|): the last Newton step
MAX_ITERATIONS = 100
MAX_STEP = 0.5  # m or rad: the largest step where the stiffness is not positive
EIGEN_FLOOR = 1e-3  # of the largest |eigenvalue|: the modified stiffness's smallest
LINE_SEARCH_HALVINGS = 30
CLOSE_TOLERANCE = 1e-14  # m: the constraint residual the loops are closed to
PRESCRIBED_SPEED = 1e-12  # m/s or rad/s: a prescribed coordinate counts as held below


class NotConverged(FlexmbsError):
    """Newton's method did not find an equilibrium."""


@dataclass
class Equilibrium:
    """The equilibrium coordinates q (and the start), iterations, the residual R
    (N or N m per coordinate) and the last step."""
    q: np.ndarray
    start: np.ndarray
    iterations: int
    residual: float
    step: float
    names: list


def close_loops(cm, q, t, dependent):
    """q with its dependent coordinates moved so that Phi(q) = 0 (Gauss-Newton)."""
    q = q.copy()
    if len(dependent) == 0:
        return q
    for _ in range(50):
        phi, _, jac, _ = api.constraint_values(cm, q, None, t)
        if np.abs(phi).max() <= CLOSE_TOLERANCE:
            return q
        q[dependent] -= np.linalg.lstsq(jac[:, dependent], phi, rcond=None)[0]
    raise NotConverged("the loops could not be closed during the equilibrium search "
                       f"(constraint residual {np.abs(phi).max():.3g})")


def _check_at_rest(cm, q, t):
    """ModelError when a prescribed motion moves at time t (no static state)."""
    speed = np.abs(api.prescribed_velocity(cm, q, t)).max(initial=0.0)
    if speed > PRESCRIBED_SPEED:
        raise ModelError(f"a prescribed motion moves at t = {t:g} s (body speeds up to "
                         f"{speed:.3g}): a static equilibrium needs every driver at "
                         "rest", "drivers")


def static_equilibrium(cm, t=0.0, q=None, log=None):
    """Equilibrium from the state q (default cm.q0, made consistent first for loops
    by flexmbs.dynamics.constrained.make_consistent). NotConverged when Newton's
    method stalls or runs out of iterations."""
    q = np.array(cm.q0 if q is None else q, dtype=float)
    start = q.copy()
    _check_at_rest(cm, q, t)
    zero = np.zeros(cm.nq)
    rows = active_rows(cm) if len(cm.arrays.con_kind) else np.zeros(0, dtype=int)

    def reduced(x, independent, dependent):
        force = api.generalized_forces(cm, x, zero, t)
        if len(rows) == 0:
            return force
        jac = api.constraint_values(cm, x, None, t)[2][rows]
        return _null_basis(jac, independent, dependent).T @ force

    step_norm = np.inf
    for it in range(1, MAX_ITERATIONS + 1):
        jac_all = (api.constraint_values(cm, q, None, t)[2] if len(rows)
                   else np.zeros((0, cm.nq)))
        independent, dependent, j_y, _ = independent_coordinates(jac_all)
        r, dr = central_differences(lambda x: reduced(x, independent, dependent), q)
        tangent = dr @ j_y
        step_norm = np.inf
        norm = np.abs(r).max(initial=0.0)
        sym = 0.5 * (tangent + tangent.T)
        lam, vec = np.linalg.eigh(-sym) if len(sym) else (np.zeros(0), None)
        definite = len(lam) == 0 or lam.min() > 0
        if definite:
            try:
                dy = -np.linalg.solve(tangent, r)
            except np.linalg.LinAlgError:
                definite = False
        if not definite:
            floor = EIGEN_FLOOR * max(np.abs(lam).max(initial=0.0), 1e-300)
            dy = vec @ ((vec.T @ r) / np.maximum(np.abs(lam), floor))
            big = np.abs(j_y @ dy).max(initial=0.0)
            if big > MAX_STEP:
                dy *= MAX_STEP / big
        dq = j_y @ dy
        step_norm = np.abs(dq).max(initial=0.0)
        if log:
            log(f"equilibrium: iteration {it}: |R| = {norm:.3g}, step {step_norm:.3g}"
                + ("" if definite else " (stiffness not positive: a descent step)"))
        if definite and step_norm <= STEP_TOLERANCE * (1.0 + np.abs(q).max(initial=0.0)):
            return Equilibrium(q, start, it, norm, step_norm, list(cm.coordinate_names))
        if not definite:
            q = close_loops(cm, q + dq, t, dependent)
            continue
        alpha = 1.0
        for _ in range(LINE_SEARCH_HALVINGS):
            trial = close_loops(cm, q + alpha * dq, t, dependent)
            r_trial = reduced(trial, independent, dependent)
            if np.abs(r_trial).max() < norm or alpha * step_norm <= STEP_TOLERANCE:
                break
            alpha *= 0.5
        q = trial
    raise NotConverged(f"no equilibrium within {MAX_ITERATIONS} Newton iterations "
                       f"(last step {step_norm:.3g})")


def equilibrium_assignments(cm, q):
    """{dotted model-file path: value}: the joints' `initial` (and `initial_rate` = 0)
    and the beams' elastic `initial` that start the model at q at rest."""
    m = cm.arrays
    out = {}
    for k, name in enumerate(cm.topology.joint_names):
        cols = range(m.joint_coord_start[k], m.joint_coord_start[k + 1])
        joint = cm.model.joints[name]
        values = [float(q[m.coord_qindex[c]]) if m.coord_qindex[c] >= 0
                  else float(joint.initial[c - m.joint_coord_start[k]]) for c in cols]
        if not values or all(m.coord_qindex[c] < 0 for c in cols):
            continue
        out[f"joints.{name}.initial"] = values[0] if len(values) == 1 else values
        out[f"joints.{name}.initial_rate"] = 0.0 if len(values) == 1 else [0.0] * len(values)
    for k, (_, beam) in enumerate(cm.beams):
        start = m.flex_q[k]
        out[f"bodies.{beam.name}.initial"] = [float(v) for v in q[start:start + beam.nf]]
    return out
