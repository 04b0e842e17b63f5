"""Instruments as on a rig, against closed forms and the discrete recursions they
make: a sampled input's rate through a first- or second-order low-pass on a ramp, a
tachometer (a joint-rate sensor with its own lag) in a speed loop, and a sensor whose
controller path and recorded path have instruments of their own."""

import math

import numpy as np
import pytest
from test_controllers import J, _recursion, rotor

from flexmbs.errors import ModelError
from flexmbs.model.description import Model
from flexmbs.model.timefunctions import Constant, ConstantRate
from flexmbs.simulation import simulate
from flexmbs.simulation.sampled_control import filtered_rate

T = 0.001


def _ramp_rig(cutoff, order, v=0.4, t_end=0.05):
    """A joint driven at the rate v (its angle sensed as "ramp") and a free rotor
    whose torque motor a sampled controller drives with -rate_gain D, D the ramp's
    filtered rate."""
    m = Model("ramp", gravity=(0.0, 0.0, 0.0))
    for body in ("wheel", "disk"):
        m.add_rigid_body(body, mass=1.0, com=(0, 0, 0), inertia=(J, J, J),
                         inertia_about="com")
    m.add_joint("drive", "revolute", parent="ground", child="wheel", axis=(0, 0, 1))
    m.add_driver("turn", joint="drive", function=ConstantRate(value=0.0, rate=v))
    m.add_joint("axle", "revolute", parent="ground", child="disk", axis=(0, 0, 1))
    m.add_actuator("motor", joint="axle", type="torque")
    m.add_sensor("ramp", "joint_coordinate", joint="drive")
    m.add_sensor("torque", "actuator_torque", actuator="motor")
    m.add_controller("c", actuator="motor", sample_time=T, inputs=[
        {"sensor": "ramp", "rate_gain": 1.0, "rate_cutoff": cutoff,
         "rate_filter_order": order}])
    m.set_solver(method="bdf", t_end=t_end, rtol=1e-8, atol=1e-10)
    m.set_output(step=T)
    return m


@pytest.mark.parametrize("order", [1, 2])
def test_filtered_rate_of_a_ramp(order):
    """On y = v t the backward difference is v from sample 1 on (0 at sample 0,
    which has no earlier reading); a stage of pole a = exp(-2 pi f_c T) makes it
    v (1 - a^k), two stages v (1 - a^k - k (1 - a) a^k) at sample k (the run's last
    output, at its end, holds the last sample's)."""
    v, fc = 0.4, 50.0
    sim = simulate(_ramp_rig(fc, order, v), progress=False)
    assert sim.success, sim.message
    a = math.exp(-2 * math.pi * fc * T)
    k = np.rint(sim.t / T).astype(int)
    on = (np.abs(sim.t - k * T) < 1e-12) & (sim.t < sim.t[-1])
    k = k[on]
    step = 1 - a**k if order == 1 else 1 - a**k - k * (1 - a) * a**k
    assert np.abs(-sim.sensor("torque")[on] - v * step).max() < 1e-12


def test_filtered_rate_is_its_recursion():
    """filtered_rate against the stages written out, on noise."""
    rng = np.random.default_rng(3)
    a = 0.7
    stages = np.zeros(2)
    d1 = d2 = 0.0
    for x in rng.standard_normal(50):
        d1 = a * d1 + (1 - a) * x
        d2 = a * d2 + (1 - a) * d1
        assert filtered_rate(x, a, stages) == pytest.approx(d2, abs=1e-15)
    assert filtered_rate(2.5, a, np.zeros(0)) == 2.5


def test_tachometer_with_its_own_lag_in_a_speed_loop():
    """J w' = u, u_k = -g L_k held, L the tachometer's lag of time constant tau read
    at the samples: L_k = L_k-1 + (1 - exp(-T / tau)) (w_k - L_k-1), L_0 = w_0."""
    g, tau, w0 = 0.02, 0.004, 3.0
    m = rotor(0.1)
    m.joints["axle"].initial_rate[:] = w0
    m.add_sensor("tacho", "joint_rate", joint="axle", controller_lag=tau)
    m.add_controller("speed", actuator="motor", sample_time=T, inputs=[
        {"sensor": "tacho", "gain": g}])
    m.add_sensor("rate", "joint_rate", joint="axle")
    sim = simulate(m, progress=False)
    assert sim.success, sim.message
    w = [w0]
    lag = w0
    f = 1 - math.exp(-T / tau)
    for _ in range(100):
        lag += f * (w[-1] - lag)
        w.append(w[-1] - g * lag * T / J)
    k = np.rint(sim.t / T).astype(int)
    on = np.abs(sim.t - k * T) < 1e-12
    assert np.abs(sim.sensor("rate")[on] - np.array(w)[k[on]]).max() < 1e-9 * w0
    # the recorded tachometer has no lag of its own: the true rate
    assert np.array_equal(sim.sensor("tacho"), sim.sensor("rate"))


@pytest.mark.parametrize("record, control, dead, resolution", [
    ({"resolution": 0.01}, {"controller_resolution": 0.0}, 0, 0.0),
    ({}, {"controller_dead_time": 0.004, "controller_resolution": 2 * math.pi / 4096}, 2,
     2 * math.pi / 4096),
])
def test_controller_and_record_read_through_their_own_instruments(record, control, dead,
                                                                  resolution):
    """The controller follows the recursion of its own instrument; the record keeps
    its own (rounded to its resolution, or the angle as it is)."""
    T2, gain, rate_gain, r = 0.002, 0.8, 0.04, 0.5
    m = rotor()
    m.add_sensor("encoder", "joint_coordinate", joint="axle", **record, **control)
    m.add_controller("digital", actuator="motor", sample_time=T2, inputs=[
        {"sensor": "encoder", "gain": gain, "rate_gain": rate_gain,
         "setpoint": Constant(r)}])
    sim = simulate(m, progress=False)
    assert sim.success, sim.message
    x = _recursion(0.3, T2, gain, rate_gain, r, 0, dead, resolution, np.inf)
    k = np.rint(sim.t / T2).astype(int)
    on = np.abs(sim.t - k * T2) < 1e-12
    assert np.abs(sim.sensor("angle")[on] - x[k[on]]).max() < 1e-9
    step = record.get("resolution", 0.0)
    want = step * np.round(sim.sensor("angle") / step) if step else sim.sensor("angle")
    assert np.array_equal(sim.sensor("encoder"), want)


def test_instrument_errors():
    m = rotor()
    with pytest.raises(ModelError, match="controller_lag"):
        m.add_sensor("s", "joint_rate", joint="axle", controller_lag=-1.0)
    with pytest.raises(ModelError, match="rate_filter_order"):
        m.add_controller("c", actuator="motor", sample_time=T, inputs=[
            {"joint": "axle", "rate_gain": 1.0, "rate_cutoff": 10.0,
             "rate_filter_order": 3}])
    with pytest.raises(ModelError, match="rate_cutoff"):
        m.add_controller("c", actuator="motor", inputs=[
            {"joint": "axle", "rate_gain": 1.0, "rate_cutoff": 10.0}])
    with pytest.raises(ModelError, match="rate_cutoff"):
        m.add_controller("c", actuator="motor", sample_time=T, inputs=[
            {"joint": "axle", "rate_gain": 1.0, "rate_cutoff": -1.0}])
