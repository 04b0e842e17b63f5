"""Bordered band matrices (numba): storage, LU factorization and solve, for the
iteration matrices and mass matrices of models with long beams
(flexmbs.model.band_layout says which unknowns are interior and which border).

A matrix G (n x n) over unknowns r = 0 .. n-1 is held in the order pos[r]: the ni
interior unknowns first, then the nb border ones (n = ni + nb), as

    [[G_II  G_IB]      G_II banded: G_II[i, j] = 0 for |i - j| > kd,
     [G_BI  G_BB]]

in one flat float64 array (`packed_size(dims)` values, dims = [ni, nb, kd]):

    band   G_II row i, columns i - kd .. i + kd, at i (2 kd + 1) + (j - i + kd)
    ib     G_IB (ni, nb), row-major
    bi     G_BI (nb, ni), row-major
    bb     G_BB (nb, nb), row-major

(`band_index`). With ni = 0 and pos empty it is the dense row-major matrix.

Factorization (`bordered_band_factor`): G_II = P L U by Gaussian elimination with
partial pivoting within the band (LINPACK's dgbfa: the pivot among the kd rows below,
U's upper bandwidth grows to 2 kd), X = G_II^-1 G_IB, the Schur complement
S = G_BB - G_BI X and its dense LU with partial pivoting. Its cost is
O(ni kd^2 + ni kd nb + ni nb^2 + nb^3) and its storage (`factor_size`) O(ni (kd + nb)
+ nb^2): linear in the interior, where a dense LU is O(n^3) and eliminating the
border first would fill G_II in. A solve (`bordered_band_solve`) is
z = G_II^-1 r_I, x_B = S^-1 (r_B - G_BI z), x_I = z - X x_B.

Its pivoting stays within the interior and within the border: it relies on G_II
being well conditioned on its own, which the iteration matrix cj M + D + K / cj of the
beams' interior coordinates is (M positive definite; the joints, where pivoting
across matters, are the border).
"""

import numpy as np

from ..runtime.config import jit_entry, jit_inline
from .linalg import lu_factor, lu_solve

__all__ = [
    "packed_size",
    "factor_size",
    "band_index",
    "bordered_band_factor",
    "bordered_band_solve",
    "packed_from_dense",
    "dense_from_packed",
]


def packed_size(dims):
    """Values of a packed matrix of dims = [ni, nb, kd]."""
    ni, nb, kd = (int(x) for x in dims)
    return ni * (2 * kd + 1) + 2 * ni * nb + nb * nb


def factor_size(dims):
    """Values of its factors (`bordered_band_factor`): the band LU (ni (3 kd + 1)),
    X (ni nb), G_BI (nb ni) and the LU of S (nb nb)."""
    ni, nb, kd = (int(x) for x in dims)
    return ni * (3 * kd + 1) + 2 * ni * nb + nb * nb


@jit_inline
def band_index(pos, dims, r, c):
    """Index in the packed storage of entry (r, c) (unknowns in their own numbering;
    pos[r] their place), or -1 for an entry of G_II outside the band (zero by the
    layout). pos empty: the dense row-major index r nb + c."""
    nb = dims[1]
    if pos.shape[0] == 0:
        return r * nb + c
    ni = dims[0]
    kd = dims[2]
    pr = pos[r]
    pc = pos[c]
    w = 2 * kd + 1
    if pr < ni:
        if pc < ni:
            d = pc - pr
            if d > kd or d < -kd:
                return -1
            return pr * w + d + kd
        return ni * w + pr * nb + pc - ni
    if pc < ni:
        return ni * w + ni * nb + (pr - ni) * ni + pc
    return ni * w + 2 * ni * nb + (pr - ni) * nb + pc - ni


@jit_entry
def bordered_band_factor(g, dims, f, piv):
    """Factor the packed matrix g (kept) into f (`factor_size(dims)` values) and piv
    (ni + nb int64 pivots): the module text's P L U of G_II, X, G_BI and the LU of S.
    Returns 0, or k + 1 when the elimination meets a zero pivot at its step k (k < ni
    in G_II, else in S)."""
    ni = dims[0]
    nb = dims[1]
    kd = dims[2]
    w = 2 * kd + 1
    w3 = 3 * kd + 1
    o_ib = ni * w
    o_bi = o_ib + ni * nb
    o_bb = o_bi + nb * ni
    fb = f[: ni * w3]
    x = f[ni * w3 : ni * w3 + ni * nb]
    fbi = f[ni * w3 + ni * nb : ni * w3 + 2 * ni * nb]
    s = f[ni * w3 + 2 * ni * nb : ni * w3 + 2 * ni * nb + nb * nb]
    for i in range(ni):
        for t in range(w):
            fb[i * w3 + t] = g[i * w + t]
        for t in range(w, w3):
            fb[i * w3 + t] = 0.0
    for t in range(ni * nb):
        x[t] = g[o_ib + t]
        fbi[t] = g[o_bi + t]
    for t in range(nb * nb):
        s[t] = g[o_bb + t]
    for k in range(ni):
        last = min(k + kd, ni - 1)
        jend = min(k + 2 * kd, ni - 1)
        p = k
        amax = abs(fb[k * w3 + kd])
        for i in range(k + 1, last + 1):
            v = abs(fb[i * w3 + k - i + kd])
            if v > amax:
                amax = v
                p = i
        piv[k] = p
        if not amax > 0.0:
            return k + 1
        if p != k:
            for j in range(k, jend + 1):
                a1 = k * w3 + j - k + kd
                a2 = p * w3 + j - p + kd
                tmp = fb[a1]
                fb[a1] = fb[a2]
                fb[a2] = tmp
            for c in range(nb):
                tmp = x[k * nb + c]
                x[k * nb + c] = x[p * nb + c]
                x[p * nb + c] = tmp
        inv = 1.0 / fb[k * w3 + kd]
        rk = fb[k * w3 + kd + 1 : k * w3 + kd + 1 + jend - k]
        xk = x[k * nb : (k + 1) * nb]
        for i in range(k + 1, last + 1):
            li = i * w3 + k - i + kd
            el = fb[li] * inv
            fb[li] = el
            if el != 0.0:
                ri = fb[li + 1 : li + 1 + jend - k]
                for j in range(rk.shape[0]):
                    ri[j] -= el * rk[j]
                xi = x[i * nb : (i + 1) * nb]
                for c in range(nb):
                    xi[c] -= el * xk[c]
    for i in range(ni - 1, -1, -1):
        jend = min(i + 2 * kd, ni - 1)
        xi = x[i * nb : (i + 1) * nb]
        for j in range(i + 1, jend + 1):
            u = fb[i * w3 + j - i + kd]
            if u != 0.0:
                xj = x[j * nb : (j + 1) * nb]
                for c in range(nb):
                    xi[c] -= u * xj[c]
        inv = 1.0 / fb[i * w3 + kd]
        for c in range(nb):
            xi[c] *= inv
    for a in range(nb):
        sa = s[a * nb : (a + 1) * nb]
        for i in range(ni):
            v = fbi[a * ni + i]
            if v != 0.0:
                xi = x[i * nb : (i + 1) * nb]
                for c in range(nb):
                    sa[c] -= v * xi[c]
    code = lu_factor(s.reshape((nb, nb)), piv[ni : ni + nb])
    return 0 if code == 0 else ni + code


@jit_entry
def bordered_band_solve(f, piv, dims, pos, b, v):
    """Solve G x = b in place (b becomes x; unknowns in their own numbering) with the
    factors of `bordered_band_factor`; v (ni + nb) is scratch."""
    ni = dims[0]
    nb = dims[1]
    kd = dims[2]
    n = ni + nb
    w3 = 3 * kd + 1
    fb = f[: ni * w3]
    x = f[ni * w3 : ni * w3 + ni * nb]
    fbi = f[ni * w3 + ni * nb : ni * w3 + 2 * ni * nb]
    s = f[ni * w3 + 2 * ni * nb : ni * w3 + 2 * ni * nb + nb * nb]
    if pos.shape[0] == 0:
        for r in range(n):
            v[r] = b[r]
    else:
        for r in range(n):
            v[pos[r]] = b[r]
    vi = v[:ni]
    vb = v[ni:n]
    for k in range(ni):
        p = piv[k]
        if p != k:
            tmp = vi[k]
            vi[k] = vi[p]
            vi[p] = tmp
        t = vi[k]
        if t != 0.0:
            for i in range(k + 1, min(k + kd, ni - 1) + 1):
                vi[i] -= fb[i * w3 + k - i + kd] * t
    for i in range(ni - 1, -1, -1):
        acc = vi[i]
        for j in range(i + 1, min(i + 2 * kd, ni - 1) + 1):
            acc -= fb[i * w3 + j - i + kd] * vi[j]
        vi[i] = acc / fb[i * w3 + kd]
    for a in range(nb):
        acc = 0.0
        for i in range(ni):
            acc += fbi[a * ni + i] * vi[i]
        vb[a] -= acc
    lu_solve(s.reshape((nb, nb)), piv[ni : ni + nb], vb)
    for i in range(ni):
        acc = 0.0
        for c in range(nb):
            acc += x[i * nb + c] * vb[c]
        vi[i] -= acc
    if pos.shape[0] == 0:
        for r in range(n):
            b[r] = v[r]
    else:
        for r in range(n):
            b[r] = v[pos[r]]


_index = getattr(band_index, "py_func", band_index)  # plain Python, for the helpers


def packed_from_dense(a, pos, dims):
    """The packed storage of the dense matrix a (n x n) in the layout (pos, dims);
    entries of G_II outside the band must be zero (ValueError otherwise)."""
    a = np.asarray(a, dtype=float)
    pos = np.asarray(pos, dtype=np.int64)
    dims = np.asarray(dims, dtype=np.int64)
    out = np.zeros(packed_size(dims))
    n = a.shape[0]
    for r in range(n):
        for c in range(n):
            k = _index(pos, dims, r, c)
            if k < 0:
                if a[r, c] != 0.0:
                    raise ValueError(f"entry ({r}, {c}) lies outside the band")
                continue
            out[k] = a[r, c]
    return out


def dense_from_packed(g, pos, dims):
    """The dense matrix (n x n, unknowns in their own numbering) of packed g."""
    pos = np.asarray(pos, dtype=np.int64)
    dims = np.asarray(dims, dtype=np.int64)
    n = int(dims[0] + dims[1])
    out = np.zeros((n, n))
    for r in range(n):
        for c in range(n):
            k = _index(pos, dims, r, c)
            if k >= 0:
                out[r, c] = g[k]
    return out
