"""The fast rigid-tree kernels (flexmbs.dynamics.api) against the slow references of
tests/reference.py (docs/explanation/formulation.md sections 1, 2, 4, 5, 7), and the
references against hand-derived cases and against each other.

Tolerances are relative to max(|expected|, 1) (the random models are unit-sized: lengths
~1 m, masses ~1 kg, rates ~1 /s) and are >= 100 times the error measured between the
two independent reference routes (finite differences of the position map vs. the exact
Newton-Euler recursion) on these models:

* poses: direct composition of ~6 transforms, round-off only (observed 2e-16): 1e-12.
* B, b_t, v: 8th-order central differences, step 1e-2; observed <= 3e-13: 1e-9.
* a_bias: 8th-order second-difference stencil, step 0.15 / rate scale; observed
  <= 2e-11 (round-off ~6.5 eps / h^2 dominates): 1e-8 (the design asks for ~1e-7).
* M*, Q*, inverse dynamics, energies: closed-form algorithms on both sides, round-off
  only (observed <= 2e-11 for Q* assembled from the FD a_bias, 1e-13 otherwise):
  1e-10.
* power balance: energy rate by a 4th-order difference over RK4 motion, step 2.5e-4
  (truncation ~ h^4 E^(5) / 30, observed <= 3e-11 of the largest energy rate; it was
  8e-9 at h = 1e-3, falling as h^4): 1e-8.
"""

import numpy as np
import pytest
from reference import (
    DRIVER_LAWS,
    _random_time_function,
    newton_euler_inverse_dynamics,
    newton_euler_joint_forces,
    newton_euler_mass_matrix,
    random_tree_model,
    reference_accelerations,
    reference_bias_acceleration,
    reference_body_motion,
    reference_body_velocities_fd,
    reference_bt,
    reference_coordinate_names,
    reference_energies,
    reference_generalized_forces,
    reference_initial_state,
    reference_mass_matrix,
    reference_poses,
    reference_power,
    reference_velocity_transformation,
    rotation_about_axis,
    skew,
    time_function_derivatives,
)
from scipy.linalg import expm

from flexmbs import compile_model
from flexmbs.kinematics.timefunctions import evaluate_time_function
from flexmbs.model.description import JOINT_TYPES, Model
from flexmbs.model.timefunctions import Harmonic, compile_time_functions
from flexmbs.model.topology import build_topology

TOL_POSE = 1e-12
TOL_FD_FIRST = 1e-9
TOL_FD_SECOND = 1e-8
TOL_EXACT = 1e-10
TOL_POWER = 1e-8

# (seed, joint types (body k gets types[k % len]), number of drivers, number of loads).
# Each group (without / with drivers) covers every joint type.
CASES = [
    (1, ("revolute", "prismatic", "cylindrical", "universal", "spherical"), 0, 0),
    (2, ("planar", "free", "fixed", "general", "revolute", "spherical"), 0, 3),
    (3, ("general", "universal", "free", "prismatic"), 0, 2),
    (4, ("spherical", "general", "cylindrical", "planar", "free", "universal"), 0, 1),
    (5, ("revolute", "prismatic", "cylindrical", "universal", "spherical"), 3, 2),
    (6, ("planar", "free", "fixed", "general", "revolute", "spherical"), 4, 3),
    (7, ("general", "universal", "free", "prismatic", "cylindrical"), 6, 0),
    (8, ("free", "spherical", "revolute", "general", "planar", "fixed"), 2, 2),
]
# every joint type alone, on a chain of two such joints (easier to diagnose); the fixed
# joint carries a revolute one (a model needs a coordinate)
SINGLE_TYPES = [(jt, jt) if jt != "fixed" else ("fixed", "revolute") for jt in JOINT_TYPES]
SINGLE_TYPE_CASES = [(100 + k, types, 0, 1) for k, types in enumerate(SINGLE_TYPES)]
SINGLE_TYPE_DRIVEN = [(200 + k, types, 1, 0) for k, types in enumerate(SINGLE_TYPES)]
ALL_CASES = CASES + SINGLE_TYPE_CASES + SINGLE_TYPE_DRIVEN


def _case_id(case):
    seed, types, nd, nf = case
    return f"s{seed}-{'-'.join(t[:4] for t in types)}-d{nd}-f{nf}"


def make_case(case):
    """(model, q, u, t) of a case: a random tree, its random initial state, a time."""
    seed, types, n_drivers, n_forces = case
    rng = np.random.default_rng(seed)
    model = random_tree_model(rng, len(types), types, n_drivers=n_drivers,
                              n_forces=n_forces)
    q, u = reference_initial_state(model)
    return model, q, u, float(rng.uniform(0.2, 1.8))


def assert_close(actual, expected, rtol, what):
    """max |actual - expected| <= rtol * max(|expected|, 1)."""
    actual = np.asarray(actual, dtype=float)
    expected = np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    scale = max(np.abs(expected).max(initial=0.0), 1.0)
    err = np.abs(actual - expected).max(initial=0.0)
    assert err <= rtol * scale, (
        f"{what}: max error {err:.3e} > {rtol:.0e} * {scale:.3e}; at index "
        f"{np.unravel_index(np.argmax(np.abs(actual - expected)), actual.shape)}")


def exact_body_velocities(model, q, u, t):
    """(v, a) (6N,) from the Newton-Euler forward pass at du/dt = 0: [dr/dt; w body]."""
    motion = reference_body_motion(model, q, u, np.zeros_like(q), t)
    names = build_topology(model).body_names
    v = np.concatenate([np.r_[motion[b]["v"], motion[b]["A"].T @ motion[b]["omega"]]
                        for b in names])
    a = np.concatenate([np.r_[motion[b]["a"], motion[b]["A"].T @ motion[b]["alpha"]]
                        for b in names])
    return v, a


# ===================================================== the references on their own
def test_rodrigues_matches_matrix_exponential():
    rng = np.random.default_rng(0)
    for _ in range(10):
        axis = rng.normal(size=3)
        angle = rng.uniform(-4.0, 4.0)
        expected = expm(skew(axis / np.linalg.norm(axis)) * angle)
        assert_close(rotation_about_axis(axis, angle), expected, 1e-13, "Rodrigues")


def test_reference_time_functions():
    """Closed-form f, f', f'' against central differences and against the numba
    evaluator that the kernels use."""
    rng = np.random.default_rng(1)
    fns = [_random_time_function(rng, law) for law in DRIVER_LAWS for _ in range(3)]
    kind, ptr, data = compile_time_functions(fns)
    out = np.zeros(3)
    h = 1e-5
    for k, fn in enumerate(fns):
        for t in rng.uniform(-2.0, 5.0, size=20):
            f = np.array(time_function_derivatives(fn, t))
            evaluate_time_function(kind, ptr, data, k, t, np.nan, out)
            assert_close(out, f, 1e-12, f"{fn} at t = {t}")
            near_knot = hasattr(fn, "time") and np.min(np.abs(np.array(fn.time) - t)) < 2 * h
            if not near_knot:
                fp = np.array(time_function_derivatives(fn, t + h))
                fm = np.array(time_function_derivatives(fn, t - h))
                # central difference error ~ h^2 f''' / 6 + eps |f| / h ~ 1e-9
                assert_close((fp[:2] - fm[:2]) / (2 * h), f[1:], 1e-7, f"{fn} rates")


def _double_pendulum(l1=0.7, l2=0.4):
    m = Model("double pendulum", gravity=(0.0, 0.0, -9.81))
    m.add_rigid_body("a", mass=1.0, com=(l1 / 2, 0, 0), inertia=(1e-3, 0.04, 0.04),
                     inertia_about="com")
    m.add_rigid_body("b", mass=0.5, com=(l2 / 2, 0, 0), inertia=(1e-3, 0.01, 0.01),
                     inertia_about="com")
    m.add_marker("a", "tip", position=(l1, 0, 0))
    m.add_joint("j1", "revolute", "ground", "a", axis=(0, 1, 0))
    m.add_joint("j2", "revolute", "a", "b", parent_marker="tip", axis=(0, 1, 0))
    return m


def test_reference_double_pendulum_kinematics():
    """Planar double pendulum about y: A1 = Ry(th1), A2 = Ry(th1 + th2),
    r2 = A1 (l1, 0, 0); B and a_bias by hand."""
    l1 = 0.7
    m = _double_pendulum(l1)
    th = np.array([0.3, -0.8])
    thd = np.array([1.3, -0.7])
    c1, s1 = np.cos(th[0]), np.sin(th[0])

    def ry(a):
        return np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])

    poses = reference_poses(m, th)
    assert_close(poses["a"][1], ry(th[0]), 1e-15, "A1")
    assert_close(poses["b"][1], ry(th.sum()), 1e-15, "A2")
    assert_close(poses["b"][0], ry(th[0]) @ [l1, 0, 0], 1e-15, "r2")
    b = np.zeros((12, 2))
    b[4, 0] = 1.0
    b[6:9, 0] = l1 * np.array([-s1, 0.0, -c1])
    b[10, :] = 1.0
    assert_close(reference_velocity_transformation(m, th), b, 1e-13, "B")
    a = np.zeros(12)
    a[6:9] = l1 * np.array([-c1, 0.0, s1]) * thd[0] ** 2
    assert_close(reference_bias_acceleration(m, th, thd), a, 1e-11, "a_bias")
    assert np.all(reference_bt(m, th) == 0.0)


def test_reference_single_pendulum_dynamics():
    """(J + m l^2) th'' + m g l sin th + k (th - th0) + c th' = tau, and its energies."""
    mass, l, inertia, g, k, c, rest = 1.3, 0.6, 0.02, 9.81, 2.0, 0.3, 0.1
    m = Model("pendulum", gravity=(0.0, 0.0, -g))
    m.add_rigid_body("rod", mass=mass, com=(0, 0, -l), inertia=(inertia, inertia, 0.01),
                     inertia_about="com")
    m.add_joint("j", "revolute", "ground", "rod", axis=(0, 1, 0), stiffness=k,
                damping=c, rest=rest)
    j_o = inertia + mass * l * l
    for th, thd, thdd in [(0.4, 1.1, -0.3), (-2.0, 0.0, 0.7), (1.0, -2.0, 0.0)]:
        tau = j_o * thdd + mass * g * l * np.sin(th) + k * (th - rest) + c * thd
        got = newton_euler_inverse_dynamics(m, [th], [thd], [thdd])
        assert_close(got, [tau], 1e-14, "Newton-Euler")
        assembled = (reference_mass_matrix(m, [th]) @ [thdd]
                     - reference_generalized_forces(m, [th], [thd]))
        assert_close(assembled, [tau], 1e-12, "B^T M B assembly")
        energies = reference_energies(m, [th], [thd])
        assert_close(energies, [0.5 * j_o * thd ** 2, -mass * g * l * np.cos(th),
                                0.5 * k * (th - rest) ** 2], 1e-14, "energies")


def test_reference_driven_pendulum():
    """A driven revolute joint: the actuator torque of the prescribed motion."""
    mass, l, inertia, g = 1.3, 0.6, 0.02, 9.81
    m = Model("driven", gravity=(0.0, 0.0, -g))
    m.add_rigid_body("rod", mass=mass, com=(0, 0, -l), inertia=(inertia, inertia, 0.01),
                     inertia_about="com")
    m.add_rigid_body("disk", mass=0.1, inertia=(1e-3, 2e-3, 1e-3), inertia_about="com")
    m.add_joint("j", "revolute", "ground", "rod", axis=(0, 1, 0))
    m.add_joint("j2", "revolute", "rod", "disk", axis=(0, 1, 0), stiffness=0.5)
    law = Harmonic(amplitude=0.5, omega=2.0, phase=0.3, offset=0.1)
    m.add_driver("d", "j", law)
    t = 0.37
    f, fd, fdd = time_function_derivatives(law, t)
    forces = newton_euler_joint_forces(m, [0.0], [0.0], [0.0], t)
    # the disk turns with the rod (th2'' = 0): it needs 2e-3 f'' through j2, which
    # also carries the spring torque 0.5 * 0
    assert_close(forces["j2"], [2e-3 * fdd], 1e-14, "disk joint")
    expected = (inertia + mass * l * l + 2e-3) * fdd + mass * g * l * np.sin(f)
    assert_close(forces["j"], [expected], 1e-14, "driven joint")
    v, _ = exact_body_velocities(m, np.zeros(1), np.zeros(1), t)
    assert_close(reference_bt(m, np.zeros(1), t), v, 1e-12, "b_t")
    assert_close(v[4], fd, 1e-14, "rod angular velocity")


def test_random_cases_cover_every_joint_type():
    for with_drivers in (False, True):
        types = {jt for seed, jts, nd, nf in CASES if (nd > 0) == with_drivers
                 for jt in jts}
        assert types == set(JOINT_TYPES)


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
def test_reference_routes_agree(case):
    """Finite differences of the position map against the exact Newton-Euler forward
    pass, and the B^T M B assembly (FD B, FD a_bias) against Newton-Euler."""
    model, q, u, t = make_case(case)
    cm = compile_model(model)
    assert cm.coordinate_names == reference_coordinate_names(model)
    assert np.array_equal(cm.q0, q) and np.array_equal(cm.u0, u)

    motion = reference_body_motion(model, q, u, np.zeros_like(q), t)
    poses = reference_poses(model, q, t)
    for name, (r, a) in poses.items():
        assert_close(r, motion[name]["r"], 1e-14, f"r of {name}")
        assert_close(a, motion[name]["A"], 1e-14, f"A of {name}")
        assert_close(a.T @ a, np.eye(3), 1e-14, f"A^T A of {name}")

    v, a_bias = exact_body_velocities(model, q, u, t)
    v0, _ = exact_body_velocities(model, q, np.zeros_like(q), t)
    b = reference_velocity_transformation(model, q, t)
    b_exact = np.column_stack(
        [exact_body_velocities(model, q, e, t)[0] - v0 for e in np.eye(q.size)]
    ).reshape(v.size, q.size)
    assert_close(b, b_exact, 1e-12, "B (FD) vs forward pass")
    assert_close(reference_bt(model, q, t), v0, 1e-12, "b_t (FD) vs forward pass")
    assert_close(reference_body_velocities_fd(model, q, u, t), v, 1e-12, "v (FD)")
    assert_close(reference_bias_acceleration(model, q, u, t), a_bias, 1e-10,
                 "a_bias (FD) vs forward pass")

    rng = np.random.default_rng(case[0])
    udot = rng.normal(size=q.size)
    m_ne = newton_euler_mass_matrix(model, q, t)
    q_ne = -newton_euler_inverse_dynamics(model, q, u, np.zeros_like(q), t)
    assert_close(reference_mass_matrix(model, q, t), m_ne, 1e-12, "M* assembled vs NE")
    assert_close(reference_generalized_forces(model, q, u, t), q_ne, 1e-9,
                 "Q* assembled vs NE")
    assert_close(m_ne @ udot - q_ne, newton_euler_inverse_dynamics(model, q, u, udot, t),
                 1e-12, "NE linear in udot")


def _energy_rate_along_motion(accelerations, energies, q, u, t, h=2.5e-4, substeps=2):
    """d/dt of each energy term (kinetic, gravity, spring) at t, by the 4th-order
    central difference over states at t +- h, t +- 2h reached by RK4 with the given
    accelerations(q, u, t)."""
    def advance(q, u, t, dt):
        for _ in range(substeps):
            k = dt / substeps
            a1 = accelerations(q, u, t)
            q2, u2 = q + 0.5 * k * u, u + 0.5 * k * a1
            a2 = accelerations(q2, u2, t + 0.5 * k)
            q3, u3 = q + 0.5 * k * u2, u + 0.5 * k * a2
            a3 = accelerations(q3, u3, t + 0.5 * k)
            q4, u4 = q + k * u3, u + k * a3
            a4 = accelerations(q4, u4, t + k)
            q = q + k / 6 * (u + 2 * u2 + 2 * u3 + u4)
            u = u + k / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
            t = t + k
        return q, u, t

    e = {}
    for n in (-2, -1, 1, 2):
        qs, us, ts = q, u, t
        for _ in range(abs(n)):
            qs, us, ts = advance(qs, us, ts, np.sign(n) * h)
        e[n] = np.array(energies(qs, us, ts))
    return (e[-2] - 8 * e[-1] + 8 * e[1] - e[2]) / (12 * h)


def _assert_power_balance(model, q, u, t, rates):
    damping, load = reference_power(model, q, u, t)
    scale = max(np.abs(rates).sum(), abs(damping) + abs(load), 1.0)
    err = abs(rates.sum() - damping - load)
    assert err <= TOL_POWER * scale, (
        f"dE/dt = {rates.sum():.12g} (kinetic {rates[0]:.6g}, gravity {rates[1]:.6g}, "
        f"spring {rates[2]:.6g}) but damping + loads = {damping + load:.12g}")


def test_reference_power_balance():
    """The reference accelerations conserve energy up to damping and load power."""
    model, q, u, t = make_case((2, ("planar", "free", "general"), 0, 3))
    rates = _energy_rate_along_motion(
        lambda q, u, t: reference_accelerations(model, q, u, t),
        lambda q, u, t: reference_energies(model, q, u, t), q, u, t)
    _assert_power_balance(model, q, u, t, rates)


# ======================================================= the kernels vs the references
@pytest.fixture(scope="module")
def api():
    from flexmbs.dynamics import api as fast

    return fast


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
def test_body_poses(api, case):
    model, q, u, t = make_case(case)
    cm = compile_model(model)
    r, a = api.body_poses(cm, q, t)
    expected = reference_poses(model, q, t)
    for i, name in enumerate(cm.topology.body_names):
        assert_close(r[i], expected[name][0], TOL_POSE, f"r of {name}")
        assert_close(a[i], expected[name][1], TOL_POSE, f"A of {name}")


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
def test_velocity_transformation(api, case):
    model, q, u, t = make_case(case)
    cm = compile_model(model)
    assert_close(api.velocity_transformation(cm, q, t),
                 reference_velocity_transformation(model, q, t), TOL_FD_FIRST, "B")


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
def test_prescribed_velocity(api, case):
    model, q, u, t = make_case(case)
    cm = compile_model(model)
    b_t = api.prescribed_velocity(cm, q, t)
    assert_close(b_t, reference_bt(model, q, t), TOL_FD_FIRST, "b_t")
    if not model.drivers:
        assert np.all(b_t == 0.0)


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
def test_body_velocities(api, case):
    model, q, u, t = make_case(case)
    cm = compile_model(model)
    v = api.body_velocities(cm, q, u, t)
    assert_close(v, reference_body_velocities_fd(model, q, u, t), TOL_FD_FIRST, "v")
    assert_close(v, api.velocity_transformation(cm, q, t) @ u
                 + api.prescribed_velocity(cm, q, t), TOL_EXACT, "v = B u + b_t")


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
def test_bias_acceleration(api, case):
    model, q, u, t = make_case(case)
    cm = compile_model(model)
    assert_close(api.bias_acceleration(cm, q, u, t),
                 reference_bias_acceleration(model, q, u, t), TOL_FD_SECOND, "a_bias")


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
def test_mass_matrix_symmetric_positive_definite(api, case):
    model, q, u, t = make_case(case)
    cm = compile_model(model)
    m = api.mass_matrix(cm, q, t)
    assert m.shape == (q.size, q.size)
    assert_close(m, m.T, 1e-13, "M* - M*^T")
    assert np.linalg.eigvalsh(0.5 * (m + m.T)).min() > 1e-6 * np.abs(m).max()
    np.linalg.cholesky(m)


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
def test_inverse_dynamics_matches_newton_euler(api, case):
    """M* udot - Q* = tau (Newton-Euler), for u = 0 and random udot (M* alone), udot =
    0 (Q* alone) and both random."""
    model, q, u, t = make_case(case)
    cm = compile_model(model)
    rng = np.random.default_rng(case[0] + 1000)
    udot = rng.normal(size=q.size)
    m = api.mass_matrix(cm, q, t)
    q_star = api.generalized_forces(cm, q, u, t)
    assert_close(m, newton_euler_mass_matrix(model, q, t), TOL_EXACT, "M* vs NE")
    assert_close(q_star, -newton_euler_inverse_dynamics(model, q, u, np.zeros_like(q), t),
                 TOL_EXACT, "Q* vs NE at udot = 0")
    assert_close(m @ udot - q_star, newton_euler_inverse_dynamics(model, q, u, udot, t),
                 TOL_EXACT, "M* udot - Q* vs NE")


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
def test_accelerations_solve_the_equations_of_motion(api, case):
    model, q, u, t = make_case(case)
    cm = compile_model(model)
    udot = api.accelerations(cm, q, u, t)
    assert_close(udot, reference_accelerations(model, q, u, t), TOL_EXACT * 100,
                 "du/dt vs NE solve")
    tau = newton_euler_inverse_dynamics(model, q, u, udot, t)
    scale = np.abs(newton_euler_inverse_dynamics(model, q, u, np.zeros_like(q), t)).max()
    assert np.abs(tau).max() <= TOL_EXACT * max(scale, 1.0)


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
def test_energies(api, case):
    model, q, u, t = make_case(case)
    cm = compile_model(model)
    got = api.energies(cm, q, u, t)
    expected = reference_energies(model, q, u, t)
    for key, value in zip(("kinetic", "gravity", "spring"), expected):
        assert_close(got[key], value, TOL_EXACT, f"{key} energy")


@pytest.mark.parametrize("case", [c for c in ALL_CASES if c[2] == 0], ids=_case_id)
def test_power_balance(api, case):
    """d/dt (T + V_g + V_spring) = -sum c xd^2 + load power along the motion that the
    kernels' accelerations define (no drivers: they would do work)."""
    model, q, u, t = make_case(case)
    cm = compile_model(model)

    def energies(q, u, t):
        e = api.energies(cm, q, u, t)
        return e["kinetic"], e["gravity"], e["spring"]

    rates = _energy_rate_along_motion(lambda q, u, t: api.accelerations(cm, q, u, t),
                                      energies, q, u, t)
    _assert_power_balance(model, q, u, t, rates)


# ============================================== dB/dt and the drivers' generalized forces
def _fd_rate_of_b(api, cm, q, u, t, h=1e-4):
    """d/ds B(q + s u, t + s) at s = 0, 4th-order central difference (truncation
    ~h^4 |B^(5)| ~ 1e-16, round-off ~eps |B| / h ~ 1e-12; a small h keeps the stencil off
    the knots of the drivers' tables, where B is only C2)."""
    def b(s):
        return api.velocity_transformation(cm, q + s * u, t + s)
    return (-b(2 * h) + 8 * b(h) - 8 * b(-h) + b(-2 * h)) / (12 * h)


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
def test_velocity_transformation_rate(api, case):
    """dB/dt (the recursion differentiated column by column) against a finite difference
    of B along the motion; and (dB/dt) u = a_bias when no coordinate is prescribed."""
    model, q, u, t = make_case(case)
    cm = compile_model(model)
    bdot = api.velocity_transformation_rate_matrix(cm, q, u, t)
    assert_close(bdot, _fd_rate_of_b(api, cm, q, u, t), 1e-8, "dB/dt")
    if case[2] == 0:
        assert_close(bdot @ u, api.bias_acceleration(cm, q, u, t), TOL_EXACT,
                     "(dB/dt) u vs a_bias")


@pytest.mark.parametrize("case", [c for c in ALL_CASES if c[2] > 0], ids=_case_id)
def test_driver_forces_match_newton_euler(api, case):
    """The generalized force each driver applies (used for the drivers' work in the
    energy balance) equals Newton-Euler's joint force at the driven coordinate."""
    model, q, u, t = make_case(case)
    cm = compile_model(model)
    udot = np.random.default_rng(case[0]).normal(size=len(q))
    tau = api.driver_forces(cm, q, u, udot, t)
    ne = newton_euler_joint_forces(model, q, u, udot, t)
    start = cm.arrays.joint_coord_start
    expected = np.zeros(cm.ncoords)
    for j, name in enumerate(cm.topology.joint_names):
        expected[start[j]:start[j + 1]] = ne[name]
    driven = cm.arrays.coord_qindex < 0
    if not driven.any():
        pytest.skip("the random model kept its only coordinate free")
    assert_close(tau[driven], expected[driven], TOL_EXACT, "driver forces")


def test_cholesky_solve_in_place_matches_dense_solve():
    from flexmbs.numerics.linalg import cholesky_solve_in_place

    rng = np.random.default_rng(3)
    for n in (1, 2, 7):
        g = rng.normal(size=(n, n))
        a = g @ g.T + n * np.eye(n)
        b = rng.normal(size=n)
        x = np.zeros(n)
        work = a.copy()
        assert cholesky_solve_in_place(work, b, x)
        np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-12)
        np.testing.assert_allclose(np.tril(work) @ np.tril(work).T, a, rtol=1e-12)
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])  # indefinite
    assert not cholesky_solve_in_place(bad, np.ones(2), np.zeros(2))
