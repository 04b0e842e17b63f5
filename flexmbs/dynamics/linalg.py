"""Small dense linear algebra in place (numba), for the kernels' hot paths."""

import numpy as np

from ..config import jit

__all__ = ["cholesky_solve_in_place"]


@jit
def cholesky_solve_in_place(a, b, x):
    """Solve a x = b for symmetric positive definite a (n x n).

    a is overwritten by its Cholesky factor L (lower triangle, a = L L^T); b is kept.
    Returns False (x untouched) when a is not positive definite (a pivot <= 0 or not
    finite), True otherwise. No allocation.
    """
    n = a.shape[0]
    for j in range(n):
        d = a[j, j]
        for k in range(j):
            d -= a[j, k] * a[j, k]
        if not d > 0.0 or not np.isfinite(d):
            return False
        d = np.sqrt(d)
        a[j, j] = d
        for i in range(j + 1, n):
            s = a[i, j]
            for k in range(j):
                s -= a[i, k] * a[j, k]
            a[i, j] = s / d
    for i in range(n):  # L z = b
        s = b[i]
        for k in range(i):
            s -= a[i, k] * x[k]
        x[i] = s / a[i, i]
    for i in range(n - 1, -1, -1):  # L^T x = z
        s = x[i]
        for k in range(i + 1, n):
            s -= a[k, i] * x[k]
        x[i] = s / a[i, i]
    return True
