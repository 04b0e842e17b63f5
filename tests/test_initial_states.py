"""Initial elastic states of beams: `initial_rates`, and `initial = "quasi-static"`
(flexmbs.model.quasi_static): its elastic accelerations vanish at t = 0, its rates
follow the motion, and the start excites no high mode."""

import numpy as np
import pytest

from flexmbs import ModelError, compile_model, simulate
from flexmbs.dynamics import api
from flexmbs.formats.toml_reader import loads_model
from flexmbs.model.library import huang_two_link


def _moving_h2(initial, elements=2):
    """H2 with joint 1 already turning at 2 rad/s and joint 2 at -1 rad/s."""
    model = huang_two_link(elements, initial=initial)
    model.joints["joint1"].initial_rate[:] = 2.0
    model.joints["joint2"].initial_rate[:] = -1.0
    return model


@pytest.mark.parametrize("moving", [False, True])
def test_quasi_static_start_has_no_elastic_acceleration(moving):
    """The elastic accelerations at t = 0 are below 1e-9 of those of the undeformed
    start (the Newton tolerance is 1e-10 of them); the joints keep their state."""
    make = _moving_h2 if moving else (lambda init: huang_two_link(2, initial=init))
    plain = compile_model(make("undeformed"))
    qs = compile_model(make("quasi-static"))
    rows = np.arange(2, qs.nq)
    scale = np.abs(api.accelerations(plain, plain.q0, plain.u0)[rows]).max()
    acc = api.accelerations(qs, qs.q0, qs.u0)[rows]
    assert np.abs(acc).max() < 1e-9 * scale
    assert np.array_equal(qs.q0[:2], plain.q0[:2])
    assert np.array_equal(qs.u0[:2], plain.u0[:2])
    if moving:
        assert np.abs(qs.u0[rows]).max() > 0.0
    else:
        assert np.abs(qs.u0[rows]).max() < 1e-9


def test_quasi_static_rates_are_the_rate_of_the_quasi_static_state():
    """With the joints turning, the elastic rates at t = 0 are the slope of the
    quasi-static elastic state along the motion: a run at rtol 1e-10 stays within
    2 % of the largest elastic excursion of where the quasi-static state goes, over
    the first 5 ms (a start with zero elastic rates misses by far more)."""
    model = _moving_h2("quasi-static")
    sim = simulate(model, None, t_end=0.005, rtol=1e-10, atol=1e-12, output_step=0.001)
    cm = compile_model(model)
    rows = np.arange(2, cm.nq)
    drift = sim.y[:, rows] - (cm.q0[rows] + np.outer(sim.t, cm.u0[rows]))
    assert np.abs(drift).max() < 0.02 * np.abs(sim.y[:, rows]).max()
    assert np.abs(cm.u0[rows]).max() * 0.005 > 0.1 * np.abs(drift).max()


def test_quasi_static_start_excites_no_high_mode():
    """H2 with 2 elements, joints turning, 0.2 s at rtol 1e-8 under bdf: from the
    quasi-static start the error control takes fewer than a third of the steps it
    needs from the static start (joints held), whose release rings the stiff
    axial and torsional modes."""
    steps = {}
    for initial in ("static", "quasi-static"):
        sim = simulate(_moving_h2(initial), None, t_end=0.2, rtol=1e-8, atol=1e-10)
        assert sim.status == "finished"
        steps[initial] = sim.statistics["nsteps"]
    assert steps["quasi-static"] < steps["static"] / 3, steps


def test_initial_rates_reach_the_first_output_row():
    model = huang_two_link(2)
    nf = model.bodies["link2"].nf
    rates = 1e-3 * np.arange(1, nf + 1)
    model.bodies["link2"].initial_rates = rates
    sim = simulate(model, None, t_end=0.01, rtol=1e-8, atol=1e-10)
    nq = len(sim.coordinate_names)
    assert np.array_equal(sim.y[0, nq + 2:2 * nq], rates)


def test_initial_rates_in_the_model_file():
    base = """
[bodies.b]
type = "beam"
points = [[0, 0, 0], [1, 0, 0]]
elements = 1
initial_rates = RATES
[bodies.b.section]
type = "circle"
diameter = 0.01
[bodies.b.material]
youngs_modulus = 7e10
density = 2700.0
poisson_ratio = 0.3
[joints.j]
type = "revolute"
parent = "ground"
child = "b"
axis = [0, 0, 1]
"""
    model = loads_model(base.replace("RATES", "[0.0, 0.1, 0.0, 0.0, 0.0, 0.2]"))
    cm = compile_model(model)
    assert np.array_equal(cm.u0[1:], [0.0, 0.1, 0.0, 0.0, 0.0, 0.2])
    with pytest.raises(ModelError, match="initial_rates"):
        compile_model(loads_model(base.replace("RATES", "[0.0, 0.1]")))
    with pytest.raises(ModelError, match="initial_rates"):
        loads_model(base.replace("RATES", '"fast"'))


def test_quasi_static_start_of_a_closed_loop_is_refused():
    """The slider-crank with a flexible rod (a cut joint closes the loop): its
    constraints hold part of the rod's elastic accelerations, which the elastic
    coordinates alone cannot zero (Newton stalls at a third of them); the run is
    refused with the item and the field named."""
    from pathlib import Path

    from flexmbs import load_model

    path = Path(__file__).resolve().parents[1] / "data" / "models" / \
        "slider_crank_flexible.toml"
    model = load_model(path, overrides=['bodies.rod.initial="quasi-static"'])
    with pytest.raises(ModelError, match='body "rod": field "initial".*trees'):
        simulate(model, None, t_end=0.01)
