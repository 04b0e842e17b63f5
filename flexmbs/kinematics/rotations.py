"""Exact rotations: about an axis (numba, for the kernels), and the elementary and
sequential x, y', z'' rotations that the model's marker orientations and the absolute
coordinates' reference frames use (numpy)."""

import numpy as np

from ..config import jit

__all__ = ["rotation_about_axis", "elementary_rotation", "rotation_from_euler_xyz"]


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


@jit
def rotation_about_axis(axis, angle, out):
    """Rodrigues: out = I + sin(angle) ~n + (1 - cos(angle)) ~n ~n, n a unit vector."""
    s = np.sin(angle)
    c1 = 1.0 - np.cos(angle)
    x, y, z = axis[0], axis[1], axis[2]
    out[0, 0] = 1.0 - c1 * (y * y + z * z)
    out[0, 1] = -s * z + c1 * x * y
    out[0, 2] = s * y + c1 * x * z
    out[1, 0] = s * z + c1 * x * y
    out[1, 1] = 1.0 - c1 * (x * x + z * z)
    out[1, 2] = -s * x + c1 * y * z
    out[2, 0] = -s * y + c1 * x * z
    out[2, 1] = s * x + c1 * y * z
    out[2, 2] = 1.0 - c1 * (x * x + y * y)
