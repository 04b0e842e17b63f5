"""The live view of a Simulator (flexmbs.show(sim, live=True)): its frames are the
scene's frames of the loop's last step, the page in a headless Chromium follows the
loop (the drawn tip where the marker sensor of the step is), and a slider holds its
input port from the next step on."""

import json
import urllib.error
import urllib.request

import numpy as np
import pytest
from test_viewer import FLOAT32, _open, browser, chromium  # noqa: F401 (a fixture)

from flexmbs import ModelError, Simulator
from flexmbs.errors import FlexmbsError
from flexmbs.formats.toml_reader import loads_model
from flexmbs.viewer import show
from flexmbs.viewer.array_text import unpacked
from flexmbs.viewer.scene import build_scene

DT = 2e-3
MODEL = """
[model]
name = "link"
gravity = [0.0, 0.0, 0.0]
[solver]
method = "galpha"
t_end = 1.0
rtol = 1e-7
atol = 1e-9
[output]
step = 0.002
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
value = 0.05
[sensors.tip_global]
type = "marker_position"
body = "strip"
marker = "tip"
"""
MOVING = ("relative", "markerElastic", "deflection", "fieldValues", "feCoordinates")


def _get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def _post(url, body):
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as r:
        return r.status


def test_a_frame_is_the_scene_of_the_last_step():
    """The frame the server answers is the frame build_scene makes of the state of the
    loop's last step (the same kinematics, one frame)."""
    sim = Simulator(loads_model(MODEL))
    with show(sim, live=True, browser=False) as view:
        for _ in range(40):
            sim.step(DT)
        doc = _get(view.url + "frame.json")
        t, q = sim.snapshot()
        assert doc["t"] == t == sim.time
        np.testing.assert_array_equal(q, sim.q)
        reference = build_scene(sim.compiled, sim.model, np.array([t]), q[None, :], "ref").data
        for key in MOVING:
            np.testing.assert_array_equal(unpacked(doc[key]), unpacked(reference[key]))
        assert view.frames == 1 and view.frame_cpu > 0.0
    sim.close()


def test_the_sliders_and_the_inputs_they_post_are_checked():
    sim = Simulator(loads_model(MODEL))
    with pytest.raises(FlexmbsError, match="no input port 'motor.voltage'.*motor.torque"):
        show(sim, live=True, browser=False, inputs={"motor.voltage": (0.0, 1.0)})
    with pytest.raises(FlexmbsError, match="expected finite low < high"):
        show(sim, live=True, browser=False, inputs={"motor.torque": (1.0, -1.0)})
    with pytest.raises(FlexmbsError, match="shows a flexmbs.Simulator"):
        show(sim.model, live=True, browser=False)
    with pytest.raises(ModelError, match="finite number"):
        sim.hold({"motor.torque": float("inf")})
    with show(sim, live=True, browser=False, inputs={"motor.torque": (-0.1, 0.1)}) as view:
        for body in (b'{"motor.voltage": 1}', b"[1]", b"{"):
            with pytest.raises(urllib.error.HTTPError) as caught:
                _post(view.url + "inputs", body)
            assert caught.value.code == 400
        assert _post(view.url + "inputs", b'{"motor.torque": 0.02}') == 200
        assert sim.inputs["motor.torque"] is None  # held from the next step on
        sim.step(DT)
        assert sim.inputs["motor.torque"] == 0.02
        sim.step(DT, inputs={"motor.torque": -0.01})  # the loop's own value wins
        assert sim.inputs["motor.torque"] == -0.01
    sim.close()


@browser
def test_the_page_follows_the_loop_and_its_slider_sets_the_input(chromium):  # noqa: F811
    """After each batch of steps the page, asking for frames at the display's rate,
    shows the last step: the drawn tip (deflection x1) is where the step's marker
    sensor is. A slider moved on the page holds its port from a following step."""
    page, errors = chromium
    sim = Simulator(loads_model(MODEL))
    with show(sim, live=True, browser=False, inputs={"motor.torque": (-0.1, 0.1)}) as view:
        _open(page, errors, view.url)
        page.evaluate("flexmbsViewer.setScale(1)")
        start = sim.sensors["tip_global"]
        for _ in range(3):
            for _ in range(50):
                sim.step(DT)
            page.wait_for_function(f"flexmbsViewer.time() === {sim.time!r}", timeout=20000)
            drawn = np.array(page.evaluate("flexmbsViewer.drawnBeamPoint('strip', -1)"))
            sensor = sim.sensors["tip_global"]
            assert np.abs(drawn - sensor).max() < FLOAT32, (sim.time, drawn, sensor)
        assert np.linalg.norm(sim.sensors["tip_global"] - start) > 0.05  # the frames moved
        assert page.evaluate("flexmbsViewer.liveFrames") >= 3
        assert page.evaluate("flexmbsViewer.setInput('motor.torque', -0.03)")
        for _ in range(500):
            sim.step(DT)
            if sim.inputs["motor.torque"] is not None:
                break
        assert sim.inputs["motor.torque"] == pytest.approx(-0.03, abs=1e-12)
    assert errors == []
    sim.close()
