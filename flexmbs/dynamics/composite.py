"""M* of a tree of rigid bodies by composite rigid bodies (numba), in O(N d) (d: the
depth of the tree) instead of the O(N^3) of summing B_i^T M_i B_i: the mass hook of
the BDF driver re-forms its iteration matrix from it between difference Jacobians."""

import numpy as np

from ..runtime.config import jit_inline, jit_shared

__all__ = ["composite_mass_matrix", "finish_mass_matrix"]

_VOIGT_ROW = np.array([0, 1, 2, 1, 0, 0])
_VOIGT_COL = np.array([0, 1, 2, 2, 2, 1])


@jit_shared
def composite_mass_matrix(m, ws):
    """ws.mass = M* (nq x nq, H2.144; kg, kg m, kg m^2) of a tree of rigid bodies, after
    `forward_kinematics_terms`, by Featherstone's composite-rigid-body algorithm
    (Rigid Body Dynamics Algorithms, 2008, section 6.2) on the motion terms of
    docs/explanation/formulation.md section 10.

    Leaves to root, the mass, first moment and inertia about the origin (global axes)
    of body i and its subtree (A_i, r_i: its rotation and origin; St_i = m c and I_O
    in body axes, h = A_i St_i):

        m_c = sum m_i,   h_c = sum (m_i r_i + h),
        Theta_c = sum (A_i I_O A_i^T + 2 (r_i . h) 1 - r_i h^T - h r_i^T
                       + m_i (|r_i|^2 1 - r_i r_i^T)).

    Motion term k of body b (at a free coordinate) moves b's subtree rigidly: angular
    velocity w_k = term_jw[k], velocity of the point at the origin v_k = term_jr[k] -
    w_k x r_b (left in ws.term_jr[k]). Its momentum is p_k = m_c v_k + w_k x
    h_c, L_k = h_c x v_k + Theta_c w_k (subtree of b), and each term k' of b's
    ancestors and each k' <= k of b adds v_k' . p_k + w_k' . L_k to M*[q(k'), q(k)]
    and (k' != k) to M*[q(k), q(k')]: summed in the lower triangle, then mirrored
    with the actuators' rotor inertias on the diagonal (finish_mass_matrix), as in
    `mass_matrix`, whose result this is for trees without flexible bodies.
    The composites are kept in the O(N) residual's per-body rows: ws.body_wrench[i] =
    [h_c; m_c; 0; 0], ws.body_acc[i] = Theta_c as [xx, yy, zz, yz, xz, xy]; the
    residual fills all three afresh.
    """
    nb = m.body_mass.shape[0]
    ws.kin_key[0] = 0.0    # term_jr is shifted below
    ws.mass[:, :] = 0.0
    for i in range(nb):
        _body_inertia_about_origin(m, ws, i)
    for i in range(nb - 1, -1, -1):
        p = m.body_parent[i]
        if p >= 0:
            for r in range(6):
                ws.body_wrench[p, r] += ws.body_wrench[i, r]
                ws.body_acc[p, r] += ws.body_acc[i, r]
    tjr, tjw, mass = ws.term_jr, ws.term_jw, ws.mass
    tptr, mptr, tcol, cq = m.motion_term_ptr, m.motion_ptr, m.motion_term_col, m.col_qindex
    for i in range(nb):
        ri = ws.r[i]
        for k in range(tptr[mptr[i]], tptr[mptr[i + 1]]):
            w = tjw[k]
            tjr[k, 0] -= w[1] * ri[2] - w[2] * ri[1]
            tjr[k, 1] -= w[2] * ri[0] - w[0] * ri[2]
            tjr[k, 2] -= w[0] * ri[1] - w[1] * ri[0]
    for b in range(nb):
        hc = ws.body_wrench[b]
        mc = hc[3]
        th = ws.body_acc[b]
        for k in range(tptr[mptr[b]], tptr[mptr[b + 1]]):
            qk = cq[tcol[k]]
            if qk < 0:
                continue
            v0, v1, v2 = tjr[k, 0], tjr[k, 1], tjr[k, 2]
            w0, w1, w2 = tjw[k, 0], tjw[k, 1], tjw[k, 2]
            p0 = mc * v0 + w1 * hc[2] - w2 * hc[1]
            p1 = mc * v1 + w2 * hc[0] - w0 * hc[2]
            p2 = mc * v2 + w0 * hc[1] - w1 * hc[0]
            l0 = hc[1] * v2 - hc[2] * v1 + th[0] * w0 + th[5] * w1 + th[4] * w2
            l1 = hc[2] * v0 - hc[0] * v2 + th[5] * w0 + th[1] * w1 + th[3] * w2
            l2 = hc[0] * v1 - hc[1] * v0 + th[4] * w0 + th[3] * w1 + th[2] * w2
            mass[qk, qk] += v0 * p0 + v1 * p1 + v2 * p2 + w0 * l0 + w1 * l1 + w2 * l2
            a = b
            last = k        # on b itself the terms before k: each pair once, mirrored
            while a >= 0:
                for k2 in range(tptr[mptr[a]], last):
                    q2 = cq[tcol[k2]]
                    if q2 < 0:
                        continue
                    s = (tjr[k2, 0] * p0 + tjr[k2, 1] * p1 + tjr[k2, 2] * p2
                         + tjw[k2, 0] * l0 + tjw[k2, 1] * l1 + tjw[k2, 2] * l2)
                    if q2 < qk:
                        mass[qk, q2] += s
                    elif q2 > qk:
                        mass[q2, qk] += s
                    else:
                        mass[qk, qk] += 2.0 * s
                a = m.body_parent[a]
                if a >= 0:
                    last = tptr[mptr[a + 1]]
    finish_mass_matrix(m, ws.mass)


@jit_inline
def finish_mass_matrix(m, mass):
    """The last part of M* (either way of summing it): the actuators' rotor inertias
    added on the diagonal, and the lower triangle mirrored onto the upper one."""
    for a in range(m.act_coord.shape[0]):
        qc = m.coord_qindex[m.act_coord[a]]
        mass[qc, qc] += m.act_inertia[a]
    nq = mass.shape[0]
    for a in range(nq):
        for c in range(a + 1, nq):
            mass[a, c] = mass[c, a]


@jit_shared
def _body_inertia_about_origin(m, ws, i):
    """ws.body_wrench[i] = [h; m; 0; 0], ws.body_acc[i] = Theta (about the origin,
    global, [xx, yy, zz, yz, xz, xy]) of rigid body i alone (composite_mass_matrix)."""
    mass = m.body_mass[i]
    st = m.body_first_moment[i]
    io = m.body_inertia_origin[i]
    rot = ws.rot[i]
    r = ws.r[i]
    h = ws.body_wrench[i]
    th = ws.body_acc[i]
    for a in range(3):
        h[a] = rot[a, 0] * st[0] + rot[a, 1] * st[1] + rot[a, 2] * st[2]
    rh = r[0] * h[0] + r[1] * h[1] + r[2] * h[2]
    rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2]
    ira = ws.composite_io_at    # I_O A^T
    for d in range(3):
        for c in range(3):
            ira[d, c] = io[d, 0] * rot[c, 0] + io[d, 1] * rot[c, 1] + io[d, 2] * rot[c, 2]
    for e in range(6):
        a = _VOIGT_ROW[e]
        c = _VOIGT_COL[e]
        s = 0.0
        for d in range(3):
            s += rot[a, d] * ira[d, c]
        s -= r[a] * h[c] + h[a] * r[c] + mass * r[a] * r[c]
        if a == c:
            s += 2.0 * rh + mass * rr
        th[e] = s
    for a in range(3):
        h[a] += mass * r[a]
    h[3] = mass
    h[4] = 0.0
    h[5] = 0.0
