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

from ..kinematics.markers import marker_frame
from ..kinematics.recursive import forward_kinematics, forward_kinematics_terms, terms_current
from ..kinematics.timefunctions import evaluate_time_function
from ..numerics.bordered_band import band_index
from ..numerics.linalg import add_cross, cholesky_solve_in_place
from ..runtime.config import jit, jit_entry, jit_inline, jit_shared
from ..runtime.tuple_ref import member_ref, tuple_ref
from .composite import composite_mass_matrix
from .constraints import constraint_terms
from .controllers import actuator_commands
from .flexible_body import (
    add_block_product,
    block_quadratic_form,
    flexible_gravity_force,
    flexible_mass_matrix,
    flexible_mass_times,
    flexible_moments,
    flexible_quadratic_velocity,
)
from .friction import hold_stuck_rows, joint_friction_forces, stuck_mass_rows
from .geometric import geometric_elastic_forces, geometric_element_tangent
from .marker_loads import add_marker_load
from .motors import (
    DC_MOTOR,
    dc_motor_power,
    electrical_rates,
    load_motor_state,
    work_count,
)
from .rigid_body import apply_body_mass, body_inertial_and_gravity_force
from .stops import add_stop_forces, stops_energy_and_power
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
    """nf and the invariants Sbar (3, nf), N (3, 3, nf) of flexible body k (views)."""
    nf = m.flex_nf[k]
    p = m.flex_ptr
    sbar = m.flex_sbar[p[k, 0]:p[k + 1, 0]].reshape((3, nf))
    ninv = m.flex_ninv[p[k, 1]:p[k + 1, 1]].reshape((3, 3, nf))
    return nf, sbar, ninv


@jit_inline
def ss_blocks(m, k):
    """The blocks of SS of flexible body k (flexmbs.dynamics.flexible_body)."""
    return (m.flex_block_ptr[k], m.flex_block_ptr[k + 1], m.block_dof_ptr, m.block_dof,
            m.block_ss_ptr, m.block_ss)


@jit_inline
def m_blocks(m, k):
    """The blocks of M_ff = SS[0, 0] + SS[1, 1] + SS[2, 2] of flexible body k."""
    return (m.flex_block_ptr[k], m.flex_block_ptr[k + 1], m.block_dof_ptr, m.block_dof,
            m.block_m_ptr, m.block_m)


@jit_inline
def k_blocks(m, k):
    """The blocks of K_ff of flexible body k."""
    return (m.flex_block_ptr[k], m.flex_block_ptr[k + 1], m.block_dof_ptr, m.block_dof,
            m.block_k_ptr, m.block_k)


@jit_inline
def d_blocks(m, k):
    """The blocks of the damping D of flexible body k."""
    return (m.flex_block_ptr[k], m.flex_block_ptr[k + 1], m.block_dof_ptr, m.block_dof,
            m.block_d_ptr, m.block_d)


@jit_inline
def flexible_work(m, ws, k):
    """The moments (P, Th, Pd, St) of flexible body k: its rows of ws.flex_moments, the
    `work` of flexmbs.dynamics.flexible_body."""
    a = m.flex_q[k] + 3 * k
    return ws.flex_moments[a:a + m.flex_nf[k] + 3]


@jit_inline
def update_flexible_moments(m, ws, k):
    """Fills flexible body k's moments at its elastic coordinates in ws.q; returns its
    `work` (a view)."""
    nf, sbar, ninv = flexible_arrays(m, k)
    q0 = m.flex_q[k]
    work = flexible_work(m, ws, k)
    flexible_moments(m.flex_first[k], sbar, m.flex_th0[k], ninv, ss_blocks(m, k),
                     ws.q[q0:q0 + nf], work)
    return work


@jit_inline
def flexible_body_mass(m, ws, i, k):
    """M_i ((6 + nf) square, a view of ws.flex_mass_flat) of flexible body i (index k
    in the flexible tables) at the current elastic coordinates,
    docs/explanation/formulation.md section 2: the dense matrix, for the dense paths
    (the Order-N formulation)."""
    nf, sbar, ninv = flexible_arrays(m, k)
    n6 = 6 + nf
    mm = ws.flex_mass_flat[:n6 * n6].reshape((n6, n6))
    work = update_flexible_moments(m, ws, k)
    flexible_mass_matrix(m.flex_mass[k], sbar, m_blocks(m, k), ws.rot[i], work, mm)
    return mm


@jit_shared
def _flexible_body_force(m, ws, i, k, w):
    """ws.body_force[i] and ws.flex_force (at body i's elastic coordinates) =
    Qv + Qg - K qf - D dqf + Q_geometric - M_i [ar; A^T aw; 0] (docs/explanation/formulation.md
    sections 2 and 6; w: the angular velocity in body axes), element by element; leaves
    the body's moments at qf in ws.flex_moments (for the dynamic rows)."""
    nf, sbar, ninv = flexible_arrays(m, k)
    ssb = ss_blocks(m, k)
    q0 = m.flex_q[k]
    n6 = 6 + nf
    rot = ws.rot[i]
    qf = ws.q[q0:q0 + nf]
    dqf = ws.u[q0:q0 + nf]
    f = ws.flex_vec[:n6]
    tmp = ws.flex_vec2[:n6]
    work = update_flexible_moments(m, ws, k)
    flexible_quadratic_velocity(sbar, ssb, rot, w, dqf, work, f)
    flexible_gravity_force(m.flex_mass[k], sbar, rot, m.gravity, work, tmp)
    for r in range(n6):
        f[r] += tmp[r]
    fe = f[6:]
    add_block_product(k_blocks(m, k), -1.0, qf, fe)
    add_block_product(d_blocks(m, k), -1.0, dqf, fe)
    if m.geo_code[k] != 0:
        geometric_elastic_forces(m.geo_code[k], m.geo_ptr[k], m.geo_ptr[k + 1], m.geo_ea,
                                 m.geo_length, m.geo_gmat, m.geo_col_ptr, m.geo_col,
                                 m.geo_row_ptr, m.geo_row_data, m.geo_dv, m.geo_dw,
                                 m.geo_weight, qf, fe, ws.geo_scratch)
    acc = ws.flex_acc[:6]
    aw = ws.aw[i]
    for r in range(3):
        acc[r] = ws.ar[i, r]
        acc[3 + r] = rot[0, r] * aw[0] + rot[1, r] * aw[1] + rot[2, r] * aw[2]
    flexible_mass_times(m.flex_mass[k], sbar, m_blocks(m, k), rot, work, acc, False, tmp)
    for r in range(n6):
        f[r] -= tmp[r]
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
    (after forward_kinematics); `mass_matrix_into` in the dense layout."""
    ws.mass[:, :] = 0.0
    nq = ws.mass.shape[0]
    mass_matrix_into(m, ws, m.lin_pos[:0], (0, nq, 0), ws.mass.reshape(-1))


@jit_inline
def _add_at(pos, dims, out, r, c, value):
    """out += value at entry (r, c) of the matrix stored in (pos, dims)
    (flexmbs.numerics.bordered_band); nothing for an entry outside the band."""
    at = band_index(pos, dims, r, c)
    if at >= 0:
        out[at] += value


@jit_shared
def mass_matrix_into(m, ws, pos, dims, out):
    """out += M* = sum_i B_i^T M_i B_i (H2.144, both triangles, the actuators' rotor
    inertias on the diagonal) in the storage (pos, dims) of flexmbs.numerics.bordered_band
    (pos empty, dims = (0, n, 0): dense row-major n x n with n >= nq); the speeds'
    unknowns are the q indices. After forward_kinematics. A flexible body adds its
    part element by element (`_flexible_mass_into`): the cost grows with the number
    of elements, not with its square."""
    for i in range(m.body_mass.shape[0]):
        body_columns(m, ws, i)
        k = m.body_flex[i]
        if k >= 0:
            _flexible_mass_into(m, ws, i, k, pos, dims, out)
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
                _add_at(pos, dims, out, qa, qb, s)
                if qb != qa:
                    _add_at(pos, dims, out, qb, qa, s)
    for a in range(m.act_coord.shape[0]):
        qc = m.coord_qindex[m.act_coord[a]]
        _add_at(pos, dims, out, qc, qc, m.act_inertia[a])


@jit_shared
def _flexible_mass_into(m, ws, i, k, pos, dims, out):
    """Adds B_i^T M_i B_i of flexible body i to out (`mass_matrix_into`). Column c of
    B_i is [bcol[:, c]; the unit vector of c among the body's own elastic coordinates
    (if it is one)]. For each frame column f, u_f = M_i B_f (flexible_mass_times, into
    ws.flex_mb[t]); then (frame, frame) = B_a . u_b, (own e, frame f) = u_f[6 + e], and
    the own coordinates that move no frame couple through M_ff alone, by blocks."""
    nf, sbar, ninv = flexible_arrays(m, k)
    mb = m_blocks(m, k)
    q0 = m.flex_q[k]
    c0 = m.flex_col[k]
    n6 = 6 + nf
    rot = ws.rot[i]
    work = update_flexible_moments(m, ws, k)
    mark = ws.flex_vec2[:nf]  # 1: an own coordinate that is a frame column
    mark[:] = 0.0
    flo = m.frame_ptr[i]
    fhi = m.frame_ptr[i + 1]
    for kf in range(flo, fhi):
        c = m.frame_col[kf]
        if c0 <= c < c0 + nf:
            mark[c - c0] = 1.0
    acc = ws.flex_acc[:n6]
    for kf in range(flo, fhi):
        c = m.frame_col[kf]
        if m.col_qindex[c] < 0:
            continue
        for r in range(6):
            acc[r] = ws.bcol[r, c]
        own = c - c0 if c0 <= c < c0 + nf else -1
        if own >= 0:
            for e in range(nf):
                acc[6 + e] = 0.0
            acc[6 + own] = 1.0
        flexible_mass_times(m.flex_mass[k], sbar, mb, rot, work, acc, own >= 0,
                            ws.flex_mb[kf - flo, :n6])
    for ka in range(flo, fhi):
        ca = m.frame_col[ka]
        qa = m.col_qindex[ca]
        if qa < 0:
            continue
        own_a = ca - c0 if c0 <= ca < c0 + nf else -1
        for kb in range(flo, fhi):
            cb = m.frame_col[kb]
            qb = m.col_qindex[cb]
            if qb < 0:
                continue
            ub = ws.flex_mb[kb - flo]
            s = 0.0
            for r in range(6):
                s += ws.bcol[r, ca] * ub[r]
            if own_a >= 0:
                s += ub[6 + own_a]
            _add_at(pos, dims, out, qa, qb, s)
        ua = ws.flex_mb[ka - flo]
        for e in range(nf):
            if mark[e] == 0.0:
                _add_at(pos, dims, out, q0 + e, qa, ua[6 + e])
                _add_at(pos, dims, out, qa, q0 + e, ua[6 + e])
    first, last, dof_ptr, dof, ptr, data = mb
    for blk in range(first, last):
        p0 = ptr[blk]
        if ptr[blk + 1] == p0:
            continue
        d0 = dof_ptr[blk]
        nb = dof_ptr[blk + 1] - d0
        for ii in range(nb):
            di = dof[d0 + ii]
            if mark[di] != 0.0:
                continue
            for jj in range(nb):
                dj = dof[d0 + jj]
                if mark[dj] != 0.0:
                    continue
                _add_at(pos, dims, out, q0 + di, q0 + dj, data[p0 + ii * nb + jj])


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
    if m.stop_coord.shape[0] > 0:
        add_stop_forces(m, ws, ws.force, 1.0)
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
    coordinates, out += its elastic rows - the elastic forces (ws.flex_force); M_i by
    its product (flexible_mass_times) at the moments body_forces left."""
    nf, sbar, ninv = flexible_arrays(m, k)
    q0 = m.flex_q[k]
    n6 = 6 + nf
    acc = ws.flex_acc[:n6]
    res = ws.flex_vec2[:n6]
    for r in range(3):
        acc[r] = vr[r]
        acc[3 + r] = vw[r]
    for e in range(nf):
        acc[6 + e] = udot[q0 + e]
    flexible_mass_times(m.flex_mass[k], sbar, m_blocks(m, k), ws.rot[i],
                        flexible_work(m, ws, k), acc, True, res)
    for r in range(6):
        ws.mbcol[r, 0] = res[r]
    for e in range(nf):
        out[q0 + e] += res[6 + e] - ws.flex_force[q0 + e]


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
    laws, stops, friction) and += the actuators' rotor inertia and torque rows; ws.tau
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
    if m.stop_coord.shape[0] > 0:
        add_stop_forces(m, ws, out, -1.0)
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
    Actuators: act_tau xd; a DC motor: its source's power less its losses
    (flexmbs.dynamics.motors). Structural damping: -dqf^T D dqf. Joint stops: -c xd^2
    while touched. Joint friction: f xd (zero for a stuck joint).
    """
    p = 0.0
    for a in range(m.act_coord.shape[0]):
        xd = ws.xd[m.act_coord[a]]
        if m.act_type[a] == DC_MOTOR:
            p += dc_motor_power(m, ws, a, t, xd)
        else:
            p += ws.act_tau[a] * xd
    for k in range(m.flex_nf.shape[0]):
        q0 = m.flex_q[k]
        p -= block_quadratic_form(d_blocks(m, k), ws.u[q0:q0 + m.flex_nf[k]])
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
    if m.stop_coord.shape[0] > 0:
        p += stops_energy_and_power(m, ws)[1]
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
    dynamic_rows, which fills ws.act_tau), then the DC motors' electrical states'
    (flexmbs.dynamics.motors.electrical_rates)."""
    nq = ws.mass.shape[0]
    na = m.act_coord.shape[0]
    out[2 * nq] = yp[2 * nq] - nonconservative_power(m, ws, t)
    for a in range(na):
        out[2 * nq + 1 + a] = yp[2 * nq + 1 + a] - ws.act_tau[a] * ws.xd[m.act_coord[a]]
    first = 2 * nq + 1 + na
    if m.elec_actuator.shape[0] > 0:
        electrical_rates(m, ws, t, out, first)
        for k in range(first, first + m.elec_actuator.shape[0]):
            out[k] = yp[k] - out[k]


@jit_inline
def residual(m, ws, t, y, yp, out):
    """F(t, y, y') = [q' - u; M* u' - Q*; w' - P; w_a' - P_a; the DC motors'
    electrical rows] (size 2 nq + nw, nw = flexmbs.dynamics.motors.work_count),
    docs/explanation/formulation.md section 5; P_a the power of actuator a. O(N) in the bodies
    (forward_kinematics_terms, recursive_dynamic_rows); ws.jr, ws.jw are not filled."""
    nq = ws.mass.shape[0]
    q, u, _ = split_state(y, nq)
    qp, up, _ = split_state(yp, nq)
    load_motor_state(m, ws, y)
    forward_kinematics_terms(m, ws, t, q, u)
    body_forces(m, ws, t)
    recursive_dynamic_rows(m, ws, up, out[nq:2 * nq])
    for k in range(nq):
        out[k] = qp[k] - u[k]
    _work_rows(m, ws, t, yp, out)


@jit_entry
def dae_residual(t, y, yp, args, out):
    """`residual` in the argument order of the BDF driver, args = (m, ws) or a
    reference to it (flexmbs.runtime.tuple_ref, as the BDF step loop passes it)."""
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
    base = 2 * nq + work_count(m)
    ncon = (y.shape[0] - base) // 2
    q, u, _ = split_state(y, nq)
    qp, up, _ = split_state(yp, nq)
    load_motor_state(m, ws, y)
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
    nw = work_count(member_ref(ref, 0))
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
def dae_mass_elastic_banded(t, y, yp, args, out):
    """The mass hook of a model with long beams, in the bordered band layout of its
    speeds and works (m.lin_pos, m.lin_dims; flexmbs.model.band_layout,
    flexmbs.numerics.bordered_band): out[0] = dae_mass_block's matrix (M* on the speeds, 1 on
    each work), packed, and when out has 3 rows out[1] = the elastic stiffness dF_r/dq
    and out[2] = the damping dF_r/du of the flexible bodies (elastic_tangent), packed
    likewise: dae_mass_elastic_block's blocks, element by element and without a dense
    n x n array. out is zeroed by the caller. args as in dae_residual."""
    ref = tuple_ref(args)
    m, ws = member_ref(ref, 0), member_ref(ref, 1)
    nq = ws.mass.shape[0]
    q, u, _ = split_state(y, nq)
    pos = m.lin_pos
    dims = (m.lin_dims[0], m.lin_dims[1], m.lin_dims[2])
    a = out[0]
    forward_kinematics(m, ws, t, q, u)
    mass_matrix_into(m, ws, pos, dims, a)
    for k in range(nq, pos.shape[0]):
        _add_at(pos, dims, a, k, k, 1.0)
    if out.shape[0] >= 3:
        elastic_tangent_into(m, ws, q, pos, dims, out[1], out[2])


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
    numbering), Q_e the elastic forces of docs/explanation/formulation.md sections 2 and 6;
    `elastic_tangent_into` in the dense layout."""
    n = kout.shape[1]
    elastic_tangent_into(m, ws, q, m.lin_pos[:0], (0, n, 0), kout.reshape(-1),
                         dout.reshape(-1))


@jit_shared
def elastic_tangent_into(m, ws, q, pos, dims, kout, dout):
    """`elastic_tangent` into the storage (pos, dims) of flexmbs.numerics.bordered_band (flat
    kout, dout): K_ff and D by blocks, the geometric tangent element by element."""
    for k in range(m.flex_nf.shape[0]):
        nf = m.flex_nf[k]
        q0 = m.flex_q[k]
        _add_blocks_at(k_blocks(m, k), q0, pos, dims, kout)
        _add_blocks_at(d_blocks(m, k), q0, pos, dims, dout)
        code = m.geo_code[k]
        if code == 0:
            continue
        qf = q[q0:q0 + nf]
        kr = ws.geo_kr
        for j in range(m.geo_ptr[k], m.geo_ptr[k + 1]):
            geometric_element_tangent(code, j, m.geo_ea, m.geo_length, m.geo_gmat,
                                      m.geo_col_ptr, m.geo_col, m.geo_row_ptr,
                                      m.geo_row_data, m.geo_dv, m.geo_dw, m.geo_weight,
                                      qf, ws.geo_scratch, kr)
            r = m.geo_row_data[m.geo_row_ptr[j]:m.geo_row_ptr[j + 1]]
            cj = m.geo_col[m.geo_col_ptr[j]:m.geo_col_ptr[j + 1]]
            nc = cj.shape[0]
            for b in range(nc):
                for b2 in range(nc):
                    x = 0.0
                    for a in range(12):
                        x += r[a * nc + b2] * kr[a, b]
                    _add_at(pos, dims, kout, q0 + cj[b2], q0 + cj[b], x)


@jit_inline
def _add_blocks_at(blocks, q0, pos, dims, out):
    """out += the blocks ((nb, nb) each, flexmbs.dynamics.flexible_body) of a body whose
    elastic coordinates start at q index q0, in the storage (pos, dims)."""
    first, last, dof_ptr, dof, ptr, data = blocks
    for blk in range(first, last):
        p0 = ptr[blk]
        if ptr[blk + 1] == p0:
            continue
        d0 = dof_ptr[blk]
        nb = dof_ptr[blk + 1] - d0
        for ii in range(nb):
            for jj in range(nb):
                _add_at(pos, dims, out, q0 + dof[d0 + ii], q0 + dof[d0 + jj],
                        data[p0 + ii * nb + jj])


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
    """y' = [u; M*^-1 Q*; P; P_a; ...] for the ODE integrators (size 2 nq + nw), (m, ws)
    by reference (flexmbs.runtime.tuple_ref; the integrators' calls from Python pass a
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
    n = 2 * nq + work_count(m)
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
    if m.elec_actuator.shape[0] > 0:
        electrical_rates(m, ws, t, out, 2 * nq + 1 + m.act_coord.shape[0])
