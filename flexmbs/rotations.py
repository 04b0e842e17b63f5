"""Rotation matrices in plain numpy (no numba, so that the model's description imports
without the kernels): the elementary rotations and the sequential x, y', z''
rotations of the model's marker orientations and of the absolute coordinates'
reference frames. The kernels' rotation about an axis is
flexmbs.kinematics.rotations.rotation_about_axis."""

import numpy as np

__all__ = ["elementary_rotation", "rotation_from_euler_xyz"]


def elementary_rotation(axis, angle):
    """R (3 x 3) of a rotation by `angle` (rad) about coordinate axis `axis` (0: x, 1: y,
    2: z), right-handed."""
    c, s = np.cos(angle), np.sin(angle)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    r = np.eye(3)
    r[i, i] = r[j, j] = c
    r[i, j], r[j, i] = -s, s
    return r


def rotation_from_euler_xyz(angles):
    """R = Rx(a) Ry(b) Rz(c): sequential rotations about x, then the new y, then the
    new z (rad)."""
    a, b, c = angles
    return elementary_rotation(0, a) @ elementary_rotation(1, b) @ elementary_rotation(2, c)
