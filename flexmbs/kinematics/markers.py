"""Markers of loads and sensors (numba): position, orientation and velocity of a marker
that follows the deformation of its node (docs/explanation/formulation.md section 4).

A marker k on body b has an undeformed position s0 and orientation C0 in b's axes and
a deformation linear in the elastic coordinates (`ModelArrays.marker_term_*`):
a translation d (body axes) and Cardan angles th (rotations about x, then y, then z),

    s = s0 + d,    C = Rx(th_0) Ry(th_1) Rz(th_2) C0,
    p = r_b + A_b s,    A_marker = A_b C,
    dp/dt = dr_b/dt + w_b x (A_b s) + A_b d',    w_marker = w_b + A_b Tm(th) th',

with Tm = [e_x, Rx e_y, Rx Ry e_z] the tangent map of the sequence (the same
parametrisation as the joint chains of `flexmbs.model.motions`). A marker on a rigid
body, or on a clamped node, has d = 0 and th = 0.

Scratch: the Workspace's marker_frame buffers (marker_deflection ... marker_product);
the frame itself goes where the caller says (usually ws.marker_pos ... marker_tangent).
"""

import numpy as np

from ..numerics.linalg import matmul3
from ..runtime.config import jit, jit_shared

__all__ = ["marker_deformation", "marker_frame", "cardan_rotations",
           "marker_partial_velocities", "marker_frame_kernel"]


@jit_shared
def marker_deformation(m, ws, k, d, dd, th, thd):
    """d, dd (3,): marker k's translation and its rate (body axes, m, m/s);
    th, thd (3,): its Cardan angles and their rates (rad, rad/s)."""
    for a in range(6):
        x = 0.0
        xd = 0.0
        for j in range(m.marker_term_ptr[6 * k + a], m.marker_term_ptr[6 * k + a + 1]):
            c = m.marker_term_col[j]
            f = m.marker_term_coef[j]
            x += f * ws.x[c]
            xd += f * ws.xd[c]
        if a < 3:
            d[a] = x
            dd[a] = xd
        else:
            th[a - 3] = x
            thd[a - 3] = xd


@jit
def cardan_rotations(th, rx, ry, rz, tm):
    """rx, ry, rz (3, 3): Rx(th_0), Ry(th_1), Rz(th_2); tm (3, 3): the tangent map
    [e_x, Rx e_y, Rx Ry e_z], so that the angular velocity of Rx Ry Rz in the axes it
    acts in is tm th'."""
    for out in (rx, ry, rz):
        out[:, :] = 0.0
    c, s = np.cos(th[0]), np.sin(th[0])
    rx[0, 0] = 1.0
    rx[1, 1] = c
    rx[1, 2] = -s
    rx[2, 1] = s
    rx[2, 2] = c
    c, s = np.cos(th[1]), np.sin(th[1])
    ry[1, 1] = 1.0
    ry[0, 0] = c
    ry[0, 2] = s
    ry[2, 0] = -s
    ry[2, 2] = c
    c, s = np.cos(th[2]), np.sin(th[2])
    rz[2, 2] = 1.0
    rz[0, 0] = c
    rz[0, 1] = -s
    rz[1, 0] = s
    rz[1, 1] = c
    for r in range(3):
        tm[r, 0] = 1.0 if r == 0 else 0.0
        tm[r, 1] = rx[r, 1]
        tm[r, 2] = rx[r, 0] * ry[0, 2] + rx[r, 1] * ry[1, 2] + rx[r, 2] * ry[2, 2]


@jit_shared
def marker_frame(m, ws, k, pos, rot, vel, om, arm, tm):
    """Marker k after forward_kinematics (global axes): pos (3,) position (m), rot
    (3, 3) marker axes, vel (3,) velocity (m/s), om (3,) angular velocity (rad/s);
    arm (3,) = A_b s, the marker relative to its body's origin; tm (3, 3) the tangent
    map Tm(th) (body axes). rot holds the partial product Ry Rz C0 on the way."""
    b = m.marker_body[k]
    ab = ws.marker_body_axes
    rx = ws.marker_rx
    ry = ws.marker_ry
    rz = ws.marker_rz
    tmp = ws.marker_product
    d = ws.marker_deflection
    dd = ws.marker_deflection_rate
    th = ws.marker_angles
    thd = ws.marker_angle_rates
    wrel = ws.marker_relative_omega
    marker_deformation(m, ws, k, d, dd, th, thd)
    if b >= 0:
        rb = ws.rot[b]
        for r in range(3):
            for c in range(3):
                ab[r, c] = rb[r, c]
    else:
        ab[:, :] = 0.0
        for r in range(3):
            ab[r, r] = 1.0
    cardan_rotations(th, rx, ry, rz, tm)
    matmul3(rz, m.marker_rotation[k], tmp)
    matmul3(ry, tmp, rot)
    matmul3(rx, rot, tmp)
    matmul3(ab, tmp, rot)
    s0 = m.marker_position[k]
    for r in range(3):
        arm[r] = ab[r, 0] * (s0[0] + d[0]) + ab[r, 1] * (s0[1] + d[1]) + \
            ab[r, 2] * (s0[2] + d[2])
    for r in range(3):
        wrel[r] = tm[r, 0] * thd[0] + tm[r, 1] * thd[1] + tm[r, 2] * thd[2]
    if b >= 0:
        wb = ws.omega[b]
        for r in range(3):
            pos[r] = ws.r[b, r] + arm[r]
            om[r] = wb[r]
            vel[r] = ws.rd[b, r]
        vel[0] += wb[1] * arm[2] - wb[2] * arm[1]
        vel[1] += wb[2] * arm[0] - wb[0] * arm[2]
        vel[2] += wb[0] * arm[1] - wb[1] * arm[0]
    else:
        for r in range(3):
            pos[r] = arm[r]
            om[r] = 0.0
            vel[r] = 0.0
    for r in range(3):
        vel[r] += ab[r, 0] * dd[0] + ab[r, 1] * dd[1] + ab[r, 2] * dd[2]
        om[r] += ab[r, 0] * wrel[0] + ab[r, 1] * wrel[1] + ab[r, 2] * wrel[2]


@jit
def marker_partial_velocities(body_col_ptr, body_col, marker_body, term_ptr, term_col,
                              term_coef, jr, jw, rot, k, arm, tm, jv, jwm):
    """The partial velocities of marker k (after forward_kinematics and `marker_frame`,
    which gives its arm A_b s and tangent map tm): jv[:, c] = d(dp/dt)/d(xd_c) =
    jr_b[:, c] + jw_b[:, c] x arm + A_b (dd/dx_c) and jwm[:, c] = d(w_marker)/d(xd_c) =
    jw_b[:, c] + A_b tm (dth/dx_c) at the columns of its body's rows of B (global axes,
    the body's frame columns and its own elastic ones); zero for a marker on the ground.
    Written at those columns only (jv, jwm: (3, ncol))."""
    b = marker_body[k]
    if b < 0:
        return
    for kk in range(body_col_ptr[b], body_col_ptr[b + 1]):
        c = body_col[kk]
        w0 = jw[b, 0, c]
        w1 = jw[b, 1, c]
        w2 = jw[b, 2, c]
        jv[0, c] = jr[b, 0, c] + w1 * arm[2] - w2 * arm[1]
        jv[1, c] = jr[b, 1, c] + w2 * arm[0] - w0 * arm[2]
        jv[2, c] = jr[b, 2, c] + w0 * arm[1] - w1 * arm[0]
        jwm[0, c] = w0
        jwm[1, c] = w1
        jwm[2, c] = w2
    ab = rot[b]
    for d in range(6):
        for j in range(term_ptr[6 * k + d], term_ptr[6 * k + d + 1]):
            c = term_col[j]
            f = term_coef[j]
            if d < 3:
                for r in range(3):
                    jv[r, c] += ab[r, d] * f
            else:
                for r in range(3):
                    x = ab[r, 0] * tm[0, d - 3] + ab[r, 1] * tm[1, d - 3] + \
                        ab[r, 2] * tm[2, d - 3]
                    jwm[r, c] += x * f


@jit
def marker_frame_kernel(m, ws, k, pos, rot, vel, om, arm, tm):
    """`marker_frame` as a compiled entry point for Python callers."""
    marker_frame(m, ws, k, pos, rot, vel, om, arm, tm)
