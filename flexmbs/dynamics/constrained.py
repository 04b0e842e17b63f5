"""Consistent initial values of a model with cut joints or rolling contacts
(docs/explanation/formulation.md section 5): the given coordinates and speeds projected onto the
position and velocity constraints, the redundant constraint equations found and
switched off, and the accelerations and multipliers that start the stabilised index-2
integration. The velocity (nonholonomic) rows of rolling contacts take part in steps
2-4 only: they constrain the speeds, not the positions.

1. Positions: Newton iterations q <- q - Phi_q^+ Phi(q) over the position rows (the
   cut joints' and the contacts' normal rows), the least-squares correction
   of least kinetic-energy norm (the metric M*(q0)): the given values move as little
   as the constraints demand. Each iteration corrects the joint coordinates first (the
   beams keep their initial shape when the joints can close the loops), then what is
   left with every coordinate.
2. Redundancy: a QR factorisation with column pivoting of Phi_q^T at the projected
   state gives its rank r (|R_kk| > RANK_TOLERANCE |R_11|) and r independent rows; the
   others are dependent on them (an overconstrained linkage, or a planar loop of
   spatial joints) and are switched off (`con_active` = -1), so that the iteration
   matrix stays regular.
3. Speeds: u <- u - C^+ (C u + xi) over every active row (C: Phi_q and the velocity
   rows' C, xi: Phi_t and theirs) in the same metric and in the same two
   passes: the velocity change of least kinetic energy (an impulsive correction),
   the joints' first (a flexible link starts without elastic rates where the joints
   can make the velocities consistent).
4. [M* Phi_q^T; Phi_q 0] [u'; lambda] = [Q*; -gamma], gamma = d/dt(Phi_q u + Phi_t)
   at u' = 0 (by central differences along the motion), mu = 0.

Along the motion the rank of Phi_q stays (the dependence is structural), but the rows
chosen at the start may become dependent among themselves while others take over
(Bricard's linkage folding). `reselect_rows` watches the smallest singular value of
the active rows against the r-th of all rows and chooses the rows afresh, by the same
pivoted QR, when it falls below RESELECT_RATIO of it; the integration then restarts
from the current state with the multipliers of the new rows.
"""

from dataclasses import dataclass, field

import numpy as np

from ..codes import CONTACT_TANGENT
from ..errors import ModelError
from . import api

__all__ = ["ConstraintReport", "make_consistent", "initial_derivative", "reselect_rows",
           "active_rows", "constrained_accelerations", "independent_rows",
           "RANK_TOLERANCE", "PROJECTION_TOLERANCE"]

RANK_TOLERANCE = 1e-9  # |R_kk| / |R_11| below this: a dependent constraint row
RESELECT_RATIO = 0.5  # active rows' smallest singular value / all rows' r-th
PROJECTION_TOLERANCE = 1e-13  # of the model's length scale: Phi after projection
PROJECTION_ITERATIONS = 50
GAMMA_STEP = 1e-5  # s (scaled by the motion): the difference step of gamma


@dataclass
class ConstraintReport:
    """What making the initial state consistent did: the largest change of the
    coordinates and speeds, the rank of the constraint Jacobian, the redundant rows
    (their descriptions), and the residuals left."""
    rows: int = 0
    rank: int = 0
    cut: list = field(default_factory=list)
    contacts: list = field(default_factory=list)
    couplers: list = field(default_factory=list)
    redundant: list = field(default_factory=list)
    position_change: float = 0.0
    speed_change: float = 0.0
    position_residual: float = 0.0
    velocity_residual: float = 0.0

    def text(self):
        parts = []
        if self.cut:
            parts.append("closed loops: cut joints " +
                         ", ".join(f'"{name}"' for name in self.cut))
        if self.contacts:
            parts.append("rolling contacts " +
                         ", ".join(f'"{name}"' for name in self.contacts))
        if self.couplers:
            parts.append("couplers " + ", ".join(f'"{name}"' for name in self.couplers))
        lines = [f"{'; '.join(parts)}; {self.rows} constraint equations of "
                 f"rank {self.rank}"]
        if self.redundant:
            lines.append("redundant (switched off): " + "; ".join(self.redundant))
        lines.append(f"initial state made consistent: coordinates moved by at most "
                     f"{self.position_change:.3g}, speeds by {self.speed_change:.3g}")
        return "\n".join(lines)


def _length_scale(cm, q):
    """A length (m) for the position tolerance: the largest body origin distance."""
    r, _ = api.body_poses(cm, q)
    return max(1.0, float(np.abs(r).max()) if r.size else 1.0)


def _weighted_correction(jac, residual, chol):
    """The correction d of least norm d^T W d (W = L L^T, chol = L) with
    jac d = residual in the least-squares sense (rank-deficient jac allowed)."""
    from scipy.linalg import solve_triangular
    jt = solve_triangular(chol, jac.T, lower=True).T      # jac L^-T
    d = np.linalg.lstsq(jt, residual, rcond=None)[0]
    return solve_triangular(chol.T, d, lower=False)


def make_consistent(cm, t0=0.0):
    """Project cm.q0, cm.u0 onto the constraints, switch off redundant rows
    (cm.arrays.con_active) and return a ConstraintReport. ModelError when the
    positions cannot be made to close the loops."""
    m = cm.arrays
    nrows = len(m.con_kind)
    report = ConstraintReport(rows=nrows, cut=list(cm.topology.cut_joint_names),
                              contacts=list(getattr(cm.model, "contacts", {})),
                              couplers=list(getattr(cm.model, "couplers", {})))
    if nrows == 0:
        return report
    holonomic = np.flatnonzero(np.asarray(m.con_kind) != CONTACT_TANGENT)
    m.con_active[:] = np.arange(nrows)
    q = cm.q0.copy()
    scale = _length_scale(cm, q)
    mass = api.mass_matrix(cm, q, t0)
    joints = np.sort(m.coord_qindex[m.coord_qindex >= 0])
    passes = [(cols, _metric_factor(mass[np.ix_(cols, cols)]))
              for cols in (joints, np.arange(cm.nq)) if len(cols)]
    if len(joints) == cm.nq:
        passes = passes[:1]
    for _ in range(PROJECTION_ITERATIONS):
        phi = api.constraint_values(cm, q, None, t0)[0][holonomic]
        if len(phi) == 0 or np.abs(phi).max() <= PROJECTION_TOLERANCE * scale:
            break
        for cols, chol in passes:
            phi, _, jac, _ = api.constraint_values(cm, q, None, t0)
            q[cols] -= _weighted_correction(jac[np.ix_(holonomic, cols)], phi[holonomic],
                                            chol)
    else:
        goal = " and ".join(["close the loops"] * bool(report.cut) +
                            ["put the disks on their planes"] * bool(report.contacts) +
                            ["hold the couplers"] * bool(report.couplers))
        hint = " and ".join(["near a closed configuration"] * bool(report.cut) +
                            ["with each disk touching its plane"] * bool(report.contacts) +
                            ["that the couplers allow"] * bool(report.couplers))
        raise ModelError(f"the initial coordinates cannot be made to {goal} (constraint "
                         f"residual {np.abs(phi[holonomic]).max():.3g} after "
                         f"{PROJECTION_ITERATIONS} iterations): give initial joint values "
                         f"{hint}", "joints", "initial")
    phi, phid, jac, _ = api.constraint_values(cm, q, cm.u0, t0)
    if jac.shape[1] == 0:
        rank, independent = 0, np.zeros(0, dtype=int)
    else:
        from scipy.linalg import qr  # imported when a model has constraints
        _, r, piv = qr(jac.T, pivoting=True, mode="economic")
        diag = np.abs(np.diag(r)) if r.size else np.zeros(0)
        rank = int(np.sum(diag > RANK_TOLERANCE * (diag[0] if len(diag) else 0.0)))
        independent = np.sort(piv[:rank])
    active = -np.ones(nrows, dtype=np.int64)
    active[independent] = np.arange(len(independent))
    m.con_active[:] = active
    report.rank = rank
    report.redundant = [cm.constraint_texts[k] for k in range(nrows) if active[k] < 0]
    rows = independent
    u = cm.u0.copy()
    if len(rows):
        for cols, chol in passes:
            phid = api.constraint_values(cm, q, u, t0)[1]
            u[cols] -= _weighted_correction(jac[np.ix_(rows, cols)], phid[rows], chol)
    report.position_change = float(np.abs(q - cm.q0).max()) if q.size else 0.0
    report.speed_change = float(np.abs(u - cm.u0).max()) if u.size else 0.0
    cm.q0[:] = q
    cm.u0[:] = u
    phi, phid, _, _ = api.constraint_values(cm, q, u, t0)
    report.position_residual = float(np.abs(phi[holonomic]).max(initial=0.0))
    report.velocity_residual = float(np.abs(phid[rows]).max()) if len(rows) else 0.0
    return report


def _metric_factor(mass):
    """The Cholesky factor of the metric of the corrections: M*, or where M* is only
    semi-definite (a coordinate of no inertia, as the motor coordinates of the
    absolute formulation without a rotor) M* + 1e-12 max(diag M*) I."""
    try:
        return np.linalg.cholesky(mass)
    except np.linalg.LinAlgError:
        shift = 1e-12 * max(np.abs(np.diag(mass)).max(initial=0.0), 1e-300)
        return np.linalg.cholesky(mass + shift * np.eye(len(mass)))


def independent_rows(jac, rank):
    """The indices (sorted) of `rank` independent rows of jac: pivoted QR of jac^T."""
    from scipy.linalg import qr
    _, _, piv = qr(jac.T, pivoting=True, mode="economic")
    return np.sort(piv[:rank])


def reselect_rows(cm, system, t, y):
    """(changed, y, y'): when the active constraint rows at the state y have become
    nearly dependent among themselves (module docstring), choose new ones (the same
    number), switch them in (cm.arrays.con_active) and return the state with their
    multipliers, consistent; else (False, y, None)."""
    m = cm.arrays
    nq = cm.nq
    rank = cm.nconstraints
    if rank == 0:
        return False, y, None
    q = y[:nq]
    _, _, jac, _ = api.constraint_values(cm, q, y[nq:2 * nq], t)
    active = np.flatnonzero(m.con_active >= 0)
    if len(active) == len(jac):
        return False, y, None
    full = np.linalg.svd(jac, compute_uv=False)
    mine = np.linalg.svd(jac[active], compute_uv=False)
    if mine[-1] >= RESELECT_RATIO * full[rank - 1]:
        return False, y, None
    rows = independent_rows(jac, rank)
    new = -np.ones(len(jac), dtype=np.int64)
    new[rows] = np.arange(rank)
    m.con_active[:] = new
    y_new, yp_new = initial_derivative(cm, system, t, y)
    return True, y_new, yp_new


def active_rows(cm):
    """The active constraint rows (indices into every row), in multiplier order."""
    active = cm.arrays.con_active
    rows = np.flatnonzero(active >= 0)
    return rows[np.argsort(active[rows])]


def constrained_accelerations(cm, q, u, t):
    """(u', lambda): [M* Phi_q^T; Phi_q 0] [u'; lambda] = [Q*; -gamma] at (q, u, t)
    over the active rows (step 4 of the module docstring), gamma = d/dt(Phi_q u +
    Phi_t) at u' = 0 by central differences along the motion (relative accuracy about
    1e-10 for a smooth motion)."""
    rows = active_rows(cm)
    mass = api.mass_matrix(cm, q, t)
    force = api.generalized_forces(cm, q, u, t)
    _, _, jac, _ = api.constraint_values(cm, q, u, t)
    jac = jac[rows]
    rate = 1.0 + np.abs(u).max(initial=0.0)
    h = GAMMA_STEP / rate
    plus = api.constraint_values(cm, q + h * u, u, t + h)[1][rows]
    minus = api.constraint_values(cm, q - h * u, u, t - h)[1][rows]
    gamma = (plus - minus) / (2 * h)
    n = len(rows)
    a = np.block([[mass, jac.T], [jac, np.zeros((n, n))]])
    sol = np.linalg.solve(a, np.concatenate([force, -gamma]))
    return sol[:cm.nq], sol[cm.nq:]


def initial_derivative(cm, system, t, y):
    """(y, y') consistent at time t for the stabilised index-2 residual: the
    accelerations and multipliers of step 4 of the module docstring, y' of the works
    from the residual itself."""
    nq = cm.nq
    base = 2 * nq + cm.nworks
    ncon = cm.nconstraints
    q, u = y[:nq], y[nq:2 * nq]
    udot, lam = constrained_accelerations(cm, q, u, t)
    y = y.copy()
    y[base:base + ncon] = lam
    y[base + ncon:] = 0.0
    yp = np.zeros_like(y)
    yp[:nq] = u
    yp[nq:2 * nq] = udot
    out = np.zeros_like(y)
    system.residual_kernel(system.m, system.ws, t, y, yp, out)
    yp[2 * nq:base] = -out[2 * nq:base]
    return y, yp
