"""Physics of rigid trees against analytic solutions and conservation laws."""

import numpy as np
import pytest
from scipy.special import ellipk

from flexmbs import compile_model, simulate
from flexmbs.dynamics import api
from flexmbs.model import Model

G = 9.81


def _pendulum(theta0, length=0.5, mass=1.0):
    m = Model("compound_pendulum", gravity=(0, 0, -G))
    it = mass * length ** 2 / 12
    m.add_rigid_body("rod", mass=mass, com=(0, 0, -length / 2), inertia=(it, it, 1e-4),
                     inertia_about="com")
    m.add_joint("j1", "revolute", parent="ground", child="rod", axis=(0, 1, 0),
                initial=theta0)
    m.add_sensor("theta", "joint_coordinate", joint="j1")
    return m


def _zero_crossings(t, x):
    """Times where x changes sign (linear interpolation: exact to O(h^2 x''), and
    x'' = 0 at a crossing of a pendulum angle)."""
    k = np.flatnonzero(np.sign(x[:-1]) * np.sign(x[1:]) < 0)
    return t[k] - x[k] * (t[k + 1] - t[k]) / (x[k + 1] - x[k])


@pytest.mark.parametrize("theta0", [0.01, 1.0])
def test_compound_pendulum_period(theta0):
    """T = 4 sqrt(I_O / (m g d)) K(sin^2(theta0/2)) (exact, any amplitude); at 0.01 rad
    the small-amplitude period 2 pi sqrt(I_O / (m g d)) is within theta0^2/16 = 6e-6."""
    length, mass = 0.5, 1.0
    i_o = mass * length ** 2 / 12 + mass * (length / 2) ** 2 + 0.0
    d = length / 2
    t_exact = 4 * np.sqrt(i_o / (mass * G * d)) * ellipk(np.sin(theta0 / 2) ** 2)
    sim = simulate(_pendulum(theta0, length, mass), None, t_end=5.0, rtol=1e-11,
                   atol=1e-13, method="dop853", output_step=1e-3)
    assert sim.status == "finished"
    tc = _zero_crossings(sim.t, sim.sensors[:, 0])
    period = 2 * (tc[-1] - tc[0]) / (len(tc) - 1)
    assert abs(period - t_exact) / t_exact < 1e-8
    if theta0 < 0.05:
        t_small = 2 * np.pi * np.sqrt(i_o / (mass * G * d))
        assert abs(period - t_small) / t_small < 1e-5


def _free_body():
    m = Model("free", gravity=(0, 0, 0))
    m.add_rigid_body("box", mass=2.0, com=(0.1, -0.05, 0.2),
                     inertia=(0.3, 0.25, 0.15, 0.01, -0.02, 0.015), inertia_about="com")
    m.add_joint("float", "free", parent="ground", child="box",
                initial=[0.1, 0.2, 0.3, 0.2, -0.3, 0.4],
                initial_rate=[0.5, -0.2, 0.1, 0.3, -0.2, 2.0])
    return m


def _momenta(cm, q, u):
    """Linear momentum and angular momentum about the global origin."""
    body = cm.model.bodies["box"]
    r, a = api.body_poses(cm, q)
    v = api.body_velocities(cm, q, u)
    rd, w = v[:3], v[3:6]
    c = r[0] + a[0] @ body.com
    vc = rd + np.cross(a[0] @ w, a[0] @ body.com)
    p = body.mass * vc
    h = np.cross(c, p) + a[0] @ (body.inertia @ w)
    return p, h


def test_free_body_conserves_momentum_and_angular_momentum():
    model = _free_body()
    cm = compile_model(model)
    sim = simulate(model, None, t_end=2.0, rtol=1e-11, atol=1e-13, method="dop853",
                   output_step=0.05)
    assert sim.status == "finished"
    nq = cm.nq
    p0, h0 = _momenta(cm, sim.y[0, :nq], sim.y[0, nq:2 * nq])
    for y in sim.y[1:]:
        p, h = _momenta(cm, y[:nq], y[nq:2 * nq])
        assert np.abs(p - p0).max() < 1e-8 * np.abs(p0).max()
        assert np.abs(h - h0).max() < 1e-8 * np.abs(h0).max()
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    assert np.abs(total - total[0]).max() < 1e-9 * e[0, 0]


def test_chain_library_matches_model_files():
    """data/models/chain_*_4.toml and chain_model(4, variant) compile to the same arrays."""
    from pathlib import Path

    from flexmbs import load_model
    from flexmbs.model.library import chain_model

    root = Path(__file__).resolve().parents[1] / "data" / "models"
    for variant in ("planar", "spatial"):
        a = compile_model(load_model(root / f"chain_{variant}_4.toml"))
        b = compile_model(chain_model(4, variant))
        for name, x, y in zip(a.arrays._fields, a.arrays, b.arrays):
            np.testing.assert_array_equal(x, y, err_msg=name)
        np.testing.assert_array_equal(a.q0, b.q0)
        assert a.coordinate_names == b.coordinate_names
        assert a.sensor_names == b.sensor_names
