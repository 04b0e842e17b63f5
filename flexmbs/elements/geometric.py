"""Geometric stiffness of the beam element (docs/explanation/formulation.md section 6; Huang
chapter 6, appendices C and D): the strain energies of the axial force and of
foreshortening, their gradients and Hessians, in plain numpy (the reference of the numba
kernel `flexmbs.dynamics.geometric` and the tangent stiffness of linearizations).

Per element, with element coordinates e (12, element frame; docs/explanation/formulation.md
section 3), u' = a . e = (u2 - u1) / l the constant axial strain of the axis, v' = dv . e
and w' = dw . e the slopes (rows of the x-derivative of the transverse shape functions), s =
v'^2 + w'^2 and G = int_0^l (dv^T dv + dw^T dw) dx (12 x 12):

    U3    = 1/2 EA u' (e^T G e)                         (axial force)
    U4bar = EA (e^T G e)^2 / (8 l)                      (foreshortening, element mean)
    U4    = 1/8 EA int_0^l s^2 dx                       (foreshortening, pointwise)

so that the axial part of U2 plus U3 plus U4bar is 1/2 EA l (u' + sbar / 2)^2 >= 0,
sbar = e^T G e / l. The variants of the `geometric` setting:

    "none"                  no geometric terms
    "consistent"            U3 + U4bar with their exact gradient (conservative)
    "huang-axial"           force -K_ga e = -EA u' G e: Huang's appendix C matrix, the
                            axial force EA u' frozen in the gradient of U3 (not
                            conservative: the term -1/2 EA (e^T G e) a is left out)
    "huang-foreshortening"  -K_ga e - K_gf e with Huang's appendix D matrix
                            K_gf = EA/4 int G(x) e e^T G(x) dx (1/2 e^T K_gf e = U4;
                            force K_gf e as the thesis writes it, eq. 6.26: half the
                            gradient of U4; not conservative)

Integrals along the axis by 5-point Gauss-Legendre: s^2 has degree 8 in xi.
"""

import numpy as np

from .beam import ELEMENT_DOFS

__all__ = ["GEOMETRIC_OPTIONS", "GEOMETRIC_CODES", "GAUSS_POINTS_GEOMETRIC",
           "slope_rows", "geometric_shape_matrix", "axial_row", "geometric_energies",
           "geometric_force", "geometric_stiffness"]

GEOMETRIC_OPTIONS = ("none", "consistent", "huang-axial", "huang-foreshortening")
GEOMETRIC_CODES = {name: k for k, name in enumerate(GEOMETRIC_OPTIONS)}
GAUSS_POINTS_GEOMETRIC = 5  # exact to degree 9; s^2 (dv^T dv) reaches degree 8


def _hermite_first(xi):
    """d/dxi of the cubic Hermite functions N1..N4 of the shape matrix."""
    return np.array([-6.0 * xi + 6.0 * xi**2, 1.0 - 4.0 * xi + 3.0 * xi**2,
                     6.0 * xi - 6.0 * xi**2, -2.0 * xi + 3.0 * xi**2])


def slope_rows(xi, length):
    """(dv, dw), each (12,): v' = dv . e and w' = dw . e (slopes of the axis in the
    element's x-y and x-z planes) at x = xi l; v = N1 v1 + N2 l tz1 + N3 v2 + N4 l tz2,
    w = N1 w1 - N2 l ty1 + N3 w2 - N4 l ty2."""
    d1, d2, d3, d4 = _hermite_first(xi) / length
    dv = np.zeros(ELEMENT_DOFS)
    dw = np.zeros(ELEMENT_DOFS)
    dv[[1, 5, 7, 11]] = [d1, d2 * length, d3, d4 * length]
    dw[[2, 4, 8, 10]] = [d1, -d2 * length, d3, -d4 * length]
    return dv, dw


_LEGENDRE = np.polynomial.legendre.leggauss(GAUSS_POINTS_GEOMETRIC)


def _gauss(length):
    x, w = _LEGENDRE
    return 0.5 * (x + 1.0), 0.5 * length * w


def geometric_shape_matrix(length):
    """G = int_0^l (dv^T dv + dw^T dw) dx (12 x 12, 1/m): the standard geometric
    stiffness shape (Huang C.1 without its axial-force factor)."""
    g = np.zeros((ELEMENT_DOFS, ELEMENT_DOFS))
    for xi, w in zip(*_gauss(length)):
        dv, dw = slope_rows(xi, length)
        g += w * (np.outer(dv, dv) + np.outer(dw, dw))
    return g


def axial_row(length):
    """a (12,): u' = a . e = (u2 - u1) / l."""
    a = np.zeros(ELEMENT_DOFS)
    a[0], a[6] = -1.0 / length, 1.0 / length
    return a


def _slopes(e, length):
    """s = v'^2 + w'^2 at the Gauss points, with the rows and weights."""
    out = []
    for xi, w in zip(*_gauss(length)):
        dv, dw = slope_rows(xi, length)
        out.append((w, dv, dw, (dv @ e) ** 2 + (dw @ e) ** 2))
    return out


def geometric_energies(e, length, ea, option):
    """(U3, U4) in J for element coordinates e (12,): U4 is U4bar for "consistent" and
    the pointwise U4 for "huang-foreshortening"; (0, 0) for "none"."""
    e = np.asarray(e, dtype=float)
    if option == "none":
        return 0.0, 0.0
    g = geometric_shape_matrix(length)
    s = e @ g @ e
    u3 = 0.5 * ea * (axial_row(length) @ e) * s
    if option == "consistent":
        return u3, ea * s * s / (8.0 * length)
    if option == "huang-foreshortening":
        return u3, 0.125 * ea * sum(w * sk * sk for w, _, _, sk in _slopes(e, length))
    return u3, 0.0


def geometric_force(e, length, ea, option):
    """The generalized force (12,) on the element coordinates (N, N m) of the
    `option` (module docstring); for "consistent" -d(U3 + U4bar)/de."""
    e = np.asarray(e, dtype=float)
    if option == "none":
        return np.zeros(ELEMENT_DOFS)
    g = geometric_shape_matrix(length)
    a = axial_row(length)
    ge = g @ e
    s = e @ ge
    up = a @ e
    f = -ea * up * ge
    if option == "consistent":
        f -= 0.5 * ea * s * a + ea * s * ge / (2.0 * length)
    elif option == "huang-foreshortening":
        for w, dv, dw, sk in _slopes(e, length):
            f -= 0.25 * ea * w * sk * ((dv @ e) * dv + (dw @ e) * dw)
    return f


def geometric_stiffness(e, length, ea, option):
    """The tangent stiffness -d(force)/de (12 x 12) of the `option`; for "consistent"
    the Hessian of U3 + U4bar:

        EA (a g^T + g a^T) + EA u' G + EA/l g g^T + EA S/(2 l) G,  g = G e, S = e^T g.
    """
    e = np.asarray(e, dtype=float)
    k = np.zeros((ELEMENT_DOFS, ELEMENT_DOFS))
    if option == "none":
        return k
    g = geometric_shape_matrix(length)
    a = axial_row(length)
    ge = g @ e
    s = e @ ge
    up = a @ e
    k += ea * up * g + ea * np.outer(ge, a)
    if option == "consistent":
        k += ea * np.outer(a, ge) + ea / length * np.outer(ge, ge) + ea * s / (2 * length) * g
    elif option == "huang-foreshortening":
        for w, dv, dw, sk in _slopes(e, length):
            n = (dv @ e) * dv + (dw @ e) * dw
            k += 0.25 * ea * w * (2.0 * np.outer(n, n) + sk * (np.outer(dv, dv)
                                                              + np.outer(dw, dw)))
    return k
