"""Joint limits as compliant stops (flexmbs.dynamics.stops): a rotor that strikes its
stop follows the closed-form contact of a spring and a damper, the contact's start and
end located as state events by both integrators, the stop's energy in the balance; the
model file's `limits`, the URDF importer's, and bad input."""

import numpy as np
import pytest

from flexmbs import ModelError, simulate
from flexmbs.model import Model
from flexmbs.model.toml_reader import loads_model

J = 0.05              # kg m^2 about the axis
W0 = 2.0              # rad/s towards the stop
UPPER = 0.3           # rad, the stop; the rotor starts at 0
K, C = 500.0, 0.8     # N m/rad, N m s/rad: zeta = C / (2 sqrt(K J)) = 0.08


def _rotor(method, stiffness=K, damping=C, t_end=0.6, rtol=1e-10, lower=-np.inf):
    m = Model("stop", gravity=(0.0, 0.0, -9.81))
    m.add_rigid_body("rotor", mass=1.0, com=(0, 0, 0), inertia=(0.03, 0.03, J),
                     inertia_about="com")
    m.add_joint("hinge", "revolute", parent="ground", child="rotor", axis=(0, 0, 1),
                initial_rate=W0, limits=[lower, UPPER], limit_stiffness=stiffness,
                limit_damping=damping)
    m.add_sensor("theta", "joint_coordinate", joint="hinge")
    m.add_sensor("rate", "joint_rate", joint="hinge")
    m.set_solver(method=method, t_end=t_end, rtol=rtol, atol=rtol * 1e-2)
    m.set_output(step=0.002)
    return m


def _closed_form(t):
    """theta(t): free at W0 to the stop, the damped half-cycle of J d'' + C d' + K d = 0
    in contact (d = theta - UPPER), then free at the rebound's speed."""
    wn = np.sqrt(K / J)
    zeta = C / (2.0 * np.sqrt(K * J))
    wd = wn * np.sqrt(1.0 - zeta ** 2)
    t_hit = UPPER / W0
    t_off = t_hit + np.pi / wd
    w_off = -W0 * np.exp(-zeta * wn * np.pi / wd)
    s = t - t_hit
    contact = UPPER + W0 / wd * np.exp(-zeta * wn * s) * np.sin(wd * s)
    return np.where(t < t_hit, W0 * t, np.where(t < t_off, contact, UPPER + w_off * (t - t_off)))


@pytest.mark.parametrize("method", ["bdf", "galpha"])
def test_a_strike_on_the_stop_is_the_closed_form_contact(method):
    sim = simulate(_rotor(method))
    assert sim.status == "finished", sim.message
    theta = _closed_form(sim.t)
    tol = 1e-7 if method == "bdf" else 1e-4
    assert np.abs(sim.sensors[:, 0] - theta).max() <= tol * UPPER
    assert sim.statistics["switch_events"] == 2      # the contact's start and end
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    assert np.abs(total - total[0]).max() <= (1e-8 if method == "bdf" else 1e-4) * e[0, 0]
    # the damper took what the rotor lost
    assert -e[-1, 4] == pytest.approx(e[0, 0] - e[-1, 0], rel=1e-6)
    assert e[:, 3].max() > 0.5 * e[0, 0]              # the stop's spring held most of it


@pytest.mark.parametrize("method", ["bdf", "galpha"])
def test_an_undamped_stop_gives_the_energy_back(method):
    """Without damping the rotor leaves at the speed it came, the spring's energy
    given back whole."""
    sim = simulate(_rotor(method, damping=0.0))
    assert sim.sensors[-1, 1] == pytest.approx(-W0, rel=1e-6 if method == "bdf" else 1e-4)
    e = sim.energy
    assert e[-1, 0] == pytest.approx(e[0, 0], rel=1e-6 if method == "bdf" else 1e-4)
    assert abs(e[-1, 4]) <= 1e-12 * e[0, 0]


def test_limits_from_the_model_file_and_their_checks():
    text = """
[model]
name = "stops"
[bodies.b]
mass = 1.0
inertia = [0.01, 0.01, 0.01]
inertia_about = "com"
[joints.j]
type = "cylindrical"
parent = "ground"
child = "b"
limits = [[-0.1, 0.2], [-inf, 1.5]]
limit_stiffness = [1e4, 300.0]
limit_damping = 2.0
"""
    model = loads_model(text)
    j = model.joints["j"]
    np.testing.assert_array_equal(j.limits, [[-0.1, 0.2], [-np.inf, 1.5]])
    np.testing.assert_array_equal(j.limit_stiffness, [1e4, 300.0])
    np.testing.assert_array_equal(j.limit_damping, [2.0, 2.0])
    from flexmbs import compile_model
    m = compile_model(model).arrays
    np.testing.assert_array_equal(m.stop_upper, [0.2, 1.5])


@pytest.mark.parametrize("fields, field, words", [
    ({"limits": [0.5, -0.5], "limit_stiffness": 1.0}, "limits", "lower < upper"),
    ({"limits": [0.0, 1.0, 2.0], "limit_stiffness": 1.0}, "limits", "[lower, upper]"),
    ({"limits": [-1.0, 1.0]}, "limit_stiffness", "stiffness"),
    ({"limits": [-1.0, 1.0], "limit_stiffness": 1.0, "limit_damping": -1.0},
     "limit_damping", ">= 0"),
    ({"limits": [0.1, 1.0], "limit_stiffness": 1.0}, "initial", "outside its limits"),
    ({"limit_stiffness": 1.0}, "limit_stiffness", "need limits"),
])
def test_bad_limits_are_named(fields, field, words):
    m = Model("bad")
    m.add_rigid_body("b", mass=1.0, com=(0, 0, 0), inertia=(1e-3, 1e-3, 1e-3),
                     inertia_about="com")
    with pytest.raises(ModelError) as err:
        m.add_joint("j", "revolute", parent="ground", child="b", **fields)
    assert err.value.field == field and words in err.value.message


def test_a_driven_coordinate_cannot_have_limits():
    from flexmbs import compile_model
    from flexmbs.model import Harmonic
    m = Model("bad")
    m.add_rigid_body("b", mass=1.0, com=(0, 0, 0), inertia=(1e-3, 1e-3, 1e-3),
                     inertia_about="com")
    m.add_joint("j", "revolute", parent="ground", child="b", limits=[-1, 1],
                limit_stiffness=10.0)
    m.add_driver("d", "j", Harmonic(amplitude=0.5, omega=1.0))
    with pytest.raises(ModelError, match="prescribed by a driver"):
        compile_model(m)


URDF = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"/>
  <link name="link1">
    <inertial><origin xyz="0.2 0 0"/><mass value="2.0"/>
      <inertia ixx="0.01" iyy="0.05" izz="0.05" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="link2">
    <inertial><origin xyz="0 0 0.1"/><mass value="1.0"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="link1"/><axis xyz="0 0 1"/>
    <limit lower="-1.5" upper="2.0" effort="30.0" velocity="3.0"/>
  </joint>
  <joint name="slide" type="prismatic">
    <parent link="link1"/><child link="link2"/><origin xyz="0.4 0 0"/><axis xyz="0 0 1"/>
    <limit lower="0.05" upper="0.3" effort="100.0" velocity="0.5"/>
  </joint>
</robot>
"""


def test_urdf_limits_become_stops(tmp_path):
    pytest.importorskip("yourdfpy")
    from flexmbs.model.urdf import STOP_DAMPING_TIME, STOP_PENETRATION, load_urdf
    path = tmp_path / "arm.urdf"
    path.write_text(URDF)
    model = load_urdf(path)
    shoulder, slide = model.joints["shoulder"], model.joints["slide"]
    np.testing.assert_array_equal(shoulder.limits, [[-1.5, 2.0]])
    assert shoulder.limit_stiffness[0] == pytest.approx(30.0 / STOP_PENETRATION["rad"])
    assert slide.limit_stiffness[0] == pytest.approx(100.0 / STOP_PENETRATION["m"])
    assert slide.limit_damping[0] == pytest.approx(slide.limit_stiffness[0] * STOP_DAMPING_TIME)
    assert slide.initial[0] == 0.05          # 0 lies below the slide's range
    assert "velocity limit 3.0" in model.source_text
