"""Reactions of the tree's joints from the equations of motion (numba).

The joints of the tree carry no multipliers: their reactions follow from the momentum
balance of the subtree S that a joint carries (Führer and Wallrapp 1984 eqs 23-24 by another
route). With udot the accelerations of the state (M* udot = Q* - Phi_q^T lambda, the
multipliers of the cut joints included), every body i has the unbalanced wrench

    g_i = M_i (B_i udot) - (Qv_i + Qe_i - M_i a_bias_i)

(`body_unbalanced_wrench`: the force F_i, global, and the moment about its origin,
body axes), which only its joints and the cut joints' constraint forces supply. The
wrench of joint j on its child body, about the child marker's point p, is then

    F_j = sum_{i in S} F_i - F_cut,
    T_j = sum_{i in S} (A_i M_i + (r_i - p) x F_i) - T_cut,

where (F_cut, T_cut) sums, about p, the constraint wrenches of the cut joints and the
rolling contacts' forces on the bodies of S from outside S (a cut joint's wrench on
its parent body is the opposite of that on its child, about the same point; a
contact's force on the plane the opposite of that on the disk, at the contact
point). It includes what the joint's springs,
dampers, actuators and driver transmit, so at rest it balances the weight that the
joint carries.
"""

import numpy as np

from ..kinematics.markers import marker_frame
from ..numerics.linalg import cholesky_solve_in_place
from ..runtime.config import jit
from .constraints import constraint_terms, contact_reaction, cut_joint_reaction
from .system import body_unbalanced_wrench, generalized_forces, mass_matrix

__all__ = ["accelerations", "tree_joint_reaction"]


@jit
def accelerations(m, ws, t, lam):
    """ws.accel = udot from M* udot = Q* - Phi_q^T lam (after forward_kinematics; lam the
    multipliers of the active constraint rows, empty for a tree). NaN if M* is not
    positive definite. ws.mass then holds the factor of M*."""
    mass_matrix(m, ws)
    generalized_forces(m, ws, t)
    if m.con_kind.shape[0] > 0:
        constraint_terms(m, ws)
        nq = ws.force.shape[0]
        for r in range(m.con_kind.shape[0]):
            k = m.con_active[r]
            if k < 0:
                continue
            for i in range(nq):
                ws.force[i] -= ws.con_jac[r, i] * lam[k]
    if not cholesky_solve_in_place(ws.mass, ws.force, ws.accel):
        ws.accel[:] = np.nan


@jit
def _in_subtree(parent, b, root):
    """Body b is root or one of its descendants (parent: the body_parent array)."""
    while b >= 0:
        if b == root:
            return True
        b = parent[b]
    return False


@jit
def _add_moment_about(torque, arm_from, point, force, sign):
    """torque += sign (arm_from - point) x force."""
    d0 = arm_from[0] - point[0]
    d1 = arm_from[1] - point[1]
    d2 = arm_from[2] - point[2]
    torque[0] += sign * (d1 * force[2] - d2 * force[1])
    torque[1] += sign * (d2 * force[0] - d0 * force[2])
    torque[2] += sign * (d0 * force[1] - d1 * force[0])


@jit
def tree_joint_reaction(m, ws, child, marker, lam, force, torque):
    """force, torque (3,) global: the wrench of the tree joint whose child body is
    `child` on that body, about its child marker `marker` (N, N m; module docstring).
    Call after forward_kinematics and `accelerations` (ws.accel, ws.body_force);
    lam: the multipliers of the active constraint rows. Scratch (force and torque
    must be other arrays): the marker frame's buffers (ws.marker_pos ...), ws.force,
    ws.mbcol, ws.reaction_point, ws.cut_force, cut_torque, ws.contact_force,
    contact_point and what body_unbalanced_wrench and constraint_terms use."""
    point = ws.reaction_point
    marker_frame(m, ws, marker, ws.marker_pos, ws.marker_axes, ws.marker_vel,
                 ws.marker_omega, ws.marker_arm, ws.marker_tangent)
    for a in range(3):
        point[a] = ws.marker_pos[a]
        force[a] = 0.0
        torque[a] = 0.0
    ws.force[:] = 0.0  # the elastic rows of g_i: not needed here
    for i in range(m.body_mass.shape[0]):
        if not _in_subtree(m.body_parent, i, child):
            continue
        body_unbalanced_wrench(m, ws, i, ws.accel, ws.force)
        rot = ws.rot[i]
        g = ws.mbcol[:, 0]
        for a in range(3):
            force[a] += g[a]
            torque[a] += rot[a, 0] * g[3] + rot[a, 1] * g[4] + rot[a, 2] * g[5]
        _add_moment_about(torque, ws.r[i], point, g, 1.0)
    if m.cut_row_ptr.shape[0] > 1:
        cut_force = ws.cut_force
        cut_torque = ws.cut_torque
        constraint_terms(m, ws)
        for j in range(m.cut_row_ptr.shape[0] - 1):
            inside_child = _in_subtree(m.body_parent, m.marker_body[m.cut_marker_child[j]],
                                       child)
            inside_parent = _in_subtree(m.body_parent,
                                        m.marker_body[m.cut_marker_parent[j]], child)
            if inside_child == inside_parent:
                continue
            sign = -1.0 if inside_child else 1.0
            cut_joint_reaction(m, ws, j, lam, cut_force, cut_torque)
            at = ws.con_vec[1, 0]  # the cut joint's child marker
            for a in range(3):
                force[a] += sign * cut_force[a]
                torque[a] += sign * cut_torque[a]
            _add_moment_about(torque, at, point, cut_force, sign)
    for j in range(m.contact_radius.shape[0]):
        inside_disk = _in_subtree(m.body_parent, m.marker_body[m.contact_marker_disk[j]],
                                  child)
        inside_plane = _in_subtree(m.body_parent,
                                   m.marker_body[m.contact_marker_plane[j]], child)
        if inside_disk == inside_plane:
            continue
        sign = -1.0 if inside_disk else 1.0
        contact_force = ws.contact_force
        at = ws.contact_point
        contact_reaction(m, ws, j, lam, contact_force, at)
        for a in range(3):
            force[a] += sign * contact_force[a]
        _add_moment_about(torque, at, point, contact_force, sign)
