"""Joint limits as compliant stops (flexmbs.dynamics.stops): a rotor that strikes its
stop follows the closed-form contact of a spring and a damper, the contact's start and
end located as state events by both integrators, the stop's energy in the balance; the
model file's `limits`, the URDF importer's, and bad input."""

import numpy as np
import pytest

import flexmbs
from flexmbs import ModelError, simulate
from flexmbs.formats.toml_reader import loads_model
from flexmbs.model import Model

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


ARM = 0.3                 # m, hinge to the pendulum's centre of mass
MASS = 1.0                # kg
K_ARM = 30.0 / np.radians(1.0)   # N m/rad: 30 N m at 1 degree, as the URDF importer's
C_ARM = 0.01 * K_ARM      # N m s/rad: its damping time, 10 ms
OUTPUT_STEP = 2e-4       # s


def _pendulum(method, limits, initial=0.0, t_end=1.0):
    """A pendulum (its arm along x, horizontal at 0) that gravity swings about y
    towards positive angles, with stops at `limits`; the solver's defaults."""
    m = Model("pendulum", gravity=(0.0, 0.0, -9.81))
    m.add_rigid_body("arm", mass=MASS, com=(ARM, 0, 0), inertia=(1e-3, 1e-2, 1e-2),
                     inertia_about="com")
    m.add_joint("hinge", "revolute", parent="ground", child="arm", axis=(0, 1, 0),
                initial=initial, limits=limits, limit_stiffness=K_ARM,
                limit_damping=C_ARM)
    m.add_sensor("theta", "joint_coordinate", joint="hinge")
    m.add_sensor("rate", "joint_rate", joint="hinge")
    m.set_solver(method=method, t_end=t_end)
    m.set_output(step=OUTPUT_STEP)
    return m


def _stop_work(theta, rate, t, lower, upper):
    """The work (J) of the stop's contact torque on the pendulum, integral of Q x' dt
    from the outputs, Q = -(k d + c x') where the angle lies past a limit by d (zero
    elsewhere), and the stop spring's energy k d^2 / 2 (J) at each output.

    The trapezoidal rule between outputs; on an interval where the contact starts or
    ends (Q jumps there by c x'), over its part in contact only, from the crossing
    (d = 0, Q x' = -c x'^2; its time and rate interpolated linearly)."""
    d = np.where(theta > upper, theta - upper, np.where(theta < lower, theta - lower, 0.0))
    p = np.where(d != 0.0, -(K_ARM * d + C_ARM * rate) * rate, 0.0)
    dt = np.diff(t)
    step = 0.5 * (p[1:] + p[:-1]) * dt
    for i in np.flatnonzero((d[1:] != 0.0) != (d[:-1] != 0.0)):
        inside = i if d[i] != 0.0 else i + 1
        limit = upper if theta[inside] > upper else lower
        f = (limit - theta[i]) / (theta[i + 1] - theta[i])   # the crossing in [0, 1]
        x_rate = rate[i] + f * (rate[i + 1] - rate[i])
        part = f if inside == i else 1.0 - f
        step[i] = 0.5 * (p[inside] - C_ARM * x_rate * x_rate) * part * dt[i]
    return np.concatenate(([0.0], np.cumsum(step))), 0.5 * K_ARM * d * d


@pytest.mark.parametrize("method", ["bdf", "galpha"])
def test_a_pendulum_dropped_onto_a_stop_keeps_the_balance(method, tmp_path):
    """Released horizontal, the pendulum strikes its stop at 1.2 rad at about 4 rad/s,
    rebounds and settles on it: the damper's work (W_nc) is what the contact torque
    did, less what the stop's spring holds, and the balance passes the energy check
    at the solver's defaults."""
    lower, upper = -0.5, 1.2
    sim = simulate(_pendulum(method, [lower, upper]), tmp_path / "run.h5")
    assert sim.status == "finished", sim.message
    theta, rate = sim.sensors[:, 0], sim.sensors[:, 1]
    assert theta.max() > upper + 0.02 and rate.min() < -0.5   # a strike and a rebound
    work, stored = _stop_work(theta, rate, sim.t, lower, upper)
    e = sim.energy
    # W_nc = the contact's work + the spring's energy, to the quadrature's error:
    # 5e-4 of it at 0.2 ms outputs, 5e-5 at 0.1 ms
    dissipated = e[:, 4]
    assert dissipated[-1] < -0.5 * e[:, 0].max()
    np.testing.assert_allclose(dissipated, work + stored, atol=2e-3 * abs(dissipated[-1]))
    # the spring energy of the result is the stop's (the hinge has no spring)
    np.testing.assert_allclose(e[:, 3], stored, atol=1e-9 * e[:, 0].max())
    balance = flexmbs.energy_balance(tmp_path / "run.h5")
    assert balance["passed"], balance["failed_because"]
    assert balance["relative_drift"] < (1e-5 if method == "bdf" else 1e-3)


@pytest.mark.parametrize("method", ["bdf", "galpha"])
def test_a_pendulum_released_on_its_limit_rests_on_the_stop(method, tmp_path):
    """Released at rest exactly on its upper limit with gravity pushing it in (a
    robot description's zero pose at the end of a joint's range): the stop holds it
    from the start, and it settles at the static penetration m g l / k."""
    sim = simulate(_pendulum(method, [-1.0, 0.0]), tmp_path / "run.h5")
    assert sim.status == "finished", sim.message
    assert sim.statistics["switch_events"] == 0   # held from the start, never left
    static = MASS * 9.81 * ARM / K_ARM
    theta = sim.sensors[:, 0]
    assert theta.max() < 2.0 * static
    assert theta[-1] == pytest.approx(static, rel=1e-3)
    work, stored = _stop_work(theta, sim.sensors[:, 1], sim.t, -1.0, 0.0)
    np.testing.assert_allclose(sim.energy[:, 4], work + stored,
                               atol=1e-2 * abs(sim.energy[-1, 4]))
    balance = flexmbs.energy_balance(tmp_path / "run.h5")
    assert balance["passed"], balance["failed_because"]


@pytest.mark.parametrize("upper", [True, False])
def test_a_stop_on_its_limit_takes_the_side_of_the_motion(upper):
    """stops_on_their_limits: a switch function at zero gives the stop the side the
    coordinate heads for, by its rate, or at rest by its acceleration (asked for only
    then); at rest without acceleration the stop stays free; g stays zero."""
    from flexmbs import compile_model
    from flexmbs.dynamics.stop_sides import stops_on_their_limits
    cm = compile_model(_pendulum("bdf", [-1.0, 0.0]))
    m, ws = cm.arrays, cm.new_workspace()
    inward = 1.0 if upper else -1.0
    y = np.zeros(cm.nstate)
    for rate, acceleration, touched in ((1.0, 0.0, True), (-1.0, 5.0, False),
                                        (0.0, 5.0, True), (0.0, -5.0, False),
                                        (0.0, 0.0, False)):
        ws.stop_branch[:] = 0.0
        y[cm.nq] = inward * rate
        yp = np.zeros(cm.nstate)
        yp[cm.nq] = inward * acceleration
        asked = []
        g = np.array([0.0, 1.0]) if upper else np.array([1.0, 0.0])
        zero = stops_on_their_limits(m, ws, y, g, lambda yp=yp, asked=asked: asked.append(1) or yp)
        assert list(zero) == [0 if upper else 1] and g[zero[0]] == 0.0
        assert ws.stop_branch[0] == (inward if touched else 0.0), (rate, acceleration)
        assert len(asked) == (rate == 0.0)


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
    from flexmbs.formats.urdf import STOP_DAMPING_TIME, STOP_PENETRATION, load_urdf
    path = tmp_path / "arm.urdf"
    path.write_text(URDF)
    model = load_urdf(path)
    shoulder, slide = model.joints["shoulder"], model.joints["slide"]
    np.testing.assert_array_equal(shoulder.limits, [[-1.5, 2.0]])
    assert shoulder.limit_stiffness[0] == pytest.approx(30.0 / STOP_PENETRATION["rad"])
    assert slide.limit_stiffness[0] == pytest.approx(100.0 / STOP_PENETRATION["m"])
    assert slide.limit_damping[0] == pytest.approx(slide.limit_stiffness[0] * STOP_DAMPING_TIME)
    assert slide.initial[0] == pytest.approx(0.051)  # 0 lies below the range: 1 mm in
    assert "velocity limit 3.0" in model.source_text


@pytest.mark.parametrize("method", ["bdf", "galpha"])
def test_an_imported_arm_started_on_a_limit_keeps_the_balance(method, tmp_path):
    """The slide started on its lower limit, which gravity pushes it into: the stop
    holds it from the start, and the balance passes (before, the slide fell through
    the stop while its spring's energy was counted, 0.54 J of drift in 0.05 s on a
    robot description's arm; the importer now starts such a joint inside its range,
    and a model file may still start one on its limit)."""
    pytest.importorskip("yourdfpy")
    from flexmbs.formats.toml_reader import loads_model
    from flexmbs.formats.urdf import urdf_model_text
    path = tmp_path / "arm.urdf"
    path.write_text(URDF)
    model = loads_model(urdf_model_text(path), overrides=["joints.slide.initial=0.05"])
    model.set_solver(method=method, t_end=0.3)
    model.add_sensor("x", "joint_coordinate", joint="slide")
    sim = simulate(model, tmp_path / "run.h5")
    assert sim.status == "finished", sim.message
    lower = model.joints["slide"].limits[0][0]
    assert model.joints["slide"].initial[0] == lower
    assert sim.statistics["switch_events"] == 0   # no restarts on the limit
    # held 1 mm into the stop under its effort, not fallen through
    assert lower - 1e-3 < sim.sensor("x").min() < lower
    balance = flexmbs.energy_balance(tmp_path / "run.h5")
    assert balance["passed"], balance["failed_because"]
