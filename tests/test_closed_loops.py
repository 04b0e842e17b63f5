"""Closed loops (docs/explanation/formulation.md section 5): cut joints, their constraint
equations and Jacobian, the stabilised index-2 (GGL) integration with the bdf driver,
redundant constraints, consistent initial values, reactions; the four-bar
(docs/explanation/benchmark-models.md FB) and
Bricard's linkage (BR)."""

from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from test_flexible_tree import random_flexible_tree, random_state

from flexmbs import ModelError, compile_model, load_model, simulate
from flexmbs.dynamics import api
from flexmbs.dynamics.constrained import make_consistent
from flexmbs.formats.serialize import model_to_dict
from flexmbs.model import Model
from flexmbs.model.description import JOINT_TYPES
from flexmbs.model.library import (
    CRANK_REFERENCE_Q1,
    CRANK_START,
    bricard,
    crank_midpoint_deflection,
    crank_rod_field,
    four_bar,
    four_bar_flexible,
    simeon_crank,
    slider_crank,
)

GRAVITY = 9.81
MODELS = Path(__file__).resolve().parents[1] / "data" / "models"


def _total(sim):
    e = sim.energy
    return e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]


# ------------------------------------------------------------ the constraint rows
CUT_TYPES = [t for t in JOINT_TYPES if t != "free"]


@pytest.mark.parametrize("cut_type", CUT_TYPES)
def test_constraint_jacobian_is_the_derivative_of_phi(cut_type):
    """A random tree of beams and rigid bodies closed by a cut joint of each type
    between markers on two bodies (on free beam nodes where the bodies are beams):
    Phi_q against central differences of Phi, and dPhi/dt = Phi_q u (no drivers)."""
    rng = np.random.default_rng(7 + CUT_TYPES.index(cut_type))
    model = random_flexible_tree(rng, ("revolute", "spherical", "universal", "cylindrical"))
    a, b = "b0", "b3"   # b0 is a beam, b3 a rigid body
    ma = model.add_marker(a, "cut_a", node=1, euler_xyz=(0.3, -0.2, 0.5))
    mb = model.add_marker(b, "cut_b", position=(0.1, -0.2, 0.3), euler_xyz=(-0.4, 0.1, 0.2))
    kw = {"axis": (0.3, 0.5, 0.8)} if cut_type in ("revolute", "prismatic", "cylindrical",
                                                   "planar") else {}
    if cut_type == "general":
        kw = {"translation_axes": [[1.0, 0.0, 0.0]], "rotation_axes": [[0.0, 1.0, 0.0]]}
    model.add_joint("loop", cut_type, parent=a, child=b, parent_marker=ma.name,
                    child_marker=mb.name, cut=True, **kw)
    cm = compile_model(model)
    q, u = random_state(rng, cm, model)
    phi, phid, jac, _ = api.constraint_values(cm, q, u)
    assert len(phi) == 6 - model.joints["loop"].ndof
    h = 1e-6
    fd = np.zeros_like(jac)
    for k in range(cm.nq):
        e = np.zeros(cm.nq)
        e[k] = h
        fd[:, k] = (api.constraint_values(cm, q + e)[0]
                    - api.constraint_values(cm, q - e)[0]) / (2 * h)
    scale = max(np.abs(jac).max(), 1.0)
    assert np.abs(jac - fd).max() <= 1e-8 * scale   # central differences: h^2 ~ 1e-12
    np.testing.assert_allclose(phid, jac @ u, atol=1e-12 * scale * np.abs(u).max())


# ------------------------------------------------------------------- the four-bar
def _four_bar_sensors():
    model = four_bar()
    model.add_sensor("residual", "constraint_residual", joint="coupler_rocker")
    model.add_sensor("reaction", "joint_reaction", joint="coupler_rocker")
    return model


def test_four_bar_redundant_constraints_are_found():
    """The planar loop of spatial revolute joints: of the cut joint's 5 equations the
    out-of-plane position and the two axis-parallel ones hold by themselves (rank 2),
    are reported and switched off; one degree of freedom remains (3 - 2)."""
    cm = compile_model(four_bar())
    report = make_consistent(cm)
    assert (report.rows, report.rank) == (5, 2)
    assert len(report.redundant) == 3
    assert cm.nconstraints == 2
    assert report.position_change == 0.0 and report.position_residual < 1e-15


def test_four_bar_stays_closed_and_balances_its_energy():
    """10 s at rtol 1e-10: the position and velocity residuals of the cut joint stay at
    round-off (the GGL form enforces both every step; measured 2e-16 and 3e-15), and
    the energy (gravity, the spring) is conserved to 1e-7 of its largest term
    (measured 2.3e-8)."""
    sim = simulate(_four_bar_sensors(), None, t_end=10.0, rtol=1e-10, atol=1e-12,
                   output_step=0.02)
    assert sim.status == "finished"
    residual = np.abs(sim.sensors[:, 5:15])
    assert residual[:, :5].max() < 1e-14
    assert residual[:, 5:].max() < 1e-13
    e = _total(sim)
    assert np.abs(e - e[0]).max() < 1e-7 * np.abs(sim.energy[:, :4]).max()


def _four_bar_angle_equation(t_end, theta0):
    """The four-bar's one-degree-of-freedom equation, derived by hand: the coupler of
    the parallelogram translates on a circle of radius L = 0.5 m, so
    T = 1/2 J theta'^2 with J = 2 (I_c + m_a (L/2)^2) + m_b L^2, and
    V = -g (2 m_a L/2 + m_b L) cos(theta) + 1/2 k (l_s - l_0)^2, the spring from the
    coupler's middle (0.2 - L sin, -L cos) to (0.7, -0.5): J theta'' = -dV/dtheta."""
    ma, ia, mb, k, length = 7.707, 0.16176083, 3.946, 1e4, 0.5
    j = 2 * (ia + ma * (length / 2) ** 2) + mb * length ** 2
    g_moment = GRAVITY * (2 * ma * length / 2 + mb * length)

    def spring(theta):
        dx = 0.5 + length * np.sin(theta)
        dz = -0.5 + length * np.cos(theta)
        ls = np.hypot(dx, dz)
        dls = (dx * length * np.cos(theta) - dz * length * np.sin(theta)) / ls
        return k * (ls - 0.5) * dls

    def rhs(t, y):
        return [y[1], (-g_moment * np.sin(y[0]) - spring(y[0])) / j]

    sol = solve_ivp(rhs, (0.0, t_end), [theta0, 0.0], method="DOP853", rtol=1e-12,
                    atol=1e-14, dense_output=True)
    sol.rhs = rhs
    return sol


def test_four_bar_follows_its_hand_derived_equation():
    """The crank angle of the full model (3 joint coordinates, a cut joint, the GGL
    form) follows the hand-derived one-degree-of-freedom equation over 2 s to the
    integration tolerance."""
    sim = simulate(four_bar(), None, t_end=2.0, rtol=1e-10, atol=1e-12, output_step=0.01)
    exact = _four_bar_angle_equation(2.0, 0.05)
    theta = exact.sol(sim.t)[0]
    assert np.abs(sim.sensors[:, 0] - theta).max() < 1e-8
    assert np.abs(sim.sensors[:, 1] - theta).max() < 1e-8   # the rocker turns alike


def test_ida_integrates_the_same_index_2_system():
    """SUNDIALS IDA on the same GGL residual (its multipliers given a lax atol, since IDA
    keeps them in its tests): the crank angle follows the hand-derived equation to the
    tolerance (measured 1.6e-9 at rtol 1e-10) and the energy is conserved (3.6e-9 of
    the largest term)."""
    sim = simulate(four_bar(), None, t_end=2.0, rtol=1e-10, atol=1e-12, output_step=0.01,
                   method="ida")
    assert sim.status == "finished", sim.message
    theta = _four_bar_angle_equation(2.0, 0.05).sol(sim.t)[0]
    assert np.abs(sim.sensors[:, 0] - theta).max() < 1e-8
    e = _total(sim)
    assert np.abs(e - e[0]).max() < 1e-7 * np.abs(sim.energy[:, :4]).max()


def test_cut_joint_reaction_holds_the_coupler():
    """The reaction of the cut joint on the rocker, from the multipliers, balances the
    rocker's motion: its moment about the rocker's pivot plus gravity's plus the
    inertia's is zero (the rocker's own equation of motion, I_O theta'' =
    M_reaction + M_gravity)."""
    sim = simulate(_four_bar_sensors(), None, t_end=0.3, rtol=1e-10, atol=1e-12,
                   output_step=0.01)
    exact = _four_bar_angle_equation(0.3, 0.05)
    theta = exact.sol(sim.t)[0]
    ma, ia, length = 7.707, 0.16176083, 0.5
    i_o = ia + ma * (length / 2) ** 2
    accel = np.array([exact.rhs(t, y)[1] for t, y in zip(sim.t, exact.sol(sim.t).T)])
    force = sim.sensors[:, 15:18]          # on the rocker at its tip, global axes
    tip = np.column_stack([-length * np.sin(theta), np.zeros_like(theta),
                           -length * np.cos(theta)])   # relative to the pivot
    moment_y = tip[:, 2] * force[:, 0] - tip[:, 0] * force[:, 2]
    gravity_y = -ma * GRAVITY * (length / 2) * np.sin(theta)
    np.testing.assert_allclose(moment_y + gravity_y, i_o * accel,
                               atol=1e-6 * np.abs(i_o * accel).max())
    assert np.abs(sim.sensors[:, 18:21]).max() < 1e-8 * np.abs(force).max()


def test_pendulum_held_by_a_cut_joint_has_the_analytic_reaction():
    """A rod on a free joint (6 coordinates) held at its end by a cut revolute joint is
    a compound pendulum: the joint's reaction is m a_c - m g, a_c the acceleration of
    the centre of mass from theta, theta' and theta'' = -(m g c / I_O) sin(theta);
    no reaction torque (the rod's principal axes)."""
    mass, c, i_c = 1.2, 0.4, 0.05
    m = Model("held rod", gravity=(0.0, 0.0, -GRAVITY))
    m.add_rigid_body("rod", mass=mass, com=(0.0, 0.0, -c), inertia=(i_c, i_c, 1e-4),
                     inertia_about="com")
    m.add_joint("float", "free", parent="ground", child="rod",
                initial=[0.0, 0.0, 0.0, 0.0, 0.6, 0.0])
    m.add_joint("pivot", "revolute", parent="ground", child="rod", axis=(0, 1, 0),
                cut=True)
    m.add_sensor("theta", "joint_coordinate", joint="float", coordinate=4)
    m.add_sensor("rate", "joint_rate", joint="float", coordinate=4)
    m.add_sensor("reaction", "joint_reaction", joint="pivot")
    sim = simulate(m, None, t_end=1.0, rtol=1e-10, atol=1e-12, output_step=0.01)
    assert sim.status == "finished"
    th, w = sim.sensors[:, 0], sim.sensors[:, 1]
    i_o = i_c + mass * c ** 2
    acc = -(mass * GRAVITY * c / i_o) * np.sin(th)
    a_c = np.column_stack([-c * (np.cos(th) * acc - np.sin(th) * w ** 2), 0 * th,
                           c * (np.sin(th) * acc + np.cos(th) * w ** 2)])
    expected = mass * a_c + [0.0, 0.0, mass * GRAVITY]
    np.testing.assert_allclose(sim.sensors[:, 2:5], expected, atol=1e-7 * mass * GRAVITY)
    assert np.abs(sim.sensors[:, 5:8]).max() < 1e-7 * mass * GRAVITY * c


# -------------------------------------------------------------- Bricard's linkage
def test_bricard_is_overconstrained_with_one_degree_of_freedom():
    """BR in the triangular configuration: the cut joint's 5 equations have rank 4, so
    the 5 joint coordinates keep one degree of freedom (Führer and Wallrapp 1984: 30 equations of
    rank 29 in its absolute coordinates)."""
    cm = compile_model(bricard())
    report = make_consistent(cm)
    assert (report.rows, report.rank) == (5, 4)
    assert cm.nq - report.rank == 1


def test_bricard_conserves_energy_and_stays_closed():
    """Released at rest under gravity, 2 s at rtol 1e-10: the linkage folds (its joints
    turn by 2 rad), so the constraint rows chosen at the start become dependent among
    themselves and others are chosen on the way (restarts); the energy is conserved to
    1e-8 of the largest term (measured 2e-9), the position residuals stay at 1e-11 and
    the velocity residuals at 1e-9 (measured 1.2e-9: the Newton tolerance on speeds
    of about 1 rad/s at rtol 1e-10; the curved loop's constraints are not linear in a
    step; at rtol 1e-12 they fall to 4e-14 and 4e-12)."""
    model = bricard()
    model.add_sensor("residual", "constraint_residual", joint="hinge6")
    sim = simulate(model, None, t_end=2.0, rtol=1e-10, atol=1e-12, output_step=0.01)
    assert sim.status == "finished"
    assert sim.statistics["restarts"] >= 1
    assert np.abs(sim.y[:, 0]).max() > 2.0
    e = _total(sim)
    assert np.abs(e - e[0]).max() < 1e-8 * np.abs(sim.energy[:, :4]).max()
    assert np.abs(sim.sensors[:, 4:9]).max() < 1e-11
    assert np.abs(sim.sensors[:, 9:14]).max() < 2e-9


def test_slider_crank_with_a_flexible_rod():
    """SC: the crank driven at 30 rad/s, the rod a beam of 4 elements (alpha 1e-5 damps
    its ringing), 0.2 s at rtol 1e-7, atol 1e-9: past 0.1218 s, where without bdf's
    lowest index-2 order (INDEX2_MIN_ORDER) the run fell to order 1 and crawled (61 720
    steps for 4.6 ms); here 3 642 steps (measured; 9 152 with the damped rod's elastic
    speeds in the error test). The cut joint stays closed (measured 8.9e-12 m and
    8.4e-10 m/s), the energy balances with the driver's work in W_nc (measured 4.7e-8
    of the largest term), and the slider leaves the rigid slider-crank's
    x = r cos(theta) + sqrt(l^2 - r^2 sin(theta)^2) by about the rod's deflection
    (measured 4e-6 m against a deflection of 1.1e-5 m)."""
    model = slider_crank(t_end=0.2)
    model.bodies["rod"].alpha = 1e-5
    model.add_sensor("residual", "constraint_residual", joint="rod_slider")
    sim = simulate(model, None, t_end=0.2, rtol=1e-7, atol=1e-9, output_step=0.001)
    assert sim.status == "finished", sim.message
    assert sim.statistics["nsteps"] < 20000
    assert np.abs(sim.sensors[:, 5:10]).max() < 1e-10
    assert np.abs(sim.sensors[:, 10:15]).max() < 1e-8
    e = _total(sim)
    assert np.abs(e - e[0]).max() < 1e-7 * np.abs(sim.energy[:, :5]).max()
    theta = sim.sensors[:, 4]
    rigid = 0.15 * np.cos(theta) + np.sqrt(0.3 ** 2 - (0.15 * np.sin(theta)) ** 2)
    deviation = np.abs(sim.sensors[:, 0] - rigid).max()
    deflection = np.abs(sim.sensors[:, 1:4]).max()
    assert 1e-3 * deflection < deviation < 2 * deflection


# -------------------------------------------------------------- Simeon's crank
CRANK_AMPLITUDE = 1.65e-3  # m: the test set's midpoint deflection, its largest over 0.1 s


def test_crank_rod_field_is_the_test_sets_field():
    """The nodal field of the test set's four coordinates (crank_rod_field), read back
    as the midpoint's deflection from the chord (crank_midpoint_deflection), is q1:
    sin(2 pi xi) vanishes at the middle, and the clamped frame's turn s0 is undone by
    half the far end's deflection. The axial coordinates are the nodal u at the
    middle and the end, the lateral ones leave both pins on the chord."""
    rng = np.random.default_rng(3)
    for elements in (2, 4, 8):
        q = rng.standard_normal(4) * 1e-3
        field, s0 = crank_rod_field(q, elements)
        mid, end = field[elements // 2 - 1], field[-1]
        got = crank_midpoint_deflection(np.array([mid[0], 0.0, mid[1]]),
                                        np.array([end[0], 0.0, end[1]]))
        assert abs(got[0] - q[0]) <= 1e-15
        assert (mid[0], end[0]) == pytest.approx((q[2], q[3]), abs=1e-18)
        assert end[1] == pytest.approx(s0 * 0.3, abs=1e-15)   # w = -(0 - s0 L)
        assert s0 == pytest.approx(np.pi * (q[0] + 2 * q[1]) / 0.3, rel=1e-15)


def test_simeon_crank_reproduces_the_test_sets_midpoint_deflection():
    """CRANK (the Bari test set's problem `crank`): the rod in 4 elements, linear as the
    test set's, from its initial values, 0.1 s under galpha at rtol 1e-4 (the crank
    turns 2.4 times). The start is consistent (the loop closes at the given slider
    position); the midpoint deflection from the chord at 0.1 s is the test set's q1
    to within 1 % of the deflection's amplitude (measured 0.47 %; the converged
    8-element rod, with the rotary inertia and the axial mass of steel, 0.6 %)."""
    model = simeon_crank(elements=4)
    cm = compile_model(model)
    report = make_consistent(cm)
    assert report.rows == 5
    # closed to the test set's 9 digits of x3 (measured 2e-10 m)
    assert abs(cm.q0[cm.coordinate_names.index("guide")] - CRANK_START["x3"]) < 1e-9
    sim = simulate(model, None, method="galpha", rtol=1e-4, atol=1e-6,
                   output_step=1e-3)
    assert sim.status == "finished", sim.message
    q1 = crank_midpoint_deflection(sim.sensors[:, 0:3], sim.sensors[:, 3:6])
    assert abs(q1[-1] - CRANK_REFERENCE_Q1) < 0.01 * CRANK_AMPLITUDE
    assert 0.9 * CRANK_AMPLITUDE < np.abs(q1).max() < 1.3 * CRANK_AMPLITUDE


# ------------------------------------------------------------------ model files
def _assert_same(a, b, where=""):
    """Nested model dicts equal, numbers to 1e-15 (the files round sqrt(3)/2)."""
    if isinstance(a, dict):
        assert set(a) == set(b), where
        for k in a:
            _assert_same(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, (list, tuple)) and any(isinstance(x, (list, tuple, str)) for x in a):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{where}[{k}]")
    elif isinstance(a, (list, tuple)) and a:
        np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=0,
                                   atol=1e-15, err_msg=where)
    else:
        assert a == b, where


@pytest.mark.parametrize("name, builder", [("four_bar", four_bar), ("bricard", bricard),
                                           ("slider_crank_flexible", slider_crank),
                                           ("four_bar_flexible", four_bar_flexible)])
def test_model_files_are_the_builders(name, builder):
    _assert_same(model_to_dict(load_model(MODELS / f"{name}.toml")), model_to_dict(builder()))


# ------------------------------------------------------------------ input checks
def test_closed_loops_need_a_dae_solver():
    with pytest.raises(ModelError, match='expected the solver "bdf" or "ida"'):
        simulate(four_bar(), None, t_end=0.1, method="scipy-radau")


def test_loops_that_cannot_close_are_refused():
    """A rocker of 2 m: longer than the other three links together, the cut joint's
    markers can never meet."""
    model = four_bar()
    model.bodies["rocker"].markers["tip"].position[2] = -2.0
    with pytest.raises(ModelError, match="cannot be made to close the loops"):
        simulate(model, None, t_end=0.1)
