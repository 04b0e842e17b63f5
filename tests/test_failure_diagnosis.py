"""A failed run names the force element its last states point to
(flexmbs.simulation.failure_diagnosis); the user-law case runs in tests/test_user_laws.py."""

import numpy as np

from flexmbs import compile_model
from flexmbs.model.library import chain_model
from flexmbs.simulation.failure_diagnosis import failing_force_elements


def test_a_spring_whose_markers_meet_is_named():
    """A spring from the ground 0.5 m below the pivot to the tip of the first 0.5 m
    link: named when the link hangs straight down, not when it is horizontal."""
    model = chain_model(2, "planar")
    model.add_marker("ground", "below", position=(0.0, 0.0, -0.5))
    model.add_spring("tether", "link1", "tip", "ground", "below", stiffness=10.0,
                     rest_length=0.1)
    cm = compile_model(model)
    y = cm.initial_state().copy()
    assert failing_force_elements(cm, [(0.2, y)]) == ""
    y[: cm.nq] = 0.0   # both links hanging
    text = failing_force_elements(cm, [(0.2, y)])
    assert text.startswith("; at t = 0.2 s the spring \"tether\" has its markers")
    assert "no direction" in text and np.isfinite(y).all()


def test_a_state_that_is_not_finite_names_nothing():
    """At a state of NaN every spring would look too short: such states are passed
    over, so that no element is blamed for a failure it did not cause."""
    model = chain_model(2, "planar")
    model.add_marker("ground", "below", position=(0.0, 0.0, -0.5))
    model.add_spring("tether", "link1", "tip", "ground", "below", stiffness=10.0,
                     rest_length=0.1)
    cm = compile_model(model)
    y = np.full(cm.nstate, np.nan)
    assert failing_force_elements(cm, [(0.2, y)]) == ""
