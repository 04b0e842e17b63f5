"""Motors and PD controllers on joints: analytic equilibrium and step response, torque
limit, reflected inertia, the energy balance with actuator work, and input checks."""

import numpy as np
import pytest
from scipy.optimize import brentq

from flexmbs import ModelError, compile_model, simulate
from flexmbs.dynamics import api
from flexmbs.formats.toml_reader import loads_model
from flexmbs.model import Constant, Harmonic, Model, Steps, Trajectory

MASS, HALF = 1.0, 0.5                 # kg, m: the rod's centre of mass on its x axis
I_COM = (1e-4, 0.02, 0.02)            # kg m^2 about the centre of mass
GEAR, ROTOR, RESIST = 10.0, 1e-4, 1e-3  # n, J_r (kg m^2), b_m (N m s/rad)
KP, KD = 50.0, 5.0


def _arm(axis, gravity, **actuator):
    m = Model("arm", gravity=gravity)
    m.add_rigid_body("rod", mass=MASS, com=(HALF, 0, 0), inertia=I_COM,
                     inertia_about="com")
    m.add_joint("j1", "revolute", parent="ground", child="rod", axis=axis)
    m.add_actuator("m1", "j1", **actuator)
    m.add_sensor("theta", "joint_coordinate", joint="j1")
    m.add_sensor("tau", "actuator_torque", actuator="m1")
    m.add_sensor("work", "actuator_work", actuator="m1")
    return m


def _total(sim):
    e = sim.energy
    return e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]


def test_pd_settles_at_the_gravity_equilibrium():
    """Rod along x on a y-axis joint: gravity's torque is m g c cos(theta), so the
    controller settles where kp (theta_ref - theta) + m g c cos(theta) = 0."""
    ref = -0.3
    m = _arm((0, 1, 0), (0, 0, -9.81), kp=KP, kd=KD, setpoint=Constant(ref),
             gear_ratio=GEAR, rotor_inertia=ROTOR, motor_damping=RESIST)
    sim = simulate(m, None, t_end=6.0, rtol=1e-10, atol=1e-12, output_step=0.1)
    assert sim.status == "finished"
    theta = brentq(lambda th: KP * (ref - th) + MASS * 9.81 * HALF * np.cos(th), -1, 1)
    assert sim.sensors[-1, 0] == pytest.approx(theta, abs=1e-8)
    # the motor holds the gravity torque: tau = -m g c cos(theta)
    assert sim.sensors[-1, 1] == pytest.approx(-MASS * 9.81 * HALF * np.cos(theta),
                                               abs=1e-6)


def test_step_response_is_the_second_order_one():
    """No gravity: J x'' + (kd + n^2 b_m) x' + kp x = kp x_ref with the reflected rotor
    inertia in J = I_O + n^2 J_r; the closed-form underdamped response."""
    ref = 0.4
    m = _arm((0, 0, 1), (0, 0, 0), kp=KP, kd=KD, setpoint=Constant(ref),
             gear_ratio=GEAR, rotor_inertia=ROTOR, motor_damping=RESIST)
    sim = simulate(m, None, t_end=2.0, rtol=1e-11, atol=1e-13, output_step=0.01)
    inertia = I_COM[2] + MASS * HALF ** 2 + GEAR ** 2 * ROTOR
    damping = KD + GEAR ** 2 * RESIST
    wn = np.sqrt(KP / inertia)
    zeta = damping / (2.0 * np.sqrt(KP * inertia))
    assert zeta < 1.0
    wd = wn * np.sqrt(1.0 - zeta ** 2)
    t = sim.t
    exact = ref * (1.0 - np.exp(-zeta * wn * t) * (np.cos(wd * t)
                                                    + zeta * wn / wd * np.sin(wd * t)))
    assert np.abs(sim.sensors[:, 0] - exact).max() < 1e-8
    # the actuator is the only non-conservative force: its work is W_nc, and it is
    # the kinetic energy of rod and rotor
    np.testing.assert_allclose(sim.sensors[:, 2], sim.energy[:, 4], atol=1e-12)
    np.testing.assert_allclose(sim.sensors[:, 2], sim.energy[:, 0], atol=1e-9)


def test_torque_limit_and_actuator_work():
    """An open-loop motor torque above the limit gives n max_torque on the joint: from
    rest, theta = n tau_max t^2 / (2 J), and the actuator's work equals the kinetic
    energy of rod and rotor."""
    m = _arm((0, 0, 1), (0, 0, 0), type="torque", torque=Constant(10.0), max_torque=0.5,
             gear_ratio=2.0, rotor_inertia=ROTOR)
    sim = simulate(m, None, t_end=1.0, rtol=1e-11, atol=1e-13, output_step=0.1)
    inertia = I_COM[2] + MASS * HALF ** 2 + 4.0 * ROTOR
    np.testing.assert_allclose(sim.sensors[:, 0], 2.0 * 0.5 * sim.t ** 2 / (2 * inertia),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sim.sensors[:, 1], 1.0)
    np.testing.assert_allclose(sim.sensors[:, 2], sim.energy[:, 0], rtol=1e-8, atol=1e-12)


def test_reflected_inertia_enters_the_mass_matrix():
    plain = _arm((0, 1, 0), (0, 0, -9.81), type="torque", torque=Constant(0.0))
    geared = _arm((0, 1, 0), (0, 0, -9.81), type="torque", torque=Constant(0.0),
                  gear_ratio=GEAR, rotor_inertia=ROTOR)
    q = np.array([0.2])
    dm = api.mass_matrix(compile_model(geared), q) - api.mass_matrix(compile_model(plain), q)
    assert dm[0, 0] == pytest.approx(GEAR ** 2 * ROTOR, rel=1e-12)


@pytest.mark.parametrize("method", ["bdf", "dop853"])
def test_energy_balance_with_controllers(method):
    """Two links under gravity, a saturating PD on a moving set-point at joint 1 and a
    motor torque at joint 2: E = T + V - W_nc stays constant (W_nc holds the
    actuators' work) to 1e-7 of the largest energy term."""
    m = Model("two", gravity=(0, 0, -9.81))
    for k in (1, 2):
        m.add_rigid_body(f"l{k}", mass=1.0, com=(0.25, 0, 0), inertia=(1e-4, 0.02, 0.02),
                         inertia_about="com")
        m.add_marker(f"l{k}", "tip", position=(0.5, 0, 0))
    m.add_joint("j1", "revolute", parent="ground", child="l1", axis=(0, 1, 0),
                damping=0.01)
    m.add_joint("j2", "revolute", parent="l1", parent_marker="tip", child="l2",
                axis=(0, 1, 0), initial=0.5)
    m.add_actuator("m1", "j1", kp=20.0, kd=2.0, max_torque=0.4, gear_ratio=5.0,
                   rotor_inertia=2e-4, motor_damping=1e-3,
                   setpoint=Harmonic(amplitude=0.5, omega=3.0))
    m.add_actuator("m2", "j2", type="torque", torque=Harmonic(amplitude=1.0, omega=5.0),
                   gear_ratio=3.0, rotor_inertia=1e-4)
    m.add_sensor("w1", "actuator_work", actuator="m1")
    m.add_sensor("w2", "actuator_work", actuator="m2")
    m.add_sensor("t1", "actuator_torque", actuator="m1")
    sim = simulate(m, None, t_end=3.0, rtol=1e-10, atol=1e-12, method=method)
    assert sim.status == "finished"
    largest = np.abs(sim.energy[:, :4]).max()
    assert np.abs(_total(sim) - _total(sim)[0]).max() <= 1e-7 * largest
    assert np.abs(sim.sensors[:, 2]).max() <= 5.0 * 0.4 + 25 * 1e-3 * 20  # saturated
    assert np.abs(sim.sensors[:, 0]).max() > 0.01 and np.abs(sim.sensors[:, 1]).max() > 0.01


TOML = """
[model]
gravity = [0, 0, -9.81]
[bodies.rod]
mass = 1.0
com = [0.5, 0, 0]
inertia = [1e-4, 0.02, 0.02]
inertia_about = "com"
[joints.j1]
type = "revolute"
parent = "ground"
child = "rod"
axis = [0, 1, 0]
[actuators.m1]
joint = "j1"
kp = 50.0
kd = 5.0
max_torque = 1.0
gear_ratio = 10.0
rotor_inertia = 1e-4
motor_damping = 1e-3
[actuators.m1.setpoint]
law = "harmonic"
amplitude = 0.2
omega = 2.0
[sensors.tau]
type = "actuator_torque"
actuator = "m1"
"""


def test_model_file_actuators():
    m = loads_model(TOML)
    a = m.actuators["m1"]
    assert (a.type, a.kp, a.kd, a.max_torque, a.gear_ratio) == ("pd", 50.0, 5.0, 1.0, 10.0)
    assert isinstance(a.setpoint, Harmonic) and a.setpoint.omega == 2.0
    with pytest.raises(ModelError, match='actuator "m1".*"setpoint.omega"'):
        loads_model(TOML.replace("omega = 2.0", 'omega = "fast"'))
    with pytest.raises(ModelError, match='actuator "m1".*"gear"'):
        loads_model(TOML.replace("gear_ratio", "gear"))
    with pytest.raises(ModelError, match='sensor "tau".*"actuator"'):
        loads_model(TOML.replace('actuator = "m1"', 'actuator = "m9"'))


@pytest.mark.parametrize("kwargs, field", [
    (dict(joint="nope", setpoint=Constant(0.0)), "joint"),
    (dict(joint="j1"), "setpoint"),
    (dict(joint="j1", type="torque", setpoint=Constant(0.0)), "setpoint"),
    (dict(joint="j1", type="torque", torque=Constant(1.0), kp=3.0), "kp"),
    (dict(joint="j1", type="servo", setpoint=Constant(0.0)), "type"),
    (dict(joint="j1", setpoint=Constant(0.0), gear_ratio=0.0), "gear_ratio"),
    (dict(joint="j1", setpoint=Constant(0.0), kp=-1.0), "kp"),
    (dict(joint="j1", setpoint=Constant(0.0), max_torque=0.0), "max_torque"),
    (dict(joint="j1", setpoint=Constant(0.0), coordinate=1), "coordinate"),
])
def test_bad_actuators_are_refused(kwargs, field):
    m = Model("m")
    m.add_rigid_body("rod", mass=1.0, inertia=(1, 1, 1), inertia_about="com")
    m.add_joint("j1", "revolute", parent="ground", child="rod", axis=(0, 0, 1))
    with pytest.raises(ModelError) as err:
        m.add_actuator("a", **kwargs)
    assert err.value.field == field and err.value.item == 'actuator "a"'


def test_a_coordinate_takes_one_driver_or_one_actuator():
    m = Model("m")
    m.add_rigid_body("rod", mass=1.0, inertia=(1, 1, 1), inertia_about="com")
    m.add_joint("j1", "revolute", parent="ground", child="rod", axis=(0, 0, 1))
    m.add_actuator("a", "j1", setpoint=Constant(0.0))
    with pytest.raises(ModelError, match='already has actuator "a"'):
        m.add_driver("d", "j1", Constant(0.0))
    with pytest.raises(ModelError, match='already has actuator "a"'):
        m.add_actuator("b", "j1", setpoint=Constant(0.0))


@pytest.mark.parametrize("setpoint", [Steps(times=(0.3, 0.8), values=(0.4, -0.2)),
                                      Trajectory(times=(0.2, 0.7), values=(0.0, 0.5))])
def test_set_point_laws_under_tight_tolerances(setpoint):
    """A jump of the set-point (steps) and a quintic move (trajectory): bdf passes them
    at rtol 1e-10, the joint ends at the last set-point and the balance closes."""
    m = _arm((0, 0, 1), (0, 0, 0), kp=KP, kd=KD, setpoint=setpoint, gear_ratio=GEAR,
             rotor_inertia=ROTOR, motor_damping=RESIST)
    sim = simulate(m, None, t_end=3.0, rtol=1e-10, atol=1e-12, output_step=0.1)
    assert sim.status == "finished", sim.message
    assert sim.sensors[-1, 0] == pytest.approx(setpoint.values[-1], abs=1e-6)
    # work = kinetic energy, to 1e-7 of the largest (a jump costs the work integral a
    # few rtol: measured 6e-9)
    assert np.abs(sim.sensors[:, 2] - sim.energy[:, 0]).max() <= 1e-7 * sim.energy[:, 0].max()


def test_energy_balance_of_a_pd_driven_h2():
    """H2 (the flexible link of the Huang tube under gravity) with geared motors: joint
    1 follows a cubic trajectory, joint 2 steps and reaches its torque limit; the
    actuators' work closes E = T + V_g + U - W_nc to 1e-6 of the largest energy term,
    and each actuator's work is the integral of its torque times its joint rate."""
    from flexmbs.model.library import huang_two_link
    m = huang_two_link()
    m.add_actuator("m1", "joint1", kp=200.0, kd=20.0, gear_ratio=10.0, rotor_inertia=1e-3,
                   motor_damping=1e-3,
                   setpoint=Trajectory(times=(0.0, 0.4, 0.8), values=(1.5, 1.2, 1.4),
                                       profile="cubic"))
    m.add_actuator("m2", "joint2", kp=40.0, kd=4.0, gear_ratio=5.0, rotor_inertia=2e-3,
                   motor_damping=1e-3, max_torque=1.6,
                   setpoint=Steps(times=(0.0, 0.5), values=(-1.0, -0.6)))
    for a in ("m1", "m2"):
        m.add_sensor(f"{a}_torque", "actuator_torque", actuator=a)
        m.add_sensor(f"{a}_work", "actuator_work", actuator=a)
    sim = simulate(m, None, t_end=1.0, output_step=0.002)
    assert sim.status == "finished", sim.message
    e = sim.energy
    total = _total(sim)
    assert np.abs(total - total[0]).max() <= 1e-6 * np.abs(e[:, :5]).max()
    nq = len(sim.coordinate_names)
    first = 8  # after H2's own sensors: theta1, theta2, tip (3), tip_deflection (3)
    tau2, rate2 = sim.sensors[:, first + 2], sim.y[:, nq + 1]
    # the motor torque, (tau + n^2 b_m x') / n, is the PD law's clipped to +-1.6 N m,
    # which the step reaches
    motor = (tau2 + 25 * 1e-3 * rate2) / 5.0
    pd = (40.0 * (np.where(sim.t < 0.5, -1.0, -0.6) - sim.sensors[:, 1]) - 4.0 * rate2) / 5
    np.testing.assert_allclose(motor, np.clip(pd, -1.6, 1.6), atol=1e-12)
    assert np.abs(pd).max() > 1.8
    for k in range(2):
        torque, work = sim.sensors[:, first + 2 * k], sim.sensors[:, first + 2 * k + 1]
        power = torque * sim.y[:, nq + k]
        integral = np.concatenate([[0.0], np.cumsum(np.diff(sim.t) * (
            power[1:] + power[:-1]) / 2)])
        assert np.abs(integral - work).max() <= 2e-3 * np.abs(work).max()
