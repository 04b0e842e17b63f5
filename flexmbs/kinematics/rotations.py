"""Small rotation kernels (numba): skew matrices and exact rotations about an axis."""

import numpy as np

from ..config import jit

__all__ = ["skew", "rotation_about_axis", "cross"]


@jit
def skew(a, out):
    """out = ~a, the 3x3 skew matrix with ~a b = a x b."""
    out[0, 0] = 0.0
    out[0, 1] = -a[2]
    out[0, 2] = a[1]
    out[1, 0] = a[2]
    out[1, 1] = 0.0
    out[1, 2] = -a[0]
    out[2, 0] = -a[1]
    out[2, 1] = a[0]
    out[2, 2] = 0.0


@jit
def cross(a, b, out):
    """out = a x b (out may not alias a or b)."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


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
