"""Moving the references of the absolute-coordinate formulation
(flexmbs.model.absolute) during a run.

A body's six coordinates (x, th) on its joint "@b" give r_b = r_ref + A_ref x and
A_b = A_ref R(th), R(th) = Rx(th1) Ry(th2) Rz(th3), with the angular velocity
A_ref G(th) th', G(th) = [e_x, Rx e_y, Rx Ry e_z]. G turns singular as th2 reaches
+-90 degrees; before that (|th2| > REBASE_ANGLE) `rebase_frames` makes the current pose
the reference,

    r_ref' = r_ref + A_ref x,   A_ref' = A_ref R(th),   x = th = 0,
    x' <- R(th)^T x',           th' <- R(th)^T G(th) th',

which leaves every body's position, orientation, velocity and angular velocity (and
so the constraints, the energies and the sensors) unchanged, and restarts the
integrator from there.
"""

import numpy as np

from ..rotations import elementary_rotation

__all__ = ["REBASE_ANGLE", "reference_slots", "rebase_frames", "sequential_rotation"]

REBASE_ANGLE = 1.0  # rad: |th2| beyond which a body's reference is moved (cos = 0.54)


def sequential_rotation(th):
    """(R(th), G(th)) of three sequential rotations about x, y', z'' (module
    docstring)."""
    rx, ry, rz = (elementary_rotation(k, th[k]) for k in range(3))
    g = np.column_stack([np.eye(3)[0], rx[:, 1], (rx @ ry)[:, 2]])
    return rx @ ry @ rz, g


def reference_slots(cm):
    """[(first coordinate index in q, motion index of the reference offset)] of every
    absolute joint of the compiled model `cm` (its OFFSET, then its ROTATE_FIXED at
    the next index: flexmbs.model.motions.joint_motions with reference_slots)."""
    movable = cm.absolute_joints
    m = cm.arrays
    out = []
    for k, name in enumerate(cm.topology.joint_names):
        if name in movable:
            first = int(m.coord_qindex[m.joint_coord_start[k]])
            out.append((first, int(m.motion_ptr[k])))
    return out


def rebase_frames(cm, slots, t, y, restart):
    """(changed, y, y'): where a body's middle angle exceeds REBASE_ANGLE, its
    reference moved to its pose (module docstring; cm.arrays changed in place) and
    `restart(t, y)` -> (y, y') called on the new state; else (False, y, None)."""
    m = cm.arrays
    nq = cm.nq
    moved = False
    y = y.copy()
    for first, slot in slots:
        th = y[first + 3:first + 6]
        if abs(th[1]) <= REBASE_ANGLE:
            continue
        rot, g = sequential_rotation(th)
        a_ref = m.motion_rotation[slot + 1]
        m.motion_vector[slot] += a_ref @ y[first:first + 3]
        m.motion_rotation[slot + 1] = a_ref @ rot
        rates = y[nq + first:nq + first + 6]
        rates[:3] = rot.T @ rates[:3]
        rates[3:] = rot.T @ (g @ rates[3:])
        y[first:first + 6] = 0.0
        moved = True
    if not moved:
        return False, y, None
    y, yp = restart(t, y)
    return True, y, yp
