"""The iteration matrix of models with long beams in its bordered band layout
(flexmbs.numerics.bordered_band, flexmbs.model.band_layout, system.dae_mass_elastic_banded)
against dense references:

* factorization and solve against numpy on random bordered band matrices that need
  pivoting, and a singular one reported;
* the layouts: a beam's nodes are the interior, the joints, the nodes that carry
  another body (a joint, a rotary inertia), a reduced beam and the works the border;
* M*, K and D of the banded mass hook against B^T M B from the kernels' velocity
  transformation and the dense body mass matrices, and against the dense hook;
* the iteration matrix and the first step of the BDF driver in both layouts;
* whole runs of `bdf` and `galpha` on H2 and on a model with every kind of border,
  both layouts: the same answers within the integration tolerance (with a fixed step
  and a tight Newton tolerance, to 1e-9);
* the automatic choice.
"""

import numpy as np
import pytest

from flexmbs import compile_model
from flexmbs.dynamics import api
from flexmbs.dynamics import system as _system
from flexmbs.dynamics.flexible_body import (
    flexible_mass_matrix,
    flexible_moments,
    flexible_workspace,
)
from flexmbs.dynamics.rigid_body import apply_body_mass
from flexmbs.elements import material, round_tube_section
from flexmbs.model import Constant, Model
from flexmbs.model.invariant_tables import body_kernel_blocks
from flexmbs.model.library import huang_two_link
from flexmbs.numerics.bordered_band import (
    bordered_band_factor,
    bordered_band_solve,
    dense_from_packed,
    factor_size,
    packed_from_dense,
    packed_size,
)
from flexmbs.simulation import build_system, make_integrator
from flexmbs.solvers.bdf import BDF
from flexmbs.solvers.linear_choice import BANDED_MIN_UNKNOWNS, banded_iteration_matrix

ROUND_OFF = 1e-12


def relative_error(a, b):
    """max |a - b| / max |b| (max |a| when b is zero)."""
    scale = np.abs(b).max()
    diff = np.abs(np.asarray(a) - np.asarray(b)).max()
    return diff / scale if scale > 0.0 else diff


# ---------------------------------------------------------------- factor and solve

def random_bordered(rng, ni, nb, kd, weak_diagonal=False):
    """A random matrix of that structure, in its own numbering (a random pos)."""
    n = ni + nb
    a = np.zeros((n, n))
    for i in range(ni):
        lo, hi = max(0, i - kd), min(ni, i + kd + 1)
        a[i, lo:hi] = rng.normal(size=hi - lo)
        if not weak_diagonal:
            a[i, i] += 4.0
    a[:ni, ni:] = rng.normal(size=(ni, nb))
    a[ni:, :ni] = rng.normal(size=(nb, ni))
    a[ni:, ni:] = rng.normal(size=(nb, nb)) + 3.0 * np.eye(nb)
    pos = rng.permutation(n)
    # g[r, c] = a[pos[r], pos[c]]: the unknowns in their own numbering
    g = a[np.ix_(pos, pos)]
    return g, pos, np.array([ni, nb, kd])


@pytest.mark.parametrize("ni, nb, kd, weak", [(40, 5, 3, False), (60, 3, 11, True),
                                               (0, 7, 0, False), (25, 0, 4, True),
                                               (1, 1, 0, False)])
def test_factor_and_solve_equal_numpy(ni, nb, kd, weak):
    rng = np.random.default_rng(ni + 7 * nb + kd)
    g, pos, dims = random_bordered(rng, ni, nb, kd, weak_diagonal=weak)
    packed = packed_from_dense(g, pos, dims)
    assert packed.size == packed_size(dims)
    assert np.array_equal(dense_from_packed(packed, pos, dims), g)
    f = np.zeros(factor_size(dims))
    piv = np.zeros(ni + nb, dtype=np.int64)
    assert bordered_band_factor(packed, dims, f, piv) == 0
    b = rng.normal(size=ni + nb)
    x = b.copy()
    bordered_band_solve(f, piv, dims, pos, x, np.zeros(ni + nb))
    expected = np.linalg.solve(g, b)
    assert relative_error(x, expected) < 1e-10
    assert relative_error(g @ x, b) < 1e-12 * np.linalg.cond(g)


def test_pivoting_within_the_band_is_needed_and_done():
    """A band whose diagonal is zero: elimination without row exchanges fails; with
    them (within kd rows) the solve is exact."""
    rng = np.random.default_rng(3)
    ni, nb, kd = 30, 2, 2
    g, pos, dims = random_bordered(rng, ni, nb, kd, weak_diagonal=True)
    interior = np.flatnonzero(pos < ni)
    g[interior, interior] = 0.0
    f = np.zeros(factor_size(dims))
    piv = np.zeros(ni + nb, dtype=np.int64)
    assert bordered_band_factor(packed_from_dense(g, pos, dims), dims, f, piv) == 0
    assert np.any(piv[:ni] != np.arange(ni))
    b = rng.normal(size=ni + nb)
    x = b.copy()
    bordered_band_solve(f, piv, dims, pos, x, np.zeros(ni + nb))
    assert relative_error(g @ x, b) < 1e-10


def test_a_singular_matrix_is_reported():
    rng = np.random.default_rng(4)
    g, pos, dims = random_bordered(rng, 12, 2, 1)
    g[:, 3] = 0.0
    f = np.zeros(factor_size(dims))
    piv = np.zeros(14, dtype=np.int64)
    assert bordered_band_factor(packed_from_dense(g, pos, dims), dims, f, piv) > 0


def test_an_entry_outside_the_band_is_refused():
    rng = np.random.default_rng(5)
    g, pos, dims = random_bordered(rng, 10, 1, 1)
    interior = np.flatnonzero(pos < 10)
    far = [interior[np.argmin(pos[interior])], interior[np.argmax(pos[interior])]]
    g[far[0], far[1]] = 1.0
    with pytest.raises(ValueError, match="outside the band"):
        packed_from_dense(g, pos, dims)


# ------------------------------------------------------------------------ models

def mixed_model(elements=8, t_end=0.2):
    """A rigid base on a revolute joint under PD control; beam A (2 `elements`, alpha
    damping, consistent geometric stiffness) carries beam B on a revolute joint at its
    middle node, a rotary inertia at node 2 and a tip mass; beam B (`elements`) is
    reduced to 3 modes with static corrections; beam C (`elements`, huang-axial
    geometric stiffness, whose tangent is not symmetric; beta damping) hangs from A's
    tip on a universal joint."""
    tube = round_tube_section(0.025, 0.0015)
    alu = material(7.0e10, 2700.0, shear_modulus=2.63e10)
    model = Model("mixed", gravity=(0.0, 0.0, -9.81))
    model.set_solver(method="galpha", t_end=t_end, rtol=1e-6, atol=1e-8)
    model.set_output(step=0.01)
    model.add_rigid_body("base", mass=2.0, com=(0.0, 0.0, 0.1), inertia=(0.02, 0.02, 0.01),
                         inertia_about="com")
    model.add_marker("base", "top", position=(0.0, 0.0, 0.2))
    middle = elements
    model.add_beam_body("a", [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], tube, alu,
                        elements=2 * elements, alpha=2e-4, node_masses={-1: 0.3},
                        node_inertias={2: [1e-4, 2e-4, 2e-4]})
    model.add_marker("a", "middle", node=middle)
    model.add_marker("a", "tip", node=-1)
    model.add_beam_body("b", [[0.0, 0.0, 0.0], [0.5, 0.0, 0.0]], tube, alu,
                        elements=elements, modes=3, correction_modes=True,
                        modal_derivatives=False)
    model.add_beam_body("c", [[0.0, 0.0, 0.0], [0.0, 0.0, -0.4]], tube, alu,
                        elements=elements, geometric="huang-axial", beta=1e-3)
    model.add_joint("j1", "revolute", parent="ground", child="base", axis=(0, 0, 1),
                    initial=0.2, initial_rate=0.5)
    model.add_joint("j2", "revolute", parent="base", parent_marker="top", child="a",
                    axis=(0, 1, 0), initial=-0.3)
    model.add_joint("j3", "revolute", parent="a", parent_marker="middle", child="b",
                    axis=(0, 0, 1), initial=0.7, initial_rate=-1.0)
    model.add_joint("j4", "universal", parent="a", parent_marker="tip", child="c",
                    axes=[(1, 0, 0), (0, 1, 0)], initial=[0.1, -0.2])
    model.add_actuator("drive", "j1", kp=50.0, kd=5.0, setpoint=Constant(0.4),
                       gear_ratio=10.0, rotor_inertia=1e-5)
    return model


@pytest.fixture(scope="module")
def mixed():
    return compile_model(mixed_model())


def test_layouts_put_the_nodes_that_carry_bodies_and_reduced_beams_in_the_border(mixed):
    cm = mixed
    m = cm.arrays
    ni, nb, kd = m.lin_dims
    pos = m.lin_pos
    assert len(pos) == cm.nq + 1 + cm.nactuators
    assert sorted(pos) == list(range(len(pos)))
    names = cm.coordinate_names
    border = {names[q] for q in range(cm.nq) if pos[q] >= ni}
    joints = {n for n in names if not n.startswith(("a.", "b.", "c."))}
    assert joints <= border
    assert {f"a.n8.{d}" for d in ("u", "v", "w", "tx", "ty", "tz")} <= border  # j3
    assert {f"a.n16.{d}" for d in ("u", "v", "w", "tx", "ty", "tz")} <= border  # j4
    assert {f"a.n2.{d}" for d in ("u", "v", "w", "tx", "ty", "tz")} <= border  # inertia
    assert {n for n in names if n.startswith("b.")} <= border   # reduced: dense
    assert not any(n.startswith("c.") for n in border)          # a plain beam
    assert "a.n1.u" not in border and "a.n9.u" not in border
    assert np.all(pos[cm.nq:] >= ni)                              # the works
    assert kd == 11                                               # two nodes of 6
    h2 = compile_model(huang_two_link(12)).arrays
    assert list(h2.lin_dims) == [72, 3, 11]


def dense_mass_reference(cm, q):
    """M* = B^T diag(M_i) B: B from the kernels' velocity transformation, M_i the
    dense body mass matrices (rigid: [m I, -A ~St; ~St A^T, I_O]; flexible: the
    dense-invariant kernel, itself held against quadrature in test_flexible_body)."""
    b = api.velocity_transformation(cm, q)
    ws = api.kinematics(cm, q)
    m = cm.arrays
    blocks = []
    for i in range(cm.nbodies):
        k = m.body_flex[i]
        rot = ws.rot[i]
        if k < 0:
            cols = np.zeros((6, 6))
            for c in range(6):
                e = np.eye(6)[c]
                apply_body_mass(m.body_mass[i], m.body_first_moment[i].copy(),
                                m.body_inertia_origin[i].copy(), rot, e[:3], e[3:], cols, c)
            blocks.append(cols)
            continue
        inv = cm.beams[k][1].invariants
        dense = type(inv).__name__ == "Invariants"
        kb = body_kernel_blocks(inv if dense else _dense(inv))
        nf = inv.nf
        qf = q[m.flex_q[k]:m.flex_q[k] + nf]
        work = flexible_workspace(nf)
        flexible_moments(inv.first_moment, inv.sbar, inv.th0, inv.n, kb["ss"], qf, work)
        out = np.zeros((6 + nf, 6 + nf))
        flexible_mass_matrix(inv.mass, inv.sbar, kb["m"], rot, work, out)
        blocks.append(out)
    sizes = [len(x) for x in blocks]
    full = np.zeros((sum(sizes), sum(sizes)))
    at = 0
    for x in blocks:
        full[at:at + len(x), at:at + len(x)] = x
        at += len(x)
    mass = b.T @ full @ b
    for a in range(cm.nactuators):
        qc = m.coord_qindex[m.act_coord[a]]
        mass[qc, qc] += m.act_inertia[a]
    return mass


def _dense(inv):
    from flexmbs.elements import Invariants
    return Invariants(mass=inv.mass, first_moment=inv.first_moment, sbar=inv.sbar,
                      th0=inv.th0, n=inv.n, ss=inv.ss, stiffness=inv.stiffness)


def deformed_state(cm, seed=1):
    rng = np.random.default_rng(seed)
    y = cm.initial_state()
    nq = cm.nq
    y[:nq] += 1e-3 * rng.standard_normal(nq)
    y[nq:2 * nq] = 0.3 * rng.standard_normal(nq)
    return y


@pytest.mark.parametrize("case", ["mixed", "h2"])
def test_banded_mass_hook_is_b_transpose_m_b_and_the_dense_hook(case, mixed):
    cm = mixed if case == "mixed" else compile_model(huang_two_link(12))
    m = cm.arrays
    y = deformed_state(cm)
    nq, n = cm.nq, cm.nstate
    nr = n - nq
    pos, dims = m.lin_pos, m.lin_dims
    packed = np.zeros((3, packed_size(dims)))
    _system.dae_mass_elastic_banded(0.1, y, np.zeros(n), (m, cm.new_workspace()), packed)
    dense = np.zeros((3 * nr, nr))
    _system.dae_mass_elastic_block(0.1, y, np.zeros(n), (m, cm.new_workspace()), dense)
    a, k, d = (dense_from_packed(packed[j], pos, dims) for j in range(3))
    reference = dense_mass_reference(cm, y[:nq])
    assert relative_error(a[:nq, :nq], reference) < ROUND_OFF
    assert np.array_equal(a[nq:, nq:], np.eye(nr - nq))
    assert relative_error(a, dense[:nr]) < ROUND_OFF
    assert relative_error(k, dense[nr:2 * nr]) < ROUND_OFF
    assert relative_error(d, dense[2 * nr:]) < ROUND_OFF
    assert np.abs(d).max() > 0.0 and np.abs(k - k.T).max() > 0.0 if case == "mixed" else True
    # and the dense hook's M* is the reference too (element by element as well)
    assert relative_error(dense[:nq, :nq], reference) < ROUND_OFF


def integrators(cm, method, t_end, rtol, **kw):
    """The integrator of `method` on cm in the dense and in the banded layout."""
    out = []
    for choice in ("dense", "banded"):
        system = build_system(cm, linear_solver=choice)
        assert (system.dae_layout is not None) == (choice == "banded")
        out.append(make_integrator(method, system, 0.0, cm.initial_state(), t_end, rtol,
                                   rtol * 1e-2, **kw))
    return out


def test_the_first_iteration_matrix_and_step_are_the_dense_ones(mixed):
    """One step of `bdf` from the same start: the rest R = G - cj A - K / cj of the
    difference Jacobian, and the step's result, agree to round-off."""
    cm = mixed
    dense, banded = integrators(cm, "bdf", 0.1, 1e-8)
    for integ in (dense, banded):
        integ.driver.advance(np.array([0.1]), max_steps=1)
    sd, sb = dense.driver._s, banded.driver._s
    nr = cm.nstate - cm.nq
    assert sb.Gr.size == 0 and sd.Gb.size == 0
    r_banded = dense_from_packed(sb.Rb, sb.bpos, sb.bdims)
    assert relative_error(r_banded, sd.Rr) < ROUND_OFF
    k_banded = dense_from_packed(sb.Ab[1], sb.bpos, sb.bdims)
    assert relative_error(k_banded, sd.Ar[nr:2 * nr]) < ROUND_OFF
    assert relative_error(banded.driver.y, dense.driver.y) < 1e-10


@pytest.mark.parametrize("method, rtol, t_end", [("galpha", 1e-6, 0.2), ("bdf", 1e-8, 0.01)])
def test_runs_agree_in_both_layouts(mixed, method, rtol, t_end):
    """The mixed model: joint angles and elastic coordinates of the two layouts within
    10 (rtol |y| + atol) (the Newton iterations stop at different round-off, which the
    step control then follows; `bdf` follows the beams' axial modes, about 10^4 steps
    in 0.01 s, and the two step sequences part further over longer runs)."""
    cm = mixed
    results = []
    for integ in integrators(cm, method, t_end, rtol):
        n, y = integ.advance(np.linspace(0.1 * t_end, t_end, 10), wall_budget=1e9)
        assert integ.status == "finished" and n == 10
        results.append((y[:, :cm.nq], integ.statistics()))
    (yd, sd), (yb, sb) = results
    assert np.all(np.abs(yb - yd) <= 10 * (rtol * np.abs(yd) + rtol * 1e-2))
    assert sb["njac"] <= sd["njac"] + 5
    # no difference column for the works: the banded setup spends the joints' alone
    joints = cm.nq - sum(cm.arrays.flex_nf)
    assert sb["nres"] <= sb["nnewton"] + sb["njac"] * joints + sb["nsteps"]


def test_fixed_step_runs_agree_to_the_newton_tolerance():
    """H2 with 12 elements, galpha at a fixed step of 1 ms and rtol 1e-9 (the Newton
    tolerance): both layouts give the same joint angles to 1e-9 rad."""
    cm = compile_model(huang_two_link(12, t_end=0.1))
    ys = []
    for integ in integrators(cm, "galpha", 0.1, 1e-9, fixed_step=1e-3):
        n, y = integ.advance(np.array([0.05, 0.1]), wall_budget=1e9)
        assert integ.status == "finished"
        ys.append(y[:, :2])
    assert np.abs(ys[0] - ys[1]).max() < 1e-9


def test_the_automatic_choice_follows_the_size():
    """H2's beam has an interior from 8 elements on (a band of half-width 11 in 48
    coordinates, BAND_FRACTION); "auto" takes it from BANDED_MIN_UNKNOWNS on."""
    none = compile_model(huang_two_link(7))
    small = compile_model(huang_two_link(9))
    large = compile_model(huang_two_link(12))
    assert none.arrays.lin_dims[0] == 0 and small.arrays.lin_dims[0] == 54
    assert sum(small.arrays.lin_dims[:2]) < BANDED_MIN_UNKNOWNS \
        <= sum(large.arrays.lin_dims[:2])
    assert build_system(none, linear_solver="banded").dae_layout is None
    assert build_system(small).dae_layout is None
    assert build_system(small, linear_solver="banded").dae_layout is not None
    assert build_system(large).dae_layout is not None
    assert build_system(large, linear_solver="dense").dae_layout is None
    assert not banded_iteration_matrix([0, 5, 0], "banded")
    with pytest.raises(ValueError, match="linear_solver"):
        banded_iteration_matrix([10, 2, 3], "sparse")


def test_a_bad_layout_is_named():
    cm = compile_model(huang_two_link(12, t_end=0.1))
    system = build_system(cm, linear_solver="banded")
    y0 = cm.initial_state()
    kw = dict(second_order=cm.nq, mass=system.dae_mass,
              elastic_columns=system.dae_elastic_columns)
    pos, dims = system.dae_layout
    for layout, words in (((pos[:-1], dims), "pos must order"),
                          ((pos, np.array([10, 5, 11])), "ni \\+ nb"),
                          ((np.zeros_like(pos), dims), "pos must order")):
        with pytest.raises(ValueError, match=words):
            BDF(system.dae_residual, (system.m, system.ws), 0.0, y0, system.rhs(0.0, y0),
                0.1, layout=layout, calc_ic=False, **kw)
    cols = system.dae_elastic_columns.copy()
    cols[cm.nq + 5] = False
    with pytest.raises(ValueError, match="interior unknown"):
        BDF(system.dae_residual, (system.m, system.ws), 0.0, y0, system.rhs(0.0, y0), 0.1,
            layout=(pos, dims), calc_ic=False, second_order=cm.nq, mass=system.dae_mass,
            elastic_columns=cols)
