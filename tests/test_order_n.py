"""The Order-N formulation (Huang chapter 5; docs/explanation/formulation.md section 10): the
tip-to-base elimination gives the accelerations of M* u' = Q* without assembling M*."""

import numpy as np
import pytest
from test_flexible_tree import random_flexible_tree, random_state

from flexmbs import compile_model
from flexmbs.dynamics import api
from flexmbs.dynamics.order_n import order_n_accelerations
from flexmbs.kinematics.recursive import forward_kinematics
from flexmbs.model.description import JOINT_TYPES


def _order_n(cm, q, u, t):
    ws = cm.new_workspace()
    forward_kinematics(cm.arrays, ws, float(t), q, u)
    out = np.zeros(cm.nq)
    order_n_accelerations(cm.arrays, ws, float(t), out)
    return out


TYPES = list(JOINT_TYPES)
CASES = [(seed, tuple(TYPES[(seed + k) % len(TYPES)] for k in range(4)), seed % 2 == 1)
         for seed in range(6)]


@pytest.mark.parametrize("seed, types, all_beams", CASES)
def test_order_n_equals_the_dense_solve_on_random_flexible_trees(seed, types, all_beams):
    """Random trees of beams and rigid bodies with every joint type (beam markers at
    free nodes with all_beams), random states: the recursion solves the assembled
    M* u' = Q* to round-off (backward error |M* u' - Q*| / (|M*| |u'| + |Q*|) below
    1e-13, as the dense solve's; the stiff elastic coordinates make M* ill conditioned,
    so the two solutions themselves differ by up to cond(M*) eps)."""
    rng = np.random.default_rng(seed)
    model = random_flexible_tree(rng, types, all_beams=all_beams)
    cm = compile_model(model)
    q, u = random_state(rng, cm, model)
    mass = api.mass_matrix(cm, q, 0.2)
    force = api.generalized_forces(cm, q, u, 0.2)
    got = _order_n(cm, q, u, 0.2)
    ref = np.linalg.solve(mass, force)

    def backward(a):
        return np.abs(mass @ a - force).max() / (np.abs(mass).max() * np.abs(a).max()
                                                 + np.abs(force).max())

    assert backward(got) < 1e-13 and backward(ref) < 1e-13
    # the forward error of each is at most cond(M*) times its backward error (n for
    # the max norms' constants)
    cond = np.linalg.cond(mass)
    bound = len(ref) * cond * (backward(got) + backward(ref)) * np.abs(ref).max()
    assert np.abs(got - ref).max() <= bound


def _derivatives(cm, q, u, t):
    """(joint-coordinate, Order-N) state derivatives at (q, u, t)."""
    from flexmbs.dynamics.order_n import order_n_state_derivative
    from flexmbs.dynamics.system import state_derivative
    y = np.concatenate([q, u, np.zeros(1 + cm.nactuators)])
    out = []
    for kernel in (state_derivative, order_n_state_derivative):
        d = np.zeros_like(y)
        kernel(cm.arrays, cm.new_workspace(), float(t), y, d)
        out.append(d)
    return out


def _single_beam():
    """One flexible beam (the Huang tube, 2 elements) on one revolute joint."""
    from flexmbs.elements import material
    from flexmbs.model import Model
    from flexmbs.model.library import HUANG_TUBE_MATERIAL, huang_tube
    model = Model("beam_pendulum")
    model.add_beam_body("beam", points=[[0, 0, 0], [0.5, 0, 0]], section=huang_tube(),
                        material=material(**HUANG_TUBE_MATERIAL), elements=2)
    model.add_joint("pin", "revolute", parent="ground", child="beam", axis=(0, 1, 0))
    model.set_solver(t_end=0.05, rtol=1e-9, atol=1e-11)
    return model


@pytest.mark.parametrize("single", ["rigid", "beam"])
def test_order_n_on_a_single_body_is_the_joint_formulation(single):
    """Huang 5.3.1: with one body the elimination is the joint-coordinate solve itself:
    the state derivatives agree to round-off at random states, and so do runs."""
    from flexmbs import simulate
    from flexmbs.model.library import chain_model
    model = chain_model(1) if single == "rigid" else _single_beam()
    cm = compile_model(model)
    rng = np.random.default_rng(4)
    q = cm.q0 + rng.normal(0, 0.01, cm.nq)
    u = rng.normal(0, 0.1, cm.nq)
    joint, order_n = _derivatives(cm, q, u, 0.0)
    assert np.allclose(order_n, joint, rtol=0, atol=1e-12 * np.abs(joint).max())
    runs = [simulate(model, None, t_end=0.05, method="dop853", formulation=f)
            for f in ("joint", "order-n")]
    assert all(r.success for r in runs)
    scale = np.abs(runs[0].y[:, :cm.nq]).max()
    assert np.abs(runs[0].y[:, :cm.nq] - runs[1].y[:, :cm.nq]).max() < 1e-10 * scale


@pytest.mark.parametrize("name", ["chain2", "h2", "h3", "h8"])
def test_order_n_runs_agree_with_the_joint_formulation(name):
    """A rigid two-link chain (1 s) and H2, H3, H8 (0.05 s; the 2 s comparison with
    bdf is benchmarks/bench_formulations.py) integrated by dop853 at rtol 1e-10 with
    both formulations: the joint angles agree within 1e-7 rad (the integration
    tolerance's scale)."""
    from flexmbs import simulate
    from flexmbs.model import library
    model, t_end = {"chain2": (library.chain_model(2), 1.0),
                    "h2": (library.huang_two_link(), 0.05),
                    "h3": (library.huang_three_link(), 0.05),
                    "h8": (library.huang_eight_link(elements=1), 0.05)}[name]
    runs = [simulate(model, None, t_end=t_end, method="dop853", rtol=1e-10, atol=1e-12,
                     formulation=f) for f in ("joint", "order-n")]
    assert all(r.success for r in runs)
    cm = compile_model(model)
    joints = [k for k, n in enumerate(cm.coordinate_names) if "." not in n]
    assert np.abs(runs[0].y[:, joints] - runs[1].y[:, joints]).max() < 1e-7


def test_order_n_residual_vanishes_at_its_accelerations():
    """The residual form for the implicit integrators ("Ex-Im"): [q' - u; u' - f;
    w' - P] is zero at y' = the Order-N state derivative, and its acceleration rows
    are u' - f (H2 at a random state)."""
    from flexmbs.dynamics.order_n import order_n_residual, order_n_state_derivative
    from flexmbs.model.library import huang_two_link
    cm = compile_model(huang_two_link())
    rng = np.random.default_rng(6)
    y = np.concatenate([cm.q0 + rng.normal(0, 1e-3, cm.nq), rng.normal(0, 0.1, cm.nq),
                        np.zeros(1 + cm.nactuators)])
    yp = np.zeros_like(y)
    order_n_state_derivative(cm.arrays, cm.new_workspace(), 0.1, y, yp)
    res = np.ones_like(y)
    order_n_residual(cm.arrays, cm.new_workspace(), 0.1, y, yp, res)
    assert np.abs(res).max() <= 1e-12 * np.abs(yp).max()
    shift = np.zeros_like(y)
    shift[cm.nq:2 * cm.nq] = 1.0
    order_n_residual(cm.arrays, cm.new_workspace(), 0.1, y, yp + shift, res)
    assert np.allclose(res[cm.nq:2 * cm.nq], 1.0, atol=1e-9)


def test_order_n_refuses_loops():
    from flexmbs import ModelError, simulate
    from flexmbs.model.library import four_bar
    with pytest.raises(ModelError, match="Order-N"):
        simulate(four_bar(), None, t_end=0.01, formulation="order-n")
