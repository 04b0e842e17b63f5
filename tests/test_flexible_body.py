"""Kernels of one flexible body in the floating frame (docs/explanation/formulation.md section
2) against slow references:

* brute-force quadrature of int rho L^T L dV, -int rho L^T A (~w ~w u + 2 ~w S dqf) dV
  and int rho L^T g dV over points of the actual beam volume (plus a tip point mass);
* the gradient of the gravity potential V_g = -g^T (m r + A St);
* the rigid-body kernels and closed form for nf = 0;
* the Lagrange (Boltzmann-Hamel) identity that ties Qv to derivatives of M;
* conservation of momentum, angular momentum and energy of a free body integrated with
  scipy's DOP853.
"""

import math

import numpy as np
import pytest
import scipy.integrate
from scipy.spatial.transform import Rotation

from flexmbs.dynamics.flexible_body import (
    add_block_product,
    block_quadratic_form,
    damping_force,
    elastic_force,
    flexible_gravity_force,
    flexible_mass_matrix,
    flexible_mass_times,
    flexible_moments,
    flexible_point_force,
    flexible_quadratic_velocity,
    flexible_workspace,
    strain_energy,
)
from flexmbs.dynamics.rigid_body import apply_body_mass, body_inertial_and_gravity_force
from flexmbs.elements import (
    Invariants,
    beam_body_invariants,
    element_frame,
    element_transformation,
    material,
    node_selections,
    rectangle_section,
    shape_matrix,
)
from flexmbs.model.invariant_tables import body_kernel_blocks

ROUND_OFF = 1e-12
GAUSS_POINTS_REFERENCE = 5  # along each element axis; the integrands reach degree 6
MOMENTUM_TOLERANCE = 1e-9
FREE_BODY_SPAN = 0.3  # s
FREE_BODY_TOLERANCE = 1e-12  # rtol = atol of DOP853

# an oblique polyline of 3 elements, clamped at node 0, I_y != I_z, a tip point mass;
# free coordinates listed in a shuffled order to exercise the selection
NODES = np.array([[0.0, 0.0, 0.0], [0.41, 0.12, -0.07], [0.78, 0.31, 0.02],
                  [1.12, 0.37, 0.21]])
CONNECTIVITY = [(0, 1), (1, 2), (2, 3)]
REFERENCE = np.array([0.2, -0.3, 1.0])
SECTION = rectangle_section(0.02, 0.05)
ALUMINIUM = material(0.69e11, 2770.0, shear_modulus=0.26e11)
TIP_MASS = 0.7
FREE = np.random.default_rng(7).permutation(np.arange(6, 6 * len(NODES)))
NODE_MASSES = np.array([0.0, 0.0, 0.0, TIP_MASS])


def skew(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def relative_error(a, b):
    """max |a - b| / max |b| (the error relative to the largest entry)."""
    return np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(b).max()


@pytest.fixture(scope="module")
def body():
    return beam_body_invariants(NODES, CONNECTIVITY, REFERENCE, SECTION, ALUMINIUM, FREE,
                                node_masses=NODE_MASSES)


def material_points(nodes, connectivity, reference, section, mat, free, node_masses):
    """(weight, u0, S) of quadrature points of the beam volume, body frame: the section
    rule (+-sqrt(2 I_z/A), 0), (0, +-sqrt(2 I_y/A)) with weights A/4, times Gauss points
    along each axis; S (3 x nf) = C S_elem T, its columns placed in the free coordinates.
    Point masses are points of weight m_k with S = the node's translation rows."""
    nf = len(free)
    to_free = -np.ones(6 * len(nodes), dtype=int)
    to_free[free] = np.arange(nf)
    a, rho = section.area, mat.density
    ry, rz = math.sqrt(2 * section.i_z / a), math.sqrt(2 * section.i_y / a)
    xg, wg = np.polynomial.legendre.leggauss(GAUSS_POINTS_REFERENCE)
    points = []
    for n1, n2 in connectivity:
        x1, x2 = nodes[n1], nodes[n2]
        c = element_frame(x1, x2, reference)
        l = np.linalg.norm(x2 - x1)
        t = element_transformation(c)
        dofs = list(range(6 * n1, 6 * n1 + 6)) + list(range(6 * n2, 6 * n2 + 6))
        for xq, wq in zip(xg, wg):
            xi = 0.5 * (xq + 1.0)
            for y, z in [(ry, 0.0), (-ry, 0.0), (0.0, rz), (0.0, -rz)]:
                weight = rho * l * 0.5 * wq * a / 4
                u0 = x1 + c @ np.array([xi * l, y, z])
                s_elem = c @ shape_matrix(xi, y / l, z / l, l) @ t
                s = np.zeros((3, nf))
                for k in range(12):
                    if to_free[dofs[k]] >= 0:
                        s[:, to_free[dofs[k]]] += s_elem[:, k]
                points.append((weight, u0, s))
    for k, mk in enumerate(node_masses):
        if mk > 0:
            s = np.zeros((3, nf))
            for r in range(3):
                if to_free[6 * k + r] >= 0:
                    s[r, to_free[6 * k + r]] = 1.0
            points.append((mk, nodes[k].copy(), s))
    return points


def brute_force(points, rot, qf, w, dqf, g):
    """(M, Qv, Q_gravity) by summing rho L^T L, -rho L^T A (~w ~w u + 2 ~w S dqf) and
    rho L^T g over the points, L = [I3, -A ~u, A S]."""
    nf = len(qf)
    mm = np.zeros((6 + nf, 6 + nf))
    qv = np.zeros(6 + nf)
    qg = np.zeros(6 + nf)
    wt = skew(w)
    for weight, u0, s in points:
        u = u0 + s @ qf
        ell = np.hstack([np.eye(3), -rot @ skew(u), rot @ s])
        mm += weight * ell.T @ ell
        qv -= weight * ell.T @ (rot @ (wt @ wt @ u + 2 * wt @ s @ dqf))
        qg += weight * ell.T @ g
    return mm, qv, qg


def random_state(rng, nf, free):
    """A rotation, qf (3 cm translations, 0.1 rad rotations: realistic, not tiny),
    w (rad/s) and dqf."""
    rot = np.ascontiguousarray(Rotation.from_rotvec(rng.normal(size=3)).as_matrix())
    is_rotation = (np.asarray(free) % 6) >= 3
    qf = rng.normal(size=nf) * np.where(is_rotation, 0.1, 0.03)
    dqf = rng.normal(size=nf) * np.where(is_rotation, 2.0, 0.5)
    w = rng.normal(size=3) * 2.0
    return rot, qf, w, dqf


def moments(inv, qf):
    """The kernels' moments of inv at qf (flexible_moments) and its block sets."""
    blocks = body_kernel_blocks(inv)
    work = flexible_workspace(inv.nf)
    flexible_moments(inv.first_moment, inv.sbar, inv.th0, inv.n, blocks["ss"], qf, work)
    return work, blocks


def mass_matrix(inv, rot, qf):
    out = np.empty((6 + inv.nf, 6 + inv.nf))
    work, blocks = moments(inv, qf)
    flexible_mass_matrix(inv.mass, inv.sbar, blocks["m"], rot, work, out)
    return out


def quadratic_velocity(inv, rot, qf, w, dqf):
    out = np.empty(6 + inv.nf)
    work, blocks = moments(inv, qf)
    flexible_quadratic_velocity(inv.sbar, blocks["ss"], rot, w, dqf, work, out)
    return out


def gravity_force(inv, rot, qf, g):
    out = np.empty(6 + inv.nf)
    work, _ = moments(inv, qf)
    flexible_gravity_force(inv.mass, inv.sbar, rot, g, work, out)
    return out


# (a) brute force over the volume


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mass_matrix_qv_and_gravity_equal_brute_force_quadrature(body, seed):
    rng = np.random.default_rng(seed)
    rot, qf, w, dqf = random_state(rng, body.nf, FREE)
    g = np.array([0.3, -1.1, -9.81])
    points = material_points(NODES, CONNECTIVITY, REFERENCE, SECTION, ALUMINIUM, FREE,
                             NODE_MASSES)
    mm_ref, qv_ref, qg_ref = brute_force(points, rot, qf, w, dqf, g)

    mm = mass_matrix(body, rot, qf)
    qv = quadratic_velocity(body, rot, qf, w, dqf)
    qg = gravity_force(body, rot, qf, g)
    assert relative_error(mm, mm_ref) < ROUND_OFF
    assert relative_error(qv, qv_ref) < ROUND_OFF
    assert relative_error(qg, qg_ref) < ROUND_OFF
    # block by block, each relative to its own largest entry (the r, w, f scales differ)
    blocks = [slice(0, 3), slice(3, 6), slice(6, 6 + body.nf)]
    for bi in blocks:
        assert relative_error(qv[bi], qv_ref[bi]) < ROUND_OFF
        assert relative_error(qg[bi], qg_ref[bi]) < ROUND_OFF
        for bj in blocks:
            assert relative_error(mm[bi, bj], mm_ref[bi, bj]) < ROUND_OFF
    # the qf-dependent terms are exercised: the undeformed results differ by far more
    zero = np.zeros(body.nf)
    assert relative_error(mass_matrix(body, rot, zero), mm_ref) > 1e-3
    assert relative_error(quadratic_velocity(body, rot, zero, w, dqf), qv_ref) > 1e-3


def test_point_force_is_l_transpose_f_and_adds_into_out(body):
    rng = np.random.default_rng(3)
    rot, qf, _, _ = random_state(rng, body.nf, FREE)
    s_tip, _ = node_selections(3, FREE, len(NODES))
    u = NODES[3] + s_tip @ qf
    force = np.array([3.0, -4.0, 12.0])
    ell = np.hstack([np.eye(3), -rot @ skew(u), rot @ s_tip])
    start = rng.normal(size=6 + body.nf)
    out = start.copy()
    flexible_point_force(rot, u, s_tip, force, out)
    assert relative_error(out - start, ell.T @ force) < ROUND_OFF
    # gravity on the tip mass alone is the point force m_tip g at the tip
    tip = Invariants(mass=TIP_MASS, first_moment=TIP_MASS * NODES[3],
                     sbar=TIP_MASS * s_tip, th0=np.zeros((3, 3)),
                     n=np.zeros((3, 3, body.nf)), ss=np.zeros((3, 3, body.nf, body.nf)),
                     stiffness=np.zeros((body.nf, body.nf)))
    g = np.array([0.0, 0.0, -9.81])
    pf = np.zeros(6 + body.nf)
    flexible_point_force(rot, u, s_tip, TIP_MASS * g, pf)
    assert relative_error(gravity_force(tip, rot, qf, g), pf) < ROUND_OFF


def test_gravity_is_minus_the_gradient_of_its_potential(body):
    """V_g = -g^T (m r + A St) (docs/explanation/formulation.md section 7); the generalized
    force on [r, theta (A = A0 exp(~theta)), qf] is -dV_g/dq. V_g is affine in A, so
    dV_g/dtheta_k = -g^T A ~e_k St exactly, and affine in qf (exact central
    differences)."""
    rng = np.random.default_rng(10)
    rot, qf, _, _ = random_state(rng, body.nf, FREE)
    g = np.array([1.2, -9.81, 0.4])

    def potential(rot, qf, r=np.zeros(3)):  # noqa: B008 (read only)
        return -g @ (body.mass * r + rot @ (body.first_moment + body.sbar @ qf))

    def from_rot(rot):
        return potential(rot, qf) - potential(np.zeros((3, 3)), qf)

    step = 0.1
    gradient = np.r_[
        [(potential(rot, qf, step * e) - potential(rot, qf, -step * e)) / (2 * step)
         for e in np.eye(3)],
        [from_rot(rot @ skew(e)) for e in np.eye(3)],
        [(potential(rot, qf + step * e) - potential(rot, qf - step * e)) / (2 * step)
         for e in np.eye(body.nf)]]
    qg = gravity_force(body, rot, qf, g)
    for bi in [slice(0, 3), slice(3, 6), slice(6, 6 + body.nf)]:
        assert relative_error(qg[bi], -gradient[bi]) < ROUND_OFF


# (b) symmetry, definiteness, the rigid body


def test_mass_matrix_is_symmetric_positive_definite(body):
    rng = np.random.default_rng(4)
    rot, qf, _, _ = random_state(rng, body.nf, FREE)
    mm = mass_matrix(body, rot, qf)
    assert np.array_equal(mm, mm.T)
    assert np.linalg.eigvalsh(mm).min() > 0.0
    np.linalg.cholesky(mm)


def rigid_invariants(rng):
    """nf = 0: m, St = m c, Th0 = tr(I_O)/2 I3 - I_O for a random inertia I_O about the
    frame origin (docs/explanation/formulation.md section 2)."""
    mass = 2.5
    st = mass * rng.normal(size=3) * 0.3
    q = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
    i_o = q @ np.diag([0.4, 0.7, 0.9]) @ q.T
    inv = Invariants(mass=mass, first_moment=st, sbar=np.zeros((3, 0)),
                     th0=np.trace(i_o) / 2 * np.eye(3) - i_o, n=np.zeros((3, 3, 0)),
                     ss=np.zeros((3, 3, 0, 0)), stiffness=np.zeros((0, 0)))
    return inv, st, i_o


def test_rigid_body_reduces_to_the_closed_form_and_the_rigid_kernels():
    rng = np.random.default_rng(5)
    inv, st, i_o = rigid_invariants(rng)
    rot = np.ascontiguousarray(Rotation.from_rotvec(rng.normal(size=3)).as_matrix())
    w = rng.normal(size=3)
    g = np.array([0.0, -9.81, 0.5])
    qf = np.zeros(0)
    mm = mass_matrix(inv, rot, qf)
    closed = np.block([[inv.mass * np.eye(3), -rot @ skew(st)], [skew(st) @ rot.T, i_o]])
    assert relative_error(mm, closed) < ROUND_OFF
    qv = quadratic_velocity(inv, rot, qf, w, qf)
    assert relative_error(qv, np.r_[-rot @ skew(w) @ skew(w) @ st, -skew(w) @ i_o @ w]) \
        < ROUND_OFF

    # the rigid-body kernels take the body's mass, St and I_O
    st, i_o = st.copy(), i_o.copy()
    cols = np.zeros((6, 6))
    for c in range(6):
        e = np.eye(6)[c]
        apply_body_mass(inv.mass, st, i_o, rot, e[:3], e[3:], cols, c)
    assert relative_error(mm, cols) < ROUND_OFF
    rigid_force = np.zeros(6)
    body_inertial_and_gravity_force(inv.mass, st, i_o, g, rot, w, rigid_force)
    assert relative_error(qv + gravity_force(inv, rot, qf, g), rigid_force) < ROUND_OFF


# (c) Qv from the Lagrange equations in quasi-velocities


def test_qv_satisfies_the_lagrange_identity_with_derivatives_of_m(body):
    """Lagrange's equations in the coordinates (r, theta, qf), A = A0 exp(~theta) at
    theta = 0, with the quasi-velocities v = [dr/dt, w, dqf/dt] (w = Tm(theta) dtheta/dt,
    Tm = I3 - ~theta/2 + ..., so d Tm/dt = -~w/2 at theta = 0), T = v^T M v / 2, give
    for the force-free body M dv/dt = Qv with

        Qv = -(dM/dt) v + [0;  v^T dM_k v / 2 - ~w (M v)_w;  v^T dM_j v / 2]

    dM_k = dM/dtheta_k (k = 0, 1, 2), dM_j = dM/dqf_j, dM/dt = sum w_k dM_k +
    sum dqf_j dM_j (Boltzmann-Hamel). M is affine in A (its blocks A ~St, A Sbar), so
    dM_k = M(A ~e_k) - M(0) exactly; M is quadratic in qf, so a central difference is
    exact. The identity holds for every v: it is checked to round-off. Its scalar
    product with v is energy conservation, v^T Qv = -v^T (dM/dt) v / 2."""
    rng = np.random.default_rng(6)
    nf = body.nf
    rot, qf, w, dqf = random_state(rng, nf, FREE)
    v = np.r_[rng.normal(size=3), w, dqf]
    mm = mass_matrix(body, rot, qf)
    m_zero = mass_matrix(body, np.zeros((3, 3)), qf)
    dm_theta = [mass_matrix(body, np.ascontiguousarray(rot @ skew(e)), qf) - m_zero
                for e in np.eye(3)]
    step = 0.05
    dm_qf = [(mass_matrix(body, rot, qf + step * e) - mass_matrix(body, rot, qf - step * e))
             / (2 * step) for e in np.eye(nf)]
    m_dot = sum(wk * d for wk, d in zip(w, dm_theta)) + sum(
        dk * d for dk, d in zip(dqf, dm_qf))
    mv = mm @ v
    expected = -m_dot @ v
    expected[3:6] += np.array([v @ d @ v / 2 for d in dm_theta]) - skew(w) @ mv[3:6]
    expected[6:] += np.array([v @ d @ v / 2 for d in dm_qf])

    qv = quadratic_velocity(body, rot, qf, w, dqf)
    assert relative_error(qv, expected) < 1e-11
    for bi in [slice(0, 3), slice(3, 6), slice(6, 6 + nf)]:
        assert relative_error(qv[bi], expected[bi]) < 1e-11
    assert abs(v @ qv + v @ m_dot @ v / 2) < 1e-11 * (np.abs(v) @ np.abs(qv))


# (d) a free body: momentum, angular momentum and energy


def quaternion_matrix(q):
    """Rotation matrix of the unit quaternion q = (q0, q1, q2, q3), scalar first."""
    q0, q1, q2, q3 = q / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (q2 * q2 + q3 * q3), 2 * (q1 * q2 - q0 * q3), 2 * (q1 * q3 + q0 * q2)],
        [2 * (q1 * q2 + q0 * q3), 1 - 2 * (q1 * q1 + q3 * q3), 2 * (q2 * q3 - q0 * q1)],
        [2 * (q1 * q3 - q0 * q2), 2 * (q2 * q3 + q0 * q1), 1 - 2 * (q1 * q1 + q2 * q2)]])


def quaternion_rate(q, w):
    """dq/dt = q (x) (0, w) / 2, w the angular velocity in body axes."""
    q0, q1, q2, q3 = q
    return 0.5 * np.array([-q1 * w[0] - q2 * w[1] - q3 * w[2],
                           q0 * w[0] + q2 * w[2] - q3 * w[1],
                           q0 * w[1] + q3 * w[0] - q1 * w[2],
                           q0 * w[2] + q1 * w[1] - q2 * w[0]])


class FreeBody:
    """A free flexible body without gravity: M dv/dt = Qv + [0; 0; -K qf], with dr/dt,
    dq/dt = q (x) (0, w) / 2 (unit quaternion q, A = A(q)) and dqf/dt. State
    y = [r (3), q (4), qf (nf), v (6 + nf)]."""

    def __init__(self, inv):
        self.inv = inv
        self.nf = inv.nf
        self.work = flexible_workspace(inv.nf)
        self.blocks = body_kernel_blocks(inv)
        self.mm = np.empty((6 + inv.nf, 6 + inv.nf))
        self.qv = np.empty(6 + inv.nf)
        self.fe = np.empty(inv.nf)

    def _mass_matrix(self, y):
        inv, nf = self.inv, self.nf
        rot = quaternion_matrix(y[3:7])
        flexible_moments(inv.first_moment, inv.sbar, inv.th0, inv.n, self.blocks["ss"],
                         y[7:7 + nf], self.work)
        flexible_mass_matrix(inv.mass, inv.sbar, self.blocks["m"], rot, self.work,
                             self.mm)
        return rot, self.mm

    def rhs(self, t, y):
        inv, nf = self.inv, self.nf
        rot, mm = self._mass_matrix(y)
        qf, v = y[7:7 + nf], y[7 + nf:]
        flexible_quadratic_velocity(inv.sbar, self.blocks["ss"], rot, v[3:6], v[6:],
                                    self.work, self.qv)
        elastic_force(inv.stiffness, qf, self.fe)
        self.qv[6:] += self.fe
        return np.r_[v[:3], quaternion_rate(y[3:7], v[3:6]), v[6:],
                     np.linalg.solve(mm, self.qv)]

    def momenta_and_energy(self, y):
        """Linear momentum (M v)_r = int rho dp/dt (N s, global), angular momentum
        about the origin r x (M v)_r + A (M v)_w = int rho p x dp/dt (N m s, global),
        T + U (J)."""
        rot, mm = self._mass_matrix(y)
        qf, v = y[7:7 + self.nf], y[7 + self.nf:]
        mv = mm @ v
        return (mv[:3].copy(), np.cross(y[:3], mv[:3]) + rot @ mv[3:6],
                v @ mv / 2 + strain_energy(self.inv.stiffness, qf))


def free_body_motion(t_end=FREE_BODY_SPAN):
    """A 2-element beam of a soft material (elastic frequencies 7 to 470 rad/s), spin
    1.1 rad/s, integrated with DOP853 at tight tolerances: (model, initial state,
    solution)."""
    soft = material(5e6, 1000.0, poisson_ratio=0.3)
    free = np.arange(6, 18)
    inv = beam_body_invariants(NODES[:3], [(0, 1), (1, 2)], REFERENCE,
                               rectangle_section(0.08, 0.1), soft, free,
                               node_masses=[0.0, 0.0, 0.4])
    model = FreeBody(inv)
    rng = np.random.default_rng(8)
    q_start = rng.normal(size=4)
    is_rotation = (free % 6) >= 3
    nf = inv.nf
    y0 = np.r_[rng.normal(size=3), q_start / np.linalg.norm(q_start),
               rng.normal(size=nf) * np.where(is_rotation, 0.01, 0.003),
               rng.normal(size=3) * 0.3, np.array([0.6, -0.5, 0.7]),
               rng.normal(size=nf) * np.where(is_rotation, 0.2, 0.05)]
    sol = scipy.integrate.solve_ivp(model.rhs, (0.0, t_end), y0, method="DOP853",
                                    rtol=FREE_BODY_TOLERANCE, atol=FREE_BODY_TOLERANCE)
    return model, y0, sol


def test_free_body_conserves_momentum_angular_momentum_and_energy():
    model, y0, sol = free_body_motion()
    assert sol.success
    nf = model.nf
    p0, h0, e0 = model.momenta_and_energy(y0)
    p1, h1, e1 = model.momenta_and_energy(sol.y[:, -1])
    assert np.abs(p1 - p0).max() < MOMENTUM_TOLERANCE * np.abs(p0).max()
    assert np.abs(h1 - h0).max() < MOMENTUM_TOLERANCE * np.abs(h0).max()
    assert abs(e1 - e0) < MOMENTUM_TOLERANCE * e0
    # the motion is not trivial: the body turned and the beam deformed
    assert np.abs(sol.y[7:7 + nf, -1] - y0[7:7 + nf]).max() > 1e-3
    turned = quaternion_matrix(sol.y[3:7, -1]) - quaternion_matrix(y0[3:7])
    assert np.abs(turned).max() > 0.1


# (e) elastic and damping forces, strain energy


def test_elastic_force_damping_and_strain_energy(body):
    rng = np.random.default_rng(9)
    nf = body.nf
    k_ff = body.stiffness
    m_ff = body.mass_matrix()
    qf = rng.normal(size=nf) * 1e-3
    dqf = rng.normal(size=nf)
    fe = np.empty(nf)
    elastic_force(k_ff, qf, fe)
    assert relative_error(fe, -k_ff @ qf) < ROUND_OFF
    energy = strain_energy(k_ff, qf)
    assert energy > 0.0
    assert abs(energy + 0.5 * qf @ fe) < ROUND_OFF * energy
    fd = np.empty(nf)
    alpha, beta = 1e-4, 0.3
    damping_force(k_ff, m_ff, alpha, beta, dqf, fd)
    assert relative_error(fd, -(alpha * k_ff + beta * m_ff) @ dqf) < ROUND_OFF
    for a, b in [(alpha, beta), (alpha, 0.0), (0.0, beta)]:
        damping_force(k_ff, m_ff, a, b, dqf, fd)
        assert dqf @ fd < 0.0
    damping_force(k_ff, m_ff, 0.0, 0.0, dqf, fd)
    assert not fd.any()


def test_workspace_shape_and_bad_size():
    assert flexible_workspace(5).shape == (8, 3, 3)
    assert flexible_workspace(0).shape == (3, 3, 3)
    with pytest.raises(ValueError, match="nf"):
        flexible_workspace(-1)


# (f) element by element against the dense invariants


def test_moments_are_the_dense_contractions(body):
    """P[c, b] = N[c, b] + qf^T SS[c, b], Th and St from the blocks equal the dense
    contractions of the body's SS (summed from the blocks, the slow reference)."""
    rng = np.random.default_rng(11)
    _, qf, _, _ = random_state(rng, body.nf, FREE)
    work, _ = moments(body, qf)
    p = body.n + np.einsum("k,cbkj->cbj", qf, body.ss)
    th = body.th0 + np.einsum("baj,j->ab", body.n, qf) + np.einsum("abj,j->ab", p, qf)
    assert relative_error(work[:body.nf].transpose(1, 2, 0), p) < ROUND_OFF
    assert relative_error(work[body.nf], th) < ROUND_OFF
    assert relative_error(work[body.nf + 2, 0], body.first_moment + body.sbar @ qf) \
        < ROUND_OFF


@pytest.mark.parametrize("elastic", [True, False])
def test_mass_times_is_the_dense_product(body, elastic):
    rng = np.random.default_rng(12)
    rot, qf, _, _ = random_state(rng, body.nf, FREE)
    acc = rng.normal(size=6 + body.nf)
    work, blocks = moments(body, qf)
    out = np.empty(6 + body.nf)
    flexible_mass_times(body.mass, body.sbar, blocks["m"], rot, work, acc, elastic, out)
    taken = acc if elastic else np.r_[acc[:6], np.zeros(body.nf)]
    assert relative_error(out, mass_matrix(body, rot, qf) @ taken) < ROUND_OFF


def test_block_products_are_the_dense_ones(body):
    rng = np.random.default_rng(13)
    x = rng.normal(size=body.nf)
    blocks = body_kernel_blocks(body)
    out = np.ones(body.nf)
    add_block_product(blocks["k"], -2.0, x, out)
    assert relative_error(out, 1.0 - 2.0 * body.stiffness @ x) < ROUND_OFF
    assert block_quadratic_form(blocks["m"], x) == pytest.approx(
        x @ body.mass_matrix() @ x, rel=ROUND_OFF)
