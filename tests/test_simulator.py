"""The stepping API (flexmbs.Simulator): a run stepped from Python is the run simulate
makes, inputs held over a step are the step laws simulate integrates, the result file
is written as simulate writes it, and misuse is named."""

import numpy as np
import pytest

import flexmbs
from flexmbs import ModelError, Simulator, simulate
from flexmbs.control.simulator import IntegrationFailed
from flexmbs.formats.toml_reader import loads_model
from flexmbs.model import Constant, Steps

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


@pytest.mark.parametrize("method", ["bdf", "galpha"])
def test_inputs_changed_at_every_step_are_the_step_laws(method):
    """A controller at the output rate (a new torque at every step) gives the run of
    a `steps` law with those values at those times."""
    times = DT * np.arange(25)
    torque = 0.05 * np.sin(60 * times) + 0.01
    model = _model(Steps(tuple(times), tuple(torque)), method, t_end=times[-1] + DT)
    ref = simulate(model)
    sim = Simulator(_model(method=method, t_end=times[-1] + DT))
    got = [sim.sensor_values]
    for k in range(len(ref.t) - 1):
        sim.step(DT, inputs={"motor.torque": float(torque[k])})
        got.append(sim.sensor_values)
    assert sim.statistics["input_restarts"] == len(times)
    scale = np.abs(ref.sensors).max(axis=0)
    assert np.all(np.abs(np.array(got) - ref.sensors).max(axis=0) <= 1e-6 * scale)
    if method == "bdf":  # a restart keeps the step: fewer steps than from IDA's first
        assert sim.statistics["nsteps"] < ref.statistics["nsteps"]
    sim.close()


def test_bdf_serves_the_steps_after_its_driver_reached_the_horizon():
    """At rest, bdf's steps grow to the model's t_end; the steps asked for after that
    are on its last step (interpolated), not a failure."""
    sim = Simulator(_model(torque=Constant(0.0), method="bdf", t_end=0.05))
    for _ in range(40):
        sim.step(DT)
    assert sim.time == pytest.approx(0.08)
    np.testing.assert_allclose(sim.state, sim.close().y[0], rtol=0, atol=1e-12)


def test_an_input_that_passes_a_torque_limit_is_the_step_law():
    """A changed input puts the motor at its torque limit and takes it off again: the
    branch each side selects is the one the `steps` law's run selects."""
    times = (0.0, 0.01, 0.02, 0.03)
    torque = (0.01, 0.08, -0.09, 0.02)  # N m against a limit of 0.05 at the motor
    model = _model(Steps(times, torque), "galpha", t_end=0.04)
    model.actuators["motor"].max_torque = 0.05
    ref = simulate(model)
    free = _model(method="galpha", t_end=0.04)
    free.actuators["motor"].max_torque = 0.05
    sim = Simulator(free)
    got = [sim.sensor_values]
    for _ in range(len(ref.t) - 1):
        j = int(np.floor(sim.time / 0.01 + 1e-9))
        sim.step(DT, inputs={"motor.torque": torque[j]})
        got.append(sim.sensor_values)
    scale = np.abs(ref.sensors).max(axis=0)
    assert np.all(np.abs(np.array(got) - ref.sensors).max(axis=0) <= 1e-6 * scale)
    sim.close()


def test_the_sensors_are_what_the_instruments_measure(tmp_path):
    """A sensor with a lag, a dead time and a resolution reads in `step`, `sensors`
    and the result file what `simulate` records for the same held inputs; the
    reading differs from the exact value."""
    times = (0.0, 0.02, 0.05)
    torque = (0.05, -0.03, 0.02)

    def instrumented(model):
        angle = model.sensors["angle"]
        angle.lag, angle.dead_time, angle.resolution = 4e-3, 3e-3, 1e-4
        model.sensors["tip"].resolution = 1e-5
        return model

    ref = simulate(instrumented(_model(Steps(times, torque), t_end=0.08)))
    exact = simulate(_model(Steps(times, torque), t_end=0.08))
    sim = Simulator(instrumented(_model(t_end=0.08)), tmp_path / "run.h5")
    got, returned = [sim.sensor_values], []
    for _ in range(len(ref.t) - 1):
        j = max(k for k in range(len(times)) if times[k] <= sim.time + 1e-12)
        s = sim.step(DT, inputs={"motor.torque": torque[j]})
        got.append(sim.sensor_values)
        returned.append(s["angle"])
    out = sim.close()
    got = np.array(got)
    np.testing.assert_allclose(got, ref.sensors, rtol=0, atol=1e-9)
    np.testing.assert_allclose(returned, got[1:, 0], rtol=0, atol=0)
    assert np.allclose(np.round(got[:, 0] / 1e-4) * 1e-4, got[:, 0], rtol=0, atol=1e-15)
    assert np.abs(got[:, 0] - exact.sensors[:, 0]).max() > 1e-4
    recorded = flexmbs.open_result(tmp_path / "run.h5").sensors["angle"]
    np.testing.assert_allclose(recorded, got[:, 0], rtol=0, atol=0)
    assert out.status == "finished"


@pytest.mark.parametrize("method", ["bdf", "galpha"])
def test_a_stop_met_within_a_step_is_located_as_simulate_locates_it(method):
    """The hub driven into its stop: the state events fall inside steps of the
    stepping API (one call of the step loop per step, which hands the event to the
    integrator's location), and the run is simulate's, to round-off."""
    model = _model(method=method, t_end=0.1)
    model.joints["shaft"].limits = np.array([[-0.02, 0.004]])
    model.joints["shaft"].limit_stiffness = np.array([50.0])
    model.joints["shaft"].limit_damping = np.array([0.05])
    ref = simulate(model)
    assert ref.statistics["switch_events"] >= 1
    sim = Simulator(model)
    for _ in range(len(ref.t) - 1):
        sim.step(DT)
    out = sim.close()
    assert out.statistics["switch_events"] == ref.statistics["switch_events"]
    np.testing.assert_allclose(out.y, ref.y, rtol=0, atol=1e-12)
