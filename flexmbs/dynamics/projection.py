"""The projection formulation of constrained motion (Shui and Zhang 1995;
docs/explanation/formulation.md section 5): the second formulation beside the stabilised
index-2 one (flexmbs.dynamics.system.constrained_residual), selected per run by `[solver]
constraints = "projection"` or `--constraints projection`.

Every active constraint row, holonomic or not, at velocity level (Shui and Zhang 2.3):

    C(q, t) u + xi(q, t) = 0                       (Phi_q u + Phi_t for a position row)
    C u' + eta = 0,  eta = (dC/dt) u + dxi/dt      (2.4)

C (m x n, rank m: the redundant rows are switched off beforehand) has the singular value
decomposition C = U D V1^T (2.5-2.7); V2 (n x k, k = n - m) spans its null space
(2.8), the directions the constraints leave free. With the equations of motion
M u' = h + C^T lam_s (2.11; h = Q*, lam_s = -lambda of the GGL form, whose sign
convention is M* u' - Q* + C^T lambda = 0), the acceleration is split as
u' = V2 x + C^T y (3.1-3.2), which gives (3.3-3.7)

    u' = K h + (K M - I) E eta,     K = V2 (V2^T M V2)^-1 V2^T,     E = V1 D^-1 U^T.

The multipliers: C^T lam_s = M u' - h, solved by least squares (C has full row rank,
so exactly): lam_s = E^T (M u' - h). Shui and Zhang's (4.2), lam_s = -E^T M E eta, keeps only
the part of M u' along the constrained directions (M C^T y) and so drops
E^T (M V2 x - h); that term vanishes only where M V2 x - h has no component along the
constraint normals, which is not so for the rolling disk (the weight pushes on the
plane), so the exact least-squares form is used here.

The state keeps the layout of the GGL form, y = [q, u, w, lambda, mu], so that the
sensors and reactions read the multipliers alike: the residual is

    q' - u = 0,  u' - (K h + (K M - I) E eta) = 0,  w' - P = 0,
    lambda - lambda(q, u, t) = 0,  mu = 0,

an ODE for q, u and w with lambda an explicit function of them. eta comes from central
differences of C u + xi along the motion (q +- d u, t +- d, u fixed; error ~d^2).
Shui and Zhang 1995 keeps one decomposition for many steps and integrates p = V2^T q' (3.8-3.10);
here C is decomposed at every evaluation (a small matrix: one LAPACK call, which
allocates its outputs; the rest works in preallocated memory), which needs no test of
when [C; V2^T] turns singular.

Drift: only C u' + eta = 0 is integrated, so Phi(q, t) and C u + xi drift by the
integration error. Newton-Raphson on the positions (4.3-4.11):
M dq = -C_phi^T M_phi^-1 Phi, M_phi = C_phi M^-1 C_phi^T (the correction of least
kinetic-energy norm), then the speeds in the same metric onto C u + xi = 0 (the paper
corrects the positions only; the velocity rows drift alike), is applied by
`correct_drift` (every 20 steps) whenever the violation exceeds DRIFT_TOLERANCE times
what the integration's tolerances admit; the integration then restarts from the
corrected state.
"""

import numpy as np

from ..codes import CONTACT_TANGENT
from ..kinematics.recursive import forward_kinematics
from ..runtime.config import jit
from . import api
from .constraints import constraint_terms
from .motors import load_motor_state, work_count
from .system import _work_rows, dynamic_rows, generalized_forces, mass_matrix, split_state

__all__ = ["projected_accelerations", "projection_residual", "dae_projection_residual",
           "projection_start", "correct_drift", "ETA_STEP", "DRIFT_TOLERANCE"]

ETA_STEP = 1e-5  # s, divided by 1 + max|u|: the difference step of eta
DRIFT_TOLERANCE = 10.0  # times the admitted error: the violation that correct_drift
# corrects
CORRECTION_ITERATIONS = 10


@jit
def projected_accelerations(m, ws, t, q, u, ncon):
    """ws.accel = u' = K h + (K M - I) E eta and ws.proj_lam[:ncon] = lambda (the GGL
    sign: M* u' - Q* + C^T lambda = 0) over the active constraint rows (module
    docstring; Shui and Zhang 2.5-3.7). Leaves the kinematics, M* (ws.mass), Q* (ws.force) and
    the constraint terms of (q, u, t) in ws."""
    nq = q.shape[0]
    umax = 0.0
    for i in range(nq):
        umax = max(umax, abs(u[i]))
    d = ETA_STEP / (1.0 + umax)
    for k in range(ncon):
        ws.proj_eta[k] = 0.0
    for side in range(2):
        sign = 1.0 if side == 0 else -1.0
        for i in range(nq):
            ws.proj_q[i] = q[i] + sign * d * u[i]
        forward_kinematics(m, ws, t + sign * d, ws.proj_q, u)
        constraint_terms(m, ws)
        for r in range(m.con_kind.shape[0]):
            k = m.con_active[r]
            if k >= 0:
                ws.proj_eta[k] += sign * ws.con_phid[r] / (2.0 * d)
    forward_kinematics(m, ws, t, q, u)
    mass_matrix(m, ws)
    generalized_forces(m, ws, t)
    constraint_terms(m, ws)
    c = ws.proj_c[:ncon]
    for r in range(m.con_kind.shape[0]):
        k = m.con_active[r]
        if k >= 0:
            for i in range(nq):
                c[k, i] = ws.con_jac[r, i]
    mass = ws.mass
    h = ws.force
    if ncon == 0:
        ws.accel[:] = np.linalg.solve(mass, h)
        return
    uu, sv, vt = np.linalg.svd(c)
    v1 = np.ascontiguousarray(vt[:ncon].T)
    v2 = np.ascontiguousarray(vt[ncon:].T)
    e = v1 @ np.diag(1.0 / sv) @ np.ascontiguousarray(uu.T)   # E = V1 D^-1 U^T (n x m)
    e_eta = e @ ws.proj_eta[:ncon]
    v2t = np.ascontiguousarray(v2.T)
    reduced = v2t @ mass @ v2
    x = np.linalg.solve(reduced, v2t @ (h + mass @ e_eta))
    for i in range(nq):
        ws.accel[i] = -e_eta[i]
        for j in range(v2.shape[1]):
            ws.accel[i] += v2[i, j] * x[j]
    for i in range(nq):
        s = -h[i]
        for j in range(nq):
            s += mass[i, j] * ws.accel[j]
        ws.proj_a[i] = s                         # M u' - h = C^T lam_s
    for k in range(ncon):
        s = 0.0
        for i in range(nq):
            s += e[i, k] * ws.proj_a[i]
        ws.proj_lam[k] = -s                      # lambda = -lam_s


@jit
def projection_residual(m, ws, t, y, yp, out):
    """F(t, y, y') of the projection formulation (module docstring), y = [q, u, w,
    lambda, mu] as in the GGL form. The drivers of prescribed coordinates bear the
    constraint forces too (their columns of the Jacobian), as there."""
    nq = ws.mass.shape[0]
    base = 2 * nq + work_count(m)
    ncon = (y.shape[0] - base) // 2
    q, u, _ = split_state(y, nq)
    qp, up, _ = split_state(yp, nq)
    load_motor_state(m, ws, y)
    projected_accelerations(m, ws, t, q, u, ncon)
    for k in range(nq):
        out[k] = qp[k] - u[k]
        out[nq + k] = up[k] - ws.accel[k]
    dynamic_rows(m, ws, up, ws.proj_a)           # fills ws.tau and ws.act_tau
    for r in range(m.con_kind.shape[0]):
        k = m.con_active[r]
        if k < 0:
            continue
        for c in range(ws.con_jacx.shape[1]):
            ws.tau[c] += ws.con_jacx[r, c] * ws.proj_lam[k]
    for k in range(ncon):
        out[base + k] = y[base + k] - ws.proj_lam[k]
        out[base + ncon + k] = y[base + ncon + k]
    _work_rows(m, ws, t, yp, out)


@jit
def dae_projection_residual(t, y, yp, args, out):
    """`projection_residual` in the argument order of the BDF driver."""
    projection_residual(args[0], args[1], t, y, yp, out)


def projection_start(cm, system, t, y):
    """(y, y') consistent for the projection residual at (t, y): the multipliers and
    y' from the residual itself (it is explicit in them)."""
    y = y.copy()
    out = np.zeros_like(y)
    yp = np.zeros_like(y)
    nq = cm.nq
    base = 2 * nq + cm.nworks
    yp[:nq] = y[nq:2 * nq]
    projection_residual(system.m, system.ws, t, y, yp, out)
    yp[nq:base] = -out[nq:base]
    y[base:] -= out[base:]
    projection_residual(system.m, system.ws, t, y, yp, out)
    yp[2 * nq:base] = -out[2 * nq:base]
    return y, yp


def _weighted(jac, residual, mass):
    """dq = M^-1 J^T (J M^-1 J^T)^-1 residual (Shui and Zhang 4.10-4.11)."""
    minv_jt = np.linalg.solve(mass, jac.T)
    return minv_jt @ np.linalg.solve(jac @ minv_jt, residual)


def correct_drift(cm, system, t, y, rtol, atol):
    """(changed, y, y'): when the position rows' residual exceeds DRIFT_TOLERANCE atol
    or the velocity rows' DRIFT_TOLERANCE (atol + rtol sum_j |C_ij u_j|) (the error
    the integration admits in the speeds, seen through C) at the state y,
    Newton-Raphson on the positions (Shui and Zhang 4.10-4.11) and the speeds projected in the
    same metric, then the state made consistent (projection_start); else
    (False, y, None)."""
    m = cm.arrays
    nq = cm.nq
    rows = np.flatnonzero(m.con_active >= 0)
    rows = rows[np.argsort(m.con_active[rows])]
    holonomic = rows[m.con_kind[rows] != CONTACT_TANGENT]
    q, u = y[:nq].copy(), y[nq:2 * nq].copy()
    phi, phid, jac, _ = api.constraint_values(cm, q, u, t)
    limit = DRIFT_TOLERANCE * atol
    speed_limit = DRIFT_TOLERANCE * (atol + rtol * np.abs(jac[rows] * u).sum(axis=1))
    if np.abs(phi[holonomic]).max(initial=0.0) <= limit and \
            np.all(np.abs(phid[rows]) <= speed_limit):
        return False, y, None
    mass = api.mass_matrix(cm, q, t)
    for _ in range(CORRECTION_ITERATIONS):
        phi, _, jac, _ = api.constraint_values(cm, q, None, t)
        if np.abs(phi[holonomic]).max(initial=0.0) <= 1e-3 * limit:
            break
        q -= _weighted(jac[holonomic], phi[holonomic], mass)
    _, phid, jac, _ = api.constraint_values(cm, q, u, t)
    u -= _weighted(jac[rows], phid[rows], api.mass_matrix(cm, q, t))
    y = y.copy()
    y[:nq], y[nq:2 * nq] = q, u
    y, yp = projection_start(cm, system, t, y)
    return True, y, yp
