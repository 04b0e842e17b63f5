"""The two-node 3-D Euler-Bernoulli beam element (docs/explanation/formulation.md section 3; Huang
H2.2.2, H2.7-2.14 and appendix B).

Element coordinates (element frame, m and rad):

    e = [u1 v1 w1 tx1 ty1 tz1  u2 v2 w2 tx2 ty2 tz2]

Kinematics: u = u_axis - y v' - z w', v = v_axis - z tx, w = w_axis + y tx, with
tz = v' and ty = -w' (the rotations are those of the section, right-handed about the
element axes). Body-frame nodal coordinates q (per node u v w tx ty tz along the body
axes) turn into element ones by e = T q, T = blockdiag(C^T, C^T, C^T, C^T); a point of
the element then moves by C S(xi, eta, zeta) T q in body axes.
"""

import numpy as np

from ..errors import ModelError
from .sections import _positive

__all__ = [
    "ELEMENT_DOFS", "element_length", "element_frame", "element_transformation",
    "shape_matrix", "shape_matrix_parts", "element_stiffness", "axial_strain_row",
    "curvature_rows", "section_force_rows",
]

ELEMENT_DOFS = 12
LENGTH_MIN = 1e-12  # m; two nodes closer than this coincide
PARALLEL_SIN_MIN = 1e-6  # sin(angle) between reference vector and axis below this: parallel


def _point(value, item, fld):
    try:
        p = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"expected a 3-vector of numbers, got {value!r}", item, fld) from None
    if p.shape != (3,) or not np.all(np.isfinite(p)):
        raise ModelError(f"expected a 3-vector of finite numbers, got {value!r}", item, fld)
    return p


def element_length(node1, node2, item=None):
    """l = |x2 - x1| (m), node positions in body coordinates (m)."""
    d = _point(node2, item, "node2") - _point(node1, item, "node1")
    length = float(np.linalg.norm(d))
    if not length > LENGTH_MIN:
        raise ModelError(f"expected two distinct node positions, got {node1!r} and "
                         f"{node2!r}", item, "nodes")
    return length


def element_frame(node1, node2, reference, item=None):
    """C (3 x 3): columns are the element x, y, z axes in body coordinates (H2.7).

    x = (x2 - x1) / l; y = the component of `reference` normal to x, normalised
    (the section's y principal axis); z = x cross y. A reference vector (within
    1e-6 rad of) parallel to the axis is an input error.
    """
    x1 = _point(node1, item, "node1")
    ex = (_point(node2, item, "node2") - x1) / element_length(node1, node2, item)
    r = _point(reference, item, "reference")
    rn = np.linalg.norm(r)
    if not rn > 0.0:
        raise ModelError("expected a non-zero reference vector for the section y axis",
                         item, "reference")
    normal = r - (r @ ex) * ex
    if not np.linalg.norm(normal) > PARALLEL_SIN_MIN * rn:
        raise ModelError(f"expected a reference vector for the section y axis that is not "
                         f"parallel to the element axis {ex.tolist()}, got {r.tolist()}",
                         item, "reference")
    ey = normal / np.linalg.norm(normal)
    ez = np.cross(ex, ey)
    return np.ascontiguousarray(np.column_stack([ex, ey, ez]))


def element_transformation(frame):
    """T = blockdiag(C^T, C^T, C^T, C^T) (12 x 12): e = T q from the element's 12
    body-frame nodal coordinates q to element coordinates e (H2.8)."""
    c = np.asarray(frame, dtype=float)
    return np.ascontiguousarray(np.kron(np.eye(4), c.T))


def shape_matrix(xi, eta, zeta, length):
    """S (3 x 12), element frame, exactly docs/explanation/formulation.md section 3 (Huang
    appendix B):
    displacement (m) of the point x = xi l, y = eta l, z = zeta l = S e."""
    l = length
    a = 6.0 * (xi - xi**2)
    b = 1.0 - 4.0 * xi + 3.0 * xi**2
    c = -2.0 * xi + 3.0 * xi**2
    n1 = 1.0 - 3.0 * xi**2 + 2.0 * xi**3
    n2 = xi - 2.0 * xi**2 + xi**3
    n3 = 3.0 * xi**2 - 2.0 * xi**3
    n4 = -xi**2 + xi**3
    return np.array([
        [1.0 - xi, a * eta, a * zeta, 0.0, b * l * zeta, -b * l * eta,
         xi, -a * eta, -a * zeta, 0.0, c * l * zeta, -c * l * eta],
        [0.0, n1, 0.0, -(1.0 - xi) * l * zeta, 0.0, n2 * l,
         0.0, n3, 0.0, -xi * l * zeta, 0.0, n4 * l],
        [0.0, 0.0, n1, (1.0 - xi) * l * eta, -n2 * l, 0.0,
         0.0, 0.0, n3, xi * l * eta, -n4 * l, 0.0],
    ])


def shape_matrix_parts(xi, length):
    """(S0, Sy, Sz), each 3 x 12, element frame, with S = S0 + y Sy + z Sz for the point
    x = xi l, y, z (m) of the section: S0 (dimensionless) moves the axis, Sy and Sz
    (1/m) are the section's rotation (-v', -w' in the axial row; the torsion tx in
    the transverse rows)."""
    l = length
    s0 = shape_matrix(xi, 0.0, 0.0, l)
    a = 6.0 * (xi - xi**2) / l
    b = 1.0 - 4.0 * xi + 3.0 * xi**2
    c = -2.0 * xi + 3.0 * xi**2
    sy = np.zeros((3, ELEMENT_DOFS))
    sz = np.zeros((3, ELEMENT_DOFS))
    sy[0, [1, 5, 7, 11]] = [a, -b, -a, -c]
    sy[2, [3, 9]] = [1.0 - xi, xi]
    sz[0, [2, 4, 8, 10]] = [a, b, -a, c]
    sz[1, [3, 9]] = [-(1.0 - xi), -xi]
    return s0, sy, sz


def element_stiffness(length, section, material):
    """K_e (12 x 12), element frame, of the 3-D frame element (Huang B.13):

        axial     EA/l [[1, -1], [-1, 1]]                         on (u1, u2)
        torsion   GJ/l [[1, -1], [-1, 1]]                         on (tx1, tx2)
        x-y plane EI_z/l^3 [[12, 6l, -12, 6l], [6l, 4l^2, -6l, 2l^2],
                            [-12, -6l, 12, -6l], [6l, 2l^2, -6l, 4l^2]]  on (v1, tz1, v2, tz2)
        x-z plane EI_y/l^3 [[12, -6l, -12, -6l], [-6l, 4l^2, 6l, 2l^2],
                            [-12, 6l, 12, 6l], [-6l, 2l^2, 6l, 4l^2]]    on (w1, ty1, w2, ty2)

    the x-z signs following from ty = -w'. Units: N/m, N, N m/rad by coordinate pair.
    It is the Hessian of int (EA u'^2 + EI_z v''^2 + EI_y w''^2 + GJ tx'^2) dx / 2
    with the shape functions of `shape_matrix`.
    """
    l = _positive(length, None, "length")
    e, g = material.youngs_modulus, material.shear_modulus
    k = np.zeros((ELEMENT_DOFS, ELEMENT_DOFS))

    def add_bar(i, j, stiff):
        k[np.ix_([i, j], [i, j])] += stiff * np.array([[1.0, -1.0], [-1.0, 1.0]])

    def add_bending(dofs, ei, sign):
        s = sign
        block = ei / l**3 * np.array([
            [12.0, s * 6 * l, -12.0, s * 6 * l],
            [s * 6 * l, 4 * l**2, -s * 6 * l, 2 * l**2],
            [-12.0, -s * 6 * l, 12.0, -s * 6 * l],
            [s * 6 * l, 2 * l**2, -s * 6 * l, 4 * l**2]])
        k[np.ix_(dofs, dofs)] += block

    add_bar(0, 6, e * section.area / l)
    add_bar(3, 9, g * section.torsion_constant / l)
    add_bending([1, 5, 7, 11], e * section.i_z, +1.0)
    add_bending([2, 4, 8, 10], e * section.i_y, -1.0)
    return k


def axial_strain_row(xi, y, z, length):
    """The row (12,) with eps = row . e: the axial strain d(u_x)/dx at the point
    x = xi l, y, z (m) of the section, element frame, eps = u' - y v'' - z w''
    (Euler-Bernoulli; docs/explanation/formulation.md section 3), exact for the element's shape
    functions."""
    l = _positive(length, None, "length")
    v2, w2 = _bending_rows(_hermite_second(xi), l, 2)
    row = -y * v2 - z * w2
    row[0] -= 1.0 / l
    row[6] += 1.0 / l
    return row


def _hermite_second(xi):
    """d^2/dxi^2 of the cubic Hermite functions N1..N4 of `shape_matrix`."""
    return np.array([-6.0 + 12.0 * xi, -4.0 + 6.0 * xi, 6.0 - 12.0 * xi, -2.0 + 6.0 * xi])


HERMITE_THIRD = np.array([12.0, 6.0, -12.0, 6.0])  # d^3/dxi^3 of N1..N4


def _bending_rows(derivative, length, order):
    """Rows (2, 12) of d^order v / dx^order and d^order w / dx^order (element frame)
    from the Hermite functions' xi derivatives `derivative` (4,):
    v = N1 v1 + N2 l tz1 + N3 v2 + N4 l tz2, w = N1 w1 - N2 l ty1 + N3 w2 - N4 l ty2
    (tz = v', ty = -w')."""
    l = length
    d1, d2, d3, d4 = np.asarray(derivative, dtype=float) / l**order
    rows = np.zeros((2, ELEMENT_DOFS))
    rows[0, [1, 5, 7, 11]] = [d1, d2 * l, d3, d4 * l]
    rows[1, [2, 4, 8, 10]] = [d1, -d2 * l, d3, -d4 * l]
    return rows


def curvature_rows(xi, length):
    """Rows (2, 12): the curvatures (kappa_y, kappa_z) = (ty', tz') = (-w'', v'') (1/m)
    at x = xi l on the element's axis, element frame; exact for the cubic Hermite
    functions of `shape_matrix` (docs/explanation/formulation.md section 3)."""
    v2, w2 = _bending_rows(_hermite_second(xi), length, 2)
    return np.array([-w2, v2])


def section_force_rows(xi, length, section, material):
    """Rows (6, 12): the section forces at x = xi l, element frame, acting on the face
    whose outward normal is +x (N and N m):

        N = EA u',  V_y = -EI_z v''',  V_z = -EI_y w''',  T = GJ tx',
        M_y = EI_y kappa_y = -EI_y w'',  M_z = EI_z kappa_z = EI_z v''

    so that dM_z/dx = -V_y and dM_y/dx = V_z. Linear elasticity of the Euler-Bernoulli
    element: u', tx' and the shear forces are constant along it (cubic transverse
    displacements)."""
    l = _positive(length, None, "length")
    e, g = material.youngs_modulus, material.shear_modulus
    rows = np.zeros((6, ELEMENT_DOFS))
    rows[0, [0, 6]] = np.array([-1.0, 1.0]) * e * section.area / l
    v3, w3 = _bending_rows(HERMITE_THIRD, l, 3)
    rows[1] = -e * section.i_z * v3
    rows[2] = -e * section.i_y * w3
    rows[3, [3, 9]] = np.array([-1.0, 1.0]) * g * section.torsion_constant / l
    kappa = curvature_rows(xi, l)
    rows[4] = e * section.i_y * kappa[0]
    rows[5] = e * section.i_z * kappa[1]
    return rows
