"""Couplers (one joint coordinate tied to another, x_f = k x_l + o) against closed
forms: a gear pair swinging as one pendulum of the combined inertia I_p + k^2 I_w
(its period by the complete elliptic integral, under bdf and galpha, and its
linearization's frequency), a torque on the follower accelerating the pair as
k tau / (I_l + k^2 I_f) with the multiplier the mesh's torque, a driven leader whose
follower moves with it; the coupling held to the solver's tolerance and the energy
balance closed along every run (the constraint does no work)."""

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ellipk

from flexmbs import ModelError, compile_model, simulate
from flexmbs.analysis.energy import energy_balance
from flexmbs.analysis.linearize import linearize
from flexmbs.dynamics.constrained import make_consistent
from flexmbs.formats.serialize import model_to_dict
from flexmbs.formats.toml_reader import load_model
from flexmbs.io.results import open_result
from flexmbs.model import Model
from flexmbs.model.library import four_bar
from flexmbs.model.timefunctions import Constant, Harmonic

GEAR_PAIR = Path(__file__).resolve().parents[1] / "data" / "models" / "gear_pair.toml"
K = -0.5  # the gear pair's multiplier
M, L, G = 1.0, 0.2, 9.81  # the pinion's arm: kg, m below the axle, m/s^2
I_PINION = 2e-3 + M * L ** 2  # kg m^2 about its axle
I_WHEEL = 0.04  # kg m^2 about its axle
I_PAIR = I_PINION + K ** 2 * I_WHEEL


def _pair_period(theta0):
    """The period of the pair as one pendulum of inertia I_PAIR swinging to theta0:
    4 sqrt(I / (m g l)) K(sin^2(theta0 / 2)) (s)."""
    return 4.0 * math.sqrt(I_PAIR / (M * G * L)) * ellipk(math.sin(theta0 / 2) ** 2)


def _rising_zeros(t, x):
    up = np.flatnonzero((x[:-1] < 0.0) & (x[1:] >= 0.0))
    return t[up] - x[up] * (t[up + 1] - t[up]) / (x[up + 1] - x[up])


@pytest.mark.parametrize("method, rtol, period_tol", [("bdf", 1e-10, 1e-7),
                                                      ("galpha", 1e-7, 1e-4)])
def test_gear_pair_swings_as_one_pendulum_of_the_combined_inertia(tmp_path, method, rtol,
                                                                  period_tol):
    path = tmp_path / "pair.h5"
    sim = simulate(load_model(GEAR_PAIR), path, t_end=3.2, method=method, rtol=rtol,
                   atol=rtol * 1e-2, output_step=2e-3)
    assert sim.success, sim.message
    pinion, wheel = sim.sensor("pinion_angle"), sim.sensor("wheel_angle")
    assert pinion[0] == pytest.approx(0.3) and wheel[0] == pytest.approx(K * 0.3)
    # the coupling holds at every output to the position constraint's tolerance
    assert np.abs(wheel - K * pinion).max() < 100 * rtol
    # sin(x) > 0 at the start: the pendulum swings to -0.3 and back
    zeros = _rising_zeros(sim.t, pinion)
    assert len(zeros) == 3
    assert np.diff(zeros) == pytest.approx(_pair_period(0.3), rel=period_tol)
    # the swing's far end, sampled every 2 ms (6 rad/s: within 0.3 (6e-3)^2 / 8 of it)
    assert pinion.min() == pytest.approx(-0.3, abs=2e-6)
    report = energy_balance(path)
    assert report["passed"], report["failed_because"]
    assert report["criterion_value"] < 1000 * rtol  # drift per largest energy


def test_gear_pair_linearizes_to_the_combined_inertia():
    cm = compile_model(load_model(GEAR_PAIR, ["joints.pinion_axle.initial=0.0"]))
    make_consistent(cm)
    lin = linearize(cm)
    assert lin.names == ["pinion_axle"] or len(lin.names) == 1
    assert lin.frequencies[0] == pytest.approx(math.sqrt(M * G * L / I_PAIR) / (2 * math.pi),
                                               rel=1e-8)


def _driven_pair(k, offset, torque=None, leader_driver=None, follower_kind="revolute"):
    """Two balanced rotors (inertias 0.3 and 0.05 kg m^2, or a 2 kg slider as the
    follower) without gravity, the follower's coordinate k times the leader's plus
    offset; a torque on the follower or a driver on the leader."""
    m = Model("pair", gravity=(0.0, 0.0, 0.0))
    m.add_rigid_body("big", mass=1.0, com=(0, 0, 0), inertia=(0.15, 0.15, 0.3),
                     inertia_about="com")
    m.add_rigid_body("small", mass=2.0, com=(0, 0, 0), inertia=(0.03, 0.03, 0.05),
                     inertia_about="com")
    m.add_marker("ground", "other", position=(0.5, 0.0, 0.0))
    m.add_joint("leader", "revolute", parent="ground", child="big", axis=(0, 0, 1))
    m.add_joint("follower", follower_kind, parent="ground", parent_marker="other",
                child="small", axis=(0, 0, 1))
    m.add_coupler("gear", joint="follower", leader="leader", multiplier=k, offset=offset)
    if torque is not None:
        m.add_actuator("motor", joint="follower", type="torque", torque=Constant(torque))
    if leader_driver is not None:
        m.add_driver("swing", "leader", leader_driver)
    m.add_sensor("x_leader", "joint_coordinate", joint="leader")
    m.add_sensor("x_follower", "joint_coordinate", joint="follower")
    m.add_sensor("mesh", "coupler_reaction", coupler="gear")
    return m


def test_torque_on_the_follower_accelerates_the_combined_inertia(tmp_path):
    """tau on the follower: the leader's acceleration a = k tau / (I_l + k^2 I_f), the
    multiplier lambda = tau - I_f k a (the mesh torque on the follower is -lambda)."""
    k, offset, tau = 3.0, 0.2, 0.4
    path = tmp_path / "torque.h5"
    sim = simulate(_driven_pair(k, offset, torque=tau), path, t_end=1.0, method="bdf",
                   rtol=1e-10, atol=1e-12, output_step=0.01)
    assert sim.success, sim.message
    a = k * tau / (0.3 + k ** 2 * 0.05)
    assert sim.sensor("x_leader") == pytest.approx(0.5 * a * sim.t ** 2, rel=1e-8, abs=1e-12)
    assert sim.sensor("x_follower") == pytest.approx(k * 0.5 * a * sim.t ** 2 + offset,
                                                    rel=1e-8)
    cm = compile_model(_driven_pair(k, offset, torque=tau))
    lam = sim.y[:, 2 * cm.nq + cm.nworks]
    assert lam == pytest.approx(tau - 0.05 * k * a, rel=1e-7)
    # the coupler's sensor: -lambda on the follower, k lambda on the leader (N m),
    # which alone turns the leader: k lambda = I_l a
    mesh = sim.sensor("mesh")
    assert mesh[:, 0] == pytest.approx(-lam, rel=1e-12)
    assert mesh[:, 1] == pytest.approx(0.3 * a, rel=1e-7)
    assert open_result(path).sensor_units["mesh"] == ["N m", "N m"]
    report = energy_balance(path)
    assert report["passed"], report["failed_because"]
    assert sim.energy[-1, 0] == pytest.approx(tau * (k * 0.5 * a), rel=1e-7)  # T = W


def test_a_driven_leader_carries_its_follower(tmp_path):
    """The leader prescribed (a harmonic swing), the follower a slider coupled to it
    in metres per radian: it moves as k x_l(t) + o, and the driver's work, which
    carries the slider through the coupler, closes the balance. (bdf: a rheonomic
    constraint, Phi_t from the driver, takes galpha many steps, as a four-bar's
    driven crank does.)"""
    method = "bdf"
    k, offset = 0.05, -0.01
    swing = Harmonic(amplitude=0.8, omega=5.0)
    path = tmp_path / "driven.h5"
    sim = simulate(_driven_pair(k, offset, leader_driver=swing, follower_kind="prismatic"),
                   path, t_end=1.5, method=method, rtol=1e-8, atol=1e-10, output_step=0.01)
    assert sim.success, sim.message
    x = 0.8 * np.sin(5.0 * sim.t)
    assert sim.sensor("x_leader") == pytest.approx(x, abs=1e-12)
    assert sim.sensor("x_follower") == pytest.approx(k * x + offset, abs=1e-8)
    report = energy_balance(path)
    assert report["passed"], report["failed_because"]
    # the slider's kinetic energy is the driver's work: 2 kg at k x'
    v = k * 0.8 * 5.0 * np.cos(5.0 * sim.t)
    assert sim.energy[:, 0] == pytest.approx(0.5 * 2.0 * v ** 2 + 0.5 * 0.3 * (v / k) ** 2,
                                             rel=1e-5, abs=1e-9)


def test_the_follower_starts_from_its_leader_and_the_coupler_is_written_back():
    model = _driven_pair(2.0, 0.1)
    model.joints["leader"].initial[:] = 0.25
    model.joints["leader"].initial_rate[:] = -1.0
    cm = compile_model(model)
    assert cm.q0 == pytest.approx([0.25, 0.6]) and cm.u0 == pytest.approx([-1.0, -2.0])
    assert not cm.warnings
    model.joints["follower"].initial[:] = 0.3  # given and not what the coupler gives
    cm = compile_model(model)
    assert cm.q0[1] == pytest.approx(0.6)
    assert any('coupler "gear"' in w and "0.3" in w for w in cm.warnings)
    saved = model_to_dict(model)["couplers"]["gear"]
    assert saved == {"name": "gear", "joint": "follower", "leader": "leader",
                     "coordinate": 0, "leader_coordinate": 0, "multiplier": 2.0,
                     "offset": 0.1}


def _bad(change):
    model = _driven_pair(2.0, 0.0)
    del model.couplers["gear"]
    change(model)
    compile_model(model)


@pytest.mark.parametrize("change, words", [
    (lambda m: m.add_coupler("c", joint="follower", leader="nojoint"), ["leader", "nojoint"]),
    (lambda m: m.add_coupler("c", joint="follower", leader="leader", coordinate=1),
     ["coordinate", "0..0"]),
    (lambda m: m.add_coupler("c", joint="follower", leader="leader", leader_coordinate=2),
     ["leader_coordinate"]),
    (lambda m: m.add_coupler("c", joint="follower", leader="follower"), ["leader", "itself"]),
    (lambda m: m.add_coupler("c", joint="follower", leader="leader", multiplier=0.0),
     ["multiplier", "other than 0"]),
    (lambda m: m.add_coupler("c", joint="follower", leader="leader", offset=math.nan),
     ["offset", "finite"]),
    (lambda m: (m.add_coupler("c", joint="follower", leader="leader"),
                m.add_coupler("d", joint="follower", leader="leader")), ["joint", "already"]),
    (lambda m: (m.add_coupler("c", joint="follower", leader="leader"),
                m.add_coupler("d", joint="leader", leader="follower")), ["leader", "circle"]),
    (lambda m: (m.add_driver("drive", "follower", Constant(0.0)),
                m.add_coupler("c", joint="follower", leader="leader")), ["joint", "prescribed"]),
    (lambda m: (m.add_coupler("c", joint="follower", leader="leader"),
                m.add_driver("drive", "follower", Constant(0.0))), ["joint", "prescribed"]),
])
def test_bad_couplers_are_refused_naming_the_field(change, words):
    with pytest.raises(ModelError) as err:
        _bad(change)
    text = str(err.value)
    assert 'coupler "' in text
    for w in words:
        assert w in text


def test_a_cut_joint_cannot_be_coupled():
    model = four_bar()
    model.add_coupler("gear", joint="coupler_rocker", leader="crank_coupler")
    with pytest.raises(ModelError, match='coupler "gear": field "joint": joint "coupler_rocker" '
                                         "is cut"):
        compile_model(model)


def test_the_projection_formulation_holds_the_coupler_too():
    sim = simulate(load_model(GEAR_PAIR), None, t_end=1.1, method="bdf", rtol=1e-10,
                   atol=1e-12, output_step=2e-3, constraints="projection")
    assert sim.success, sim.message
    pinion, wheel = sim.sensor("pinion_angle"), sim.sensor("wheel_angle")
    assert np.abs(wheel - K * pinion).max() < 1e-8
    zeros = _rising_zeros(sim.t, pinion)
    assert len(zeros) == 1  # in 1.1 s, at three quarters of a period from the start
    t_up = zeros[0]
    assert t_up == pytest.approx(0.75 * _pair_period(0.3), rel=1e-6)


@pytest.mark.parametrize("settings, words", [
    ({"method": "scipy-radau"}, ["couplers mesh", '"bdf" or "ida"']),
    ({"formulation": "order-n"}, ["couplers", "formulation"]),
])
def test_solvers_without_constraints_refuse_a_coupler(settings, words):
    with pytest.raises(ModelError) as err:
        simulate(load_model(GEAR_PAIR), None, t_end=0.01, **settings)
    for w in words:
        assert w in str(err.value)
