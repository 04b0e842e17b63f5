"""The ODE right-hand side y' = [u; M*^-1 Q*; P; P_a] (system.state_derivative: the
O(N) residual at y' = 0, M* of the mass hook, Cholesky) against the direct one
(system.state_derivative_by_columns: B at every column, B^T M B, Q* summed body by
body) on rigid chains, random trees with drivers and springs, a motor, and flexible
models; and the integrators' calls of it and of the residual from Python
(solvers.kernel_call) against the kernels called directly."""

import numpy as np
import pytest
from reference import random_tree_model
from reference_kernels import state_derivative_by_columns
from test_composite_mass import ROUNDING, _with_motor

from flexmbs import compile_model
from flexmbs.dynamics import api
from flexmbs.dynamics import system as _system
from flexmbs.model.library import chain_model, huang_eight_link, huang_rig, huang_two_link
from flexmbs.simulation import build_system


def _tree_with_drivers():
    return random_tree_model(np.random.default_rng(11), 10,
                             ("revolute", "prismatic", "cylindrical", "universal",
                              "spherical"), n_drivers=2)


MODELS = {
    "chain_planar_8": lambda: chain_model(8, "planar"),
    "chain_spatial_8": lambda: chain_model(8, "spatial"),
    "chain_spatial_3 with a motor": _with_motor,
    "tree with drivers and springs": _tree_with_drivers,
    "huang_two_link": lambda: huang_two_link(elements=2),
    "huang_rig": lambda: huang_rig(elements=1),
    "huang_eight_link": lambda: huang_eight_link(elements=1),
}


def _state(cm, seed=3):
    rng = np.random.default_rng(seed)
    y = cm.initial_state().copy()
    y[:cm.nq] += 0.2 * rng.standard_normal(cm.nq)
    y[cm.nq:2 * cm.nq] = rng.standard_normal(cm.nq)
    return y


@pytest.mark.parametrize("name", sorted(MODELS))
def test_state_derivative_is_the_direct_one(name):
    """M* and Q* are sums of the same products in another order on the two sides,
    each entry rounded to ~n eps of the largest (ROUNDING, as for the composite M*).
    The accelerations are compared through M* (the backward error), which a solve
    would amplify by up to cond(M*) (1e6 for the beams)."""
    cm = compile_model(MODELS[name]())
    nq = cm.nq
    y = _state(cm)
    fast, direct = np.zeros(cm.nstate), np.zeros(cm.nstate)
    _system.state_derivative(cm.arrays, cm.new_workspace(), 0.3, y, fast)
    state_derivative_by_columns(cm.arrays, cm.new_workspace(), 0.3, y, direct)
    mass = api.mass_matrix(cm, y[:nq], 0.3)
    accel = direct[nq:2 * nq]
    scale = np.abs(mass @ accel).max() + np.abs(mass).max() * np.abs(accel).max()
    assert np.abs(mass @ (fast[nq:2 * nq] - accel)).max() <= ROUNDING * scale
    np.testing.assert_array_equal(fast[:nq], y[nq:2 * nq])
    works = direct[2 * nq:]
    assert np.abs(fast[2 * nq:] - works).max() <= ROUNDING * (1.0 + np.abs(works).max())


def test_the_drivers_power_is_taken_at_the_accelerations():
    """A driver's force, and with it P, depends on du/dt: the state derivative takes
    P from a second residual at the accelerations. At du/dt = 0 P differs here, so
    the comparison above would fail without it."""
    cm = compile_model(_tree_with_drivers())
    y = _state(cm)
    n, nq = cm.nstate, cm.nq
    at_rest = np.zeros(n)
    _system.dae_residual(0.3, y, np.zeros(n), (cm.arrays, cm.new_workspace()), at_rest)
    derivative = np.zeros(n)
    _system.state_derivative(cm.arrays, cm.new_workspace(), 0.3, y, derivative)
    assert abs(-at_rest[2 * nq] - derivative[2 * nq]) > 1e-3 * abs(derivative[2 * nq])


@pytest.mark.parametrize("name", ["chain_spatial_8", "huang_two_link"])
def test_the_integrators_calls_from_python_are_the_kernels(name):
    """system.rhs (scipy's integrators) and IDA's residual call the compiled kernels
    through a held reference (solvers.kernel_call): the same numbers, bit for bit, as
    the kernels called with the tuples, for any float array of the state's size (a
    strided view, a list)."""
    from flexmbs.solvers.kernel_call import KernelCall
    cm = compile_model(MODELS[name]())
    system = build_system(cm)
    n = system.n
    y = _state(cm)
    strided = np.repeat(y, 2)[::2]
    direct = np.zeros(n)
    _system.state_derivative(cm.arrays, cm.new_workspace(), 0.3, y, direct)
    np.testing.assert_array_equal(system.rhs(0.3, strided), direct)
    np.testing.assert_array_equal(system.rhs(0.3, list(y)), direct)
    yp = np.random.default_rng(4).standard_normal(n)
    _system.dae_residual(0.3, y, yp, (cm.arrays, cm.new_workspace()), direct)
    residual = KernelCall(system.dae_residual, (system.m, system.ws), n, 2)
    np.testing.assert_array_equal(residual(0.3, strided, yp), direct)
