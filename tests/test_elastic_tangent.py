"""The analytic elastic blocks of the iteration matrix (system.elastic_tangent through
the mass hook): K = -dQ_e/dqf (linear and geometric stiffness) against central
differences of the generalized forces, for every geometric option, nodal and
reduced beams, and D the damping matrix of the model's arrays; and the integrators'
use of it: runs with the analytic elastic columns agree with runs without them."""

import numpy as np
import pytest

from flexmbs import compile_model
from flexmbs.dynamics import api
from flexmbs.dynamics import system as _system
from flexmbs.model.invariant_tables import body_block_matrix
from flexmbs.model.library import huang_two_link
from flexmbs.simulation import build_system, make_integrator, simulate

DIFF_STEP = 1e-7


def _hook_blocks(cm, q):
    """(K, D) of the mass hook's elastic blocks at (q, u = 0), in q's numbering."""
    n = cm.nstate
    nr = n - cm.nq
    y = np.zeros(n)
    y[:cm.nq] = q
    out = np.zeros((3 * nr, nr))
    args = (cm.arrays, cm.new_workspace())
    _system.dae_mass_elastic_block(0.0, y, np.zeros(n), args, out)
    return out[nr:nr + cm.nq, :cm.nq], out[2 * nr:2 * nr + cm.nq, :cm.nq]


@pytest.mark.parametrize("geometric, modes", [
    ("none", "all"), ("consistent", "all"), ("huang-axial", "all"),
    ("huang-foreshortening", "all"), ("consistent", 4)])
def test_elastic_stiffness_is_the_derivative_of_the_elastic_forces(geometric, modes):
    """H2 with 3 elements bent and stretched (elastic coordinates of 1e-3 m and rad,
    the scale of its motion), no gravity, at rest: -dQ*_f/dqf by central differences
    equals the hook's K on the elastic rows and columns, to 1e-6 of its largest entry
    (the differences' truncation, (1e-7)^2 relative to 1e-3, and their rounding,
    eps |Q| / 1e-7). The geometric part is checked on its own too: K minus the
    linear K_ff matches the difference of the forces minus K_ff qf."""
    model = huang_two_link(3, geometric=geometric, modes=modes,
                           correction_modes=modes != "all")
    model.gravity = np.zeros(3)
    cm = compile_model(model)
    rng = np.random.default_rng(7)
    rows = np.arange(2, cm.nq)
    q = cm.q0.copy()
    q[rows] = 1e-3 * rng.standard_normal(len(rows))
    k, d = _hook_blocks(cm, q)
    u = np.zeros(cm.nq)
    diff = np.zeros((len(rows), len(rows)))
    for j, row in enumerate(rows):
        dq = np.zeros(cm.nq)
        dq[row] = DIFF_STEP
        diff[:, j] = -(api.generalized_forces(cm, q + dq, u)[rows]
                       - api.generalized_forces(cm, q - dq, u)[rows]) / (2 * DIFF_STEP)
    kff = cm.beams[0][1].invariants.stiffness
    kb = k[np.ix_(rows, rows)]
    assert np.abs(kb - diff).max() <= 1e-6 * np.abs(kb).max()
    geo = kb - kff
    if geometric != "none":
        assert np.abs(geo).max() > 1e-6 * np.abs(kb).max()   # it is there
        assert np.abs(geo - (diff - kff)).max() <= 0.05 * np.abs(geo).max()
    else:
        assert np.abs(geo).max() == 0.0
    assert np.abs(np.delete(k, rows, axis=0)).max() == 0.0   # joint rows: none
    assert np.array_equal(d[np.ix_(rows, rows)], body_block_matrix(cm.arrays, 0, "d"))


def test_runs_with_and_without_the_analytic_elastic_columns_agree():
    """H2 with 2 elements, 0.1 s at rtol 1e-8, bdf and galpha: the same joint angles
    and deflections with the elastic columns from the hook as with differences
    (within the integration tolerance), and no difference column spent on them."""
    model = huang_two_link(2, t_end=0.1)
    cm = compile_model(model)
    for method in ("bdf", "galpha"):
        states = []
        for analytic in (True, False):
            system = build_system(cm)
            if not analytic:
                system.dae_elastic_columns = None
            integ = make_integrator(method, system, 0.0, cm.initial_state(), 0.1,
                                    1e-8, 1e-10)
            n, y = integ.advance(np.array([0.05, 0.1]), wall_budget=1e9)
            assert integ.status == "finished" and n == 2
            states.append((y[:, :cm.nq], integ.statistics()))
        (ya, sa), (yd, sd) = states
        assert np.abs(ya - yd).max() < 1e-5
        nr = cm.nstate - cm.nq
        elastic = cm.nq - 2
        # each difference Jacobian spends nr - elastic residuals without the
        # elastic columns; the Newton iterations one each
        assert sa["nres"] <= sa["nnewton"] + sa["njac"] * (nr - elastic) + sa["nsteps"]


def test_modal_damping_gives_each_mode_its_ratio():
    """modal_damping = [z1, z2, ...] on a reduced H2 beam: Psi^T D Psi is
    diag(2 zeta_i w_i) for the body's own modes (the reduced K, M), and "bands"
    gives 1 %, 10 % or 100 % by each mode's frequency."""
    import scipy.linalg

    from flexmbs.elements.damping import BAND_RULE, modal_damping_matrix

    model = huang_two_link(3, modes=4, modal_derivatives=False)
    beam = model.bodies["link2"]
    inv = beam.invariants
    k, m = inv.stiffness, inv.mass_matrix()
    w = np.sqrt(scipy.linalg.eigh(k, m, eigvals_only=True))
    for spec, zeta in ((0.02, np.full(4, 0.02)), ([0.01, 0.02, 0.03, 0.04],
                                                 np.array([0.01, 0.02, 0.03, 0.04])),
                       ("bands", np.array([next(z for top, z in BAND_RULE
                                                if f / (2 * np.pi) < top) for f in w]))):
        d = modal_damping_matrix(k, m, spec)
        _, psi = scipy.linalg.eigh(k, m)
        assert np.allclose(psi.T @ d @ psi, np.diag(2 * zeta * w),
                           atol=1e-12 * np.abs(d).max())
    model = huang_two_link(3, modes=4, modal_derivatives=False)
    model.bodies["link2"].modal_damping = 0.05
    cm = compile_model(model)
    assert np.allclose(body_block_matrix(cm.arrays, 0, "d"), modal_damping_matrix(k, m, 0.05))


def test_modal_damping_is_dissipated_in_the_energy_balance():
    """H2 with 2 elements, every mode at 5 % damping: the strain energy rings down
    and the balance E - W_nc still closes to the integration tolerance (the damping's
    work is counted)."""
    model = huang_two_link(2, t_end=1.0)
    model.bodies["link2"].modal_damping = 0.05
    sim = simulate(model, None, rtol=1e-9, atol=1e-11)
    e = sim.energy
    assert sim.status == "finished"
    assert e[-1, 4] < -1e-3 * e[:, 2].max()      # W_nc: the damping's (negative) work
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    assert np.abs(total - total[0]).max() < 1e-6 * np.abs(e[:, :4]).max()
