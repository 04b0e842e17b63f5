"""Singular configurations of joints with three sequential rotations (spherical, free,
general): the rotation part loses a degree of freedom where the three rotation axes,
each turned by the rotations before it, become coplanar:

    s = |det [a1, R1 a2, R1 R2 a3]|      (1 far from it, 0 at it; |cos(x2)| for x-y-z)

where the angular velocity of the joint, G(x) dx/dt, cannot follow every direction and
M* becomes singular.
"""

import numpy as np

__all__ = ["three_rotation_joints", "singularity_measure", "SINGULAR_THRESHOLD"]

SINGULAR_THRESHOLD = 1e-3  # report when s drops below this (x2 within 0.06 deg of 90)


def _rodrigues(axis, angles):
    """(k, 3, 3) rotations about a unit axis by each angle."""
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    s = np.sin(angles)[:, None, None]
    c = np.cos(angles)[:, None, None]
    return np.eye(3) + s * k + (1 - c) * (k @ k)


def three_rotation_joints(cm):
    """[(joint name, index of its first rotation coordinate)] for joints with 3 rotations."""
    m = cm.arrays
    out = []
    for j, name in enumerate(cm.topology.joint_names):
        c0, c1 = m.joint_coord_start[j], m.joint_coord_start[j + 1]
        if c1 - (c0 + m.joint_ntrans[j]) == 3:
            out.append((name, int(c0 + m.joint_ntrans[j])))
    return out


def singularity_measure(cm, angles_of, first):
    """s (k,) for the joint whose rotation coordinates start at `first`;
    angles_of(c) gives the (k,) values of coordinate c."""
    a = cm.arrays.coord_axis
    r1 = _rodrigues(a[first], angles_of(first))
    r2 = _rodrigues(a[first + 1], angles_of(first + 1))
    g2 = r1 @ a[first + 1]
    g3 = (r1 @ r2) @ a[first + 2]
    return np.abs(np.einsum("i,ki->k", a[first], np.cross(g2, g3)))
