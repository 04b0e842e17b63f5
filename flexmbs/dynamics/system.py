"""System equations of a tree (numba): M*, Q*, the residual, the state derivative, the
power of the non-conservative forces.

docs/explanation/formulation.md section 5 (Huang H2.140-2.147):

    M* = sum_i B_i^T M_i B_i
    Q* = sum_i B_i^T (Qv_i + Qe_i - M_i a_bias_i) + Q_joint
    Q_joint = -k (x - x_rest) - c dx/dt          (joint springs and dampers)

State y = [q, u, w] (sizes nq, nq, 1), w the work of the non-conservative forces
(section 7). Residual form F(t, y, y') = [q' - u; M* u' - Q*; w' - P] = 0.

Every kernel takes (m: ModelArrays, ws: Workspace, ...) and writes into ws or `out`.
"""

import numpy as np

from ..config import jit, jit_entry, jit_inline, jit_shared
from ..kinematics.markers import marker_frame
from ..kinematics.recursive import forward_kinematics, forward_kinematics_terms, terms_current
from ..kinematics.timefunctions import evaluate_time_function
from ..linalg import add_cross, cholesky_solve_in_place
from ..tuple_ref import member_ref, tuple_ref
from .composite import composite_mass_matrix, finish_mass_matrix
from .constraints import constraint_terms
from .controllers import actuator_commands
from .flexible_body import flexible_gravity_force, flexible_mass_matrix, flexible_quadratic_velocity
from .friction import hold_stuck_rows, joint_friction_forces, stuck_mass_rows
from .geometric import geometric_elastic_forces, geometric_tangent_stiffness
from .marker_loads import add_marker_load
from .rigid_body import apply_body_mass, body_inertial_and_gravity_force
from .switches import limited_motor_torque, motor_torque_before_limit
from .user_laws import (
    add_joint_law_forces,
    has_marker_laws,
    has_user_laws,
    joint_law_forces,
    joint_law_power,
    marker_law_loads,
    marker_law_power,
)

__all__ = ["body_forces", "body_columns", "mass_matrix", "generalized_forces",
           "dynamic_rows", "residual", "state_derivative",
           "state_derivative_from_ref",
           "nonconservative_power",
           "split_state", "actuator_torques", "constrained_residual",
           "dae_constrained_residual"]


@jit_inline
def split_state(y, nq):
    """Views q, u, w of the state vector y = [q, u, w]; w[0] = W_nc, w[1 + a] the work
    of actuator a."""
    return y[:nq], y[nq:2 * nq], y[2 * nq:]


@jit_inline
def flexible_arrays(m, k):
    """nf and the invariants Sbar, N, SS, K_ff, D of flexible body k (views)."""
    nf = m.flex_nf[k]
    p = m.flex_ptr
    sbar = m.flex_sbar[p[k, 0]:p[k + 1, 0]].reshape((3, nf))
    ninv = m.flex_ninv[p[k, 1]:p[k + 1, 1]].reshape((3, 3, nf))
    ss = m.flex_ss[p[k, 2]:p[k + 1, 2]].reshape((3, 3, nf, nf))
    kff = m.flex_k[p[k, 3]:p[k + 1, 3]].reshape((nf, nf))
    dff = m.flex_d[p[k, 3]:p[k + 1, 3]].reshape((nf, nf))
    return nf, sbar, ninv, ss, kff, dff


@jit_inline
def flexible_body_mass(m, ws, i, k):
    """M_i ((6 + nf) square, a view of ws.flex_mass_flat) of flexible body i (index k
    in the flexible tables) at the current elastic coordinates,
    docs/explanation/formulation.md section 2."""
    nf, sbar, ninv, ss, kff, dff = flexible_arrays(m, k)
    q0 = m.flex_q[k]
    n6 = 6 + nf
    mm = ws.flex_mass_flat[:n6 * n6].reshape((n6, n6))
    flexible_mass_matrix(m.flex_mass[k], m.flex_first[k], sbar, m.flex_th0[k], ninv, ss,
                         ws.rot[i], ws.q[q0:q0 + nf], ws.flex_work, mm)
    return mm


@jit_shared
def _flexible_body_force(m, ws, i, k, w):
    """ws.body_force[i] and ws.flex_force (at body i's elastic coordinates) =
    Qv + Qg - K qf - D dqf + Q_geometric - M_i [ar; A^T aw; 0] (docs/explanation/formulation.md
    sections 2 and 6; w: the angular velocity in body axes)."""
    nf, sbar, ninv, ss, kff, dff = flexible_arrays(m, k)
    q0 = m.flex_q[k]
    n6 = 6 + nf
    rot = ws.rot[i]
    qf = ws.q[q0:q0 + nf]
    dqf = ws.u[q0:q0 + nf]
    f = ws.flex_vec[:n6]
    tmp = ws.flex_vec2[:n6]
    flexible_quadratic_velocity(m.flex_first[k], sbar, m.flex_th0[k], ninv, ss, rot, qf,
                                w, dqf, ws.flex_work, f)
    flexible_gravity_force(m.flex_mass[k], m.flex_first[k], sbar, rot, qf, m.gravity, tmp)
    for r in range(n6):
        f[r] += tmp[r]
    for e in range(nf):
        s = 0.0
        for j in range(nf):
            s += kff[e, j] * qf[j] + dff[e, j] * dqf[j]
        f[6 + e] -= s
    if m.geo_code[k] != 0:
        geometric_elastic_forces(m.geo_code[k], m.geo_ptr[k], m.geo_ptr[k + 1], m.geo_ea,
                                 m.geo_length, m.geo_gmat, m.geo_row_ptr, m.geo_row_data,
                                 m.geo_dv, m.geo_dw, m.geo_weight, qf, f[6:],
                                 ws.geo_scratch)
    mm = flexible_body_mass(m, ws, i, k)
    aw = ws.aw[i]
    for r in range(3):
        tmp[r] = ws.ar[i, r]
        tmp[3 + r] = rot[0, r] * aw[0] + rot[1, r] * aw[1] + rot[2, r] * aw[2]
    for r in range(n6):
        s = 0.0
        for j in range(6):
            s += mm[r, j] * tmp[j]
        f[r] -= s
    for r in range(6):
        ws.body_force[i, r] = f[r]
    for e in range(nf):
        ws.flex_force[q0 + e] = f[6 + e]


@jit_shared
def body_columns(m, ws, i):
    """ws.bcol[:, c] = the rigid rows of body i's column c of B ([global; body axes]:
    [jr; A^T jw], H2.129) at its columns c (prescribed ones included); ws.mbcol[:, c] =
    the rigid-body mass times it (used for rigid bodies), for the assembly
    M* = sum_i B_i^T M_i B_i (H2.144)."""
    rot = ws.rot[i]
    for k in range(m.body_col_ptr[i], m.body_col_ptr[i + 1]):
        c = m.body_col[k]
        for r in range(3):
            ws.bcol[r, c] = ws.jr[i, r, c]
        for r in range(3):
            ws.bcol[3 + r, c] = rot[0, r] * ws.jw[i, 0, c] + rot[1, r] * ws.jw[i, 1, c] + \
                rot[2, r] * ws.jw[i, 2, c]
        apply_body_mass(m.body_mass[i], m.body_first_moment[i], m.body_inertia_origin[i],
                        rot, ws.bcol[0:3, c], ws.bcol[3:6, c], ws.mbcol, c)


@jit_inline
def _body_angular_velocity(ws, i, out):
    rot = ws.rot[i]
    om = ws.omega[i]
    for r in range(3):
        out[r] = rot[0, r] * om[0] + rot[1, r] * om[1] + rot[2, r] * om[2]


@jit_shared
def _load_at_marker(m, ws, f, t, loc):
    """The frame of load f's marker into ws.marker_pos ... marker_tangent
    (`marker_frame`), and loc = the vector of load f at time t in global axes (N or
    N m): its `vector` times its time function, turned from the marker's axes for a
    follower load."""
    k = m.force_marker[f]
    rot = ws.marker_axes
    marker_frame(m, ws, k, ws.marker_pos, rot, ws.marker_vel, ws.marker_omega,
                 ws.marker_arm, ws.marker_tangent)
    evaluate_time_function(m.tf_kind, m.tf_ptr, m.tf_data, m.force_function[f], t,
                           ws.segment_time[0], ws.tf3)
    scale = ws.tf3[0]
    v = m.force_vector[f]
    for r in range(3):
        if m.force_frame[f] == 1:
            loc[r] = scale * (rot[r, 0] * v[0] + rot[r, 1] * v[1] + rot[r, 2] * v[2])
        else:
            loc[r] = scale * v[r]


@jit
def _marker_generalized_force(m, ws, k, load, torque, arm, tm):
    """Adds the generalized force of a global force (torque = False) or torque (True)
    `load` at marker k to ws.body_force and ws.flex_force (`add_marker_load`); arm = A s
    and tm = Tm from `marker_frame`. Nothing for a marker on the ground."""
    i = m.marker_body[k]
    if i < 0:
        return
    add_marker_load(k, torque, load, ws.rot[i], arm, tm, m.marker_term_ptr,
                    m.marker_term_col, m.marker_term_coef, m.col_qindex, ws.body_force[i],
                    ws.flex_force)


@jit
def _applied_loads(m, ws, t):
    """Adds the point forces and torques to ws.body_force and ws.flex_force
    (docs/explanation/formulation.md section 2, applied forces; `_marker_generalized_force`)."""
    loc = ws.load_vector
    for f in range(m.force_type.shape[0]):
        _load_at_marker(m, ws, f, t, loc)
        _marker_generalized_force(m, ws, m.force_marker[f], loc, m.force_type[f] == 1,
                                  ws.marker_arm, ws.marker_tangent)


@jit
def _spring_state(m, ws, s, direction):
    """Spring s between its markers (after forward_kinematics): (L, dL/dt) and the unit
    vector from marker 1 to marker 2 into `direction`; marker 2's frame is left in
    ws.marker_pos ... marker_tangent."""
    p1 = ws.spring_first_position
    v1 = ws.spring_first_velocity
    pos = ws.marker_pos
    vel = ws.marker_vel
    marker_frame(m, ws, m.spring_marker[s, 0], pos, ws.marker_axes, vel, ws.marker_omega,
                 ws.marker_arm, ws.marker_tangent)
    for r in range(3):
        p1[r] = pos[r]
        v1[r] = vel[r]
    marker_frame(m, ws, m.spring_marker[s, 1], pos, ws.marker_axes, vel, ws.marker_omega,
                 ws.marker_arm, ws.marker_tangent)
    length = 0.0
    for r in range(3):
        direction[r] = pos[r] - p1[r]
        length += direction[r] * direction[r]
    length = np.sqrt(length)
    rate = 0.0
    for r in range(3):
        direction[r] /= length
        rate += direction[r] * (vel[r] - v1[r])
    return length, rate


@jit
def _spring_forces(m, ws):
    """Adds the forces of the point-to-point springs and dampers: f = k (L - L0) +
    c dL/dt pulls the markers together, +f n on marker 1, -f n on marker 2 (n the unit
    vector from 1 to 2)."""
    n = ws.spring_direction
    force = ws.spring_force
    arm = ws.marker_arm
    tm = ws.marker_tangent
    for s in range(m.spring_k.shape[0]):
        length, rate = _spring_state(m, ws, s, n)
        f = m.spring_k[s] * (length - m.spring_l0[s]) + m.spring_c[s] * rate
        for r in range(3):
            force[r] = -f * n[r]
        _marker_generalized_force(m, ws, m.spring_marker[s, 1], force, False, arm, tm)
        marker_frame(m, ws, m.spring_marker[s, 0], ws.marker_pos, ws.marker_axes,
                     ws.marker_vel, ws.marker_omega, arm, tm)
        for r in range(3):
            force[r] = f * n[r]
        _marker_generalized_force(m, ws, m.spring_marker[s, 0], force, False, arm, tm)


@jit
def springs_energy_and_power(m, ws):
    """(V, P): the springs' potential 1/2 k (L - L0)^2 (J) and the dampers' power
    -c (dL/dt)^2 (W)."""
    n = ws.spring_direction
    energy = 0.0
    power = 0.0
    for s in range(m.spring_k.shape[0]):
        length, rate = _spring_state(m, ws, s, n)
        energy += 0.5 * m.spring_k[s] * (length - m.spring_l0[s]) ** 2
        power -= m.spring_c[s] * rate * rate
    return energy, power


@jit
def _loads_power(m, ws, t):
    """Power of the point forces and torques (W): F . (marker velocity) + T . (marker
    angular velocity)."""
    p = 0.0
    loc = ws.load_vector
    for f in range(m.force_type.shape[0]):
        _load_at_marker(m, ws, f, t, loc)
        vel = ws.marker_vel if m.force_type[f] == 0 else ws.marker_omega
        p += loc[0] * vel[0] + loc[1] * vel[1] + loc[2] * vel[2]
    return p


@jit_shared
def actuator_torques(m, ws, t):
    """ws.act_tau[a] = the generalized force of actuator a on its coordinate (N m or N,
    after forward_kinematics): n tau_m - n^2 b_m x', with the motor torque
    tau_m = (kp (x_ref - x) + kd (x_ref' - x')) / n (type pd, x_ref = setpoint(t)) or
    torque(t) (type torque), limited to |tau_m| <= max_torque (on the branch the
    integrator holds, flexmbs.dynamics.switches)."""
    for a in range(m.act_coord.shape[0]):
        c = m.act_coord[a]
        tm = motor_torque_before_limit(m, ws, a, t, ws.x[c], ws.xd[c])
        tm = limited_motor_torque(m, ws, a, tm)
        ws.act_tau[a] = m.act_gear[a] * tm - m.act_damping[a] * ws.xd[c]


@jit_shared
def body_forces(m, ws, t):
    """ws.body_force[i] = Qv_i + Qe_i - M_i a_bias_i and ws.act_tau (after
    forward_kinematics); the joint user laws' forces in ws.flex_force, the joint
    friction forces in ws.fric_force, the controllers' commands in ws.act_command."""
    w = ws.omega_body
    vw = ws.aw_body
    nb = m.body_mass.shape[0]
    for i in range(nb):
        _body_angular_velocity(ws, i, w)
        if m.body_flex[i] >= 0:
            _flexible_body_force(m, ws, i, m.body_flex[i], w)
            continue
        body_inertial_and_gravity_force(m.body_mass[i], m.body_first_moment[i],
                                        m.body_inertia_origin[i], m.gravity, ws.rot[i], w,
                                        ws.body_force[i])
        rot = ws.rot[i]
        aw = ws.aw[i]
        for r in range(3):
            vw[r] = rot[0, r] * aw[0] + rot[1, r] * aw[1] + rot[2, r] * aw[2]
        apply_body_mass(m.body_mass[i], m.body_first_moment[i], m.body_inertia_origin[i],
                        rot, ws.ar[i], vw, ws.mbcol, 0)
        for r in range(6):
            ws.body_force[i, r] -= ws.mbcol[r, 0]
    if m.force_type.shape[0] > 0:  # a call, not inlined: models without loads pay nothing
        _applied_loads(m, ws, t)
    if m.spring_k.shape[0] > 0:
        _spring_forces(m, ws)
    if has_user_laws(m.tf_kind):  # likewise for user laws
        joint_law_forces(m.tf_kind, m.tf_ptr, m.tf_data, m.coord_qindex, ws.q, ws.u, t,
                         ws.law_out, ws.flex_force)
        if has_marker_laws(m.tf_kind):
            marker_law_loads(m, ws, t)
    if m.fric_coord.shape[0] > 0:
        joint_friction_forces(m, ws)
    if m.ctrl_act.shape[0] > 0:
        actuator_commands(m, ws, t, ws.q, ws.u)
    actuator_torques(m, ws, t)


@jit_inline
def _joint_force(stiffness, rest, damping, x, xd, c):
    """Q_joint at coordinate c: -k (x - rest) - c xd (N or N m)."""
    return -stiffness[c] * (x[c] - rest[c]) - damping[c] * xd[c]


@jit_shared
def mass_matrix(m, ws):
    """ws.mass = M* = sum_i B_i^T M_i B_i (nq x nq, H2.144), symmetric positive definite
    (after forward_kinematics). Only the lower triangle is summed (columns are sorted,
    and so are their q indices), then mirrored."""
    ws.mass[:, :] = 0.0
    for i in range(m.body_mass.shape[0]):
        body_columns(m, ws, i)
        k = m.body_flex[i]
        if k >= 0:
            _flexible_mass_block(m, ws, i, k)
            continue
        lo = m.body_col_ptr[i]
        hi = m.body_col_ptr[i + 1]
        for ka in range(lo, hi):
            ca = m.body_col[ka]
            qa = m.col_qindex[ca]
            if qa < 0:
                continue
            for kb in range(lo, ka + 1):
                cb = m.body_col[kb]
                qb = m.col_qindex[cb]
                if qb < 0:
                    continue
                s = 0.0
                for r in range(6):
                    s += ws.bcol[r, ca] * ws.mbcol[r, cb]
                ws.mass[qa, qb] += s
    finish_mass_matrix(m, ws.mass)


@jit_shared
def _flexible_mass_block(m, ws, i, k):
    """Adds B_i^T M_i B_i of flexible body i to ws.mass (lower triangle). Column c of
    B_i is [bcol[:, c]; the unit vector of c among the body's own elastic
    coordinates (if it is one)]; ws.flex_mb[:, c] = M_i times it."""
    mm = flexible_body_mass(m, ws, i, k)
    nf = m.flex_nf[k]
    c0 = m.flex_col[k]
    n6 = 6 + nf
    lo = m.body_col_ptr[i]
    hi = m.body_col_ptr[i + 1]
    for kb in range(lo, hi):
        cb = m.body_col[kb]
        own = cb - c0 if c0 <= cb < c0 + nf else -1
        for r in range(n6):
            s = 0.0
            for j in range(6):
                s += mm[r, j] * ws.bcol[j, cb]
            if own >= 0:
                s += mm[r, 6 + own]
            ws.flex_mb[r, cb] = s
    for ka in range(lo, hi):
        ca = m.body_col[ka]
        qa = m.col_qindex[ca]
        if qa < 0:
            continue
        own = ca - c0 if c0 <= ca < c0 + nf else -1
        for kb in range(lo, ka + 1):
            cb = m.body_col[kb]
            qb = m.col_qindex[cb]
            if qb < 0:
                continue
            s = 0.0
            for r in range(6):
                s += ws.bcol[r, ca] * ws.flex_mb[r, cb]
            if own >= 0:
                s += ws.flex_mb[6 + own, cb]
            ws.mass[qa, qb] += s


@jit_shared
def generalized_forces(m, ws, t):
    """ws.force = Q* (size nq) (after forward_kinematics); also fills ws.body_force."""
    body_forces(m, ws, t)
    ws.force[:] = 0.0
    nb = m.body_mass.shape[0]
    for i in range(nb):
        rot = ws.rot[i]
        for k in range(m.frame_ptr[i], m.frame_ptr[i + 1]):
            c = m.frame_col[k]
            qc = m.col_qindex[c]
            if qc < 0:
                continue
            s = 0.0
            for r in range(3):
                s += ws.jr[i, r, c] * ws.body_force[i, r]
                bw = rot[0, r] * ws.jw[i, 0, c] + rot[1, r] * ws.jw[i, 1, c] + \
                    rot[2, r] * ws.jw[i, 2, c]
                s += bw * ws.body_force[i, 3 + r]
            ws.force[qc] += s
    for c in range(m.coord_qindex.shape[0]):
        qc = m.coord_qindex[c]
        if qc >= 0:
            ws.force[qc] += _joint_force(m.coord_stiffness, m.coord_rest, m.coord_damping,
                                         ws.x, ws.xd, c)
    for a in range(m.act_coord.shape[0]):
        ws.force[m.coord_qindex[m.act_coord[a]]] += ws.act_tau[a]
    if has_user_laws(m.tf_kind):
        add_joint_law_forces(m.tf_kind, m.tf_ptr, m.tf_data, m.coord_qindex, ws.flex_force,
                             ws.force, 1.0)
    for f in range(m.fric_coord.shape[0]):
        ws.force[m.coord_qindex[m.fric_coord[f]]] += ws.fric_force[f]
    for k in range(m.flex_nf.shape[0]):
        for e in range(m.flex_q[k], m.flex_q[k] + m.flex_nf[k]):
            ws.force[e] += ws.flex_force[e]


@jit_shared
def _flexible_dynamic_rows(m, ws, i, k, vr, vw, udot, out):
    """ws.mbcol[:, 0] = the rigid rows of M_i [vr; vw; dqf'] and, at body i's elastic
    coordinates, out += its elastic rows - the elastic forces (ws.flex_force)."""
    mm = flexible_body_mass(m, ws, i, k)
    nf = m.flex_nf[k]
    q0 = m.flex_q[k]
    n6 = 6 + nf
    acc = ws.flex_vec2[:n6]
    for r in range(3):
        acc[r] = vr[r]
        acc[3 + r] = vw[r]
    for e in range(nf):
        acc[6 + e] = udot[q0 + e]
    for r in range(n6):
        s = 0.0
        for j in range(n6):
            s += mm[r, j] * acc[j]
        if r < 6:
            ws.mbcol[r, 0] = s
        else:
            out[q0 + r - 6] += s - ws.flex_force[q0 + r - 6]


@jit_shared
def body_unbalanced_wrench(m, ws, i, udot, out):
    """ws.mbcol[0:6, 0] = g_i = M_i (B_i udot) - (Qv_i + Qe_i - M_i a_bias_i), the
    rigid rows of body i's equations (docs/explanation/formulation.md section 2): the force
    (global, N) and the moment about the body origin (body axes, N m) that the joints and
    constraints must apply to it. A flexible body also adds its elastic rows of g_i to
    out at its q indices. Call after forward_kinematics and body_forces."""
    vr = ws.udot_ar
    w3 = ws.udot_aw
    vr[:] = 0.0
    w3[:] = 0.0
    for k in range(m.frame_ptr[i], m.frame_ptr[i + 1]):
        c = m.frame_col[k]
        qc = m.col_qindex[c]
        if qc < 0:
            continue
        a = udot[qc]
        for r in range(3):
            vr[r] += ws.jr[i, r, c] * a
            w3[r] += ws.jw[i, r, c] * a
    _wrench_of_acceleration(m, ws, i, vr, w3, udot, out)


@jit_shared
def _wrench_of_acceleration(m, ws, i, vr, w3, udot, out):
    """ws.mbcol[0:6, 0] = g_i for body i's acceleration from udot: vr (global, m/s^2)
    of its origin and w3 (global, rad/s^2); see body_unbalanced_wrench."""
    vw = ws.udot_aw_body
    rot = ws.rot[i]
    for r in range(3):
        vw[r] = rot[0, r] * w3[0] + rot[1, r] * w3[1] + rot[2, r] * w3[2]
    if m.body_flex[i] >= 0:
        _flexible_dynamic_rows(m, ws, i, m.body_flex[i], vr, vw, udot, out)
    else:
        apply_body_mass(m.body_mass[i], m.body_first_moment[i], m.body_inertia_origin[i],
                        rot, vr, vw, ws.mbcol, 0)
    for r in range(6):
        ws.mbcol[r, 0] -= ws.body_force[i, r]


@jit_shared
def dynamic_rows(m, ws, udot, out):
    """out = M* udot - Q* (size nq, docs/explanation/formulation.md section 5) and ws.tau = the
    generalized force that each prescribed coordinate's driver must apply (size nc,
    zero at free coordinates; N or N m).

    Per body g_i = M_i (B_i udot) - (Qv_i + Qe_i - M_i a_bias_i); then out = sum B_i^T g_i
    - Q_joint at free columns, tau = sum B_i^T g_i - Q_joint at prescribed ones. No M*
    is formed. Call after forward_kinematics and body_forces.
    """
    out[:] = 0.0
    ws.tau[:] = 0.0
    for i in range(m.body_mass.shape[0]):
        body_unbalanced_wrench(m, ws, i, udot, out)
        rot = ws.rot[i]
        lo = m.frame_ptr[i]
        hi = m.frame_ptr[i + 1]
        for k in range(lo, hi):
            c = m.frame_col[k]
            s = 0.0
            for r in range(3):
                s += ws.jr[i, r, c] * ws.mbcol[r, 0]
                bw = rot[0, r] * ws.jw[i, 0, c] + rot[1, r] * ws.jw[i, 1, c] + \
                    rot[2, r] * ws.jw[i, 2, c]
                s += bw * ws.mbcol[3 + r, 0]
            qc = m.col_qindex[c]
            if qc >= 0:
                out[qc] += s
            else:
                ws.tau[c] += s
    _joint_rows(m, ws, udot, out)


@jit_shared
def recursive_dynamic_rows(m, ws, udot, out):
    """`dynamic_rows` in O(N) (after forward_kinematics_terms and body_forces): the
    same out = M* udot - Q* and ws.tau, by the recursive Newton-Euler passes of
    Huang's Order-N formulation (chapter 5, H5.6-5.18) on the joint-coordinate body
    equations, without the partial velocities at inherited columns.

    Root to leaves, the acceleration of body i from udot (global; parent p, own
    terms k at free columns c of its joint, docs/explanation/formulation.md section 10):

        a_w,i = a_w,p + sum term_jw[k] udot_c,
        a_r,i = a_r,p + a_w,p x (r_i - r_p) + sum term_jr[k] udot_c;

    g_i from it (body_unbalanced_wrench's rows, the elastic rows added to out), turned
    to a global wrench [f_i; n_i] about the origin. Leaves to root, the wrench of the
    subtree, W_i = [f_i; n_i] + sum over children c of [f_c; n_c + (r_c - r_i) x f_c],
    gives column c's row term_jr[k] . f + term_jw[k] . n at each term of body i's
    joint: the sum over bodies j of B_j^T g_j that dynamic_rows forms column by column.
    """
    out[:] = 0.0
    ws.tau[:] = 0.0
    nb = m.body_mass.shape[0]
    vr = ws.udot_ar
    w3 = ws.udot_aw
    arm = ws.parent_offset
    for i in range(nb):
        p = m.body_parent[i]
        acc = ws.body_acc[i]
        if p >= 0:
            ap = ws.body_acc[p]
            for r in range(6):
                acc[r] = ap[r]
            add_cross(ap[3:6], _offset_from_parent(ws, i, p, arm), 1.0, acc[0:3])
        else:
            acc[:] = 0.0
        for k in range(m.motion_term_ptr[m.motion_ptr[i]],
                       m.motion_term_ptr[m.motion_ptr[i + 1]]):
            qc = m.col_qindex[m.motion_term_col[k]]
            if qc < 0:
                continue
            a = udot[qc]
            for r in range(3):
                acc[r] += ws.term_jr[k, r] * a
                acc[3 + r] += ws.term_jw[k, r] * a
        for r in range(3):
            vr[r] = acc[r]
            w3[r] = acc[3 + r]
        _wrench_of_acceleration(m, ws, i, vr, w3, udot, out)
        rot = ws.rot[i]
        wr = ws.body_wrench[i]
        for r in range(3):
            wr[r] = ws.mbcol[r, 0]
            wr[3 + r] = (rot[r, 0] * ws.mbcol[3, 0] + rot[r, 1] * ws.mbcol[4, 0]
                         + rot[r, 2] * ws.mbcol[5, 0])
    for i in range(nb - 1, -1, -1):
        wr = ws.body_wrench[i]
        for k in range(m.motion_term_ptr[m.motion_ptr[i]],
                       m.motion_term_ptr[m.motion_ptr[i + 1]]):
            c = m.motion_term_col[k]
            s = 0.0
            for r in range(3):
                s += ws.term_jr[k, r] * wr[r] + ws.term_jw[k, r] * wr[3 + r]
            qc = m.col_qindex[c]
            if qc >= 0:
                out[qc] += s
            else:
                ws.tau[c] += s
        p = m.body_parent[i]
        if p >= 0:
            wp = ws.body_wrench[p]
            for r in range(6):
                wp[r] += wr[r]
            add_cross(_offset_from_parent(ws, i, p, arm), wr[0:3], 1.0, wp[3:6])
    _joint_rows(m, ws, udot, out)


@jit_inline
def _offset_from_parent(ws, i, p, out):
    """out = r_i - r_p (m, global); returns out."""
    for r in range(3):
        out[r] = ws.r[i, r] - ws.r[p, r]
    return out


@jit_shared
def _joint_rows(m, ws, udot, out):
    """The joints' own terms of `dynamic_rows`: out -= Q_joint (springs, dampers, user
    laws, friction) and += the actuators' rotor inertia and torque rows; ws.tau
    likewise at the prescribed coordinates. A stuck joint's row is then replaced
    (flexmbs.dynamics.friction.hold_stuck_rows)."""
    for c in range(m.coord_qindex.shape[0]):
        qc = m.coord_qindex[c]
        if qc >= 0:
            out[qc] -= _joint_force(m.coord_stiffness, m.coord_rest, m.coord_damping,
                                    ws.x, ws.xd, c)
        else:
            ws.tau[c] -= _joint_force(m.coord_stiffness, m.coord_rest, m.coord_damping,
                                      ws.x, ws.xd, c)
    for a in range(m.act_coord.shape[0]):
        qc = m.coord_qindex[m.act_coord[a]]
        out[qc] += m.act_inertia[a] * udot[qc] - ws.act_tau[a]
    if has_user_laws(m.tf_kind):
        add_joint_law_forces(m.tf_kind, m.tf_ptr, m.tf_data, m.coord_qindex, ws.flex_force,
                             out, -1.0)
    if m.fric_coord.shape[0] > 0:
        for f in range(m.fric_coord.shape[0]):
            out[m.coord_qindex[m.fric_coord[f]]] -= ws.fric_force[f]
        hold_stuck_rows(m, ws, udot, out)


@jit_shared
def nonconservative_power(m, ws, t):
    """P (W): power of dampers, drivers, applied loads and user laws (after
    dynamic_rows).

    Free coordinates: -c xd^2. Prescribed ones: the driver's force tau (ws.tau) plus
    the damper's, (tau - c xd) xd. Loads: F . (velocity of the marker), T . (angular
    velocity of the marker).
    Actuators: act_tau xd. Structural damping: -dqf^T D dqf. Joint friction:
    f xd (zero for a stuck joint).
    """
    p = 0.0
    for a in range(m.act_coord.shape[0]):
        p += ws.act_tau[a] * ws.xd[m.act_coord[a]]
    for k in range(m.flex_nf.shape[0]):
        nf, sbar, ninv, ss, kff, dff = flexible_arrays(m, k)
        q0 = m.flex_q[k]
        for e in range(nf):
            for j in range(nf):
                p -= ws.u[q0 + e] * dff[e, j] * ws.u[q0 + j]
    for c in range(m.coord_qindex.shape[0]):
        xd = ws.xd[c]
        if m.coord_qindex[c] >= 0:
            p -= m.coord_damping[c] * xd * xd
        else:
            p += (ws.tau[c] - m.coord_damping[c] * xd) * xd
    if m.force_type.shape[0] > 0:
        p += _loads_power(m, ws, t)
    if m.spring_k.shape[0] > 0:
        p += springs_energy_and_power(m, ws)[1]
    for f in range(m.fric_coord.shape[0]):
        p += ws.fric_force[f] * ws.xd[m.fric_coord[f]]
    if has_user_laws(m.tf_kind):
        p += joint_law_power(m.tf_kind, m.tf_ptr, m.tf_data, m.coord_qindex, ws.flex_force,
                             ws.u)
        if has_marker_laws(m.tf_kind):
            p += marker_law_power(m, ws, t)
    return p


@jit_shared
def _work_rows(m, ws, t, yp, out):
    """The rows of the works in the residual: W_nc' - P and W_a' - tau_a x_a' (after
    dynamic_rows, which fills ws.act_tau)."""
    nq = ws.mass.shape[0]
    out[2 * nq] = yp[2 * nq] - nonconservative_power(m, ws, t)
    for a in range(m.act_coord.shape[0]):
        out[2 * nq + 1 + a] = yp[2 * nq + 1 + a] - ws.act_tau[a] * ws.xd[m.act_coord[a]]


@jit_inline
def residual(m, ws, t, y, yp, out):
    """F(t, y, y') = [q' - u; M* u' - Q*; w' - P; w_a' - P_a] (size 2 nq + 1 + na),
    docs/explanation/formulation.md section 5; P_a the power of actuator a. O(N) in the bodies
    (forward_kinematics_terms, recursive_dynamic_rows); ws.jr, ws.jw are not filled."""
    nq = ws.mass.shape[0]
    q, u, _ = split_state(y, nq)
    qp, up, _ = split_state(yp, nq)
    forward_kinematics_terms(m, ws, t, q, u)
    body_forces(m, ws, t)
    recursive_dynamic_rows(m, ws, up, out[nq:2 * nq])
    for k in range(nq):
        out[k] = qp[k] - u[k]
    _work_rows(m, ws, t, yp, out)


@jit_entry
def dae_residual(t, y, yp, args, out):
    """`residual` in the argument order of the BDF driver, args = (m, ws) or a
    reference to it (flexmbs.tuple_ref, as the BDF step loop passes it)."""
    residual_from_ref(t, y, yp, tuple_ref(args), out)


@jit_entry
def residual_from_ref(t, y, yp, ref, out):
    """`residual` with (m, ws) by reference: compiled once, for the BDF step loop and
    for calls from Python alike, and called without copying the ~150 arrays of the
    two tuples onto the stack."""
    residual(member_ref(ref, 0), member_ref(ref, 1), t, y, yp, out)


@jit_inline
def constrained_residual(m, ws, t, y, yp, out):
    """The stabilised index-2 (Gear-Gupta-Leimkuhler) residual of a model with cut
    joints, docs/explanation/formulation.md section 5 (Huang H2.145-2.147), y = [q, u, w,
    lambda, mu]:

        q' - u - Phi_q^T mu = 0
        M* u' - Q* + Phi_q^T lambda = 0
        w' - P = 0, w_a' - P_a = 0
        Phi_q u + Phi_t = 0          (velocity constraints: rows of lambda)
        Phi(q, t) = 0                (position constraints: rows of mu)

    over the active constraint rows (con_active). A velocity (nonholonomic) row
    C u + xi = 0 of a rolling contact (con_kind 3) has its lambda, enters M* u' with
    C^T lambda and gives the row C u + xi = 0 (con_phid); it has no position equation:
    its mu entry's row is mu = 0 and mu stays out of q' (the state keeps one layout).
    The drivers of prescribed
    coordinates bear the constraint forces too (their columns of the Jacobian), so
    that W_nc holds their full work; the constraint forces themselves do no work."""
    nq = ws.mass.shape[0]
    base = 2 * nq + 1 + m.act_coord.shape[0]
    ncon = (y.shape[0] - base) // 2
    q, u, _ = split_state(y, nq)
    qp, up, _ = split_state(yp, nq)
    forward_kinematics(m, ws, t, q, u)
    body_forces(m, ws, t)
    dynamic_rows(m, ws, up, out[nq:2 * nq])
    constraint_terms(m, ws)
    for k in range(nq):
        out[k] = qp[k] - u[k]
    for r in range(m.con_kind.shape[0]):
        k = m.con_active[r]
        if k < 0:
            continue
        lam = y[base + k]
        mu = y[base + ncon + k]
        holonomic = m.con_kind[r] != 3
        for i in range(nq):
            jac = ws.con_jac[r, i]
            if holonomic:
                out[i] -= jac * mu
            out[nq + i] += jac * lam
        for c in range(ws.con_jacx.shape[1]):
            ws.tau[c] += ws.con_jacx[r, c] * lam
        out[base + k] = ws.con_phid[r]
        out[base + ncon + k] = ws.con_phi[r] if holonomic else mu
    _work_rows(m, ws, t, yp, out)


@jit_entry
def dae_constrained_residual(t, y, yp, args, out):
    """`constrained_residual` in the argument order of the BDF driver (as
    dae_residual)."""
    constrained_residual_from_ref(t, y, yp, tuple_ref(args), out)


@jit_entry
def constrained_residual_from_ref(t, y, yp, ref, out):
    """`constrained_residual` with (m, ws) by reference (as residual_from_ref)."""
    constrained_residual(member_ref(ref, 0), member_ref(ref, 1), t, y, yp, out)


@jit_entry
def dae_work_column(t, y, yp, cj, args, out):
    """Adds the work columns (W_nc and each actuator's) of dF/dy + cj dF/dy' (the
    analytic block of the BDF iteration matrix): no residual depends on a work and
    F_w = w' - P, so each column is cj e_w. The other columns come from differences."""
    nq = args[1].mass.shape[0]
    for k in range(2 * nq, 2 * nq + 1 + args[0].act_coord.shape[0]):
        out[k, k] += cj


@jit_entry
def dae_mass_block(t, y, yp, args, out):
    """The mass hook of the BDF driver: out (n - nq, n - nq) = dF_r/dy'_r of `residual`
    over the rows and unknowns after q: M*(q) (H2.144) on the speeds, 1 on each work
    (F_w = w' - P). The work rows' dependence on u' (through the driving forces of
    prescribed coordinates in P) is left to the driver's differences. args as in
    dae_residual."""
    mass_block_from_ref(t, y, tuple_ref(args), out)


@jit_entry
def dae_constrained_mass(t, y, yp, args, out):
    """The mass hook of `constrained_residual`: out (n, n) = dF/dy', the identity on
    the positions (q' - u - Phi_q^T mu), M*(q) on the speeds, 1 on each work and
    nothing on the multipliers. The work rows' dependence on u' is left to the
    differences (as in dae_mass_block). args as in dae_residual."""
    ref = tuple_ref(args)
    nq = member_ref(ref, 1).mass.shape[0]
    nw = 1 + member_ref(ref, 0).act_coord.shape[0]
    for k in range(nq):
        out[k, k] = 1.0
    mass_block_from_ref(t, y, ref, out[nq:2 * nq + nw, nq:2 * nq + nw])


@jit_entry
def dae_mass_elastic_block(t, y, yp, args, out):
    """The mass hook of a model with flexible bodies: dae_mass_block's matrix in the
    top m rows of out (m = n - nq) and, when out has 3 m rows, below it the elastic
    stiffness dF_r/dq and damping dF_r/du of the flexible bodies (elastic_tangent) on
    the speeds' columns: the analytic elastic columns of the iteration matrix
    (flexmbs.solvers.bdf_kernels._setup_second_order). A kernel apart from
    dae_mass_block, so that the paths without beams (and the state derivative of
    scipy's methods, which calls mass_block_from_ref) do not compile the tangent."""
    ref = tuple_ref(args)
    nr = out.shape[1]
    mass_block_from_ref(t, y, ref, out[:nr])
    if out.shape[0] >= 3 * nr:
        m, ws = member_ref(ref, 0), member_ref(ref, 1)
        nq = ws.mass.shape[0]
        elastic_tangent(m, ws, y[:nq], out[nr:2 * nr], out[2 * nr:3 * nr])


@jit_entry
def mass_block_from_ref(t, y, ref, out):
    """dae_mass_block's matrix, (m, ws) by reference (as residual_from_ref): M* of a
    tree of rigid bodies by composite rigid bodies (composite_mass_matrix), else
    B^T M B. The BDF driver calls it right after the residual at the same state:
    the rigid tree's forward kinematics are then taken from ws (terms_current), not
    computed again (2.4 of 8.3 us on CHAIN-32). out may be ws.mass itself (M* alone,
    as state_derivative_from_ref asks for it)."""
    m, ws = member_ref(ref, 0), member_ref(ref, 1)
    nq = ws.mass.shape[0]
    q, u, _ = split_state(y, nq)
    if _all_rigid(m):
        if not terms_current(ws, t, q, u):
            forward_kinematics_terms(m, ws, t, q, u)
        composite_mass_matrix(m, ws)
    else:
        forward_kinematics(m, ws, t, q, u)
        mass_matrix(m, ws)
    for a in range(nq):
        for b in range(nq):
            out[a, b] = ws.mass[a, b]
    if m.fric_coord.shape[0] > 0:
        stuck_mass_rows(m, ws, out)
    for k in range(nq, out.shape[0]):
        out[k, k] = 1.0


@jit
def elastic_tangent(m, ws, q, kout, dout):
    """The elastic blocks of the iteration matrix: kout (nq..., nq...) += -dQ_e/dqf =
    K_ff + K_geometric(qf) and dout += -dQ_e/dqf' = D (structural and modal damping),
    at the elastic coordinates of every flexible body (rows and columns in q's
    numbering), Q_e the elastic forces of docs/explanation/formulation.md sections 2 and 6."""
    for k in range(m.flex_nf.shape[0]):
        nf, sbar, ninv, ss, kff, dff = flexible_arrays(m, k)
        q0 = m.flex_q[k]
        for a in range(nf):
            for b in range(nf):
                kout[q0 + a, q0 + b] += kff[a, b]
                dout[q0 + a, q0 + b] += dff[a, b]
        if m.geo_code[k] != 0:
            geometric_tangent_stiffness(
                m.geo_code[k], m.geo_ptr[k], m.geo_ptr[k + 1], m.geo_ea, m.geo_length,
                m.geo_gmat, m.geo_row_ptr, m.geo_row_data, m.geo_dv, m.geo_dw,
                m.geo_weight, q[q0:q0 + nf], kout[q0:q0 + nf, q0:q0 + nf],
                ws.geo_scratch)


@jit_inline
def _all_rigid(m):
    """True when the model has no flexible body."""
    for i in range(m.body_flex.shape[0]):
        if m.body_flex[i] >= 0:
            return False
    return True


def dae_analytic_columns(n, nq, na):
    """Mask of the columns dae_work_column supplies (the works W_nc and W_a, after q
    and u; the multipliers of a constrained model follow them)."""
    mask = np.zeros(n, dtype=bool)
    mask[2 * nq:2 * nq + 1 + na] = True
    return mask


@jit_entry
def state_derivative(m, ws, t, y, out):
    """`state_derivative_from_ref` with the tuples (m, ws)."""
    state_derivative_from_ref(t, y, tuple_ref((m, ws)), out)


@jit_entry
def state_derivative_from_ref(t, y, ref, out):
    """y' = [u; M*^-1 Q*; P; P_a] for the ODE integrators (size 2 nq + 1 + na), (m, ws)
    by reference (flexmbs.tuple_ref; the integrators' calls from Python pass a
    HeldTuple, flexmbs.solvers.kernel_call), from the O(N) residual, which is affine
    in y' (docs/explanation/formulation.md section 5):

        F(t, y, 0) = [-u; -Q*; -P(0); -P_a]   (P(0): P with du/dt = 0)
        du/dt = M*^-1 Q*

    M* from the BDF driver's mass hook (composite rigid bodies on a tree of rigid
    bodies, on the residual's kinematics; else B^T M B), solved by Cholesky in place
    (ws.mass then holds its factor); a mass matrix that is not positive definite
    gives NaN accelerations, which the integrators report as a failure. The driving
    forces of prescribed coordinates, and with them P, depend on du/dt: a model with
    prescribed coordinates takes P from a second residual at y' = [u; du/dt; 0].
    The residual is O(N); M* (O(N d) on a tree of depth d) and its factorisation
    (O(nq^3)) dominate long chains. The residual and the hook are the driver's own
    compiled kernels, called, not inlined: this one compiles in seconds. Its
    reference, B at every column (O(N^2)), is in tests/reference_kernels.py."""
    m, ws = member_ref(ref, 0), member_ref(ref, 1)
    nq = ws.mass.shape[0]
    n = 2 * nq + 1 + m.act_coord.shape[0]
    yp = ws.ode[0]
    yp[:] = 0.0
    residual_from_ref(t, y, yp, ref, out)
    mass_block_from_ref(t, y, ref, ws.mass)   # ws.mass (nq x nq): M* alone
    for k in range(nq):
        ws.force[k] = -out[nq + k]
    if not cholesky_solve_in_place(ws.mass, ws.force, ws.accel):
        ws.accel[:] = np.nan  # M* not positive definite: the integrator fails on it
    for k in range(nq):
        out[k] = y[nq + k]
        out[nq + k] = ws.accel[k]
    for k in range(2 * nq, n):
        out[k] = -out[k]
    if _has_prescribed(m):
        for k in range(2 * nq):
            yp[k] = out[k]
        residual_from_ref(t, y, yp, ref, ws.ode[1])
        for k in range(2 * nq, n):
            out[k] = -ws.ode[1, k]


@jit_inline
def _has_prescribed(m):
    """True when some coordinate is prescribed (a driver's)."""
    for c in range(m.coord_qindex.shape[0]):
        if m.coord_qindex[c] < 0:
            return True
    return False


@jit_shared
def derivative_from_accelerations(m, ws, t, u, out):
    """out = [u; ws.accel; P; P_a] once ws.accel holds du/dt (after body_forces)."""
    nq = ws.mass.shape[0]
    for k in range(nq):
        out[k] = u[k]
        out[nq + k] = ws.accel[k]
    dynamic_rows(m, ws, ws.accel, ws.force)  # fills ws.tau; ws.force is scratch here
    out[2 * nq] = nonconservative_power(m, ws, t)
    for a in range(m.act_coord.shape[0]):
        out[2 * nq + 1 + a] = ws.act_tau[a] * ws.xd[m.act_coord[a]]
