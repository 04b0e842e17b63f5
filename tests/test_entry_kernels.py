"""The entry kernels of the equations of motion (config.jit_entry): compiled without
numba's reference counting, they must neither count nor leak references.

A kernel compiled without the counting that received a counted array from a callee
would never release it (a leak), and one that released an array it did not own would
free memory still in use; both show as a changed reference count of the arrays that
the integrators pass in (the state, its derivative, the output, the workspace and the
model arrays) after many calls."""

import os
import sys

import numpy as np
import pytest
from reference_kernels import state_derivative_by_columns

from flexmbs import compile_model
from flexmbs.dynamics import system as _system
from flexmbs.dynamics.outputs import kinematic_outputs, output_quantities, reaction_outputs
from flexmbs.model.library import chain_model, four_bar, huang_two_link, slider_crank
from flexmbs.simulation import build_system

MODELS = {
    "chain_spatial_4": lambda: chain_model(4, "spatial"),
    "huang_two_link": lambda: huang_two_link(elements=1),
    "four_bar": four_bar,
    "slider_crank": lambda: slider_crank(elements=1),
}


def _counts(arrays):
    return [sys.getrefcount(a) for a in arrays]


def _changed(before, after, names):
    return [(n, b, a) for n, b, a in zip(names, before, after) if a != b]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_entry_kernels_leave_reference_counts_unchanged(name):
    cm = compile_model(MODELS[name]())
    system = build_system(cm)
    y = np.zeros(system.n)
    y[:cm.nstate] = cm.initial_state()
    y[cm.nq:2 * cm.nq] = 0.3  # moving, so that every velocity term runs
    yp = np.full(system.n, 0.1)
    out = np.zeros(system.n)
    args = (system.m, system.ws)
    watched = [y, yp, out, *system.ws, *system.m]
    names = ["y", "yp", "out", *system.ws._fields, *system.m._fields]
    jac = np.zeros((system.n, system.n))
    nr = system.n - system.second_order
    mass = np.zeros((nr, nr))
    calls = [lambda: system.dae_residual(0.01, y, yp, args, out),
             lambda: system.dae_jacobian(0.01, y, yp, 1.0, args, jac)]
    if system.dae_mass is not None:
        calls.append(lambda: system.dae_mass(0.01, y, yp, args, mass))
    for call in calls:  # compile before counting
        call()
    before = _counts(watched)
    for _ in range(200):
        for call in calls:
            call()
    assert not _changed(before, _counts(watched), names)
    assert np.all(np.isfinite(out))
    times = np.array([0.01, 0.02])
    rows = np.vstack([y, y])
    energy = np.zeros((2, 7))
    sensors = np.zeros((2, cm.nsensor_values))
    extra = [times, rows, energy, sensors]
    output_quantities(system.m, system.ws, times, rows, energy, sensors)
    before = _counts(watched + extra)
    for _ in range(200):
        output_quantities(system.m, system.ws, times, rows, energy, sensors)
    assert not _changed(before, _counts(watched + extra),
                        names + ["times", "rows", "energy", "sensors"])
    assert np.all(np.isfinite(energy)) and np.all(np.isfinite(sensors))
    if not cm.nconstraints:
        deriv = np.zeros(system.n)
        watched.append(deriv)
        names.append("y'")
        calls = [lambda: _system.state_derivative(system.m, system.ws, 0.01, y, deriv),
                 lambda: state_derivative_by_columns(system.m, system.ws, 0.01, y, deriv),
                 lambda: system.rhs(0.01, y)]   # by a held reference (kernel_call)
        for call in calls:
            call()
        before = _counts(watched)
        for _ in range(200):
            for call in calls:
                call()
        assert not _changed(before, _counts(watched), names)
        assert np.all(np.isfinite(deriv))


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="numba off")
def test_the_integrators_enter_through_uncounted_kernels():
    """The residuals, the state derivative, the analytic Jacobian block, the mass hook, the output
    quantities and the BDF step loop with its helpers compile without the counting;
    ordinary kernels with it, set explicitly (a callee left unset would inherit the
    caller's setting)."""
    from flexmbs.kinematics.recursive import velocity_transformation_rate
    from flexmbs.solvers import bdf_kernels
    for kernel in (_system.dae_residual, _system.dae_constrained_residual,
                   _system.residual_from_ref, _system.constrained_residual_from_ref,
                   _system.mass_block_from_ref,
                   _system.state_derivative, _system.state_derivative_from_ref,
                   state_derivative_by_columns, _system.dae_work_column,
                   _system.dae_mass_block, bdf_kernels._reform_with_mass,
                   bdf_kernels.bdf_advance, bdf_kernels._step, bdf_kernels._nls,
                   bdf_kernels._setup, bdf_kernels._jacobian_fd, kinematic_outputs,
                   reaction_outputs,
                   bdf_kernels._set_coeffs, bdf_kernels._predict,
                   bdf_kernels._test_error, bdf_kernels._complete_step,
                   bdf_kernels._solve_newton, bdf_kernels.bdf_interpolate,
                   bdf_kernels.lu_factor, bdf_kernels.lu_solve):
        assert kernel.targetoptions.get("_nrt") is False, kernel
    for kernel in (velocity_transformation_rate, bdf_kernels.bdf_initial_conditions):
        assert kernel.targetoptions.get("_nrt") is True, kernel
