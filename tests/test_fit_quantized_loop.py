"""Fitting a rig whose controller reads a quantized encoder.

A sampled controller on an encoder of 4096 counts a turn makes the run a piecewise
smooth function of the model's values: a change that moves one sample of the encoder
across a count changes the controller's output for a sample, and the run by a small
jump. The fit's Jacobian is taken on the model with the quantization left out (its
trend); the residuals stay the quantized model's. On a hub with stick-slip friction
driven by a DC motor, from a record made by the model itself (the encoder's counts
written, as a rig's record is), the fit recovers the Coulomb friction and the
motor's torque constant from 5 % off, within 2 % and within three of its standard
deviations, with s^2 near 1 (the residuals are the encoder's quantization)."""

import json
import math

import numpy as np
import pytest
from cli_in_process import flexmbs_here

from flexmbs import load_model
from flexmbs.analysis.fit import integrated_autocorrelation_time, quantizing_sensors
from flexmbs.simulation import simulate

COUNT = 2 * math.pi / 4096  # rad
LEAD = 0.02  # s of rest recorded before the run
TRUE = {"frictions.bearings.coulomb": 0.012, "actuators.motor.torque_constant": 0.25}

HUB = f"""
[model]
name = "hub_servo"
gravity = [0.0, 0.0, -9.81]

[solver]
method = "bdf"
t_end = 0.5

[output]
step = 0.001

[bodies.hub]
mass = 1.0
inertia = [0.004, 0.004, 0.004]
inertia_about = "com"

[joints.shaft]
type = "revolute"
parent = "ground"
child = "hub"
axis = [0.0, 0.0, 1.0]

[frictions.bearings]
joint = "shaft"
coulomb = 0.012
static = 0.016
viscous = 2e-3
law = "stick-slip"

[actuators.motor]
joint = "shaft"
type = "dc_motor"
resistance = 5.0
torque_constant = 0.25
voltage = {{law = "constant", value = 0.0}}

[sensors.hub]
type = "joint_coordinate"
joint = "shaft"

[sensors.encoder]
type = "joint_coordinate"
joint = "shaft"
resolution = {COUNT!r}

[controllers.servo]
actuator = "motor"
command = "voltage"
sample_time = 0.005
delay = 0.005
limits = 20.0

[[controllers.servo.inputs]]
sensor = "encoder"
gain = 20.0
setpoint = {{law = "steps", times = [0.0, 0.05, 0.3], values = [0.0, 0.6, 0.2]}}

[[controllers.servo.inputs]]
joint = "shaft"
rate = true
gain = 1.0
"""

MAP = """
[experiment]
time = "time"

[alignment]
method = "xcorr"
channel = "hub"

[channels.hub]
sensor = "hub"
experiment = "encoder"
raw_unit = "rad"
unit = "rad"
"""


def test_the_quantizing_sensors_are_those_with_a_resolution():
    doc = {"sensors": {"a": {"resolution": 0.001}, "b": {"resolution": 0.0}, "c": {}}}
    assert quantizing_sensors(doc) == ["a"]
    assert quantizing_sensors({}) == []


def test_the_correlation_time_of_white_and_of_autoregressive_series():
    """White noise: tau = 1; an AR(1) series x_k = phi x_k-1 + e_k: tau = (1 + phi) /
    (1 - phi), here 19 (within the estimate's scatter on 20 000 samples)."""
    rng = np.random.default_rng(5)
    assert integrated_autocorrelation_time(rng.normal(size=20000)) == pytest.approx(1.0, abs=0.1)
    e = rng.normal(size=20000)
    x = np.zeros_like(e)
    for k in range(1, len(e)):
        x[k] = 0.9 * x[k - 1] + e[k]
    assert integrated_autocorrelation_time(x) == pytest.approx(19.0, rel=0.15)
    assert integrated_autocorrelation_time(np.zeros(10)) == 1.0


@pytest.mark.slow
def test_a_servo_on_a_quantized_encoder_is_fitted_to_its_noise(tmp_path, capsys):
    model_file, record, channel_map, sim = _hub_record(tmp_path)
    assert sim.statistics["switch_events"] > 0  # the hub sticks
    out = flexmbs_here(
        capsys, "fit", model_file, record, "--map", channel_map,
        "--param", "frictions.bearings.coulomb=0:0.016",
        "--param", "actuators.motor.torque_constant",
        "--set", "frictions.bearings.coulomb=0.0114",
        "--set", "actuators.motor.torque_constant=0.2625",
        "--no-verify", "--no-plots", "--json", "-q", "--serial", "-o", tmp_path / "fit",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)["fit"]
    assert report["smooth_jacobian"] == ["encoder"]
    assert report["consistent"] and 0.5 < report["variance_ratio"] < 1.5
    fitted = {v["path"]: v for v in report["values"]}
    for path, true in TRUE.items():
        value, std = fitted[path]["value"], fitted[path]["std"]
        assert abs(value - true) < 0.02 * true, (path, value)
        assert abs(value - true) < 3 * std, (path, value, std)


def _hub_record(tmp_path, rtol=1e-10):
    """The hub model's file and its record as the encoder gives it (counts), and the
    channel map."""
    model_file = tmp_path / "hub.toml"
    model_file.write_text(HUB)
    sim = simulate(load_model(model_file), rtol=rtol, atol=rtol / 100, progress=False)
    assert sim.success, sim.message
    hub = sim.sensor("hub")
    hub = np.concatenate([np.full(int(round(LEAD * 1e3)), hub[0]), hub])
    record = tmp_path / "record.csv"
    rows = [f"{k * 1e-3:.3f},{COUNT * round(h / COUNT):.9f}" for k, h in enumerate(hub)]
    record.write_text("time [s],encoder [rad]\n" + "\n".join(rows) + "\n")
    channel_map = tmp_path / "record.map.toml"
    channel_map.write_text(MAP)
    return model_file, record, channel_map, sim


def test_the_run_cap_counts_every_run_of_the_fit(tmp_path):
    """--max-runs is the number of runs the fit makes at most: the starting run, one
    per evaluation, and for each Jacobian one per value and one of the trend at the
    point itself (the model quantizes). Two values: 1 + 4 per evaluation, so 9 runs
    allow two evaluations; fewer than 5 cannot make one step and are refused."""
    from flexmbs.analysis.channel_map import load_channel_map
    from flexmbs.analysis.experiment import read_experiment
    from flexmbs.analysis.fit import fit_model, parse_parameter
    from flexmbs.errors import ModelError

    model_file, record, map_file, _ = _hub_record(tmp_path, rtol=1e-8)
    channel_map = load_channel_map(map_file)
    experiment = read_experiment(record, channel_map.time_name, channel_map.group)
    params = [parse_parameter("frictions.bearings.coulomb=0:0.016"),
              parse_parameter("actuators.motor.torque_constant")]
    start = ["frictions.bearings.coulomb=0.0114", "actuators.motor.torque_constant=0.2625"]
    args = dict(overrides=start, t_end=0.2, verify_limit=None)
    fit = fit_model(model_file, experiment, channel_map, params, max_runs=9, **args)
    assert not fit.success and 5 <= fit.runs <= 9, (fit.success, fit.runs)
    with pytest.raises(ModelError, match="expected --max-runs >= 5"):
        fit_model(model_file, experiment, channel_map, params, max_runs=4, **args)
