"""Dense linear algebra in place, for the kernels' hot paths (numba): 3-vectors and
3 x 3 matrices (inlined where the kernels call them), a Cholesky solve of a small
symmetric positive definite system, and the LU factorization with partial pivoting
of the integrators' iteration matrices. No allocation."""

import numpy as np

from ..runtime.config import jit, jit_entry, jit_inline

__all__ = [
    "cross",
    "add_cross",
    "matvec3",
    "matmul3",
    "copy33",
    "cholesky_solve_in_place",
    "lu_factor",
    "lu_solve",
]


@jit
def cross(a, b, out):
    """out = a x b."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@jit_inline
def add_cross(a, b, scale, out):
    """out += scale * (a x b)."""
    out[0] += scale * (a[1] * b[2] - a[2] * b[1])
    out[1] += scale * (a[2] * b[0] - a[0] * b[2])
    out[2] += scale * (a[0] * b[1] - a[1] * b[0])


@jit_inline
def matvec3(a, x, out):
    """out = a x (3 x 3 times 3)."""
    for r in range(3):
        out[r] = a[r, 0] * x[0] + a[r, 1] * x[1] + a[r, 2] * x[2]


@jit_inline
def copy33(a, out):
    """out = a (3 x 3)."""
    for r in range(3):
        for c in range(3):
            out[r, c] = a[r, c]


@jit_inline
def matmul3(a, b, out):
    """out = a b (3 x 3); out must not be a or b."""
    for r in range(3):
        for c in range(3):
            out[r, c] = a[r, 0] * b[0, c] + a[r, 1] * b[1, c] + a[r, 2] * b[2, c]


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


@jit_entry
def lu_factor(a, piv):
    """In-place LU factorization with partial pivoting, P A = L U (a: n x n, row-major).

    L (unit lower) and U overwrite `a`; piv[k] is the row swapped with row k at stage
    k. Returns 0, or k + 1 when column k has no non-zero pivot (singular matrix).

    The row updates run over views that start at column k + 1 (`rk`, `ri`): a loop
    from a variable start index, a[i, j] for j in range(k + 1, n), is not vectorised
    by LLVM, a loop from 0 over a view is (the same operations in the same order:
    33 x 33 in 5.1 us instead of 9.3).
    """
    n = a.shape[0]
    for k in range(n):
        p = k
        amax = abs(a[k, k])
        for i in range(k + 1, n):
            v = abs(a[i, k])
            if v > amax:
                amax = v
                p = i
        piv[k] = p
        if not amax > 0.0:
            return k + 1
        if p != k:
            ak = a[k]
            ap = a[p]
            for j in range(n):
                tmp = ak[j]
                ak[j] = ap[j]
                ap[j] = tmp
        inv = 1.0 / a[k, k]
        rk = a[k, k + 1 :]
        for i in range(k + 1, n):
            f = a[i, k] * inv
            a[i, k] = f
            if f != 0.0:
                ri = a[i, k + 1 :]
                for j in range(rk.shape[0]):
                    ri[j] -= f * rk[j]
    return 0


@jit_entry
def lu_solve(a, piv, b):
    """Solve A x = b in place (b becomes x) with the factors of lu_factor."""
    n = a.shape[0]
    for k in range(n):
        p = piv[k]
        if p != k:
            tmp = b[k]
            b[k] = b[p]
            b[p] = tmp
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= a[i, j] * b[j]
        b[i] = s
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= a[i, j] * b[j]
        b[i] = s / a[i, i]
