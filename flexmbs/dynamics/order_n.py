"""The Order-N formulation (Huang chapter 5, after Keat 1990): the accelerations of a
tree by tip-to-base elimination on the blocks of B, explicit in du/dt, without
assembling M* (docs/explanation/formulation.md section 10; H5.6-5.18).

Body i's velocities V_i = [dr_i/dt; w_i; dqf_i/dt] (global axes for both rigid
parts) follow from its parent p's by the blocks of the recursive B:

    V_i = X_i V_p + H_i d_i',     X_i = [[I, -~(r_i - r_p), Xr_f],
                                         [0,  I,           Xw_f],
                                         [0,  0,           0   ]]

with d_i the body's own coordinates (the free coordinates of its joint, then its
elastic coordinates), H_i = [[Jr_i,d, Jr_i,e], [Jw_i,d, Jw_i,e], [0, I]] (Jr, Jw the
partial velocities of flexmbs.kinematics.recursive at the joint's columns d and at the
body's own elastic columns e, zero unless its joint's marker sits on a free node);
at the parent's elastic columns f, Xr_f = Jr_i,f - Jr_p,f - Jw_p,f x (r_i - r_p) and
Xw_f = Jw_i,f - Jw_p,f: what they do to body i through the deformation of the
parent's marker, beyond moving the parent's frame. So
B_i = X_i B_p + H_i E_i, and with W_i = B_i u' the body equations
M_i W_i = F_i + (what the joint transmits), F_i = Qv + Qe - M_i a_bias (the body
forces of the joint-coordinate formulation, flexmbs.dynamics.system.body_forces,
turned to global axes with T_i = diag(I, A_i^T, I): M_i <- T^T M_i T, F_i <- T^T F_i),
give, leaves to root (H5.6-5.14; Featherstone's articulated inertia):

    P_i = M_i + sum_c X_c^T Pa_c X_c,        z_i = -F_i + sum_c X_c^T za_c
    D_i = H_i^T P_i H_i + J_i,                U_i = P_i H_i
    Pa_i = P_i - U_i D_i^-1 U_i^T,            za_i = z_i + U_i D_i^-1 (tau_i - H_i^T z_i)

(J_i the actuators' rotor inertias, tau_i the joint springs, dampers, actuators and
user laws on d_i) and root to leaves (H5.15-5.18)

    d_i'' = D_i^-1 (tau_i - H_i^T z_i - U_i^T X_i W_p),   W_i = X_i W_p + H_i d_i''.

This solves M* u' = Q* exactly (the same equations, eliminated body by body instead
of factorised whole); tests/test_order_n.py holds it against the dense solve.
"""

import numpy as np

from ..kinematics.recursive import forward_kinematics
from ..runtime.config import jit
from .motors import load_motor_state
from .rigid_body import apply_body_mass
from .stops import add_stop_forces
from .system import (
    _joint_force,
    _work_rows,
    body_forces,
    derivative_from_accelerations,
    dynamic_rows,
    flexible_body_mass,
    split_state,
)
from .user_laws import add_joint_law_forces, has_user_laws

__all__ = ["order_n_accelerations", "order_n_state_derivative",
           "order_n_state_derivative_from_ref", "order_n_residual",
           "dae_order_n_residual"]


@jit
def _body_size(m, i):
    k = m.body_flex[i]
    return 6 + (m.flex_nf[k] if k >= 0 else 0)


@jit
def _own_coordinates(m, i, out):
    """The q indices of body i's own coordinates d_i into out; their number."""
    n = 0
    for c in range(m.joint_coord_start[i], m.joint_coord_start[i + 1]):
        qc = m.coord_qindex[c]
        if qc >= 0:
            out[n] = qc
            n += 1
    k = m.body_flex[i]
    if k >= 0:
        for e in range(m.flex_nf[k]):
            out[n] = m.flex_q[k] + e
            n += 1
    return n


@jit
def _global_mass(m, ws, i, out):
    """out[:n, :n] = T^T M_i T (velocities [dr/dt; w; dqf/dt], global axes)."""
    rot = ws.rot[i]
    k = m.body_flex[i]
    n = _body_size(m, i)
    if k >= 0:
        mm = flexible_body_mass(m, ws, i, k)
        for a in range(n):
            for b in range(n):
                out[a, b] = mm[a, b]
    else:
        vr = ws.mass_unit_vr
        vw = ws.mass_unit_vw
        for b in range(6):
            for r in range(3):
                vr[r] = 1.0 if b == r else 0.0
                vw[r] = 1.0 if b == 3 + r else 0.0
            apply_body_mass(m.body_mass[i], m.body_first_moment[i],
                            m.body_inertia_origin[i], rot, vr, vw, ws.mbcol, 0)
            for a in range(6):
                out[a, b] = ws.mbcol[a, 0]
    # rows and columns 3:6 from body to global axes: M <- T^T M T, T = diag(I, A^T, I)
    turn = ws.mass_turn
    for a in range(n):
        for r in range(3):
            turn[r] = out[a, 3 + r]
        for r in range(3):
            out[a, 3 + r] = rot[r, 0] * turn[0] + rot[r, 1] * turn[1] + rot[r, 2] * turn[2]
    for b in range(n):
        for r in range(3):
            turn[r] = out[3 + r, b]
        for r in range(3):
            out[3 + r, b] = rot[r, 0] * turn[0] + rot[r, 1] * turn[1] + rot[r, 2] * turn[2]


@jit
def _transfer(m, ws, i, p, x):
    """x[:6, :np] = the rigid rows of X_i (module docstring); rows 6: are zero."""
    x[:, :] = 0.0
    for r in range(3):
        x[r, r] = 1.0
        x[3 + r, 3 + r] = 1.0
    d0 = ws.r[i, 0] - ws.r[p, 0]
    d1 = ws.r[i, 1] - ws.r[p, 1]
    d2 = ws.r[i, 2] - ws.r[p, 2]
    # dr_i = dr_p + w_p x d = dr_p - ~d w_p
    x[0, 4] = d2
    x[0, 5] = -d1
    x[1, 3] = -d2
    x[1, 5] = d0
    x[2, 3] = d1
    x[2, 4] = -d0
    k = m.body_flex[p]
    if k >= 0:
        c0 = m.flex_col[k]
        for e in range(m.flex_nf[k]):
            # what the parent's elastic rate does to body i beyond moving the parent's
            # frame (which it does when the parent's own joint marker is on a free node)
            c = c0 + e
            wp0 = ws.jw[p, 0, c]
            wp1 = ws.jw[p, 1, c]
            wp2 = ws.jw[p, 2, c]
            x[0, 6 + e] = ws.jr[i, 0, c] - ws.jr[p, 0, c] - (wp1 * d2 - wp2 * d1)
            x[1, 6 + e] = ws.jr[i, 1, c] - ws.jr[p, 1, c] - (wp2 * d0 - wp0 * d2)
            x[2, 6 + e] = ws.jr[i, 2, c] - ws.jr[p, 2, c] - (wp0 * d1 - wp1 * d0)
            for r in range(3):
                x[3 + r, 6 + e] = ws.jw[i, r, c] - ws.jw[p, r, c]


@jit
def _motion_subspace(m, ws, i, h):
    """h[:n_i, :nd] = H_i (module docstring); returns nd."""
    h[:, :] = 0.0
    nd = 0
    for c in range(m.joint_coord_start[i], m.joint_coord_start[i + 1]):
        if m.coord_qindex[c] < 0:
            continue
        # the joint's column of B: find it among the frame columns
        col = -1
        for kk in range(m.frame_ptr[i], m.frame_ptr[i + 1]):
            cc = m.frame_col[kk]
            if m.col_qindex[cc] == m.coord_qindex[c]:
                col = cc
        for r in range(3):
            h[r, nd] = ws.jr[i, r, col]
            h[3 + r, nd] = ws.jw[i, r, col]
        nd += 1
    k = m.body_flex[i]
    if k >= 0:
        c0 = m.flex_col[k]
        for e in range(m.flex_nf[k]):
            # the frame moves with its own elastic coordinates only when the joint's
            # child marker sits on a node that is not held
            for r in range(3):
                h[r, nd] = ws.jr[i, r, c0 + e]
                h[3 + r, nd] = ws.jw[i, r, c0 + e]
            h[6 + e, nd] = 1.0
            nd += 1
    return nd


@jit
def order_n_accelerations(m, ws, t, accel):
    """accel (nq,) = du/dt by the Order-N recursion (module docstring), after
    forward_kinematics; fills ws.body_force and ws.flex_force as body_forces does."""
    nb = m.body_mass.shape[0]
    nq = accel.shape[0]
    nmax = 6
    for i in range(nb):
        nmax = max(nmax, _body_size(m, i))
    body_forces(m, ws, t)
    tau = np.zeros(nq)
    for c in range(m.coord_qindex.shape[0]):
        qc = m.coord_qindex[c]
        if qc >= 0:
            tau[qc] += _joint_force(m.coord_stiffness, m.coord_rest, m.coord_damping,
                                    ws.x, ws.xd, c)
    for a in range(m.act_coord.shape[0]):
        tau[m.coord_qindex[m.act_coord[a]]] += ws.act_tau[a]
    if m.stop_coord.shape[0] > 0:
        add_stop_forces(m, ws, tau, 1.0)
    if has_user_laws(m.tf_kind):
        add_joint_law_forces(m.tf_kind, m.tf_ptr, m.tf_data, m.coord_qindex, ws.flex_force,
                             tau, 1.0)
    for f in range(m.fric_coord.shape[0]):
        tau[m.coord_qindex[m.fric_coord[f]]] += ws.fric_force[f]
    rotor = np.zeros(nq)
    for a in range(m.act_coord.shape[0]):
        rotor[m.coord_qindex[m.act_coord[a]]] += m.act_inertia[a]
    pa = np.zeros((nb, nmax, nmax))      # articulated inertias, then Pa
    za = np.zeros((nb, nmax))            # bias forces, then za
    hh = np.zeros((nb, nmax, nmax))      # H_i
    uu = np.zeros((nb, nmax, nmax))      # U_i = P_i H_i
    dinv = np.zeros((nb, nmax, nmax))    # D_i^-1
    uz = np.zeros((nb, nmax))            # tau_i - H_i^T z_i
    nds = np.zeros(nb, dtype=np.int64)
    own = np.zeros((nb, nmax), dtype=np.int64)
    xt = np.zeros((nmax, nmax))
    for i in range(nb):
        _global_mass(m, ws, i, pa[i])
        rot = ws.rot[i]
        for r in range(3):
            za[i, r] = -ws.body_force[i, r]
            za[i, 3 + r] = -(rot[r, 0] * ws.body_force[i, 3] + rot[r, 1] *
                             ws.body_force[i, 4] + rot[r, 2] * ws.body_force[i, 5])
        k = m.body_flex[i]
        if k >= 0:
            for e in range(m.flex_nf[k]):
                za[i, 6 + e] = -ws.flex_force[m.flex_q[k] + e]
    for i in range(nb - 1, -1, -1):
        n = _body_size(m, i)
        nd = _motion_subspace(m, ws, i, hh[i])
        nds[i] = _own_coordinates(m, i, own[i])
        h = np.ascontiguousarray(hh[i, :n, :nd])
        p_i = np.ascontiguousarray(pa[i, :n, :n])
        u_i = p_i @ h
        d = h.T @ u_i
        for a in range(nd):
            d[a, a] += rotor[own[i, a]]
        di = np.ascontiguousarray(np.linalg.inv(d)) if nd > 0 else np.zeros((0, 0))
        uu[i, :n, :nd] = u_i
        dinv[i, :nd, :nd] = di
        z = np.ascontiguousarray(za[i, :n])
        v = np.zeros(nd)
        for a in range(nd):
            v[a] = tau[own[i, a]]
        v -= h.T @ z
        uz[i, :nd] = v
        p = m.body_parent[i]
        if p < 0:
            continue
        ut = np.ascontiguousarray(u_i.T)
        pa_i = p_i - (u_i @ di) @ ut
        za_i = z + u_i @ (di @ v)
        npar = _body_size(m, p)
        _transfer(m, ws, i, p, xt)
        x = np.ascontiguousarray(xt[:n, :npar])
        pa[p, :npar, :npar] += x.T @ pa_i @ x
        za[p, :npar] += x.T @ za_i
    w = np.zeros((nb, nmax))
    for i in range(nb):
        n = _body_size(m, i)
        nd = nds[i]
        p = m.body_parent[i]
        wp = np.zeros(n)
        if p >= 0:
            npar = _body_size(m, p)
            _transfer(m, ws, i, p, xt)
            wp = np.ascontiguousarray(xt[:n, :npar]) @ np.ascontiguousarray(w[p, :npar])
        rhs = np.ascontiguousarray(uz[i, :nd]) - np.ascontiguousarray(
            uu[i, :n, :nd]).T @ wp
        dd = np.ascontiguousarray(dinv[i, :nd, :nd]) @ rhs
        w[i, :n] = wp + np.ascontiguousarray(hh[i, :n, :nd]) @ dd
        for a in range(nd):
            accel[own[i, a]] = dd[a]


@jit
def order_n_state_derivative(m, ws, t, y, out):
    """y' = [u; u' (Order-N); P; P_a], the state_derivative of
    flexmbs.dynamics.system with the accelerations of the recursion."""
    nq = ws.mass.shape[0]
    q, u, _ = split_state(y, nq)
    load_motor_state(m, ws, y)
    forward_kinematics(m, ws, t, q, u)
    order_n_accelerations(m, ws, t, ws.accel)
    derivative_from_accelerations(m, ws, t, u, out)


@jit
def order_n_state_derivative_from_ref(t, y, ref, out):
    """`order_n_state_derivative` with (m, ws) by reference (flexmbs.runtime.tuple_ref), for
    the ODE integrators' calls from Python with a HeldTuple."""
    order_n_state_derivative(ref[0], ref[1], t, y, out)


@jit
def order_n_residual(m, ws, t, y, yp, out):
    """F = [q' - u; u' - u'(Order-N); w' - P; w_a' - P_a]: the explicit accelerations
    in residual form, for the implicit integrators ("Ex-Im" of Huang chapter 5)."""
    nq = ws.mass.shape[0]
    q, u, _ = split_state(y, nq)
    qp, up, _ = split_state(yp, nq)
    load_motor_state(m, ws, y)
    forward_kinematics(m, ws, t, q, u)
    order_n_accelerations(m, ws, t, ws.accel)
    dynamic_rows(m, ws, ws.accel, ws.force)
    for k in range(nq):
        out[k] = qp[k] - u[k]
        out[nq + k] = up[k] - ws.accel[k]
    _work_rows(m, ws, t, yp, out)


@jit
def dae_order_n_residual(t, y, yp, args, out):
    """`order_n_residual` in the argument order of the BDF driver."""
    order_n_residual(args[0], args[1], t, y, yp, out)
