"""Beam element, sections, materials and inertia invariants (docs/explanation/formulation.md
sections 2 and 3) against slow references: brute-force quadrature over the element volume,
the strain-energy Hessian, rigid-body motions, and Euler-Bernoulli cantilever frequencies.
"""

import math

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize

from flexmbs import ModelError
from flexmbs.elements import (
    GAUSS_POINTS_ALONG_AXIS,
    assemble_body_invariants,
    beam_body_invariants,
    circle_section,
    element_frame,
    element_invariants,
    element_length,
    element_stiffness,
    element_transformation,
    free_coordinates,
    general_section,
    material,
    node_selections,
    rectangle_section,
    rectangle_torsion_constant,
    rectangular_tube_section,
    round_tube_section,
    shape_matrix,
    shape_matrix_parts,
)

ROUND_OFF = 1e-12

HUANG_TUBE = rectangular_tube_section(12.7e-3, 12.7e-3, 1.6e-3)
ALUMINIUM = material(0.69e11, 2770.0, shear_modulus=0.26e11)

# an oblique element, an oblique reference, and a section with I_y != I_z
NODE1 = np.array([0.13, -0.27, 0.41])
NODE2 = np.array([0.61, 0.12, -0.08])
REFERENCE = np.array([0.3, -0.7, 0.5])
SECTION = rectangle_section(0.03, 0.05)
STEEL = material(2.1e11, 7850.0, poisson_ratio=0.3)

EULER_BERNOULLI_BETA_L = (1.8751040687119611, 4.6940911329741745, 7.8547574382376126)


def relative_error(a, b):
    """max |a - b| / max |b| (the error relative to the largest entry)."""
    return np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(b).max()


def transformation_by_blocks(c):
    t = np.zeros((12, 12))
    for k in range(4):
        t[3 * k:3 * k + 3, 3 * k:3 * k + 3] = c.T
    return t


def brute_force_invariants(x1, x2, reference, section, mat, n_axis=8):
    """Invariants by quadrature over points of the element volume: the section rule
    (+-sqrt(2 I_z/A), 0), (0, +-sqrt(2 I_y/A)) with weights A/4 (exact second moments)
    and n_axis Gauss points along the axis; S_body = C S T, u0 = x1 + C (x, y, z)."""
    c = element_frame(x1, x2, reference)
    l = np.linalg.norm(x2 - x1)
    t = transformation_by_blocks(c)
    a, rho = section.area, mat.density
    ry, rz = math.sqrt(2 * section.i_z / a), math.sqrt(2 * section.i_y / a)
    section_points = [(ry, 0.0), (-ry, 0.0), (0.0, rz), (0.0, -rz)]
    xg, wg = np.polynomial.legendre.leggauss(n_axis)
    mass, first, sbar = 0.0, np.zeros(3), np.zeros((3, 12))
    th0, n, ss = np.zeros((3, 3)), np.zeros((3, 3, 12)), np.zeros((3, 3, 12, 12))
    for xq, wq in zip(xg, wg):
        xi = 0.5 * (xq + 1.0)
        for y, z in section_points:
            w = rho * 0.5 * wq * l * a / 4.0
            u0 = x1 + c @ np.array([xi * l, y, z])
            s = c @ shape_matrix(xi, y / l, z / l, l) @ t
            mass += w
            first += w * u0
            sbar += w * s
            th0 += w * np.outer(u0, u0)
            for p in range(3):
                for q in range(3):
                    n[p, q] += w * u0[p] * s[q]
                    ss[p, q] += w * np.outer(s[p], s[q])
    return dict(mass=mass, first_moment=first, sbar=sbar, th0=th0, n=n, ss=ss)


def rigid_motions(positions):
    """Six nodal vectors (6 per node, body axes) of rigid translations along x, y, z
    and small rotations about x, y, z through the origin."""
    modes = []
    for d in np.eye(3):
        modes.append(np.concatenate([np.r_[d, 0, 0, 0] for _ in positions]))
    for phi in np.eye(3):
        modes.append(np.concatenate([np.r_[np.cross(phi, x), phi] for x in positions]))
    return modes


def cantilever(n_elements, length, section, mat, tip_mass=0.0):
    """A clamped-free beam along an oblique body axis; (invariants, axis direction)."""
    d = np.array([1.0, 2.0, -1.0]) / math.sqrt(6.0)
    pos = np.array([0.1, 0.0, 0.2]) + np.outer(np.linspace(0, length, n_elements + 1), d)
    conn = np.c_[np.arange(n_elements), np.arange(1, n_elements + 1)]
    free = np.ones(6 * (n_elements + 1), dtype=bool)
    free[:6] = False
    masses = np.zeros(n_elements + 1)
    masses[-1] = tip_mass
    return beam_body_invariants(pos, conn, [0.0, 0.0, 1.0], section, mat, free, masses)


def natural_frequencies(inv, count):
    """Lowest `count` angular frequencies (rad/s) of K_ff x = w^2 M_ff x."""
    lam = scipy.linalg.eigh(inv.stiffness, inv.mass_matrix(), eigvals_only=True,
                            subset_by_index=[0, count - 1])
    return np.sqrt(lam)


# ---- element frame and shape matrix ------------------------------------------------

def test_element_frame_is_a_rotation_with_x_along_the_axis_and_y_towards_reference():
    c = element_frame(NODE1, NODE2, REFERENCE)
    np.testing.assert_allclose(c.T @ c, np.eye(3), atol=ROUND_OFF)
    assert np.linalg.det(c) == pytest.approx(1.0, abs=ROUND_OFF)
    np.testing.assert_allclose(c[:, 0], (NODE2 - NODE1) / np.linalg.norm(NODE2 - NODE1),
                               atol=ROUND_OFF)
    assert abs(np.cross(c[:, 0], REFERENCE) @ c[:, 1]) < ROUND_OFF  # y in plane (x, ref)
    assert REFERENCE @ c[:, 1] > 0
    np.testing.assert_allclose(element_transformation(c), transformation_by_blocks(c))


def test_shape_matrix_parts_add_up_to_the_shape_matrix():
    l = 0.7
    for xi in (0.0, 0.23, 0.5, 1.0):
        s0, sy, sz = shape_matrix_parts(xi, l)
        for eta, zeta in ((0.1, -0.3), (-0.02, 0.05)):
            np.testing.assert_allclose(s0 + eta * l * sy + zeta * l * sz,
                                       shape_matrix(xi, eta, zeta, l), atol=ROUND_OFF)


def _polynomial_rows(l, eta=0.0, zeta=0.0):
    """The entries of S(xi, eta, zeta) as exact cubic polynomials in xi (interpolated)."""
    nodes = np.cos(np.pi * (np.arange(4) + 0.5) / 4) * 0.5 + 0.5
    values = np.array([shape_matrix(xi, eta, zeta, l) for xi in nodes])  # (4, 3, 12)
    coef = np.polynomial.polynomial.polyfit(nodes, values.reshape(4, -1), 3)
    return coef.reshape(4, 3, 12)


def _evaluate(coef, xi, derivative=0):
    c = np.polynomial.polynomial.polyder(coef, derivative) if derivative else coef
    return np.polynomial.polynomial.polyval(xi, c)


def test_shape_matrix_follows_euler_bernoulli_kinematics_with_ty_equal_minus_w_prime():
    """u = u_axis - y v' - z w', tz = v', ty = -w', v = -z tx, w = y tx, and the nodal
    values: every convention of docs/explanation/formulation.md section 3 read off S itself."""
    l = 0.7
    axis = _polynomial_rows(l)
    d_eta = (_polynomial_rows(l, eta=1.0) - axis) / l  # d S / d y  (1/m)
    d_zeta = (_polynomial_rows(l, zeta=1.0) - axis) / l  # d S / d z
    e = np.eye(12)
    for xi in (0.0, 0.31, 0.77, 1.0):
        v_prime = _evaluate(axis[:, 1], xi, 1) / l
        w_prime = _evaluate(axis[:, 2], xi, 1) / l
        np.testing.assert_allclose(_evaluate(d_eta[:, 0], xi), -v_prime, atol=1e-11)
        np.testing.assert_allclose(_evaluate(d_zeta[:, 0], xi), -w_prime, atol=1e-11)
        np.testing.assert_allclose(_evaluate(d_zeta[:, 1], xi),
                                   -_evaluate(d_eta[:, 2], xi), atol=1e-11)
    for node, xi in ((0, 0.0), (1, 1.0)):
        o = 6 * node
        at = _evaluate(axis, xi)
        np.testing.assert_allclose(at[0], e[o + 0], atol=1e-11)
        np.testing.assert_allclose(at[1], e[o + 1], atol=1e-11)
        np.testing.assert_allclose(at[2], e[o + 2], atol=1e-11)
        np.testing.assert_allclose(_evaluate(d_eta[:, 2], xi), e[o + 3], atol=1e-11)
        np.testing.assert_allclose(-_evaluate(axis[:, 2], xi, 1) / l, e[o + 4], atol=1e-11)
        np.testing.assert_allclose(_evaluate(axis[:, 1], xi, 1) / l, e[o + 5], atol=1e-11)


# ---- (a) invariants against brute-force quadrature over the volume -----------------

def test_element_invariants_equal_brute_force_quadrature_over_the_volume():
    inv = element_invariants(NODE1, NODE2, REFERENCE, SECTION, STEEL)
    ref = brute_force_invariants(NODE1, NODE2, REFERENCE, SECTION, STEEL)
    assert inv.mass == pytest.approx(ref["mass"], rel=ROUND_OFF)
    for name in ("first_moment", "sbar", "th0", "n", "ss"):
        assert relative_error(getattr(inv, name), ref[name]) < ROUND_OFF, name
    l = element_length(NODE1, NODE2)
    assert inv.mass == pytest.approx(STEEL.density * SECTION.area * l, rel=ROUND_OFF)
    np.testing.assert_allclose(inv.first_moment, inv.mass * (NODE1 + NODE2) / 2,
                               rtol=ROUND_OFF)


def test_gauss_points_along_the_axis_suffice():
    """Twice as many axial points in the brute force change nothing: the invariant path's
    4 points integrate the degree-6 products exactly."""
    assert GAUSS_POINTS_ALONG_AXIS == 4
    coarse = brute_force_invariants(NODE1, NODE2, REFERENCE, SECTION, STEEL, n_axis=4)
    fine = brute_force_invariants(NODE1, NODE2, REFERENCE, SECTION, STEEL, n_axis=8)
    assert relative_error(coarse["ss"], fine["ss"]) < ROUND_OFF
    three = brute_force_invariants(NODE1, NODE2, REFERENCE, SECTION, STEEL, n_axis=3)
    assert relative_error(three["ss"], fine["ss"]) > 1e-6


def test_invariants_are_read_only_float64_c_contiguous():
    inv = element_invariants(NODE1, NODE2, REFERENCE, SECTION, STEEL)
    for name in ("first_moment", "sbar", "th0", "n", "ss", "stiffness"):
        a = getattr(inv, name)
        assert a.dtype == np.float64 and a.flags.c_contiguous and not a.flags.writeable
    assert inv.nf == 12


def test_body_assembly_equals_selection_matrices_and_zero_size_point_masses():
    """Body invariants = sum over elements with S_body = S_e B1 B2 (explicit 0/1
    matrices here), plus point masses as zero-size volumes with S = node selection."""
    pos = np.array([[0.0, 0.0, 0.0], [0.3, 0.1, -0.05], [0.55, 0.3, 0.1], [0.7, 0.2, 0.4]])
    conn = np.array([[0, 1], [1, 2], [3, 2]])  # the last element runs backwards
    free = np.ones(24, dtype=bool)
    free[:6] = False
    free[[9, 20]] = False  # node 1 tx fixed, node 3 w fixed
    masses = np.array([0.0, 0.2, 0.0, 0.5])
    refs = [REFERENCE, np.array([0.0, 0.0, 1.0]), np.array([1.0, -1.0, 0.3])]
    elems = [element_invariants(pos[a], pos[b], r, SECTION, STEEL)
             for (a, b), r in zip(conn, refs)]
    body = assemble_body_invariants(elems, conn, pos, free, masses)

    b2 = np.eye(24)[:, free]  # full nodal vector from qf
    nf = b2.shape[1]
    ref = dict(mass=0.0, first_moment=np.zeros(3), sbar=np.zeros((3, nf)),
               th0=np.zeros((3, 3)), n=np.zeros((3, 3, nf)), ss=np.zeros((3, 3, nf, nf)),
               stiffness=np.zeros((nf, nf)))
    for (a, b), r in zip(conn, refs):
        b1 = np.zeros((12, 24))
        b1[:6, 6 * a:6 * a + 6] = np.eye(6)
        b1[6:, 6 * b:6 * b + 6] = np.eye(6)
        sel = b1 @ b2
        e = brute_force_invariants(pos[a], pos[b], r, SECTION, STEEL)
        ref["mass"] += e["mass"]
        ref["first_moment"] += e["first_moment"]
        ref["th0"] += e["th0"]
        ref["sbar"] += e["sbar"] @ sel
        ref["n"] += e["n"] @ sel
        ref["ss"] += np.einsum("ki,abkl,lj->abij", sel, e["ss"], sel)
        c = element_frame(pos[a], pos[b], r)
        t = transformation_by_blocks(c)
        l = np.linalg.norm(pos[b] - pos[a])
        ref["stiffness"] += sel.T @ t.T @ element_stiffness(l, SECTION, STEEL) @ t @ sel
    for k, m in enumerate(masses):
        if m:
            s = np.zeros((3, 24))
            s[:, 6 * k:6 * k + 3] = np.eye(3)
            s = s @ b2
            x = pos[k]
            ref["mass"] += m
            ref["first_moment"] += m * x
            ref["th0"] += m * np.outer(x, x)
            ref["sbar"] += m * s
            ref["n"] += m * np.einsum("a,bi->abi", x, s)
            ref["ss"] += m * np.einsum("ai,bj->abij", s, s)
    assert body.nf == nf == 16
    assert body.mass == pytest.approx(ref["mass"], rel=ROUND_OFF)
    for name in ("first_moment", "sbar", "th0", "n", "ss", "stiffness"):
        assert relative_error(getattr(body, name), ref[name]) < ROUND_OFF, name

    by_index = assemble_body_invariants(elems, conn, pos, np.flatnonzero(free), masses)
    np.testing.assert_array_equal(by_index.ss, body.ss)


def test_node_selections_pick_translation_and_rotation_rows():
    idx = free_coordinates(np.r_[np.zeros(6, bool), np.ones(6, bool)], 2)
    s, ps = node_selections(1, idx, 2)
    np.testing.assert_array_equal(s, np.eye(6)[:3])
    np.testing.assert_array_equal(ps, np.eye(6)[3:])
    s0, ps0 = node_selections(0, idx, 2)
    assert not s0.any() and not ps0.any()


# ---- (b) stiffness against the strain-energy Hessian -------------------------------

def test_element_stiffness_is_the_strain_energy_hessian():
    """K_e = Hessian of 1/2 int (EA u'^2 + EI_z v''^2 + EI_y w''^2 + GJ tx'^2) dx, with
    u, v, w, tx read off S (axis rows at eta = zeta = 0, tx = dS_w/dy) as exact
    polynomials in xi and differentiated exactly."""
    l = 0.7
    mat = material(2.1e11, 7850.0, shear_modulus=0.7e11)
    axis = _polynomial_rows(l)
    torsion = (_polynomial_rows(l, eta=1.0)[:, 2] - axis[:, 2]) / l
    xg, wg = np.polynomial.legendre.leggauss(4)
    k = np.zeros((12, 12))
    for xq, wq in zip(xg, wg):
        xi, dx = 0.5 * (xq + 1), 0.5 * wq * l
        du = _evaluate(axis[:, 0], xi, 1) / l
        d2v = _evaluate(axis[:, 1], xi, 2) / l**2
        d2w = _evaluate(axis[:, 2], xi, 2) / l**2
        dtx = _evaluate(torsion, xi, 1) / l
        k += dx * (mat.youngs_modulus * SECTION.area * np.outer(du, du)
                   + mat.youngs_modulus * SECTION.i_z * np.outer(d2v, d2v)
                   + mat.youngs_modulus * SECTION.i_y * np.outer(d2w, d2w)
                   + mat.shear_modulus * SECTION.torsion_constant * np.outer(dtx, dtx))
    assert relative_error(element_stiffness(l, SECTION, mat), k) < 1e-9
    ke = element_stiffness(l, SECTION, mat)
    e, i_y, i_z = mat.youngs_modulus, SECTION.i_y, SECTION.i_z
    assert ke[0, 0] == pytest.approx(e * SECTION.area / l)
    assert ke[3, 3] == pytest.approx(mat.shear_modulus * SECTION.torsion_constant / l)
    assert ke[1, 1] == pytest.approx(12 * e * i_z / l**3)
    assert ke[1, 5] == pytest.approx(6 * e * i_z / l**2)
    assert ke[2, 4] == pytest.approx(-6 * e * i_y / l**2)
    assert ke[4, 4] == pytest.approx(4 * e * i_y / l)
    assert ke[4, 10] == pytest.approx(2 * e * i_y / l)


# ---- (c) rigid-body motions ---------------------------------------------------------

def test_rigid_motions_are_in_the_null_space_and_move_points_rigidly():
    inv = element_invariants(NODE1, NODE2, REFERENCE, SECTION, STEEL)
    k = inv.stiffness
    np.testing.assert_allclose(k, k.T, rtol=0, atol=ROUND_OFF * np.abs(k).max())
    c = element_frame(NODE1, NODE2, REFERENCE)
    t = element_transformation(c)
    l = element_length(NODE1, NODE2)
    points = [(0.0, 0.02, -0.01), (0.37, -0.015, 0.025), (1.0, 0.01, 0.02)]
    for mode, r in enumerate(rigid_motions([NODE1, NODE2])):
        assert np.linalg.norm(k @ r) < ROUND_OFF * np.abs(k).max() * np.linalg.norm(r)
        for xi, y, z in points:
            u0 = NODE1 + c @ np.array([xi * l, y, z])
            moved = c @ shape_matrix(xi, y / l, z / l, l) @ t @ r
            expected = np.eye(3)[mode] if mode < 3 else np.cross(np.eye(3)[mode - 3], u0)
            np.testing.assert_allclose(moved, expected, atol=ROUND_OFF)
    assert np.linalg.matrix_rank(k, tol=1e-9 * np.abs(k).max()) == 6


# ---- (d) mass matrix ----------------------------------------------------------------

def test_mass_matrix_is_symmetric_positive_definite_with_mass_rho_a_l():
    inv = element_invariants(NODE1, NODE2, REFERENCE, SECTION, STEEL)
    mff = inv.mass_matrix()
    np.testing.assert_allclose(mff, mff.T, rtol=0, atol=ROUND_OFF * np.abs(mff).max())
    assert np.linalg.eigvalsh(mff).min() > 0
    rho_a_l = STEEL.density * SECTION.area * element_length(NODE1, NODE2)
    direction = np.array([0.2, -0.6, 0.3]) / np.linalg.norm([0.2, -0.6, 0.3])
    for d in (*np.eye(3), direction):
        r = np.r_[d, 0, 0, 0, d, 0, 0, 0]
        assert r @ mff @ r == pytest.approx(rho_a_l, rel=ROUND_OFF)
        np.testing.assert_allclose(inv.sbar @ r, rho_a_l * d, rtol=ROUND_OFF,
                                   atol=ROUND_OFF * rho_a_l)


# ---- (e) cantilever frequencies -----------------------------------------------------

def _bending_reference(section, mat, length):
    """Euler-Bernoulli cantilever: w_n = (beta_n L)^2 sqrt(E I / (rho A L^4))."""
    c = math.sqrt(mat.youngs_modulus * section.i_y
                  / (mat.density * section.area * length**4))
    return np.array(EULER_BERNOULLI_BETA_L)**2 * c


def test_cantilever_tube_bending_frequencies_match_euler_bernoulli():
    """Huang tube, 1.02 m, 20 elements along an oblique body axis: the three lowest
    bending pairs within 0.1 %. The remaining error is the section's rotary inertia,
    which M_ff includes (about -(beta_n r)^2 / 2 with r = sqrt(I/A) = 4.6 mm: -0.08 %
    for the third pair); the next test removes it."""
    length = 1.02
    w = natural_frequencies(cantilever(20, length, HUANG_TUBE, ALUMINIUM), 6)
    np.testing.assert_allclose(w[0::2], w[1::2], rtol=1e-9)  # I_y = I_z: pairs
    np.testing.assert_allclose(w[0::2], _bending_reference(HUANG_TUBE, ALUMINIUM, length),
                               rtol=1e-3)


def test_cantilever_without_rotary_inertia_converges_to_euler_bernoulli():
    """The same bending stiffness E I with a section 100 times smaller in I (and E 100
    times larger): rotary inertia becomes negligible and 20 elements are within 3e-5."""
    length, scale = 1.02, 1e-2
    tube = HUANG_TUBE
    thin = general_section(tube.area, tube.i_y * scale, tube.i_z * scale,
                           tube.torsion_constant * scale)
    stiff = material(ALUMINIUM.youngs_modulus / scale, ALUMINIUM.density,
                     shear_modulus=ALUMINIUM.shear_modulus / scale)
    w = natural_frequencies(cantilever(20, length, thin, stiff), 6)
    np.testing.assert_allclose(w[0::2], _bending_reference(thin, stiff, length), rtol=3e-5)


def test_cantilever_with_tip_mass_matches_the_frequency_equation():
    """Tip point mass M: 1 + cos(bL) cosh(bL) + (M / rho A L) bL (cos(bL) sinh(bL) -
    sin(bL) cosh(bL)) = 0. Huang tube, 1.02 m, 0.5 kg: 3.666 Hz
    (docs/explanation/benchmark-models.md: near 3.67)."""
    length, tip = 1.02, 0.5
    mu = tip / (ALUMINIUM.density * HUANG_TUBE.area * length)

    def frequency_equation(b):
        return (1 + math.cos(b) * math.cosh(b)
                + mu * b * (math.cos(b) * math.sinh(b) - math.sin(b) * math.cosh(b)))

    beta_l = scipy.optimize.brentq(frequency_equation, 0.1, EULER_BERNOULLI_BETA_L[0])
    expected = beta_l**2 * _bending_reference(HUANG_TUBE, ALUMINIUM, length)[0] \
        / EULER_BERNOULLI_BETA_L[0]**2
    w = natural_frequencies(cantilever(10, length, HUANG_TUBE, ALUMINIUM, tip), 2)
    np.testing.assert_allclose(w, expected, rtol=1e-4)
    assert w[0] / (2 * math.pi) == pytest.approx(3.67, abs=0.01)


# ---- (f) errors ---------------------------------------------------------------------

@pytest.mark.parametrize("build, field, words", [
    (lambda: rectangle_section(-0.01, 0.02, item='body "b"'), "width", "positive"),
    (lambda: rectangle_section(0.01, "x", item='body "b"'), "height", "positive"),
    (lambda: circle_section(float("nan"), item='body "b"'), "diameter", "finite"),
    (lambda: round_tube_section(0.02, 0.01, item='body "b"'), "wall_thickness",
     "below half the outer diameter"),
    (lambda: rectangular_tube_section(0.02, 0.01, 0.006, item='body "b"'),
     "wall_thickness", "below half the smaller outer size"),
    (lambda: general_section(1e-4, 1e-9, 1e-9, 3e-9, item='body "b"'),
     "torsion_constant", "Saint-Venant bound"),
    (lambda: general_section(1e-4, 0.0, 1e-9, 1e-9, item='body "b"'), "i_y", "positive"),
    (lambda: material(7e10, 2700, item='body "b"'), "shear_modulus",
     "exactly one of shear_modulus or poisson_ratio, got neither"),
    (lambda: material(7e10, 2700, 2.6e10, 0.3, item='body "b"'), "shear_modulus",
     "got both"),
    (lambda: material(7e10, 2700, poisson_ratio=0.6, item='body "b"'), "poisson_ratio",
     "(-1.0, 0.5]"),
    (lambda: material(7e10, 0.0, poisson_ratio=0.3, item='body "b"'), "density",
     "positive"),
    (lambda: material(True, 2700, poisson_ratio=0.3, item='body "b"'), "youngs_modulus",
     "positive"),
    (lambda: element_frame([0, 0, 0], [1, 1, 0], [2, 2, 0], item='body "b"'), "reference",
     "not parallel"),
    (lambda: element_frame([0, 0, 0], [0, 0, 0], [0, 1, 0], item='body "b"'), "nodes",
     "distinct"),
    (lambda: element_frame([0, 0], [1, 0, 0], [0, 1, 0], item='body "b"'), "node1",
     "3-vector"),
])
def test_bad_input_raises_model_error_naming_item_and_field(build, field, words):
    with pytest.raises(ModelError) as err:
        build()
    assert err.value.item == 'body "b"'
    assert err.value.field == field
    assert words in str(err.value)


def test_bad_assembly_input_raises_model_error():
    pos = np.array([[0.0, 0, 0], [1.0, 0, 0], [2.0, 0, 0]])
    conn = [[0, 1], [1, 2]]
    free = np.ones(18, dtype=bool)
    with pytest.raises(ModelError, match="boolean mask of length"):
        beam_body_invariants(pos, conn, [0, 1, 0], SECTION, STEEL, free[:12], item="b")
    with pytest.raises(ModelError, match="node indices in 0..2"):
        beam_body_invariants(pos, [[0, 1], [1, 3]], [0, 1, 0], SECTION, STEEL, free)
    with pytest.raises(ModelError, match="two different nodes"):
        beam_body_invariants(pos, [[0, 1], [1, 1]], [0, 1, 0], SECTION, STEEL, free)
    with pytest.raises(ModelError, match="distinct coordinate indices"):
        free_coordinates([3, 4, 3], 3)
    with pytest.raises(ModelError, match="point masses >= 0") as err:
        beam_body_invariants(pos, conn, [0, 1, 0], SECTION, STEEL, free,
                             node_masses=[0, 0, -1], item='body "b"')
    assert err.value.field == "node_masses"
    bent = np.array([[0.0, 0, 0], [1.0, 0, 0], [1.0, 1.0, 0]])
    with pytest.raises(ModelError, match='body "b", element 1') as err:
        beam_body_invariants(bent, conn, [0, 1, 0], SECTION, STEEL, free, item='body "b"')
    assert err.value.field == "reference"


# ---- (g) section properties and materials against hand formulas --------------------

def test_huang_tube_properties_match_models_md():
    assert HUANG_TUBE.area == pytest.approx(7.104e-5, rel=1e-12)
    assert HUANG_TUBE.i_y == pytest.approx((12.7**4 - 9.5**4) / 12 * 1e-12, rel=1e-12)
    assert HUANG_TUBE.i_z == HUANG_TUBE.i_y
    assert HUANG_TUBE.i_y == pytest.approx(1.4891e-9, rel=1e-4)
    assert HUANG_TUBE.torsion_constant == pytest.approx(
        4 * (11.1**2)**2 * 1.6 / 44.4 * 1e-12, rel=1e-12)
    assert HUANG_TUBE.torsion_constant == pytest.approx(2.188e-9, rel=1e-4)
    assert ALUMINIUM.density * HUANG_TUBE.area == pytest.approx(0.19678, rel=1e-4)


def test_rectangle_properties_and_torsion_constant():
    r = rectangle_section(0.03, 0.05)
    assert r.area == pytest.approx(0.03 * 0.05)
    assert r.i_z == pytest.approx(0.05 * 0.03**3 / 12)  # width along y
    assert r.i_y == pytest.approx(0.03 * 0.05**3 / 12)
    assert (r.max_y, r.max_z) == (0.015, 0.025)
    a = 0.02
    assert rectangle_section(a, a).torsion_constant == pytest.approx(0.140577 * a**4,
                                                                     rel=1e-5)
    # Timoshenko and Goodier table (J = beta a b^3): a/b = 2: 0.229, a/b = 10: 0.312
    assert rectangle_torsion_constant(2.0, 1.0) / 2.0 == pytest.approx(0.229, abs=5e-4)
    assert rectangle_torsion_constant(1.0, 10.0) / 10.0 == pytest.approx(0.312, abs=5e-4)
    # thin strip: a b^3 / 3 (1 - 0.630 b / a)
    assert rectangle_torsion_constant(100.0, 1.0) == pytest.approx(
        100.0 / 3 * (1 - 0.63025 / 100), rel=1e-6)
    # the series summed term by term
    n = np.arange(1, 20001, 2.0)
    direct = 2.0 / 3 * (1 - 192 / np.pi**5 / 2 * np.sum(np.tanh(n * np.pi) / n**5))
    assert rectangle_torsion_constant(2.0, 1.0) == pytest.approx(direct, rel=1e-14)


def test_circle_and_round_tube_properties():
    d = 0.04
    c = circle_section(d)
    assert c.area == pytest.approx(math.pi * d**2 / 4)
    assert c.i_y == c.i_z == pytest.approx(math.pi * d**4 / 64)
    assert c.torsion_constant == pytest.approx(c.polar_moment)
    t = round_tube_section(0.05, 0.004)
    assert t.area == pytest.approx(math.pi / 4 * (0.05**2 - 0.042**2))
    assert t.i_y == pytest.approx(math.pi / 64 * (0.05**4 - 0.042**4))
    assert t.torsion_constant == pytest.approx(2 * t.i_y)
    thin = round_tube_section(1.0, 1e-4)
    r = (1.0 - 1e-4) / 2
    assert thin.torsion_constant == pytest.approx(2 * math.pi * r**3 * 1e-4, rel=1e-7)


def test_thin_rectangular_tube_torsion_tends_to_the_polar_thin_wall_value():
    """Bredt for a thin square tube of mid-line side s: J = s^3 t; its I_y + I_z =
    2 (2 s t s^2 / 4 + 2 s^3 t / 12) = 4 s^3 t / 3 > J."""
    t, side = 1e-5, 0.1
    tube = rectangular_tube_section(side + t, side + t, t)
    assert tube.torsion_constant == pytest.approx(side**3 * t, rel=1e-12)
    assert tube.polar_moment == pytest.approx(4 * side**3 * t / 3, rel=1e-3)


def test_material_from_poisson_ratio_or_shear_modulus():
    m = material(2.0e11, 7800, poisson_ratio=0.25)
    assert m.shear_modulus == pytest.approx(2.0e11 / 2.5)
    assert (m.youngs_modulus, m.density) == (2.0e11, 7800.0)
    assert material(7e10, 2700, shear_modulus=2.6e10).shear_modulus == 2.6e10
    assert material(7e10, 2700, poisson_ratio=np.float64(0.33)).shear_modulus == \
        pytest.approx(7e10 / 2.66)
