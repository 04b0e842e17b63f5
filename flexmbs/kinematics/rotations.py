"""Exact rotations about an axis (numba, for the kernels). The elementary and
sequential x, y', z'' rotations of plain numpy are in flexmbs.rotations."""

import numpy as np

from ..runtime.config import jit

__all__ = ["rotation_about_axis"]


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
