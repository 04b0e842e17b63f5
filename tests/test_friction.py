"""Joint friction against closed forms: a block on a slope (sliding to a stop and
sticking, staying stuck, sliding off), breaking away under a ramp of force, a
pendulum whose swings lose F_c times the angle they sweep, and the regularized and
Stribeck laws against scipy's solution of the same one-coordinate equation; the
energy balance of each run closes with the friction's work in W_nc."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from flexmbs.errors import ModelError
from flexmbs.model.description import Model
from flexmbs.model.timefunctions import Constant, ConstantRate
from flexmbs.simulation import simulate

G = 9.81
MASS = 2.0


def _balance(sim):
    """max |T + V - W_nc - (T + V)(0)| over the run (J)."""
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    return np.abs(total - total[0]).max()


def block_on_slope(theta, coulomb, law="stick-slip", v0=0.0, static=None, t_end=1.0,
                   **friction):
    """A block of MASS on a prismatic joint down a slope of angle theta (x along the
    slope, downhill positive)."""
    m = Model("slope", gravity=(0.0, 0.0, -G))
    m.add_rigid_body("block", mass=MASS, com=(0, 0, 0), inertia=(1e-3, 1e-3, 1e-3),
                     inertia_about="com")
    m.add_joint("slide", "prismatic", parent="ground", child="block",
                axis=(np.cos(theta), 0.0, -np.sin(theta)), initial_rate=v0)
    m.add_friction("dry", joint="slide", coulomb=coulomb, static=static, law=law,
                   **friction)
    m.add_sensor("x", "joint_coordinate", joint="slide")
    m.set_solver(method="bdf", t_end=t_end, rtol=1e-9, atol=1e-11)
    m.set_output(step=0.005)
    return m


def test_block_slides_to_a_stop_and_sticks():
    """Kinetic friction above the slope's pull: x = v0 t + a t^2 / 2 with
    a = g (sin theta - mu cos theta) < 0 until v = 0 at t* = -v0 / a, then stuck."""
    theta, mu, v0 = 0.3, 0.5, 1.0
    sim = simulate(block_on_slope(theta, mu * MASS * G * np.cos(theta), v0=v0),
                   progress=False)
    assert sim.success, sim.message
    a = G * (np.sin(theta) - mu * np.cos(theta))
    t_stop = -v0 / a
    x = np.where(sim.t < t_stop, v0 * sim.t + a * sim.t ** 2 / 2,
                 v0 * t_stop + a * t_stop ** 2 / 2)
    assert np.abs(sim.sensors[:, 0] - x).max() < 1e-9
    assert sim.statistics["switch_events"] == 1
    after = sim.t > t_stop
    assert np.all(sim.y[after, 1] == 0.0)  # stuck: the rate held at zero
    assert _balance(sim) < 1e-8 * MASS * v0 ** 2


def test_stick_slip_after_the_stops_and_motors_switches():
    """The block of test_block_slides_to_a_stop_and_sticks with a joint stop it never
    reaches and, on a wheel beside it, a DC motor with an inductance and limits (at
    rest): their switch functions come first, the friction's after them, and the
    state holds the motor's electrical states; the block stops and sticks as alone."""
    theta, mu, v0 = 0.3, 0.5, 1.0
    m = Model("slope", gravity=(0.0, 0.0, -G))
    m.add_rigid_body("block", mass=MASS, com=(0, 0, 0), inertia=(1e-3, 1e-3, 1e-3),
                     inertia_about="com")
    m.add_joint("slide", "prismatic", parent="ground", child="block",
                axis=(np.cos(theta), 0.0, -np.sin(theta)), initial_rate=v0,
                limits=[-1.0, 5.0], limit_stiffness=1e4)
    m.add_friction("dry", joint="slide", coulomb=mu * MASS * G * np.cos(theta),
                   law="stick-slip")
    m.add_sensor("x", "joint_coordinate", joint="slide")
    m.add_rigid_body("wheel", mass=1.0, com=(0, 0, 0), inertia=(0.01, 0.01, 0.01),
                     inertia_about="com")
    m.add_joint("axle", "revolute", parent="ground", child="wheel", axis=(0, 0, 1))
    m.add_actuator("motor", joint="axle", type="dc_motor", voltage=Constant(0.0),
                   resistance=2.0, inductance=1e-3, torque_constant=0.05,
                   max_voltage=10.0, max_current=1.0)
    m.set_solver(method="bdf", t_end=1.0, rtol=1e-9, atol=1e-11)
    m.set_output(step=0.005)
    sim = simulate(m, progress=False)
    assert sim.success, sim.message
    a = G * (np.sin(theta) - mu * np.cos(theta))
    t_stop = -v0 / a
    x = np.where(sim.t < t_stop, v0 * sim.t + a * sim.t ** 2 / 2,
                 v0 * t_stop + a * t_stop ** 2 / 2)
    assert np.abs(sim.sensors[:, 0] - x).max() < 1e-9
    assert sim.statistics["switch_events"] == 1
    assert _balance(sim) < 1e-8 * MASS * v0 ** 2


@pytest.mark.parametrize("static_ratio, slides", [(1.2, False), (0.8, True)])
def test_block_at_rest_holds_below_the_static_level(static_ratio, slides):
    """At rest on a slope whose pull m g sin theta is below the static level the
    block stays exactly where it is; above it, it slides off at once with the
    kinetic level: a = g sin theta - F_c / m."""
    theta = 0.4
    pull = MASS * G * np.sin(theta)
    coulomb = 0.7 * pull
    sim = simulate(block_on_slope(theta, coulomb, static=static_ratio * pull, t_end=0.5),
                   progress=False)
    assert sim.success, sim.message
    if not slides:
        assert np.all(sim.sensors[:, 0] == 0.0)
    else:
        a = G * np.sin(theta) - coulomb / MASS
        assert np.abs(sim.sensors[:, 0] - a * sim.t ** 2 / 2).max() < 1e-9


def test_break_away_under_a_ramp_of_force():
    """A block on level ground pushed by F = k t sticks until F = F_s at t_b = F_s / k,
    then slides: m x'' = k t - F_c, x = (k (t - t_b)^3 / 6 + (k t_b - F_c)
    (t - t_b)^2 / 2) / m."""
    k, f_s, f_c = 4.0, 1.0, 0.6
    m = block_on_slope(0.0, f_c, static=f_s, t_end=0.8)
    m.add_actuator("push", joint="slide", type="torque", torque=ConstantRate(0.0, k))
    sim = simulate(m, progress=False)
    assert sim.success, sim.message
    t_b = f_s / k
    s = np.clip(sim.t - t_b, 0.0, None)
    x = (k * s ** 3 / 6 + (k * t_b - f_c) * s ** 2 / 2) / MASS
    assert np.all(sim.sensors[sim.t < t_b, 0] == 0.0)
    assert np.abs(sim.sensors[:, 0] - x).max() < 1e-9


def _slope_reference(theta, f_law, v0, t):
    """x(t) of m x'' = m g sin theta + f(x') by scipy at tight tolerances."""
    def rhs(_, z):
        return [z[1], G * np.sin(theta) + f_law(z[1]) / MASS]
    return solve_ivp(rhs, (0.0, t[-1]), [0.0, v0], t_eval=t, rtol=1e-12, atol=1e-14,
                     method="LSODA").y[0]


def test_regularized_stribeck_and_viscous_against_the_ode():
    """The regularized law with a Stribeck curve and viscous friction:
    f = -(F_c + (F_s - F_c) exp(-(v/v_s)^2)) tanh(v / v_eps) - c_v v."""
    theta, f_c, f_s, v_s, c_v, eps = 0.2, 3.0, 4.5, 0.2, 0.8, 1e-2
    m = block_on_slope(theta, f_c, law="regularized", v0=0.6, static=f_s, t_end=1.0,
                       stribeck_velocity=v_s, viscous=c_v, regularization=eps)
    sim = simulate(m, progress=False)
    assert sim.success, sim.message

    def law(v):
        return -(f_c + (f_s - f_c) * np.exp(-(v / v_s) ** 2)) * np.tanh(v / eps) - c_v * v

    x = _slope_reference(theta, law, 0.6, sim.t)
    assert np.abs(sim.sensors[:, 0] - x).max() < 1e-7
    assert _balance(sim) < 1e-7


def pendulum(coulomb, static, theta0, t_end):
    """A point mass MASS at 0.5 m below a revolute joint about y, released at
    theta0 (rad) with joint friction."""
    m = Model("pendulum", gravity=(0.0, 0.0, -G))
    m.add_rigid_body("bob", mass=MASS, com=(0.0, 0.0, -0.5), inertia=(1e-6, 1e-6, 1e-6),
                     inertia_about="com")
    m.add_joint("pivot", "revolute", parent="ground", child="bob", axis=(0, 1, 0),
                initial=theta0)
    m.add_friction("pin", joint="pivot", coulomb=coulomb, static=static, law="stick-slip")
    m.add_sensor("angle", "joint_coordinate", joint="pivot")
    m.set_solver(method="bdf", t_end=t_end, rtol=1e-10, atol=1e-12)
    m.set_output(step=0.002)
    return m


def _turning_points(theta0, coulomb, static, mgl):
    """The angles where the pendulum stops: from theta_n the next turning point
    theta_n+1 (other side) has V(theta_n) - V(theta_n+1) = F_c (|theta_n| +
    |theta_n+1|), V = -m g l cos theta; it stays at theta_n when m g l sin |theta_n|
    <= F_s."""
    points = [theta0]
    while mgl * np.sin(abs(points[-1])) > static:
        a = abs(points[-1])

        def lost(b, a=a):
            return mgl * (np.cos(b) - np.cos(a)) - coulomb * (a + b)

        if lost(0.0) <= 0.0:  # it stops before the bottom: on the same side
            b = -brentq(lambda b, a=a: mgl * (np.cos(b) - np.cos(a)) + coulomb * (a - b),
                        0.0, a)
        else:
            b = brentq(lost, 0.0, a)
        points.append(-np.sign(points[-1]) * b)
    return points


def test_pendulum_with_coulomb_friction_stops_where_the_energy_says():
    """Each swing loses F_c times the angle it sweeps, and the pendulum sticks at
    the first turning point whose gravity torque is below F_s: its resting angle
    and its balance against the closed form."""
    mgl = MASS * G * 0.5
    coulomb, static, theta0 = 0.4, 0.5, 0.8
    points = _turning_points(theta0, coulomb, static, mgl)
    sim = simulate(pendulum(coulomb, static, theta0, t_end=8.0), progress=False)
    assert sim.success, sim.message
    assert len(points) >= 4
    assert abs(sim.sensors[-1, 0] - points[-1]) < 1e-7
    assert sim.statistics["switch_events"] >= len(points) - 1
    assert _balance(sim) < 1e-7 * mgl


def test_stick_slip_needs_the_event_solvers():
    m = block_on_slope(0.3, 1.0, v0=1.0)
    m.set_solver(method="rk45")
    with pytest.raises(ModelError, match="bdf"):
        simulate(m, progress=False)
    with pytest.raises(ModelError, match="already has friction"):
        m.add_friction("again", joint="slide", coulomb=2.0)
    with pytest.raises(ModelError, match="static level"):
        block_on_slope(0.3, 2.0, static=1.0)
