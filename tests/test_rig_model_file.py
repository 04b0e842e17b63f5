"""A test rig from its model file alone: user laws named in the file (a file beside
it or a module), beams started in their own modes with the axial part of the bend
computed, and the shipped rotary flexible link read, run and its sensors read by
name."""

import textwrap
import tomllib
from pathlib import Path

import numpy as np
import pytest
from cli_in_process import flexmbs_here

from flexmbs.analysis.compare import compare_files
from flexmbs.cli import main
from flexmbs.elements.modal import body_modes
from flexmbs.formats.toml_reader import load_model, loads_model
from flexmbs.model.compiled import compile_model
from flexmbs.simulation import simulate

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
EXPERIMENTS = MODELS.parent / "experiments"

PENDULUM = """
[model]
name = "damped"
gravity = [0.0, 0.0, -9.81]
[solver]
method = "bdf"
t_end = 1.0
rtol = 1e-9
atol = 1e-11
[output]
step = 0.01
[bodies.rod]
mass = 1.0
com = [0.0, 0.0, -0.4]
inertia = [1e-3, 1e-3, 1e-3]
inertia_about = "com"
[joints.pin]
type = "revolute"
parent = "ground"
child = "rod"
axis = [0.0, 1.0, 0.0]
initial = 0.5
[sensors.angle]
type = "joint_coordinate"
joint = "pin"
"""

LAW = textwrap.dedent("""
    def damper(t, q, u, params, out):
        out[0] = -params[0] * u[int(params[1])]
""")


def test_user_law_from_a_file_beside_the_model(tmp_path):
    """A joint damper written as a law in laws.py, named "laws.py:damper" in the
    model file, runs as the joint's own damping does."""
    (tmp_path / "laws.py").write_text(LAW)
    law = PENDULUM + textwrap.dedent("""
        [user_laws.damper]
        function = "laws.py:damper"
        joint = "pin"
        params = [0.3]
        read_coordinates = "pin"
    """)
    (tmp_path / "law.toml").write_text(law)
    plain = PENDULUM.replace("initial = 0.5", "initial = 0.5\ndamping = 0.3")
    a = simulate(load_model(tmp_path / "law.toml"), progress=False)
    b = simulate(loads_model(plain), progress=False)
    assert np.abs(a.sensor("angle") - b.sensor("angle")).max() < 1e-8
    assert main(["run", str(tmp_path / "law.toml"), "-o", str(tmp_path / "law.h5"), "-q"]) == 0


def test_user_law_from_a_module(tmp_path, monkeypatch):
    (tmp_path / "rig_laws_for_test.py").write_text(LAW)
    monkeypatch.syspath_prepend(str(tmp_path))
    model = loads_model(
        PENDULUM
        + textwrap.dedent("""
        [user_laws.damper]
        function = "rig_laws_for_test:damper"
        joint = "pin"
        params = [0.3, 0]
    """)
    )
    assert model.user_laws["damper"].function == "rig_laws_for_test:damper"
    assert simulate(model, progress=False).success


BEAM = """
[model]
name = "ringing"
gravity = [0.0, 0.0, 0.0]
[solver]
method = "bdf"
t_end = 0.6
rtol = 1e-8
atol = 1e-10
[output]
step = 0.0005
[bodies.ruler]
type = "beam"
points = [[0.0, 0.0, 0.0], [0.5, 0.0, 0.0]]
elements = 6
reference = [0.0, 1.0, 0.0]
initial = {initial}
[bodies.ruler.section]
type = "rectangle"
width = 0.001
height = 0.02
[bodies.ruler.material]
youngs_modulus = 2.0e11
poisson_ratio = 0.3
density = 7850.0
[bodies.ruler.markers.tip]
node = -1
[joints.clamp]
type = "fixed"
parent = "ground"
child = "ruler"
[sensors.tip]
type = "marker_deflection"
body = "ruler"
marker = "tip"
frame = "ruler"
"""


def test_beam_started_in_its_first_mode_rings_at_its_frequency():
    """initial = {mode = 1, amplitude = A}: the tip (the mode's largest translation)
    starts at A; the axial coordinates hold the bend's foreshortening, so the
    elastic force along the beam is zero; the beam rings at the first mode's
    frequency, with the amplitude it started with (no other mode excited)."""
    amp = 0.02
    model = loads_model(BEAM.format(initial=f"{{mode = 1, amplitude = {amp}}}"))
    cm = compile_model(model)
    beam = model.bodies["ruler"]
    tip = cm.q0[list(cm.coordinate_names).index("ruler.n6.v")]
    assert tip == pytest.approx(amp, rel=1e-12)
    axial = [k for k, n in enumerate(cm.coordinate_names) if n.endswith(".u")]
    assert np.all(cm.q0[axial] < 0.0)  # shortened
    from flexmbs.dynamics import api

    force = api.generalized_forces(cm, cm.q0, np.zeros(cm.nq))
    scale = np.abs(beam.invariants.stiffness @ cm.q0).max()
    assert np.abs(force[axial]).max() < 1e-9 * scale
    sim = simulate(model, progress=False)
    w = sim.sensor("tip")[:, 1]
    up = np.flatnonzero((w[:-1] < 0) & (w[1:] >= 0))
    crossings = sim.t[up] - w[up] * (sim.t[up + 1] - sim.t[up]) / (w[up + 1] - w[up])
    period = np.mean(np.diff(crossings))
    f1 = body_modes(beam).frequencies[~body_modes(beam).rigid][0]
    assert 1.0 / period == pytest.approx(f1, rel=2e-3)
    assert np.abs(w).max() == pytest.approx(amp, rel=2e-3)


def test_beam_started_in_several_modes_with_rates():
    model = loads_model(
        BEAM.format(
            initial="[{mode = 1, amplitude = 0.01}, {mode = 2, amplitude = 0.002, rate = 0.3}]"
        )
    )
    cm = compile_model(model)
    names = list(cm.coordinate_names)
    assert cm.u0[names.index("ruler.n6.v")] != 0.0
    assert simulate(model, t_end=0.05, progress=False).success


def test_the_flexible_link_rig_is_a_dc_servo_with_hub_and_tip_feedback():
    """The rig's file holds what its guide walks through: a DC motor driven by voltage,
    a digital controller on the hub's encoder, its rate and the tip's deflection, the
    hub's stick-slip friction and the tip gauge's delay."""
    doc = tomllib.loads((MODELS / "flexible_link_rig.toml").read_text())
    assert doc["actuators"]["motor"]["type"] == "dc_motor"
    servo = doc["controllers"]["servo"]
    assert servo["command"] == "voltage" and servo["sample_time"] > 0
    read = {(i.get("sensor"), i.get("joint"), i.get("rate", False)) for i in servo["inputs"]}
    assert read == {("encoder", None, False), (None, "shaft", True), ("tip", None, False)}
    assert doc["sensors"]["encoder"]["resolution"] > 0
    assert doc["sensors"]["tip"]["dead_time"] > 0
    assert doc["frictions"]["bearings"]["law"] == "stick-slip"


def test_the_flexible_link_rig_runs_from_its_file():
    """The shipped rig: its set-point ramps at 2 rad/s from 0.1 s; the hub's bearings
    hold the hub exactly (no creep) until the servo's torque, 1 N m per rad of error,
    reaches the breakaway 0.016 N m, 8 ms into the ramp (and a sample and its delay
    later), and the servo then turns it; the sensors are read by name."""
    model = load_model(MODELS / "flexible_link_rig.toml")
    sim = simulate(model, t_end=0.3, progress=False)
    assert sim.success, sim.message
    hub = sim.sensor("hub")
    assert np.all(hub[sim.t <= 0.105] == 0.0)  # stuck in its bearings
    assert np.all(np.diff(hub[sim.t >= 0.115]) > 0.0)  # broken away, turning
    assert hub[-1] > 0.1
    encoder = sim.sensor("encoder")
    count = 2 * np.pi / 4096
    assert np.allclose(encoder / count, np.round(encoder / count))
    assert sim.sensor("tip").shape == (len(sim.t), 3)


@pytest.mark.slow
def test_the_flexible_link_rigs_record_compares_at_its_noise(tmp_path, capsys):
    """Its synthetic record (an encoder of 4096 counts a turn, a gauge with 0.02 mm of
    noise, 0.05 s of rest before the run) against a run of the model by the command
    line: the alignment over the whole record finds the 0.05 s to a sample, and the
    errors are the record's: the encoder's quantization error, uniform over a count
    q, is q / sqrt(12) rms; the gauge's, its noise (its 1 um printing adds 0.3 um)."""
    h5 = tmp_path / "servo.h5"
    run = flexmbs_here(capsys, "run", MODELS / "flexible_link_rig.toml", "-o", h5)
    assert run.returncode == 0, run.stderr
    c = compare_files(
        h5, EXPERIMENTS / "servo_synthetic.csv", EXPERIMENTS / "servo_synthetic.map.toml"
    )
    assert c.offset == pytest.approx(0.05, abs=1e-3)
    count = 2 * np.pi / 4096
    assert c.channel("hub").rmse == pytest.approx(count / np.sqrt(12), rel=0.25)
    assert c.channel("tip").rmse == pytest.approx(0.02e-3, rel=0.1)
