"""Constraints of cut joints (numba): the position residual Phi(q, t), the velocity
residual dPhi/dt = Phi_q u + Phi_t and the Jacobian Phi_q, docs/explanation/formulation.md
section 5 (Huang H2.145-2.147; the rows: flexmbs.model.constraint_tables).

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

Rolling contacts (a thin disk on a plane, Shui and Zhang 1995 section 5,
docs/explanation/formulation.md section 5). The disk's centre is its marker D (position c,
axes A_D, velocity v_D, angular velocity w_D), a point of the plane is marker P (p, A_P,
v_P, w_P); R the radius (m), a = A_D a0 the axle and n = A_P n0 the plane's normal (unit,
global). With s = |n x a| (> 0 unless the disk lies flat on the plane):

    t1 = (n x a) / s            the rolling direction (tangent of the rim at the contact)
    t2 = n x t1                 the plane's other tangent direction
    k = -(a x t1) = -(n - (n . a) a) / s
                                unit, from the centre to the lowest point of the rim
    P_c = c + R k               the contact point; rD = R k, rP = P_c - p
    v_rel = (v_D + w_D x rD) - (v_P + w_P x rP)
                                the disk's material velocity at P_c relative to the
                                plane's material point there (m/s)

    normal row (holonomic):   phi = n . (c - p) - R s                    (m)
                              phid = n . v_rel                           (m/s)
    tangent rows (t = t1, t2, nonholonomic, no phi):
                              C u + xi = t . v_rel                       (m/s)
    each row's Jacobian (e = n, t1, t2; its columns at the prescribed coordinates
    are the rheonomic part xi):
                              e . Jv_D + (rD x e) . Jw_D - e . Jv_P - (rP x e) . Jw_P

P_c minimises n . x over the rim, so d(phi)/dt is the derivative at the fixed
material point (an envelope): n' . rP + n . (v_D + w_D x rD - v_P) with n' = w_P x n,
which is n . v_rel; the normal row's Jacobian is therefore the exact gradient of phi.
The force of the contact on the disk, at P_c, is F = -sum_rows lambda e (and -F on
the plane at the same point).

A knife edge is the same with R = 0 (P_c the marker D itself, a the blade direction):
the normal row and the t1 row only (no velocity across the blade; along it and about
the normal the edge moves freely).

A coupler j (flexmbs.model.coupler) ties the joint coordinate of column f to that of
column l (coupler_col[j] = [f, l]) with the multiplier k and the offset o:

    phi = x_f - k x_l - o        (rad or m)
    phid = x_f' - k x_l'         (rad/s or m/s)
    Phi_q = e_f - k e_l          (constant; a prescribed column's entry in con_jacx)

so Phi_t = 0 unless the leader is prescribed (its rate then is the rheonomic part of
phid), and the bias gamma = d/dt(Phi_q) u is zero. Its multiplier is the generalized
force -lambda on x_f and k lambda on x_l.
"""

from ..kinematics.markers import marker_frame, marker_partial_velocities
from ..numerics.linalg import cross
from ..runtime.config import jit, jit_inline, jit_shared

__all__ = ["constraint_terms", "cut_joint_reaction", "contact_geometry",
           "contact_reaction", "coupler_rows"]


@jit_shared
def _two_markers(m, ws, kp, ko):
    """Frames and partial velocities of markers kp (index 0) and ko (index 1) into
    ws.con_*."""
    for side in range(2):
        k = kp if side == 0 else ko
        v = ws.con_vec[side]
        marker_frame(m, ws, k, v[0], ws.con_mat[side, 0], v[1], v[2], v[3],
                     ws.con_mat[side, 1])
        ws.con_jv[side, :, :] = 0.0
        ws.con_jw[side, :, :] = 0.0
        marker_partial_velocities(m.body_col_ptr, m.body_col, m.marker_body,
                                  m.marker_term_ptr, m.marker_term_col,
                                  m.marker_term_coef, ws.jr, ws.jw, ws.rot, k, v[3],
                                  ws.con_mat[side, 1], ws.con_jv[side], ws.con_jw[side])


@jit_inline
def _cut_joint_markers(m, ws, j):
    """Frames and partial velocities of cut joint j's markers into ws.con_*: index 0
    the parent marker P, 1 the child marker O."""
    _two_markers(m, ws, m.cut_marker_parent[j], m.cut_marker_child[j])


@jit
def contact_geometry(m, ws, j):
    """Rolling contact j (module docstring): its markers' frames and partial velocities
    into ws.con_* (0 the plane marker P, 1 the disk marker D) and ws.contact_vec =
    [n, a, t1, t2, rD, rP, v_rel, scratch] (global; m, m/s). Returns phi (m) of the
    normal row; s = |n x a| = 0 (the disk flat on the plane) gives NaN rows."""
    _two_markers(m, ws, m.contact_marker_plane[j], m.contact_marker_disk[j])
    g = ws.contact_vec
    ap = ws.con_mat[0, 0]
    ad = ws.con_mat[1, 0]
    n0 = m.contact_normal[j]
    a0 = m.contact_axis[j]
    for i in range(3):
        g[0, i] = ap[i, 0] * n0[0] + ap[i, 1] * n0[1] + ap[i, 2] * n0[2]
        g[1, i] = ad[i, 0] * a0[0] + ad[i, 1] * a0[1] + ad[i, 2] * a0[2]
    cross(g[0], g[1], g[2])
    sn = (g[2, 0] ** 2 + g[2, 1] ** 2 + g[2, 2] ** 2) ** 0.5
    for i in range(3):
        g[2, i] /= sn
    cross(g[0], g[2], g[3])
    rad = m.contact_radius[j]
    na = g[0, 0] * g[1, 0] + g[0, 1] * g[1, 1] + g[0, 2] * g[1, 2]
    c = ws.con_vec[1, 0]
    p = ws.con_vec[0, 0]
    phi = -rad * sn
    for i in range(3):
        g[4, i] = -rad * (g[0, i] - na * g[1, i]) / sn
        g[5, i] = c[i] + g[4, i] - p[i]
        phi += g[0, i] * (c[i] - p[i])
    vd = ws.con_vec[1, 1]
    wd = ws.con_vec[1, 2]
    vp = ws.con_vec[0, 1]
    wp = ws.con_vec[0, 2]
    cross(wd, g[4], g[6])
    cross(wp, g[5], g[7])
    for i in range(3):
        g[6, i] += vd[i] - vp[i] - g[7, i]
    return phi


@jit
def _contact_rows(m, ws, j):
    """The rows of rolling contact j into ws.con_phi, con_phid, con_jac, con_jacx
    (module docstring; the tangent rows' con_phi is 0)."""
    phi = contact_geometry(m, ws, j)
    g = ws.contact_vec
    xd = ws.contact_rd_e
    xp = ws.contact_rp_e
    ncol = m.col_qindex.shape[0]
    first = m.contact_row_ptr[j]
    for r in range(first, m.contact_row_ptr[j + 1]):
        e = g[0] if r == first else g[r - first + 1]
        cross(g[4], e, xd)
        cross(g[5], e, xp)
        ws.con_phi[r] = phi if r == first else 0.0
        ws.con_phid[r] = e[0] * g[6, 0] + e[1] * g[6, 1] + e[2] * g[6, 2]
        for k in range(ws.con_jac.shape[1]):
            ws.con_jac[r, k] = 0.0
        for k in range(ws.con_jacx.shape[1]):
            ws.con_jacx[r, k] = 0.0
        for c in range(ncol):
            sv = 0.0
            for a in range(3):
                sv += e[a] * (ws.con_jv[1, a, c] - ws.con_jv[0, a, c]) + \
                    xd[a] * ws.con_jw[1, a, c] - xp[a] * ws.con_jw[0, a, c]
            qc = m.col_qindex[c]
            if qc >= 0:
                ws.con_jac[r, qc] = sv
            else:
                ws.con_jacx[r, c] = sv


@jit
def _jacobian_entry(m, ws, r, col, value):
    """Phi_q of row r at column `col`: into con_jac at its q index, or into con_jacx
    where the column is prescribed."""
    qc = m.col_qindex[col]
    if qc >= 0:
        ws.con_jac[r, qc] += value
    else:
        ws.con_jacx[r, col] += value


@jit
def coupler_rows(m, ws):
    """The rows of the couplers into ws.con_phi, con_phid, con_jac, con_jacx (module
    docstring), from the column values and rates ws.x, ws.xd (after
    forward_kinematics)."""
    first = m.contact_row_ptr[m.contact_row_ptr.shape[0] - 1]
    for j in range(m.coupler_col.shape[0]):
        r = first + j
        f = m.coupler_col[j, 0]
        l = m.coupler_col[j, 1]
        k = m.coupler_multiplier[j]
        for c in range(ws.con_jac.shape[1]):
            ws.con_jac[r, c] = 0.0
        for c in range(ws.con_jacx.shape[1]):
            ws.con_jacx[r, c] = 0.0
        ws.con_phi[r] = ws.x[f] - k * ws.x[l] - m.coupler_offset[j]
        ws.con_phid[r] = ws.xd[f] - k * ws.xd[l]
        _jacobian_entry(m, ws, r, f, 1.0)
        _jacobian_entry(m, ws, r, l, -k)


@jit
def contact_reaction(m, ws, j, lam, force, point):
    """force (3,) global: the force of rolling contact j on its disk (N), applied at
    the contact point `point` (3,) (global, m), from the multipliers lam of the active
    rows (module docstring). After forward_kinematics."""
    contact_geometry(m, ws, j)
    g = ws.contact_vec
    first = m.contact_row_ptr[j]
    for a in range(3):
        force[a] = 0.0
        point[a] = ws.con_vec[1, 0, a] + g[4, a]
    for r in range(first, m.contact_row_ptr[j + 1]):
        k = m.con_active[r]
        if k < 0:
            continue
        e = g[0] if r == first else g[r - first + 1]
        for a in range(3):
            force[a] -= lam[k] * e[a]


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
    the prescribed coordinates' columns) for every constraint row of the cut joints,
    of the rolling contacts, then of the couplers (after forward_kinematics; rows in
    the order of the tables, redundant ones included). Units: m (position rows) or 1 (orientation
    rows), per s for phid; the contacts' tangent rows are velocity rows only (m/s in
    con_phid, con_phi = 0)."""
    g = ws.con_g
    h = ws.con_h
    d = ws.con_d
    gx = ws.con_gx
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
    for j in range(m.contact_radius.shape[0]):
        _contact_rows(m, ws, j)
    coupler_rows(m, ws)


@jit
def cut_joint_reaction(m, ws, j, lam, force, torque):
    """force, torque (3,) global: the reaction of cut joint j on its child body at the
    child marker (N, N m), from the multipliers lam of the active rows (module
    docstring). Call after constraint_terms (the frames of its last joint are
    recomputed here)."""
    _cut_joint_markers(m, ws, j)
    g = ws.con_g
    h = ws.con_h
    d = ws.con_d
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
