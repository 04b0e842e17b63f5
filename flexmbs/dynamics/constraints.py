"""Constraints of cut joints (numba): the position residual Phi(q, t), the velocity
residual dPhi/dt = Phi_q u + Phi_t and the Jacobian Phi_q, FORMULATION.md section 5
(Huang H2.145-2.147; the rows: flexmbs.model.constraint_tables).

With the markers' global axes A_P, A_O, positions p_P, p_O, velocities v, angular
velocities w and partial velocities Jv, Jw (flexmbs.kinematics.markers), d = p_O - p_P:

    position row (n):        phi = g . d,              g = A_P n
                             phid = g . (v_O - v_P) + (g x d) . w_P
                             Phi_q = g . (Jv_O - Jv_P) + (g x d) . Jw_P
    orientation row (x, y):  phi = g . h - c,          g = A_P x, h = A_O y
                             phid = (g x h) . (w_P - w_O)
                             Phi_q = (g x h) . (Jw_P - Jw_O)

Phi_q is the exact Jacobian because the partial velocities are (B is the exact
Jacobian of the position map). The reaction of a cut joint on its child body, from the
multipliers lambda of M* u' + Phi_q^T lambda = Q*: the force F = -sum_pos lambda g at
the child marker (and -F on the parent at the same point) and the torque
T = sum_orient lambda (g x h) (and -T on the parent).
"""

from ..config import jit, jit_inline
from ..kinematics.markers import marker_frame, marker_partial_velocities

__all__ = ["constraint_terms", "cut_joint_reaction"]


@jit_inline
def _cut_joint_markers(m, ws, j):
    """Frames and partial velocities of cut joint j's markers into ws.con_*: index 0
    the parent marker P, 1 the child marker O."""
    for side in range(2):
        k = m.cut_marker_parent[j] if side == 0 else m.cut_marker_child[j]
        v = ws.con_vec[side]
        marker_frame(m, ws, k, v[0], ws.con_mat[side, 0], v[1], v[2], v[3],
                     ws.con_mat[side, 1])
        ws.con_jv[side, :, :] = 0.0
        ws.con_jw[side, :, :] = 0.0
        marker_partial_velocities(m.body_col_ptr, m.body_col, m.marker_body,
                                  m.marker_term_ptr, m.marker_term_col,
                                  m.marker_term_coef, ws.jr, ws.jw, ws.rot, k, v[3],
                                  ws.con_mat[side, 1], ws.con_jv[side], ws.con_jw[side])


@jit
def _row_vectors(m, ws, r, g, h, d):
    """g (and h, d) of constraint row r at the current frames (module docstring)."""
    ap = ws.con_mat[0, 0]
    ao = ws.con_mat[1, 0]
    x = m.con_x[r]
    y = m.con_y[r]
    for a in range(3):
        g[a] = ap[a, 0] * x[0] + ap[a, 1] * x[1] + ap[a, 2] * x[2]
        h[a] = ao[a, 0] * y[0] + ao[a, 1] * y[1] + ao[a, 2] * y[2]
        d[a] = ws.con_vec[1, 0, a] - ws.con_vec[0, 0, a]


@jit
def constraint_terms(m, ws):
    """ws.con_phi, ws.con_phid (ncr,), ws.con_jac (ncr, nq) and ws.con_jacx (ncr, nc,
    the prescribed coordinates' columns) for every constraint row of the cut joints
    (after forward_kinematics; rows in the order of the tables, redundant ones
    included). Units: m (position rows) or 1 (orientation rows), per s for phid."""
    g = ws.v3[0]
    h = ws.v3[1]
    d = ws.v3[2]
    gx = ws.v3[3]
    ncol = m.col_qindex.shape[0]
    for j in range(m.cut_marker_parent.shape[0]):
        _cut_joint_markers(m, ws, j)
        vp = ws.con_vec[0, 1]
        vo = ws.con_vec[1, 1]
        wp = ws.con_vec[0, 2]
        wo = ws.con_vec[1, 2]
        for r in range(m.cut_row_ptr[j], m.cut_row_ptr[j + 1]):
            _row_vectors(m, ws, r, g, h, d)
            for k in range(ws.con_jac.shape[1]):
                ws.con_jac[r, k] = 0.0
            for k in range(ws.con_jacx.shape[1]):
                ws.con_jacx[r, k] = 0.0
            if m.con_kind[r] == 0:
                gx[0] = g[1] * d[2] - g[2] * d[1]
                gx[1] = g[2] * d[0] - g[0] * d[2]
                gx[2] = g[0] * d[1] - g[1] * d[0]
                ws.con_phi[r] = g[0] * d[0] + g[1] * d[1] + g[2] * d[2]
                phid = 0.0
                for a in range(3):
                    phid += g[a] * (vo[a] - vp[a]) + gx[a] * wp[a]
                ws.con_phid[r] = phid
                for c in range(ncol):
                    s = 0.0
                    for a in range(3):
                        s += g[a] * (ws.con_jv[1, a, c] - ws.con_jv[0, a, c]) + \
                            gx[a] * ws.con_jw[0, a, c]
                    qc = m.col_qindex[c]
                    if qc >= 0:
                        ws.con_jac[r, qc] = s
                    else:
                        ws.con_jacx[r, c] = s
            else:
                gx[0] = g[1] * h[2] - g[2] * h[1]
                gx[1] = g[2] * h[0] - g[0] * h[2]
                gx[2] = g[0] * h[1] - g[1] * h[0]
                ws.con_phi[r] = g[0] * h[0] + g[1] * h[1] + g[2] * h[2] - m.con_c[r]
                phid = 0.0
                for a in range(3):
                    phid += gx[a] * (wp[a] - wo[a])
                ws.con_phid[r] = phid
                for c in range(ncol):
                    s = 0.0
                    for a in range(3):
                        s += gx[a] * (ws.con_jw[0, a, c] - ws.con_jw[1, a, c])
                    qc = m.col_qindex[c]
                    if qc >= 0:
                        ws.con_jac[r, qc] = s
                    else:
                        ws.con_jacx[r, c] = s


@jit
def cut_joint_reaction(m, ws, j, lam, force, torque):
    """force, torque (3,) global: the reaction of cut joint j on its child body at the
    child marker (N, N m), from the multipliers lam of the active rows (module
    docstring). Call after constraint_terms (the frames of its last joint are
    recomputed here)."""
    _cut_joint_markers(m, ws, j)
    g = ws.v3[0]
    h = ws.v3[1]
    d = ws.v3[2]
    for a in range(3):
        force[a] = 0.0
        torque[a] = 0.0
    for r in range(m.cut_row_ptr[j], m.cut_row_ptr[j + 1]):
        k = m.con_active[r]
        if k < 0:
            continue
        _row_vectors(m, ws, r, g, h, d)
        if m.con_kind[r] == 0:
            for a in range(3):
                force[a] -= lam[k] * g[a]
        else:
            torque[0] += lam[k] * (g[1] * h[2] - g[2] * h[1])
            torque[1] += lam[k] * (g[2] * h[0] - g[0] * h[2])
            torque[2] += lam[k] * (g[0] * h[1] - g[1] * h[0])
