"""Sensor values (numba): joint coordinates and rates, marker position, orientation,
velocity and angular velocity expressed in a body's frame (the ground by default),
actuator torques and works."""

from ..config import jit

__all__ = ["sensor_values"]


@jit
def _frame_of(ws, b, out_rot, out_pos, out_vel, out_om):
    """Pose and velocity of body b (-1: the ground) into the given arrays."""
    if b < 0:
        for r in range(3):
            for s in range(3):
                out_rot[r, s] = 1.0 if r == s else 0.0
            out_pos[r] = 0.0
            out_vel[r] = 0.0
            out_om[r] = 0.0
    else:
        out_rot[:, :] = ws.rot[b]
        out_pos[:] = ws.r[b]
        out_vel[:] = ws.rd[b]
        out_om[:] = ws.omega[b]


@jit
def sensor_values(m, ws, works, out):
    """out (size sensor_offset[-1]) for every sensor (after forward_kinematics and
    actuator_torques; works = the state's w: W_nc, then each actuator's work).

    actuator_torque: the generalized force on the joint coordinate (N m or N);
    actuator_work: its time integral of power (J); beam_strain: the axial strain at a
    section point, linear in qf (strain_coef). A marker on a beam body follows its
    node: position u0 + S qf, velocity A S dqf/dt on top of the frame's motion.
    marker_position: A_f^T (p - r_f) (m); marker_orientation: A_f^T A_marker, 9 values
    row-major; marker_velocity: A_f^T dp/dt (absolute, m/s); marker_angular_velocity:
    A_f^T omega (rad/s); f the sensor's frame body.
    """
    am = ws.m33[0]
    af = ws.m33[1]
    p = ws.v3[0]
    v = ws.v3[1]
    om = ws.v3[2]
    rf = ws.v3[3]
    vf = ws.v3[4]
    omf = ws.v3[5]
    arm = ws.v3[6]
    res = ws.v3[7]
    for k in range(m.sensor_type.shape[0]):
        o = m.sensor_offset[k]
        kind = m.sensor_type[k]
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
        if kind == 8:
            j = m.sensor_coord[k]
            eps = 0.0
            for p2 in range(m.strain_ptr[j], m.strain_ptr[j + 1]):
                eps += m.strain_coef[p2] * ws.q[m.strain_q[p2]]
            out[o] = eps
            continue
        _frame_of(ws, m.sensor_body[k], am, p, v, om)
        s = ws.flex_vec2[0:3]  # the marker's position, deformed on a beam body
        sd = ws.flex_vec2[3:6]  # its rate of deformation (body axes)
        for r in range(3):
            s[r] = m.sensor_position[k, r]
            sd[r] = 0.0
            col = m.sensor_node_q[k, r]
            if col >= 0:
                s[r] += ws.q[col]
                sd[r] = ws.u[col]
        for r in range(3):
            arm[r] = am[r, 0] * s[0] + am[r, 1] * s[1] + am[r, 2] * s[2]
        for r in range(3):
            p[r] += arm[r]
            v[r] += am[r, 0] * sd[0] + am[r, 1] * sd[1] + am[r, 2] * sd[2]
        v[0] += om[1] * arm[2] - om[2] * arm[1]
        v[1] += om[2] * arm[0] - om[0] * arm[2]
        v[2] += om[0] * arm[1] - om[1] * arm[0]
        _frame_of(ws, m.sensor_frame[k], af, rf, vf, omf)
        if kind == 2:
            for r in range(3):
                res[r] = p[r] - rf[r]
        elif kind == 4:
            res[:] = v
        elif kind == 5:
            res[:] = om
        if kind == 3:
            c = m.sensor_rotation[k]
            for r in range(3):
                for s2 in range(3):
                    acc = 0.0
                    for a in range(3):
                        for b in range(3):
                            acc += af[a, r] * am[a, b] * c[b, s2]
                    out[o + 3 * r + s2] = acc
        else:
            for r in range(3):
                out[o + r] = af[0, r] * res[0] + af[1, r] * res[1] + af[2, r] * res[2]
