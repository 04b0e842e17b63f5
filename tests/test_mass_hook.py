"""The mass hook of the joint-coordinate residual (system.dae_mass_block), from which
the BDF driver re-forms its iteration matrix, against dense differences of the
residual in y' (docs/explanation/formulation.md section 5: F_u = M* u' - Q*, F_w = w' - P)."""

import numpy as np
import pytest

from flexmbs import compile_model, load_model
from flexmbs.dynamics import api
from flexmbs.model.library import chain_model, huang_two_link
from flexmbs.simulation import build_system

MODELS = {
    "chain_spatial_4": lambda: chain_model(4, "spatial"),
    "huang_two_link (flexible)": lambda: huang_two_link(elements=2),
    "huang_eight_link (actuators)": lambda: load_model("data/models/huang_eight_link.toml"),
    "spin_up (prescribed motion)": lambda: load_model("data/models/spin_up.toml"),
}


def _derivative_in_yp(system, t, y, yp, nq):
    """dF_r/dy'_r by central differences with a unit step: F is affine in y', so
    they are exact but for rounding, eps |F| (a step of 1e-6 would leave eps |F| /
    1e-6, ~1e-3 on the elastic rows of a deformed beam whose forces reach 1e6 N)."""
    n = system.n
    args = (system.m, system.ws)
    plus, minus = np.zeros(n), np.zeros(n)
    a = np.zeros((n - nq, n - nq))
    for j in range(nq, n):
        save = yp[j]
        yp[j] = save + 1.0
        system.dae_residual(t, y, yp, args, plus)
        yp[j] = save - 1.0
        system.dae_residual(t, y, yp, args, minus)
        yp[j] = save
        a[:, j - nq] = (plus[nq:] - minus[nq:]) / 2.0
    return a


def _moving_state(cm, n, seed=7):
    """y with every coordinate, elastic ones included, moved off the initial state
    by ~0.1, random speeds; a random y'."""
    nq = cm.nq
    rng = np.random.default_rng(seed)
    y = np.zeros(n)
    y[:cm.nstate] = cm.initial_state()
    y[:nq] += 0.1 * rng.standard_normal(nq)
    y[nq:2 * nq] = 0.5 * rng.standard_normal(nq)
    return y, rng.standard_normal(n)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_mass_hook_is_the_derivative_in_the_rates(name):
    """M* on the speeds and 1 on each work, at a moving state with the beams
    deformed (elastic coordinates moved by 0.1); the only part left out, the work rows'
    dependence on u' through prescribed coordinates' driving forces, is non-zero where the
    model has a driver
    and nowhere else."""
    cm = compile_model(MODELS[name]())
    system = build_system(cm)
    nq, n = cm.nq, system.n
    y, yp = _moving_state(cm, n)
    t = 0.7
    hook = np.zeros((n - nq, n - nq))
    system.dae_mass(t, y, yp, (system.m, system.ws), hook)
    ref = _derivative_in_yp(system, t, y, yp, nq)
    tol = 1e-9 * np.abs(ref).max()
    # symmetric to round-off: the element blocks' products sum in their own order
    mstar = hook[:nq, :nq]
    assert np.abs(mstar - mstar.T).max() <= 8 * np.finfo(float).eps * np.abs(mstar).max()
    assert np.all(np.linalg.eigvalsh(hook[:nq, :nq]) > 0.0)
    assert np.abs(hook[:, nq:] - ref[:, nq:]).max() <= tol    # the works' columns
    assert np.abs(hook[:nq] - ref[:nq]).max() <= tol          # M*
    left_out = np.abs(ref[nq:, :nq] - hook[nq:, :nq]).max()
    if "prescribed" in name:
        assert left_out > 1e3 * tol
    else:
        assert left_out <= tol


@pytest.mark.parametrize("name", ["huang_two_link (flexible)",
                                  "huang_eight_link (actuators)"])
def test_mass_hook_is_the_hessian_of_the_kinetic_energy(name):
    """At a deformed state (elastic coordinates moved by 0.1), M* of the hook is
    d^2 T / du^2, T the kinetic energy (energy.energies): T is quadratic in u, so
    M_ij = T(e_i + e_j) - T(e_i - e_j) over 2, exact to rounding."""
    cm = compile_model(MODELS[name]())
    system = build_system(cm)
    nq, n = cm.nq, system.n
    y, yp = _moving_state(cm, n)
    hook = np.zeros((n - nq, n - nq))
    system.dae_mass(0.7, y, yp, (system.m, system.ws), hook)
    e = np.eye(nq)

    def kinetic(u):
        return api.energies(cm, y[:nq], u, 0.7)["kinetic"]
    hessian = np.array([[(kinetic(e[i] + e[j]) - kinetic(e[i] - e[j])) / 2.0
                         for j in range(nq)] for i in range(nq)])
    assert np.abs(hook[:nq, :nq] - hessian).max() <= 1e-12 * np.abs(hessian).max()


LOOP_MODELS = ["four_bar", "four_bar_flexible", "slider_crank_flexible", "rolling_disk"]


@pytest.mark.parametrize("name", LOOP_MODELS)
def test_constrained_mass_hook_is_the_derivative_in_the_rates(name):
    """The mass hook of the closed-loop residual (system.dae_constrained_mass) is the
    whole dF/dy' at a moving state, the beams deformed: 1 on the positions, M* on
    the speeds, 1 on each work, nothing on the multipliers. F is affine in y', so
    central differences with a unit step are exact but for rounding, eps |F| per
    evaluation (|F| reaches 1e5 on the elastic rows of a deformed beam). Left out,
    as in the tree's hook: the dependence of W_nc's row on u' through the driving
    forces of prescribed coordinates, non-zero where the model has a driver (the
    slider-crank's motor) and nowhere else."""
    cm = compile_model(load_model(f"data/models/{name}.toml"))
    system = build_system(cm)
    n = system.n
    y, yp = _moving_state(cm, n)
    args = (system.m, system.ws)
    t = 0.7
    hook = np.zeros((n, n))
    system.dae_mass(t, y, yp, args, hook)
    ref = _derivative_in_yp(system, t, y, yp, 0)    # the whole dF/dy'
    plus = np.zeros(n)
    system.dae_residual(t, y, yp, args, plus)
    rounding = 1e2 * np.finfo(float).eps * (np.abs(plus).max() + np.abs(ref).max())
    work = 2 * cm.nq
    rows = np.arange(n) != work
    assert np.abs(hook[rows] - ref[rows]).max() <= rounding
    left_out = np.abs(hook[work] - ref[work]).max()
    if name == "slider_crank_flexible":
        assert left_out > 1e3 * rounding
    else:
        assert left_out <= rounding
    assert np.abs(hook[2 * cm.nq + 1:, :]).max() == 0.0    # multipliers' rows
