"""Controllers as model items and sensors as instruments, against closed forms: a
continuous controller is the PD actuator it writes; a sampled one on a free rotor
is the exact discrete recursion of a double integrator under a zero-order hold, with
its delay, its inputs' dead time and resolution, its saturation and its
derivative on the measurement; a recorded sensor's lag, dead time and resolution on
a prescribed sine are the filtered, shifted, rounded sine."""

import math

import numpy as np
import pytest

from flexmbs.errors import ModelError
from flexmbs.model.description import Model
from flexmbs.model.timefunctions import Constant, Harmonic, Steps
from flexmbs.simulation import simulate

J = 0.02  # kg m^2


def rotor(t_end=0.3):
    """A free rotor of inertia J about z, a torque motor on it, its angle sensed."""
    m = Model("rotor", gravity=(0.0, 0.0, 0.0))
    m.add_rigid_body("disk", mass=1.0, com=(0, 0, 0), inertia=(J, J, J),
                     inertia_about="com")
    m.add_joint("axle", "revolute", parent="ground", child="disk", axis=(0, 0, 1))
    m.add_actuator("motor", joint="axle", type="torque")
    m.add_sensor("angle", "joint_coordinate", joint="axle")
    m.add_sensor("torque", "actuator_torque", actuator="motor")
    m.set_solver(method="bdf", t_end=t_end, rtol=1e-10, atol=1e-12)
    m.set_output(step=0.001)
    return m


def test_continuous_controller_is_the_pd_actuator():
    """u = kp (r - x) - kd x' on the joint equals the "pd" actuator towards a
    constant set-point (whose rate is 0)."""
    kp, kd, r = 0.8, 0.05, 0.3
    a = rotor(1.0)
    a.add_controller("pd", actuator="motor", inputs=[
        {"joint": "axle", "gain": kp, "rate_gain": kd, "setpoint": Constant(r)}])
    b = rotor(1.0)
    b.actuators.clear()
    b.sensors.pop("torque")
    b.add_actuator("motor", joint="axle", type="pd", kp=kp, kd=kd, setpoint=Constant(r))
    sa, sb = simulate(a, progress=False), simulate(b, progress=False)
    assert sa.success and sb.success
    assert np.abs(sa.sensor("angle") - sb.sensor("angle")).max() < 1e-8


def _recursion(t_end, T, gain, rate_gain, r, delay_samples, dead_samples, resolution,
               limit):
    """The angle at the samples of the double integrator J x'' = u, u held, u_k =
    clip(gain (r - y_k) - rate_gain (y_k - y_k-1) / T) taking effect delay_samples
    later, y_k = round(x_{k - dead_samples}) (x before 0 is x_0)."""
    n = int(round(t_end / T))
    x, v = np.zeros(n + 1), np.zeros(n + 1)
    u_applied = 0.0
    pending = {}
    prev = None
    for k in range(n):
        y = x[max(k - dead_samples, 0)]
        if resolution:
            y = resolution * round(y / resolution)
        prev = y if prev is None else prev
        u = gain * (r - y) - rate_gain * (y - prev) / T
        prev = y
        pending[k + delay_samples] = float(np.clip(u, -limit, limit))
        u_applied = pending.pop(k, u_applied)
        x[k + 1] = x[k] + v[k] * T + u_applied / (2 * J) * T ** 2
        v[k + 1] = v[k] + u_applied / J * T
    return x


@pytest.mark.parametrize("delay, dead, resolution, limit", [
    (0, 0, 0.0, np.inf),
    (1, 0, 0.0, np.inf),
    (1, 2, 0.0, np.inf),
    (0, 0, 2 * math.pi / 4096, np.inf),
    (1, 0, 0.0, 0.05),
])
def test_sampled_controller_is_the_discrete_recursion(delay, dead, resolution, limit):
    T, gain, rate_gain, r = 0.002, 0.8, 0.04, 0.5
    m = rotor()
    m.add_sensor("encoder", "joint_coordinate", joint="axle", dead_time=dead * T,
                 resolution=resolution)
    m.add_controller("digital", actuator="motor", sample_time=T, delay=delay * T,
                     limits=limit, inputs=[{"sensor": "encoder", "gain": gain,
                                            "rate_gain": rate_gain,
                                            "setpoint": Constant(r)}])
    sim = simulate(m, progress=False)
    assert sim.success, sim.message
    x = _recursion(0.3, T, gain, rate_gain, r, delay, dead, resolution, limit)
    at = np.rint(sim.t / T).astype(int)
    on = np.abs(sim.t - at * T) < 1e-12
    assert np.abs(sim.sensor("angle")[on] - x[at[on]]).max() < 1e-9
    if np.isfinite(limit):
        assert np.abs(sim.sensor("torque")).max() == pytest.approx(limit)


def test_derivative_on_the_measurement_gives_no_kick():
    """A step of the set-point moves the proportional term only: the first output
    after the step is gain (r - y), the rate term is of the measurement."""
    T = 0.001
    m = rotor(0.05)
    m.add_controller("digital", actuator="motor", sample_time=T, inputs=[
        {"joint": "axle", "gain": 0.5, "rate_gain": 2.0,
         "setpoint": Steps(times=(0.0, 0.0101), values=(0.0, 0.2))}])
    sim = simulate(m, progress=False)
    torque = sim.sensor("torque")
    k = np.searchsorted(sim.t, 0.011 - 1e-12)
    assert np.all(torque[:k] == 0.0)
    assert torque[k] == pytest.approx(0.5 * 0.2, abs=1e-12)


def test_recorded_sensor_as_an_instrument():
    """A joint driven along x = A sin(w t): its sensor with a lag tau records the
    filtered sine (steady part A / sqrt(1 + (w tau)^2) sin(w t - atan(w tau)) plus
    the decaying start), with a dead time d the sine d later, with a resolution the
    rounded sine."""
    amp, w, tau, d, res = 0.3, 2 * math.pi * 3.0, 0.02, 0.013, 1e-3
    m = Model("driven", gravity=(0.0, 0.0, 0.0))
    m.add_rigid_body("disk", mass=1.0, com=(0, 0, 0), inertia=(J, J, J),
                     inertia_about="com")
    m.add_joint("axle", "revolute", parent="ground", child="disk", axis=(0, 0, 1))
    m.add_driver("spin", joint="axle", function=Harmonic(amplitude=amp, omega=w))
    m.add_sensor("raw", "joint_coordinate", joint="axle")
    m.add_sensor("lagged", "joint_coordinate", joint="axle", lag=tau)
    m.add_sensor("late", "joint_coordinate", joint="axle", dead_time=d)
    m.add_sensor("counts", "joint_coordinate", joint="axle", resolution=res)
    m.set_solver(method="bdf", t_end=1.0, rtol=1e-10, atol=1e-12)
    m.set_output(step=0.0005)
    sim = simulate(m, progress=False)
    t = sim.t
    phase = math.atan(w * tau)
    gain = 1.0 / math.sqrt(1 + (w * tau) ** 2)
    lagged = amp * gain * (np.sin(w * t - phase) + math.sin(phase) * np.exp(-t / tau))
    h = 0.0005
    assert np.abs(sim.sensor("lagged") - lagged).max() < amp * (w * h) ** 2
    late = amp * np.sin(w * np.clip(t - d, 0.0, None))
    assert np.abs(sim.sensor("late") - late).max() < amp * (w * h) ** 2
    assert np.array_equal(sim.sensor("counts"), res * np.round(sim.sensor("raw") / res))


def test_voltage_controller_drives_a_dc_motor():
    """A continuous speed controller u = g (r - x') on the amplifier input of a DC
    motor without inductance: J x'' = n eta k_t (K_a u - k_e n x') / R, a first-order
    lag of the rate towards a r / (a + b), time constant J / (a + b), a = n eta k_t
    K_a g / R, b = n^2 eta k_t k_e / R; the energy balance holds the electrical side."""
    n, eta, kt, ke, R, Ka, g, r = 5.0, 0.8, 0.05, 0.06, 2.0, 1.5, 0.4, 10.0
    m = rotor(0.5)
    m.actuators.clear()
    m.sensors.pop("torque")
    m.add_actuator("motor", joint="axle", type="dc_motor", voltage=Constant(0.0),
                   gear_ratio=n, efficiency=eta, torque_constant=kt,
                   back_emf_constant=ke, resistance=R, amplifier_gain=Ka)
    m.add_sensor("rate", "joint_rate", joint="axle")
    m.add_controller("speed", actuator="motor", command="voltage", inputs=[
        {"joint": "axle", "rate": True, "gain": g, "setpoint": Constant(r)}])
    sim = simulate(m, progress=False)
    assert sim.success
    a, b = n * eta * kt * Ka * g / R, n * n * eta * kt * ke / R
    rate = a * r / (a + b) * (1.0 - np.exp(-sim.t * (a + b) / J))
    assert np.abs(sim.sensor("rate") - rate).max() < 1e-7 * a * r / (a + b)
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]  # T + V - W_nc
    assert np.abs(total - total[0]).max() < 1e-8 * e[-1, 0]
    with pytest.raises(ModelError, match="voltage"):
        rotor().add_controller("c", actuator="motor", command="voltage",
                               inputs=[{"joint": "axle"}])


def test_controller_input_errors():
    m = rotor()
    with pytest.raises(ModelError, match="sample_time"):
        m.add_controller("c", actuator="motor", inputs=[{"sensor": "angle", "gain": 1.0}])
    with pytest.raises(ModelError, match="actuator"):
        m.add_controller("d", actuator="nothing", inputs=[{"joint": "axle"}])
    with pytest.raises(KeyError, match="the sensors are"):
        simulate(rotor(0.01), progress=False).sensor("nope")
