"""Backlash as a model item against closed forms: a rotor oscillating freely through
its play (period 2 b / w0 + 2 pi sqrt(J / k), amplitude b / 2 + w0 sqrt(J / k), its
energy kept), a damped one whose balance closes with the contact's work, and the
static dead band (a constant torque holds the rotor tau / k past the play's edge)."""

import math

import numpy as np
import pytest

from flexmbs.errors import ModelError
from flexmbs.model.description import Model
from flexmbs.model.timefunctions import Constant
from flexmbs.simulation import simulate

J = 0.02  # kg m^2
GAP, K = 0.02, 50.0  # rad, N m/rad


def rotor(t_end, rate=0.0, damping=0.0, torque=None, center=0.0):
    """A free rotor of inertia J about z on joint "axle", with a backlash of play
    GAP about `center` whose edges are a contact of stiffness K and `damping`."""
    m = Model("play", gravity=(0.0, 0.0, 0.0))
    m.add_rigid_body("disk", mass=1.0, com=(0, 0, 0), inertia=(J, J, J),
                     inertia_about="com")
    m.add_joint("axle", "revolute", parent="ground", child="disk", axis=(0, 0, 1),
                initial=center, initial_rate=rate)
    m.add_backlash("gear", joint="axle", gap=GAP, stiffness=K, damping=damping,
                   center=center)
    if torque is not None:
        m.add_actuator("motor", joint="axle", type="torque", torque=Constant(torque))
    m.add_sensor("angle", "joint_coordinate", joint="axle")
    m.set_solver(method="bdf", t_end=t_end, rtol=1e-10, atol=1e-12)
    m.set_output(step=1e-4)
    return m


@pytest.mark.parametrize("center", [0.0, 0.3])
def test_free_oscillation_through_the_play(center):
    w0 = 0.5
    sim = simulate(rotor(1.0, rate=w0, center=center), progress=False)
    assert sim.success, sim.message
    x = sim.sensor("angle") - center
    wc = math.sqrt(K / J)
    amplitude = GAP / 2 + w0 / wc
    assert x.max() == pytest.approx(amplitude, rel=1e-6)
    assert x.min() == pytest.approx(-amplitude, rel=1e-6)
    period = 2 * GAP / w0 + 2 * math.pi / wc
    up = np.flatnonzero((x[:-1] < 0.0) & (x[1:] >= 0.0))
    t_up = sim.t[up] - x[up] * (sim.t[up + 1] - sim.t[up]) / (x[up + 1] - x[up])
    assert len(t_up) >= 3
    assert np.diff(t_up) == pytest.approx(period, abs=1e-8)
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    # local errors of rtol (1e-10) a step, over the steps
    assert np.abs(total - total[0]).max() < 1e-10 * sim.statistics["nsteps"] * e[0, 0]
    assert e[:, 3].max() == pytest.approx(0.5 * J * w0 ** 2, rel=1e-6)  # all in the teeth


def test_damped_contact_closes_the_balance():
    """A damped play loses energy at each contact, which W_nc holds."""
    sim = simulate(rotor(1.0, rate=0.5, damping=0.05), progress=False)
    assert sim.success, sim.message
    e = sim.energy
    assert e[-1, 0] < 0.5 * e[0, 0]
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    assert np.abs(total - total[0]).max() < 1e-10 * sim.statistics["nsteps"] * e[0, 0]


def test_static_dead_band():
    """A constant torque tau drives the rotor across the play and it settles tau / K
    past the edge; the play's dead band b is the travel before any load is held."""
    tau = 0.4
    sim = simulate(rotor(3.0, damping=1.0, torque=tau), progress=False)
    assert sim.success, sim.message
    assert sim.sensor("angle")[-1] == pytest.approx(GAP / 2 + tau / K, rel=1e-8)


def test_backlash_errors():
    m = rotor(0.1)
    with pytest.raises(ModelError, match="gap"):
        m.add_backlash("b", joint="axle", gap=0.0, stiffness=1.0)
    with pytest.raises(ModelError, match="stiffness"):
        m.add_backlash("b", joint="axle", gap=0.1, stiffness=-1.0)
    with pytest.raises(ModelError, match="damping"):
        m.add_backlash("b", joint="axle", gap=0.1, stiffness=1.0, damping=-1.0)
    with pytest.raises(ModelError, match="unknown joint"):
        m.add_backlash("b", joint="nope", gap=0.1, stiffness=1.0)
    with pytest.raises(ModelError, match="used twice"):
        m.add_backlash("gear", joint="axle", gap=0.1, stiffness=1.0)
