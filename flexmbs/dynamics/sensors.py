"""Sensor values (numba): joint coordinates and rates; a marker's position, orientation,
velocity, angular velocity and elastic deflection expressed in a body's frame (the
ground by default); actuator torques and works; beam strains, curvatures and section
forces (rows linear in q, `flexmbs.model.sensor_tables`); a beam's deformed centre
line."""

import math

from ..kinematics.markers import marker_deformation, marker_frame
from ..runtime.config import jit
from .constraints import constraint_terms, contact_reaction, cut_joint_reaction
from .flexible_body import block_quadratic_form
from .geometric import element_mean_slope_square, geometric_elastic_forces
from .motors import motor_current, terminal_voltage, work_count
from .reactions import accelerations, tree_joint_reaction
from .system import k_blocks

__all__ = ["REACTION_SENSOR_FIRST", "REACTION_SENSOR_LAST", "reaction_sensor_values",
           "sensor_values"]


@jit
def _frame_of(ws, b, out_rot, out_pos):
    """Pose of body b (-1: the ground) into the given arrays."""
    if b < 0:
        for r in range(3):
            for s in range(3):
                out_rot[r, s] = 1.0 if r == s else 0.0
            out_pos[r] = 0.0
    else:
        out_rot[:, :] = ws.rot[b]
        out_pos[:] = ws.r[b]


@jit
def _linear_row(m, ws, row):
    """sum coef q[lin_q] over linear sensor row `row`."""
    v = 0.0
    for j in range(m.lin_ptr[row], m.lin_ptr[row + 1]):
        v += m.lin_coef[j] * ws.q[m.lin_q[j]]
    return v


@jit
def _in_frame(af, vec, out, o):
    """out[o:o+3] = A_f^T vec."""
    for r in range(3):
        out[o + r] = af[0, r] * vec[0] + af[1, r] * vec[1] + af[2, r] * vec[2]


@jit
def _cut_joint_coordinate(m, ws, k):
    """Coordinate (codes 17, 19) or rate (18, 20) of a cut joint, sensor k, from its
    parent marker P (origin p_P, axes A_P, velocity v_P, angular velocity w_P) and
    child marker O, with a = A_P a0 (a0 the coordinate's axis in P's axes):
    translation (p_O - p_P) . a, its rate (v_O - v_P) . a + (p_O - p_P) . (w_P x a);
    rotation atan2(a . (b x A_O b0), b . A_O b0), b = A_P b0, b0 a unit vector normal
    to a0 (A_O = A_P Rot(a0, angle) at a revolute), in (-pi, pi]; its rate
    a . (w_O - w_P). The markers' frames go into ws.con_vec, con_mat (index 0 P,
    1 O), as the constraint terms take them."""
    kind = m.sensor_type[k]
    j = m.sensor_coord[k]
    a0 = m.point_position[m.sensor_point[k]]
    frames = ws.con_vec
    axes = ws.con_mat
    pp, vp, wp = frames[0, 0], frames[0, 1], frames[0, 2]
    po, vo, wo = frames[1, 0], frames[1, 1], frames[1, 2]
    ap, ao = axes[0, 0], axes[1, 0]
    marker_frame(m, ws, m.cut_marker_parent[j], pp, ap, vp, wp, frames[0, 3], axes[0, 1])
    marker_frame(m, ws, m.cut_marker_child[j], po, ao, vo, wo, frames[1, 3], axes[1, 1])
    a = ws.cut_axis
    for r in range(3):
        a[r] = ap[r, 0] * a0[0] + ap[r, 1] * a0[1] + ap[r, 2] * a0[2]
    if kind == 17 or kind == 18:
        d = 0.0
        for r in range(3):
            d += (po[r] - pp[r]) * a[r]
        if kind == 17:
            return d
        rate = 0.0
        for r in range(3):
            rate += (vo[r] - vp[r]) * a[r]
        wa0 = wp[1] * a[2] - wp[2] * a[1]
        wa1 = wp[2] * a[0] - wp[0] * a[2]
        wa2 = wp[0] * a[1] - wp[1] * a[0]
        return rate + (po[0] - pp[0]) * wa0 + (po[1] - pp[1]) * wa1 + \
            (po[2] - pp[2]) * wa2
    if kind == 20:
        return a[0] * (wo[0] - wp[0]) + a[1] * (wo[1] - wp[1]) + a[2] * (wo[2] - wp[2])
    # b0: the unit vector along the component of the axis with the smallest |a0_i|,
    # made normal to a0
    i = 0
    for r in range(1, 3):
        if abs(a0[r]) < abs(a0[i]):
            i = r
    b0 = ws.cut_normal
    for r in range(3):
        b0[r] = (1.0 if r == i else 0.0) - a0[i] * a0[r]
    nb = (b0[0] ** 2 + b0[1] ** 2 + b0[2] ** 2) ** 0.5
    b = ws.cut_normal_parent
    c = ws.cut_normal_child
    for r in range(3):
        b[r] = (ap[r, 0] * b0[0] + ap[r, 1] * b0[1] + ap[r, 2] * b0[2]) / nb
        c[r] = (ao[r, 0] * b0[0] + ao[r, 1] * b0[1] + ao[r, 2] * b0[2]) / nb
    sn = a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2]) + \
        a[2] * (b[0] * c[1] - b[1] * c[0])
    cs = b[0] * c[0] + b[1] * c[1] + b[2] * c[2]
    return math.atan2(sn, cs)


REACTION_SENSOR_FIRST, REACTION_SENSOR_LAST = 13, 20
"""Sensor codes (flexmbs.model.sensor_tables) of the sensors that need the constraint
terms, the accelerations or the cut joints' markers: joint and contact reactions,
constraint residuals, cut-joint coordinates. `reaction_sensor_values` computes them,
`sensor_values` the others, so that a model without them compiles none of that."""


@jit
def reaction_sensor_values(m, ws, t, works, out):
    """The values of the reaction sensors (codes REACTION_SENSOR_FIRST to
    REACTION_SENSOR_LAST) into out, as `sensor_values` describes them; the other
    sensors' values are left as they are."""
    af = ws.sensor_frame_axes
    rf = ws.sensor_frame_origin
    res = ws.sensor_value
    constraints_done = False
    accelerations_done = False
    lam = works[work_count(m):]
    for k in range(m.sensor_type.shape[0]):
        o = m.sensor_offset[k]
        kind = m.sensor_type[k]
        if kind == 15:
            if not accelerations_done:
                accelerations(m, ws, t, lam)
                accelerations_done = True
            tree_joint_reaction(m, ws, m.sensor_coord[k], m.sensor_marker[k], lam,
                                ws.tree_reaction_force, ws.tree_reaction_torque)
            _frame_of(ws, m.sensor_frame[k], af, rf)
            _in_frame(af, ws.tree_reaction_force, out, o)
            _in_frame(af, ws.tree_reaction_torque, out, o + 3)
        elif kind == 13 or kind == 14:
            if not constraints_done:
                constraint_terms(m, ws)
                constraints_done = True
            j = m.sensor_coord[k]
            if kind == 14:
                first = m.cut_row_ptr[j]
                nrow = m.cut_row_ptr[j + 1] - first
                for r in range(nrow):
                    out[o + r] = ws.con_phi[first + r]
                    out[o + nrow + r] = ws.con_phid[first + r]
                continue
            _frame_of(ws, m.sensor_frame[k], af, rf)
            cut_joint_reaction(m, ws, j, lam, ws.cut_force, ws.cut_torque)
            _in_frame(af, ws.cut_force, out, o)
            _in_frame(af, ws.cut_torque, out, o + 3)
        elif kind == 16:
            point = ws.contact_point
            contact_reaction(m, ws, m.sensor_coord[k], lam, ws.contact_force, point)
            _frame_of(ws, m.sensor_frame[k], af, rf)
            _in_frame(af, ws.contact_force, out, o)
            for r in range(3):
                res[r] = point[r] - rf[r]
            _in_frame(af, res, out, o + 3)
        elif kind >= 17 and kind <= 20:
            out[o] = _cut_joint_coordinate(m, ws, k)


@jit
def body_strain_energy(m, ws, k):
    """U = qf^T K qf / 2 of flexible body k at ws.q (element by element, over its
    blocks of K), plus the geometric stiffness' U3 and U4 when it has one (J;
    docs/explanation/formulation.md section 6)."""
    nf = m.flex_nf[k]
    q0 = m.flex_q[k]
    qf = ws.q[q0:q0 + nf]
    u = 0.5 * block_quadratic_form(k_blocks(m, k), qf)
    if m.geo_code[k] != 0:
        unused = ws.flex_vec[:nf]
        unused[:] = 0.0
        u3, u4 = geometric_elastic_forces(
            m.geo_code[k], m.geo_ptr[k], m.geo_ptr[k + 1], m.geo_ea, m.geo_length,
            m.geo_gmat, m.geo_col_ptr, m.geo_col, m.geo_row_ptr, m.geo_row_data, m.geo_dv,
            m.geo_dw, m.geo_weight, qf, unused, ws.geo_scratch)
        u += u3 + u4
    return u


@jit
def sensor_values(m, ws, t, works, out):
    """out (size sensor_offset[-1]) for every sensor but the reaction sensors
    (reaction_sensor_values), after forward_kinematics and actuator_torques; works =
    the state's w: W_nc, then each actuator's work, the DC motors' electrical
    states, then the multipliers.

    With A_f, r_f the rotation and origin of the sensor's frame body and p, A_m, v,
    w_m those of the marker (global; `flexmbs.kinematics.markers`):
    marker_position A_f^T (p - r_f) (m); marker_orientation A_f^T A_m, 9 values
    row-major; marker_velocity A_f^T v (absolute, m/s); marker_angular_velocity
    A_f^T w_m (rad/s); marker_deflection A_f^T A_b d, d the elastic translation of the
    marker's node in its body's axes (m). actuator_torque: the generalized force on the
    joint coordinate (N m or N); actuator_work: its time integral of power (J).
    beam_strain, beam_curvature, beam_section_forces: linear rows over q; with geometric
    stiffness the strain and the normal force hold the membrane strain u' + sbar/2.
    beam_centerline: A_f^T (r_b + A_b (x0 + S(x0) qf) - r_f) per point (m).
    joint_reaction: A_f^T F, A_f^T T, the force (N) and torque (N m) of the joint on
    its child body at the child marker; of a cut joint from the multipliers (which
    follow the works in `works`), of a tree joint from the momentum balance of the
    subtree it carries (`flexmbs.dynamics.reactions`, at time t); constraint_residual:
    the joint's position residuals Phi, then its velocity residuals dPhi/dt, every row
    (redundant ones too). joint_coordinate and joint_rate of a cut joint: from its
    two markers (`_cut_joint_coordinate`; an angle in (-pi, pi]). contact_reaction: A_f^T F
    (N), the force of a rolling contact on its disk from its multipliers, then A_f^T (P_c -
    r_f) (m), the contact point. coupler_reaction: -lambda, k lambda, the generalized
    forces of a coupler on its follower's and its leader's coordinates (N m or N; 0
    while its row is switched off as redundant). strain_energy: a flexible body's strain energy
    (body_strain_energy, J); elastic_coordinates: its elastic coordinates (linear rows).
    """
    af = ws.sensor_frame_axes
    rf = ws.sensor_frame_origin
    res = ws.sensor_value
    am = ws.marker_axes
    tm = ws.marker_tangent
    p = ws.marker_pos
    v = ws.marker_vel
    om = ws.marker_omega
    arm = ws.marker_arm
    d = ws.marker_deflection
    dd = ws.marker_deflection_rate
    th = ws.marker_angles
    thd = ws.marker_angle_rates
    for k in range(m.sensor_type.shape[0]):
        o = m.sensor_offset[k]
        kind = m.sensor_type[k]
        if kind >= REACTION_SENSOR_FIRST and kind <= REACTION_SENSOR_LAST:
            continue
        if kind == 0:
            out[o] = ws.x[m.sensor_coord[k]]
            continue
        if kind == 1:
            out[o] = ws.xd[m.sensor_coord[k]]
            continue
        if kind == 6:
            out[o] = ws.act_tau[m.sensor_coord[k]]
            continue
        if kind == 7:
            out[o] = works[1 + m.sensor_coord[k]]
            continue
        if kind == 23 or kind == 24:
            a = m.sensor_coord[k]
            xd = ws.xd[m.act_coord[a]]
            i = motor_current(m, ws, a, t, xd)
            out[o] = i if kind == 23 else terminal_voltage(m, ws, a, t, xd, i)
            continue
        if kind == 21:
            out[o] = body_strain_energy(m, ws, m.body_flex[m.sensor_body[k]])
            continue
        if kind == 25:
            j = m.sensor_coord[k]
            a = m.con_active[m.contact_row_ptr[m.contact_row_ptr.shape[0] - 1] + j]
            lam = works[work_count(m) + a] if a >= 0 else 0.0
            out[o] = -lam
            out[o + 1] = m.coupler_multiplier[j] * lam
            continue
        if kind == 8 or kind == 10 or kind == 11 or kind == 22:
            for r in range(m.sensor_offset[k + 1] - o):
                out[o + r] = _linear_row(m, ws, m.sensor_coord[k] + r)
            if m.sensor_geo[k] >= 0:
                fk = m.body_flex[m.sensor_body[k]]
                q0 = m.flex_q[fk]
                out[o] += m.sensor_geo_coef[k] * 0.5 * element_mean_slope_square(
                    m.sensor_geo[k], m.geo_length, m.geo_gmat, m.geo_col_ptr, m.geo_col,
                    m.geo_row_ptr, m.geo_row_data, ws.q[q0:q0 + m.flex_nf[fk]],
                    ws.geo_scratch)
            continue
        _frame_of(ws, m.sensor_frame[k], af, rf)
        if kind == 12:
            b = m.sensor_body[k]
            ab = ws.rot[b]
            npt = (m.sensor_offset[k + 1] - o) // 3
            x = ws.centerline_point
            for j in range(npt):
                x0 = m.point_position[m.sensor_point[k] + j]
                row = m.sensor_coord[k] + 3 * j
                for r in range(3):
                    x[r] = x0[r] + _linear_row(m, ws, row + r)
                for r in range(3):
                    res[r] = ws.r[b, r] - rf[r] + ab[r, 0] * x[0] + ab[r, 1] * x[1] + \
                        ab[r, 2] * x[2]
                _in_frame(af, res, out, o + 3 * j)
            continue
        mk = m.sensor_marker[k]
        if kind == 9:
            marker_deformation(m, ws, mk, d, dd, th, thd)
            b = m.marker_body[mk]
            ab = ws.rot[b]
            for r in range(3):
                res[r] = ab[r, 0] * d[0] + ab[r, 1] * d[1] + ab[r, 2] * d[2]
            _in_frame(af, res, out, o)
            continue
        marker_frame(m, ws, mk, p, am, v, om, arm, tm)
        if kind == 3:
            for r in range(3):
                for s in range(3):
                    out[o + 3 * r + s] = af[0, r] * am[0, s] + af[1, r] * am[1, s] + \
                        af[2, r] * am[2, s]
            continue
        if kind == 2:
            for r in range(3):
                res[r] = p[r] - rf[r]
        elif kind == 4:
            res[:] = v
        else:
            res[:] = om
        _in_frame(af, res, out, o)
