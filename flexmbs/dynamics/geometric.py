"""Geometric stiffness forces and energies of a flexible body's beam elements (numba),
docs/explanation/formulation.md section 6; the numpy reference is `flexmbs.elements.geometric`.

Per element: e = R qf (R, 12 x nc: the element's coordinates in its frame as linear
forms of the nc elastic coordinates of the body they depend on, those of its two nodes
(nodal) or all (modal)), u' = (e_6 - e_0) / l, g = G e, S = e . g, and the force on
qf is R^T f with

    consistent:            f = -(EA u' g + EA S a / 2 + EA S g / (2 l))
    huang-axial:           f = -EA u' g
    huang-foreshortening:  f = -EA u' g - EA/4 sum_p w_p s_p (v'_p dv_p + w'_p dw_p)

(a the axial row, s_p = v'_p^2 + w'_p^2 at the Gauss points), energies
U3 = EA u' S / 2 and U4 = EA S^2 / (8 l) (consistent) or EA/8 sum_p w_p s_p^2.
Arrays (ModelArrays.geo_*): per flexible body k its option code and its elements
geo_ptr[k]:geo_ptr[k+1]; per element EA (N), l (m), G (12, 12), its coordinates
col[col_ptr[j]:col_ptr[j+1]] (nc indices into qf), the rows R at row_ptr[j] (12 nc
values, row-major), the slope rows dv, dw (5, 12) and weights (5,) at the Gauss
points. Each element touches only its nc coordinates: the cost of the forces and
the tangent grows with the number of elements.
"""

from ..runtime.config import jit

__all__ = ["geometric_elastic_forces", "geometric_element_tangent", "element_mean_slope_square",
           "CONSISTENT", "HUANG_AXIAL", "HUANG_FORESHORTENING"]

NONE, CONSISTENT, HUANG_AXIAL, HUANG_FORESHORTENING = 0, 1, 2, 3  # GEOMETRIC_CODES


@jit
def _element_state(j, gmat, r, col, qf, e, ge):
    """e = R qf (12,), g = G e into ge, and returns S = e . g of element j (R: its
    rows, 12 x nc row-major, on the coordinates col)."""
    nc = col.shape[0]
    for a in range(12):
        x = 0.0
        for b in range(nc):
            x += r[a * nc + b] * qf[col[b]]
        e[a] = x
    s = 0.0
    for a in range(12):
        x = 0.0
        for b in range(12):
            x += gmat[j, a, b] * e[b]
        ge[a] = x
        s += e[a] * x
    return s


@jit
def element_mean_slope_square(j, length, gmat, col_ptr, col, row_ptr, row_data, qf,
                              scratch):
    """sbar = e^T G e / l (the element mean of v'^2 + w'^2) of element j at the
    elastic coordinates qf. scratch (2, 12) or larger."""
    r = row_data[row_ptr[j]:row_ptr[j + 1]]
    return _element_state(j, gmat, r, col[col_ptr[j]:col_ptr[j + 1]], qf, scratch[0],
                          scratch[1]) / length[j]


@jit
def geometric_elastic_forces(code, first, last, ea, length, gmat, col_ptr, col, row_ptr,
                             row_data, dv, dw, weight, qf, out, scratch):
    """Adds the geometric forces of elements first..last-1 (option `code`) to out (nf,)
    at the elastic coordinates qf (nf,) and returns (U3, U4) in J. scratch (3, 12)."""
    u3 = 0.0
    u4 = 0.0
    if code == NONE:
        return u3, u4
    e = scratch[0]
    ge = scratch[1]
    fe = scratch[2]
    for j in range(first, last):
        r = row_data[row_ptr[j]:row_ptr[j + 1]]
        cj = col[col_ptr[j]:col_ptr[j + 1]]
        nc = cj.shape[0]
        s = _element_state(j, gmat, r, cj, qf, e, ge)
        up = (e[6] - e[0]) / length[j]
        eaj = ea[j]
        u3 += 0.5 * eaj * up * s
        for a in range(12):
            fe[a] = -eaj * up * ge[a]
        if code == CONSISTENT:
            u4 += eaj * s * s / (8.0 * length[j])
            c = eaj * s / (2.0 * length[j])
            for a in range(12):
                fe[a] -= c * ge[a]
            fe[0] += 0.5 * eaj * s / length[j]
            fe[6] -= 0.5 * eaj * s / length[j]
        elif code == HUANG_FORESHORTENING:
            for p in range(weight.shape[1]):
                sv = 0.0
                sw = 0.0
                for a in range(12):
                    sv += dv[j, p, a] * e[a]
                    sw += dw[j, p, a] * e[a]
                sp = sv * sv + sw * sw
                wp = weight[j, p]
                u4 += 0.125 * eaj * wp * sp * sp
                c = 0.25 * eaj * wp * sp
                for a in range(12):
                    fe[a] -= c * (sv * dv[j, p, a] + sw * dw[j, p, a])
        for b in range(nc):
            x = 0.0
            for a in range(12):
                x += r[a * nc + b] * fe[a]
            out[cj[b]] += x
    return u3, u4


@jit
def geometric_element_tangent(code, j, ea, length, gmat, col_ptr, col, row_ptr, row_data,
                              dv, dw, weight, qf, scratch, kr):
    """kr[:, :nc] = K_e R (12 x nc) of element j at qf, so that the element's tangent
    stiffness -dQ/dqf on its coordinates col[col_ptr[j]:col_ptr[j+1]] is R^T kr
    (entry (c2, c): sum_a R[a, c2] kr[a, c]) with

        K_e = EA (u' G + g a^T)                                   (huang-axial)
            + EA (a g^T + g g^T / l + S G / (2 l))                (consistent)
            + EA/4 sum_p w_p (2 n_p n_p^T + s_p (dv_p dv_p^T + dw_p dw_p^T))
                                                   (huang-foreshortening, n_p =
                                                    v'_p dv_p + w'_p dw_p)

    (g = G e, S = e . g, a the axial row; the numpy reference is
    flexmbs.elements.geometric.geometric_stiffness). scratch (16, 12): rows 0-3
    vectors, rows 4-15 K_e. kr (12, >= nc)."""
    e = scratch[0]
    ge = scratch[1]
    nv = scratch[2]
    ke = scratch[4:16]
    r = row_data[row_ptr[j]:row_ptr[j + 1]]
    cj = col[col_ptr[j]:col_ptr[j + 1]]
    nc = cj.shape[0]
    s = _element_state(j, gmat, r, cj, qf, e, ge)
    lj = length[j]
    up = (e[6] - e[0]) / lj
    eaj = ea[j]
    for a in range(12):
        for b in range(12):
            ke[a, b] = eaj * up * gmat[j, a, b]
    for a in range(12):
        ke[a, 0] -= eaj * ge[a] / lj
        ke[a, 6] += eaj * ge[a] / lj
    if code == CONSISTENT:
        for b in range(12):
            ke[0, b] -= eaj * ge[b] / lj
            ke[6, b] += eaj * ge[b] / lj
        c = eaj * s / (2.0 * lj)
        for a in range(12):
            for b in range(12):
                ke[a, b] += eaj / lj * ge[a] * ge[b] + c * gmat[j, a, b]
    elif code == HUANG_FORESHORTENING:
        for p in range(weight.shape[1]):
            sv = 0.0
            sw = 0.0
            for a in range(12):
                sv += dv[j, p, a] * e[a]
                sw += dw[j, p, a] * e[a]
            sp = sv * sv + sw * sw
            c = 0.25 * eaj * weight[j, p]
            for a in range(12):
                nv[a] = sv * dv[j, p, a] + sw * dw[j, p, a]
            for a in range(12):
                for b in range(12):
                    ke[a, b] += c * (2.0 * nv[a] * nv[b] + sp * (
                        dv[j, p, a] * dv[j, p, b] + dw[j, p, a] * dw[j, p, b]))
    for a in range(12):
        for b in range(nc):
            x = 0.0
            for c2 in range(12):
                x += ke[a, c2] * r[c2 * nc + b]
            kr[a, b] = x
