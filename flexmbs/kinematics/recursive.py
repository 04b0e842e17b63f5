"""Recursive kinematics of a tree (numba): poses, the velocity transformation B, the
bias acceleration a_bias = (dB/dt) u + db_t/dt, and dB/dt column by column.

FORMULATION.md sections 1 and 4 (Huang H2.129-2.130, H2.148-2.166). Bodies are visited
root to leaves (parent index < child index). For body i with parent p and joint i
(parent marker P: s_P, C_P on p; child marker O: s_O, C_O on i; coordinates x: the
translations t_k, then the rotations about a_k, each axis in P's frame turned by the
previous rotations):

    A_F = A_p C_P,  x_P = A_p s_P + A_F d,  d = sum t_k x_k
    o   = r_p + x_P                       (joint point, global)
    R   = Rot(a_1, x_1) Rot(a_2, x_2) ...,   g_k = Rot(a_1, x_1)..Rot(a_k-1, x_k-1) a_k
    A_i = A_F R C_O^T,   r_i = o - A_i s_O
    omega_i = omega_p + A_F sum g_k xd_k

Velocities are split by coordinate: the workspace holds per body the partial velocities
jr[i][:, c] = d(dr_i/dt)/d(xd_c) and jw[i][:, c] = d(omega_i)/d(xd_c) (global axes) for the
coordinates c of the joints on the path to body i (the body path matrix: all other
columns stay zero). Body i's rows of B (FORMULATION.md section 1) are
[jr[i]; A_i^T jw[i]] at the free coordinates' columns; the columns of prescribed
coordinates times their rates form b_t.
"""

import numpy as np

from ..config import jit, jit_inline
from ..dynamics.timefunctions import evaluate_time_function
from .rotations import rotation_about_axis

__all__ = ["coordinate_values", "forward_kinematics", "velocity_transformation_rate"]


@jit
def _cross_add(a, b, scale, out):
    """out += scale * (a x b)."""
    out[0] += scale * (a[1] * b[2] - a[2] * b[1])
    out[1] += scale * (a[2] * b[0] - a[0] * b[2])
    out[2] += scale * (a[0] * b[1] - a[1] * b[0])


@jit
def _matvec(a, x, out):
    for r in range(3):
        out[r] = a[r, 0] * x[0] + a[r, 1] * x[1] + a[r, 2] * x[2]


@jit
def _matmul(a, b, out):
    for r in range(3):
        for c in range(3):
            out[r, c] = a[r, 0] * b[0, c] + a[r, 1] * b[1, c] + a[r, 2] * b[2, c]


@jit_inline
def coordinate_values(m, ws, t, q, u):
    """ws.x, ws.xd, ws.xdd (size nc) from q, u (size nq) and the drivers at time t (s);
    ws.q, ws.u copies of q, u (the elastic coordinates are read from there).

    Free coordinates get xdd = 0 (the bias pass); prescribed ones their driver's
    value, rate and acceleration.
    """
    for k in range(q.shape[0]):
        ws.q[k] = q[k]
        ws.u[k] = u[k]
    for c in range(m.coord_qindex.shape[0]):
        k = m.coord_qindex[c]
        if k >= 0:
            ws.x[c] = q[k]
            ws.xd[c] = u[k]
            ws.xdd[c] = 0.0
        else:
            evaluate_time_function(m.tf_kind, m.tf_ptr, m.tf_data, m.coord_function[c], t,
                                   ws.tf3)
            ws.x[c] = ws.tf3[0]
            ws.xd[c] = ws.tf3[1]
            ws.xdd[c] = ws.tf3[2]


@jit_inline
def forward_kinematics(m, ws, t, q, u):
    """Poses, velocities, partial velocities and bias accelerations of every body.

    In: m (ModelArrays), t (s), q, u (size nq). Out (ws, global axes): r, rot (A), rd,
    omega, jr, jw (at ancestor columns), ar, aw (accelerations with du/dt = 0, the
    prescribed accelerations included), x, xd, xdd. Exact: B is the Jacobian of the
    position map, with rotations by Rodrigues' formula.
    """
    coordinate_values(m, ws, t, q, u)
    nb = m.body_mass.shape[0]
    af = ws.m33[0]
    rr = ws.m33[1]
    tmp = ws.m33[2]
    rk = ws.m33[3]
    d = ws.v3[0]
    dd = ws.v3[1]
    ddd = ws.v3[2]
    xp = ws.v3[3]
    omrel = ws.v3[4]
    gdot = ws.v3[5]
    g = ws.v3[6]
    w3 = ws.v3[7]
    for i in range(nb):
        p = m.body_parent[i]
        c0 = m.joint_coord_start[i]
        c1 = m.joint_coord_start[i + 1]
        nt = m.joint_ntrans[i]
        a_lo = m.ancestor_ptr[i]
        a_hi = m.ancestor_ptr[i + 1]
        # --- the joint frame F after the translations (global position x_P from r_p)
        if p >= 0:
            _matmul(ws.rot[p], m.joint_parent_rotation[i], af)
        else:
            af[:, :] = m.joint_parent_rotation[i]
        d[:] = 0.0
        dd[:] = 0.0
        ddd[:] = 0.0
        for c in range(c0, c0 + nt):
            for r in range(3):
                d[r] += m.coord_axis[c, r] * ws.x[c]
                dd[r] += m.coord_axis[c, r] * ws.xd[c]
                ddd[r] += m.coord_axis[c, r] * ws.xdd[c]
        # x_P = A_p s_P + A_F d: in parent axes s_P + C_P d, then to global
        if p >= 0:
            _matvec(m.joint_parent_rotation[i], d, g)
            for r in range(3):
                w3[r] = m.joint_parent_position[i, r] + g[r]
            _matvec(ws.rot[p], w3, xp)
        else:
            _matvec(m.joint_parent_rotation[i], d, g)
            for r in range(3):
                xp[r] = m.joint_parent_position[i, r] + g[r]
        _matvec(af, dd, g)  # A_F dd
        _matvec(af, ddd, w3)  # A_F ddd
        # joint point o: r_i, rd_i, ar_i hold o, do/dt, its bias acceleration for now
        if p >= 0:
            for r in range(3):
                ws.r[i, r] = ws.r[p, r] + xp[r]
                ws.rd[i, r] = ws.rd[p, r] + g[r]
                ws.ar[i, r] = ws.ar[p, r] + w3[r]
                ws.omega[i, r] = ws.omega[p, r]
                ws.aw[i, r] = ws.aw[p, r]
            om = ws.omega[p]
            _cross_add(om, xp, 1.0, ws.rd[i])
            _cross_add(ws.aw[p], xp, 1.0, ws.ar[i])
            # omega x (omega x x_P) + 2 omega x (A_F dd)
            w3[0] = om[1] * xp[2] - om[2] * xp[1] + 2.0 * g[0]
            w3[1] = om[2] * xp[0] - om[0] * xp[2] + 2.0 * g[1]
            w3[2] = om[0] * xp[1] - om[1] * xp[0] + 2.0 * g[2]
            _cross_add(om, w3, 1.0, ws.ar[i])
            # partial velocities of o: jr_p + jw_p x x_P ; jw copied
            for k in range(m.ancestor_ptr[p], m.ancestor_ptr[p + 1]):
                c = m.ancestor_coord[k]
                for r in range(3):
                    ws.jw[i, r, c] = ws.jw[p, r, c]
                ws.jr[i, 0, c] = ws.jr[p, 0, c] + ws.jw[p, 1, c] * xp[2] - ws.jw[p, 2, c] * xp[1]
                ws.jr[i, 1, c] = ws.jr[p, 1, c] + ws.jw[p, 2, c] * xp[0] - ws.jw[p, 0, c] * xp[2]
                ws.jr[i, 2, c] = ws.jr[p, 2, c] + ws.jw[p, 0, c] * xp[1] - ws.jw[p, 1, c] * xp[0]
        else:
            for r in range(3):
                ws.r[i, r] = xp[r]
                ws.rd[i, r] = g[r]
                ws.ar[i, r] = w3[r]
                ws.omega[i, r] = 0.0
                ws.aw[i, r] = 0.0
        for c in range(c0, c0 + nt):
            _matvec(af, m.coord_axis[c], g)
            for r in range(3):
                ws.jr[i, r, c] = g[r]
                ws.jw[i, r, c] = 0.0
        # --- the rotations
        rr[:, :] = 0.0
        for r in range(3):
            rr[r, r] = 1.0
        omrel[:] = 0.0
        gdot[:] = 0.0
        d[:] = 0.0  # sum g_k xdd_k (prescribed accelerations)
        for c in range(c0 + nt, c1):
            _matvec(rr, m.coord_axis[c], g)
            _cross_add(omrel, g, ws.xd[c], gdot)
            for r in range(3):
                omrel[r] += g[r] * ws.xd[c]
                d[r] += g[r] * ws.xdd[c]
            _matvec(af, g, w3)
            for r in range(3):
                ws.jw[i, r, c] = w3[r]
                ws.jr[i, r, c] = 0.0
            rotation_about_axis(m.coord_axis[c], ws.x[c], rk)
            _matmul(rr, rk, tmp)
            rr[:, :] = tmp
        _matvec(af, omrel, g)  # A_F omrel
        for r in range(3):
            gdot[r] += d[r]
        _matvec(af, gdot, w3)  # A_F (gdot + sum g xdd)
        if p >= 0:
            _cross_add(ws.omega[p], g, 1.0, ws.aw[i])
        for r in range(3):
            ws.omega[i, r] += g[r]
            ws.aw[i, r] += w3[r]
        # --- body frame: A_i = A_F R C_O^T, r_i = o - A_i s_O
        _matmul(af, rr, tmp)
        co = m.joint_child_rotation[i]
        for r in range(3):
            for s in range(3):
                ws.rot[i, r, s] = tmp[r, 0] * co[s, 0] + tmp[r, 1] * co[s, 1] + \
                    tmp[r, 2] * co[s, 2]
        _matvec(ws.rot[i], m.joint_child_position[i], xp)  # y = A_i s_O
        om = ws.omega[i]
        for r in range(3):
            ws.r[i, r] -= xp[r]
        # rd -= om x y ; ar -= aw x y + om x (om x y)
        _cross_add(om, xp, -1.0, ws.rd[i])
        _cross_add(ws.aw[i], xp, -1.0, ws.ar[i])
        w3[0] = om[1] * xp[2] - om[2] * xp[1]
        w3[1] = om[2] * xp[0] - om[0] * xp[2]
        w3[2] = om[0] * xp[1] - om[1] * xp[0]
        _cross_add(om, w3, -1.0, ws.ar[i])
        # jr += y x jw
        for k in range(a_lo, a_hi):
            c = m.ancestor_coord[k]
            ws.jr[i, 0, c] += xp[1] * ws.jw[i, 2, c] - xp[2] * ws.jw[i, 1, c]
            ws.jr[i, 1, c] += xp[2] * ws.jw[i, 0, c] - xp[0] * ws.jw[i, 2, c]
            ws.jr[i, 2, c] += xp[0] * ws.jw[i, 1, c] - xp[1] * ws.jw[i, 0, c]


@jit
def velocity_transformation_rate(m, ws):
    """d(jr)/dt and d(jw)/dt (ws.djr, ws.djw, global axes) along the current motion.

    Call after forward_kinematics. The same recursion as the partial velocities,
    differentiated in time: with v_P = omega_p x x_P + A_F dd,
        d/dt(jr_p + jw_p x x_P) = djr_p + djw_p x x_P + jw_p x v_P
        d/dt(A_F t_k)           = omega_p x A_F t_k
        d/dt(A_F g_k)           = omega_p x A_F g_k + A_F (omrel_<k x g_k)
        d/dt(jr_o + y x jw)     = ... + (omega_i x y) x jw + y x djw
    so that (dB/dt) u + db_t/dt = a_bias (checked in the tests).
    """
    nb = m.body_mass.shape[0]
    af = ws.m33[0]
    rr = ws.m33[1]
    tmp = ws.m33[2]
    rk = ws.m33[3]
    d = ws.v3[0]
    xp = ws.v3[1]
    vp = ws.v3[2]
    omrel = ws.v3[3]
    g = ws.v3[4]
    w3 = ws.v3[5]
    y = ws.v3[6]
    yd = ws.v3[7]
    for i in range(nb):
        p = m.body_parent[i]
        c0 = m.joint_coord_start[i]
        c1 = m.joint_coord_start[i + 1]
        nt = m.joint_ntrans[i]
        if p >= 0:
            _matmul(ws.rot[p], m.joint_parent_rotation[i], af)
        else:
            af[:, :] = m.joint_parent_rotation[i]
        d[:] = 0.0
        w3[:] = 0.0
        for c in range(c0, c0 + nt):
            for r in range(3):
                d[r] += m.coord_axis[c, r] * ws.x[c]
                w3[r] += m.coord_axis[c, r] * ws.xd[c]
        _matvec(af, w3, vp)  # A_F dd
        _matvec(m.joint_parent_rotation[i], d, g)
        for r in range(3):
            w3[r] = m.joint_parent_position[i, r] + g[r]
        if p >= 0:
            _matvec(ws.rot[p], w3, xp)
            _cross_add(ws.omega[p], xp, 1.0, vp)
            for k in range(m.ancestor_ptr[p], m.ancestor_ptr[p + 1]):
                c = m.ancestor_coord[k]
                for r in range(3):
                    ws.djw[i, r, c] = ws.djw[p, r, c]
                    ws.djr[i, r, c] = ws.djr[p, r, c]
                    g[r] = ws.jw[p, r, c]
                    w3[r] = ws.djw[p, r, c]
                _cross_add(w3, xp, 1.0, ws.djr[i, :, c])
                _cross_add(g, vp, 1.0, ws.djr[i, :, c])
        for c in range(c0, c0 + nt):
            _matvec(af, m.coord_axis[c], g)
            for r in range(3):
                ws.djr[i, r, c] = 0.0
                ws.djw[i, r, c] = 0.0
            if p >= 0:
                _cross_add(ws.omega[p], g, 1.0, ws.djr[i, :, c])
        rr[:, :] = 0.0
        for r in range(3):
            rr[r, r] = 1.0
        omrel[:] = 0.0
        for c in range(c0 + nt, c1):
            _matvec(rr, m.coord_axis[c], g)
            w3[0] = omrel[1] * g[2] - omrel[2] * g[1]
            w3[1] = omrel[2] * g[0] - omrel[0] * g[2]
            w3[2] = omrel[0] * g[1] - omrel[1] * g[0]
            _matvec(af, w3, y)
            for r in range(3):
                ws.djw[i, r, c] = y[r]
                ws.djr[i, r, c] = 0.0
                omrel[r] += g[r] * ws.xd[c]
            if p >= 0:
                _matvec(af, g, w3)
                _cross_add(ws.omega[p], w3, 1.0, ws.djw[i, :, c])
            rotation_about_axis(m.coord_axis[c], ws.x[c], rk)
            _matmul(rr, rk, tmp)
            rr[:, :] = tmp
        _matvec(ws.rot[i], m.joint_child_position[i], y)
        om = ws.omega[i]
        yd[0] = om[1] * y[2] - om[2] * y[1]
        yd[1] = om[2] * y[0] - om[0] * y[2]
        yd[2] = om[0] * y[1] - om[1] * y[0]
        for k in range(m.ancestor_ptr[i], m.ancestor_ptr[i + 1]):
            c = m.ancestor_coord[k]
            for r in range(3):
                g[r] = ws.jw[i, r, c]
                w3[r] = ws.djw[i, r, c]
            _cross_add(yd, g, 1.0, ws.djr[i, :, c])
            _cross_add(y, w3, 1.0, ws.djr[i, :, c])
