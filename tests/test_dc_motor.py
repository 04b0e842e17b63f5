"""DC motors driven by voltage (flexmbs.dynamics.motors): the closed-form step response
of a rigid load without and with the armature's inductance, the current and voltage
limits located as events, the electrical energy in the balance, and bad input."""

import numpy as np
import pytest
import scipy.linalg

from flexmbs import ModelError, simulate
from flexmbs.formats.toml_reader import loads_model
from flexmbs.model import Model, Steps

# a Quanser SRV02-like servo: armature 2.6 ohm, k_t = k_e = 7.68e-3, gear 70, 90 %
R, KT, GEAR, ETA = 2.6, 7.68e-3, 70.0, 0.9
J_ROTOR, B_MOTOR = 3.9e-7, 1e-6           # kg m^2, N m s/rad at the motor
J_LOAD = 0.02                             # kg m^2: the disk about its axis
V_STEP, T_STEP = 6.0, 0.05                # V at 50 ms


def _servo(method="bdf", inductance=0.0, t_end=0.4, rtol=1e-10, **limits):
    m = Model("servo", gravity=(0.0, 0.0, -9.81))
    m.add_rigid_body("disk", mass=2.0, com=(0, 0, 0), inertia=(0.01, 0.01, J_LOAD),
                     inertia_about="com")
    m.add_joint("hub", "revolute", parent="ground", child="disk", axis=(0, 0, 1))
    m.add_actuator("motor", "hub", type="dc_motor",
                   voltage=Steps((0.0, T_STEP), (0.0, V_STEP)), resistance=R,
                   inductance=inductance, torque_constant=KT, gear_ratio=GEAR,
                   efficiency=ETA, rotor_inertia=J_ROTOR, motor_damping=B_MOTOR, **limits)
    m.add_sensor("theta", "joint_coordinate", joint="hub")
    m.add_sensor("rate", "joint_rate", joint="hub")
    m.add_sensor("current", "actuator_current", actuator="motor")
    m.add_sensor("voltage", "actuator_voltage", actuator="motor")
    m.add_sensor("work", "actuator_work", actuator="motor")
    m.set_solver(method=method, t_end=t_end, rtol=rtol, atol=rtol * 1e-2)
    m.set_output(step=0.005)
    return m


def _linear_response(t, inductance):
    """(theta, rate, current) of the linear servo after the voltage step, by the
    matrix exponential of x = [theta, rate, i] (closed form of the linear ODE):
    J theta'' = n eta k_t i - n^2 b theta',  L i' = V - R i - k_e n theta'
    (without inductance i = (V - k_e n theta') / R)."""
    j = J_LOAD + GEAR ** 2 * J_ROTOR
    b = GEAR ** 2 * B_MOTOR
    tau = np.clip(t - T_STEP, 0.0, None)
    if inductance == 0.0:
        a = np.array([[0.0, 1.0], [0.0, -(b + ETA * GEAR ** 2 * KT * KT / R) / j]])
        f = np.array([0.0, ETA * GEAR * KT * V_STEP / (R * j)])
    else:
        a = np.array([[0.0, 1.0, 0.0], [0.0, -b / j, ETA * GEAR * KT / j],
                      [0.0, -KT * GEAR / inductance, -R / inductance]])
        f = np.array([0.0, 0.0, V_STEP / inductance])
    n = len(a)
    big = np.zeros((n + 1, n + 1))    # x' = A x + f from x = 0: expm of [[A, f], [0, 0]]
    big[:n, :n], big[:n, n] = a, f
    x = np.array([scipy.linalg.expm(big * s)[:n, n] for s in tau])
    if inductance == 0.0:
        current = np.where(t >= T_STEP, (V_STEP - KT * GEAR * x[:, 1]) / R, 0.0)
        return x[:, 0], x[:, 1], current
    return x[:, 0], x[:, 1], x[:, 2]


def _balance(sim):
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    return np.abs(total - total[0]).max()


@pytest.mark.parametrize("method", ["bdf", "galpha"])
@pytest.mark.parametrize("inductance", [0.0, 2e-3])
def test_the_step_response_of_a_rigid_load_is_the_closed_form_one(method, inductance):
    """L = 2 mH gives an electrical time constant of 0.8 ms against the mechanical
    one of 0.19 s: both are followed."""
    sim = simulate(_servo(method, inductance))
    assert sim.status == "finished", sim.message
    theta, rate, current = _linear_response(sim.t, inductance)
    scale = np.abs(theta).max()
    tol = 2e-7 if method == "bdf" else 2e-5  # galpha: its own error measure at rtol
    assert np.abs(sim.sensors[:, 0] - theta).max() <= tol * scale
    assert np.abs(sim.sensors[:, 1] - rate).max() <= tol * np.abs(rate).max() * 10
    assert np.abs(sim.sensors[:, 2] - current).max() <= tol * np.abs(current).max() * 10
    # the step is a breakpoint: the current jumps there without an inductance
    assert sim.statistics["breakpoints"] >= 1


@pytest.mark.parametrize("inductance", [0.0, 2e-3])
def test_the_electrical_energy_closes_the_balance(inductance):
    """E = T (with L i^2 / 2) + V - W_nc stays constant, W_nc counting the source's
    work less the resistive, gear and viscous losses; the source's work and the
    resistive loss (state columns W_source_motor, W_resistive_motor) are the
    integrals of V_m i and R i^2 from the sensors."""
    sim = simulate(_servo("bdf", inductance, rtol=1e-10))
    e = sim.energy
    assert _balance(sim) <= 1e-8 * np.abs(e[:, :4]).max()
    nq = 1
    w_source, w_resistive = sim.y[:, 2 * nq + 2], sim.y[:, 2 * nq + 3]
    fine = simulate(_servo("bdf", inductance, rtol=1e-10), output_step=2e-5)
    after = fine.t[1:] > T_STEP + 1e-12  # before the step (its jump included) no power

    def integral(power):
        pieces = 0.5 * np.diff(fine.t) * (power[1:] + power[:-1]) * after
        return np.interp(sim.t, fine.t, np.concatenate([[0.0], np.cumsum(pieces)]))

    vi = integral(fine.sensors[:, 3] * fine.sensors[:, 2])
    ri = integral(R * fine.sensors[:, 2] ** 2)
    assert np.abs(w_source - vi).max() <= 1e-5 * np.abs(w_source).max()
    assert np.abs(w_resistive - ri).max() <= 1e-5 * np.abs(w_resistive).max()
    assert np.all(np.diff(w_resistive) >= 0.0)
    # the mechanical work reaching the joint is what is left of the source's
    assert w_source[-1] > w_resistive[-1] + sim.sensors[-1, 4] > 0.0
    assert np.abs(sim.sensors[:, 3]).max() == pytest.approx(V_STEP, rel=1e-9)


@pytest.mark.parametrize("method", ["bdf", "galpha"])
@pytest.mark.parametrize("inductance", [0.0, 2e-3])
def test_the_current_limit_holds_the_torque_and_is_located(method, inductance):
    """At |i| = i_max the amplifier holds the current: the load accelerates under the
    constant torque n eta k_t i_max (b small: its own term kept) until the back-EMF
    lets the current fall below the limit, a state event both integrators locate;
    then the free response. The run is checked against a dense reference run, and
    the current never passes the limit."""
    i_max = 1.0
    sim = simulate(_servo(method, inductance, max_current=i_max, rtol=1e-9))
    assert sim.status == "finished", sim.message
    i = sim.sensors[:, 2]
    assert np.abs(i).max() <= i_max * (1 + 1e-9)
    assert np.sum(np.abs(i - i_max) < 1e-9) > 10          # held at the limit a while
    assert sim.statistics["switch_events"] >= 1 + (inductance > 0)
    held = np.abs(i - i_max) < 1e-9
    t = sim.t[held]
    j = J_LOAD + GEAR ** 2 * J_ROTOR
    b = GEAR ** 2 * B_MOTOR
    torque = GEAR * ETA * KT * i_max
    # while held: J w' = torque - b w from w(t0)
    t0, w0 = t[0], sim.sensors[held][0, 1]
    w = torque / b + (w0 - torque / b) * np.exp(-b * (t - t0) / j)
    tol = 1e-6 if method == "bdf" else 1e-4
    assert np.abs(sim.sensors[held, 1] - w).max() <= tol * np.abs(w).max()
    if inductance == 0.0:  # the release: where (V - k_e n w) / R falls to i_max
        w_release = (V_STEP - R * i_max) / (KT * GEAR)
        assert sim.sensors[~held & (sim.t > t0), 1].min() >= w_release * (1 - 1e-3)
    e = sim.energy
    assert _balance(sim) <= (1e-7 if method == "bdf" else 1e-3) * np.abs(e[:, :4]).max()


def test_the_voltage_limit_caps_the_amplifier():
    """A gain of 3 on a 6 V input asks for 18 V of a 12 V amplifier: the motor sees
    12 V, and the response is the closed-form one at 12 V."""
    m = _servo("bdf", 0.0, max_voltage=12.0, amplifier_gain=3.0)
    sim = simulate(m)
    assert sim.status == "finished", sim.message
    assert np.abs(sim.sensors[:, 3]).max() == pytest.approx(12.0, rel=1e-12)
    theta, _, _ = _linear_response(sim.t, 0.0)
    assert np.abs(sim.sensors[:, 0] - theta * 12.0 / V_STEP).max() <= 2e-7 * np.abs(theta).max() * 2


def test_a_dc_motor_from_the_model_file():
    text = """
[model]
name = "servo"
gravity = [0.0, 0.0, -9.81]
[bodies.disk]
mass = 2.0
inertia = [0.01, 0.01, 0.02]
inertia_about = "com"
[joints.hub]
type = "revolute"
parent = "ground"
child = "disk"
axis = [0.0, 0.0, 1.0]
[actuators.motor]
joint = "hub"
type = "dc_motor"
resistance = 2.6
inductance = 1.8e-4
torque_constant = 7.68e-3
back_emf_constant = 7.68e-3
gear_ratio = 70.0
efficiency = 0.9
rotor_inertia = 3.9e-7
amplifier_gain = 1.0
max_voltage = 10.0
max_current = 2.0
[actuators.motor.voltage]
law = "constant"
value = 5.0
"""
    model = loads_model(text)
    a = model.actuators["motor"]
    assert (a.type, a.resistance, a.inductance, a.max_current) == ("dc_motor", 2.6, 1.8e-4, 2.0)
    assert a.command.value == 5.0


@pytest.mark.parametrize("fields, field, words", [
    ({"torque_constant": KT}, "resistance", "needs its resistance"),
    ({"resistance": R}, "torque_constant", "needs its torque_constant"),
    ({"resistance": R, "torque_constant": KT, "efficiency": 1.2}, "efficiency", "(0, 1]"),
    ({"resistance": R, "torque_constant": KT, "inductance": -1.0}, "inductance", ">= 0"),
    ({"resistance": R, "torque_constant": KT, "max_current": 0.0}, "max_current", "positive"),
    ({"resistance": R, "torque_constant": KT, "max_torque": 1.0}, "max_torque", "max_current"),
    ({"resistance": R, "torque_constant": KT, "kp": 1.0}, "kp", 'type "pd"'),
])
def test_bad_dc_motors_are_named(fields, field, words):
    m = Model("bad")
    m.add_rigid_body("disk", mass=1.0, com=(0, 0, 0), inertia=(1e-3, 1e-3, 1e-3),
                     inertia_about="com")
    m.add_joint("hub", "revolute", parent="ground", child="disk")
    with pytest.raises(ModelError) as err:
        m.add_actuator("motor", "hub", type="dc_motor", voltage=Steps((0.0,), (1.0,)),
                       **fields)
    assert err.value.field == field and words in err.value.message


def test_motor_fields_belong_to_dc_motors_and_electric_sensors_too():
    m = Model("bad")
    m.add_rigid_body("disk", mass=1.0, com=(0, 0, 0), inertia=(1e-3, 1e-3, 1e-3),
                     inertia_about="com")
    m.add_joint("hub", "revolute", parent="ground", child="disk")
    with pytest.raises(ModelError, match='only a "dc_motor"'):
        m.add_actuator("a", "hub", type="torque", torque=Steps((0.0,), (1.0,)),
                       resistance=1.0)
    m.add_actuator("a", "hub", type="torque", torque=Steps((0.0,), (1.0,)))
    with pytest.raises(ModelError, match="reads a \"dc_motor\""):
        m.add_sensor("i", "actuator_current", actuator="a")
