"""The O(N) joint-coordinate residual (system.residual: forward_kinematics_terms and
recursive_dynamic_rows) against the column-by-column one (forward_kinematics and
dynamic_rows, which form sum_i B_i^T g_i from the partial velocities at every frame
column), on every model file and on library models: rigid chains, flexible trees with
joints on deformed nodes, actuators, prescribed motion, closed loops' spanning
trees."""

import glob

import numpy as np
import pytest

from flexmbs import compile_model, load_model
from flexmbs.dynamics import system as S
from flexmbs.kinematics.recursive import forward_kinematics
from flexmbs.model.library import chain_model, huang_two_link

MODELS = {path.split("/")[-1]: (lambda path=path: load_model(path))
          for path in sorted(glob.glob("data/models/*.toml"))}
MODELS["chain_planar_8"] = lambda: chain_model(8, "planar")
MODELS["chain_spatial_8"] = lambda: chain_model(8, "spatial")
MODELS["huang_two_link(elements=2)"] = lambda: huang_two_link(elements=2)

# Both sides sum the same products (at most a few hundred per row here) in another
# order: their difference is rounding, below ~n eps of the row's largest term.
ROUNDING = 1e-13


def _moving_state(cm, seed=3):
    """Every coordinate, elastic ones included, moved by ~0.1 off the initial state;
    random speeds and rates."""
    nq = cm.nq
    rng = np.random.default_rng(seed)
    y = cm.initial_state().copy()
    y[:nq] += 0.1 * rng.standard_normal(nq)
    y[nq:2 * nq] = 0.5 * rng.standard_normal(nq)
    return y, rng.standard_normal(cm.nstate)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_terms_compose_the_partial_velocities(name):
    """forward_kinematics_terms' per-term contributions (as the residual leaves them),
    composed by the recursion of its docstring, are forward_kinematics' jr, jw at
    every column; the poses, velocities and bias accelerations are the same
    numbers."""
    cm = compile_model(MODELS[name]())
    m, nq = cm.arrays, cm.nq
    y, yp = _moving_state(cm)
    full, terms = cm.new_workspace(), cm.new_workspace()
    forward_kinematics(m, full, 0.7, y[:nq], y[nq:2 * nq])
    S.dae_residual(0.7, y, yp, (m, terms), np.zeros(cm.nstate))  # its kinematics
    for field in ("r", "rot", "rd", "omega", "ar", "aw", "x", "xd", "xdd"):
        assert np.array_equal(getattr(full, field), getattr(terms, field)), field
    jr = np.zeros_like(full.jr)
    jw = np.zeros_like(full.jw)
    for i in range(cm.nbodies):
        p = m.body_parent[i]
        if p >= 0:
            d = terms.r[i] - terms.r[p]
            jw[i] = jw[p]
            jr[i] = jr[p] + np.cross(jw[p].T, d).T
        for j in range(m.motion_ptr[i], m.motion_ptr[i + 1]):
            for k in range(m.motion_term_ptr[j], m.motion_term_ptr[j + 1]):
                jr[i, :, m.motion_term_col[k]] += terms.term_jr[k]
                jw[i, :, m.motion_term_col[k]] += terms.term_jw[k]
    scale = max(np.abs(full.jr).max(), np.abs(full.jw).max(), 1.0)
    assert np.abs(jr - full.jr).max() <= ROUNDING * scale
    assert np.abs(jw - full.jw).max() <= ROUNDING * scale


@pytest.mark.parametrize("name", sorted(MODELS))
def test_recursive_residual_is_the_column_residual(name):
    """F(t, y, y') and the prescribed coordinates' driving forces ws.tau agree row by
    row to rounding of the row's terms, |M*| |u'| + |Q*| (M*, Q* assembled densely
    by mass_matrix and generalized_forces). The works' rows are the same code on
    ws.tau and ws.act_tau, so tau stands for them."""
    cm = compile_model(MODELS[name]())
    m, nq, n = cm.arrays, cm.nq, cm.nstate
    y, yp = _moving_state(cm)
    t = 0.7
    ws = cm.new_workspace()
    fast = np.zeros(n)
    ref = np.zeros(n)
    S.dae_residual(t, y, yp, (m, ws), fast)
    tau_fast = ws.tau.copy()
    S.forward_kinematics(m, ws, t, y[:nq], y[nq:2 * nq])
    S.body_forces(m, ws, t)
    S.dynamic_rows(m, ws, yp[nq:2 * nq], ref[nq:2 * nq])
    ref[:nq] = yp[:nq] - y[nq:2 * nq]
    tau_ref = ws.tau.copy()
    S.mass_matrix(m, ws)
    S.generalized_forces(m, ws, t)
    row_scale = np.abs(ws.mass) @ np.abs(yp[nq:2 * nq]) + np.abs(ws.force)
    assert np.all(np.abs(fast[nq:2 * nq] - ref[nq:2 * nq]) <= ROUNDING * row_scale)
    assert np.array_equal(fast[:nq], ref[:nq])
    assert np.abs(tau_fast - tau_ref).max(initial=0.0) <= ROUNDING * max(
        np.abs(tau_ref).max(initial=0.0), row_scale.max())
