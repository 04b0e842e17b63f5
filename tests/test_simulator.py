"""The stepping API (flexmbs.Simulator): a run stepped from Python is the run simulate
makes, inputs held over a step are the step laws simulate integrates, the result file
is written as simulate writes it, and misuse is named."""

import numpy as np
import pytest

import flexmbs
from flexmbs import ModelError, Simulator, simulate
from flexmbs.model import Constant, Steps
from flexmbs.model.toml_reader import loads_model
from flexmbs.simulator import IntegrationFailed

DT = 2e-3


def _model(torque=None, method="galpha", t_end=0.2):
    text = f"""
[model]
name = "link"
gravity = [0.0, 0.0, 0.0]
[solver]
method = "{method}"
t_end = {t_end}
rtol = 1e-9
atol = 1e-11
[output]
step = {DT}
[bodies.hub]
mass = 0.5
inertia = [1.2e-3, 1.2e-3, 2e-3]
inertia_about = "com"
[bodies.hub.markers.clamp]
position = [0.02, 0.0, 0.0]
[bodies.strip]
type = "beam"
points = [[0.0, 0.0, 0.0], [0.3, 0.0, 0.0]]
elements = 2
reference = [0.0, 0.0, 1.0]
alpha = 1e-4
[bodies.strip.markers.root]
node = 0
[bodies.strip.markers.tip]
node = -1
[bodies.strip.section]
type = "rectangle"
width = 0.02
height = 0.001
[bodies.strip.material]
youngs_modulus = 2.0e11
shear_modulus = 7.9e10
density = 7850.0
[joints.shaft]
type = "revolute"
parent = "ground"
child = "hub"
axis = [0.0, 0.0, 1.0]
[joints.clamp]
type = "fixed"
parent = "hub"
parent_marker = "clamp"
child = "strip"
child_marker = "root"
[actuators.motor]
joint = "shaft"
type = "torque"
gear_ratio = 10.0
[actuators.motor.torque]
law = "constant"
value = 0.0
[forces.push]
type = "force"
body = "strip"
marker = "tip"
vector = [0.0, 1.0, 0.0]
[forces.push.function]
law = "constant"
value = 0.0
[sensors.angle]
type = "joint_coordinate"
joint = "shaft"
[sensors.tip]
type = "marker_deflection"
body = "strip"
marker = "tip"
frame = "strip"
"""
    model = loads_model(text)
    model.actuators["motor"].torque = Constant(0.05) if torque is None else torque
    return model


def test_the_ports_are_the_commands_and_the_loads():
    with Simulator(_model()) as sim:
        assert {p.name: p.unit for p in sim.ports} == {"motor.torque": "N m",
                                                       "push.function": "1"}
        assert sim.inputs == {"motor.torque": None, "push.function": None}


@pytest.mark.parametrize("method", ["bdf", "galpha"])
def test_steps_without_inputs_are_the_run_simulate_makes(method):
    """Outputs never force steps: stepping 2 ms at a time takes the integrator's own
    steps, so the states are simulate's at its output times, to round-off."""
    model = _model(method=method)
    ref = simulate(model)
    sim = Simulator(model)
    rows = [sim.sensor_values] + [np.concatenate([np.atleast_1d(v) for v in
                                                  sim.step(DT).values()])
                                  for _ in range(len(ref.t) - 1)]
    out = sim.close()
    assert sim.time == pytest.approx(ref.t[-1])
    np.testing.assert_allclose(np.array(rows), ref.sensors, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.y, ref.y, rtol=0, atol=1e-12)
    assert out.statistics["nsteps"] == ref.statistics["nsteps"]


@pytest.mark.parametrize("method", ["bdf", "galpha"])
def test_held_inputs_are_the_step_laws(method):
    """A torque and a push changed every 20 ms from Python give the run of the same
    values as `steps` laws in the model (both restart at every change)."""
    times = np.arange(0.0, 0.2, 0.02)
    torque = 0.05 * np.sin(40 * times)
    push = 0.2 * np.cos(25 * times)
    model = _model(Steps(tuple(times), tuple(torque)), method)
    model.forces["push"].function = Steps(tuple(times), tuple(push))
    ref = simulate(model)
    sim = Simulator(_model(method=method))
    got = [sim.sensor_values]
    for _ in range(len(ref.t) - 1):
        j = int(np.floor(sim.time / 0.02 + 1e-9))
        sim.step(DT, inputs={"motor.torque": torque[j], "push.function": push[j]})
        got.append(sim.sensor_values)
    assert sim.statistics["input_restarts"] == len(times)
    got = np.array(got)
    scale = np.abs(ref.sensors).max(axis=0)
    assert np.all(np.abs(got - ref.sensors).max(axis=0) <= 1e-6 * scale)
    sim.close()


def test_the_result_file_is_simulate_s(tmp_path):
    path = tmp_path / "stepped.h5"
    with Simulator(_model(), path) as sim:
        for k in range(60):
            sim.step(DT, inputs={"motor.torque": 0.02 * (k % 7 - 3)})
    r = flexmbs.open_result(path)
    assert r.finished and r.nsamples == 61
    np.testing.assert_allclose(r.time, DT * np.arange(61), rtol=0, atol=1e-12)
    balance = flexmbs.energy_balance(r)
    assert balance["drift_max"] <= 1e-6 * balance["largest_component"]
    assert r.solver["input_restarts"] == 60


def test_the_run_goes_past_the_model_s_end_and_resets():
    sim = Simulator(_model(t_end=0.01))
    for _ in range(30):
        sim.step(DT, inputs={"motor.torque": 0.05})
    assert sim.time == pytest.approx(0.06)
    first = sim.sensors["angle"]
    sim.reset()
    assert sim.time == 0.0 and sim.inputs["motor.torque"] is None
    for _ in range(30):
        sim.step(DT, inputs={"motor.torque": 0.05})
    assert sim.sensors["angle"] == pytest.approx(first, rel=1e-9)
    assert sim.close().status == "finished"


def test_misuse_is_named():
    sim = Simulator(_model())
    with pytest.raises(ModelError, match="no input port 'motor.voltage'.*motor.torque"):
        sim.step(DT, inputs={"motor.voltage": 1.0})
    with pytest.raises(ModelError, match="finite number"):
        sim.step(DT, inputs={"motor.torque": float("nan")})
    with pytest.raises(ValueError, match="dt must be"):
        sim.step(0.0)
    sim.close()
    with pytest.raises(ValueError, match="closed"):
        sim.step(DT)
    with pytest.raises(ModelError, match='"bdf" or "galpha"'):
        Simulator(_model(method="rk45"))


def test_a_failure_closes_the_file_and_raises(tmp_path):
    path = tmp_path / "failed.h5"
    sim = Simulator(_model(method="bdf"), path)
    sim.step(DT)
    with pytest.raises(IntegrationFailed, match="at t = "):
        sim.step(DT, inputs={"motor.torque": 1e300})
    r = flexmbs.open_result(path)
    assert r.status.startswith("failed")
    assert sim.close().status == "failed"
