"""Reduced beams under geometric stiffness: modal derivatives, modes chosen by
frequency, and the compile-time check of a basis's static response
(flexmbs.elements.modal, flexmbs.elements.basis_check)."""

import numpy as np
import pytest

from flexmbs import ModelError, compile_model, simulate
from flexmbs.elements.basis_check import basis_static_differences, static_response
from flexmbs.elements.modal import body_modes, modal_derivative_shapes
from flexmbs.model import Model
from flexmbs.model.library import huang_two_link, spin_up

TUBE = huang_two_link().bodies["link2"]
LENGTH = 1.02


def _cantilever(elements, **reduction):
    """The Huang tube clamped at node 0 along x, a marker at the tip, no gravity."""
    m = Model("column", gravity=(0, 0, 0))
    beam = m.add_beam_body("beam", [[0, 0, 0], [LENGTH, 0, 0]], TUBE.section, TUBE.material,
                           elements=elements, reference=(0, 1, 0), **reduction)
    m.add_marker("beam", "tip", node=-1)
    return beam


def _tip_load(beam, axial, transverse):
    """A nodal load with `axial` (N, along x) and `transverse` (N, along y) at the tip."""
    where = {int(k): j for j, k in enumerate(beam.free)}
    tip = len(beam.nodes) - 1
    load = np.zeros(len(beam.free))
    load[where[6 * tip]], load[where[6 * tip + 1]] = axial, transverse
    return load, where[6 * tip + 1]


def test_modal_derivatives_are_the_second_derivatives_of_the_static_response():
    """x(eta) solves K x + g(x) = K Phi eta (g the consistent geometric force), so
    x = Phi eta + 1/2 sum theta_ij eta_i eta_j + O(eta^3): central differences of the
    solved response (a bent beam, whose axial and bending coordinates couple) agree
    with theta_ij to O(h^2), a quarter for each halving of h."""
    m = Model("bent", gravity=(0, 0, 0))
    beam = m.add_beam_body("beam", [[0, 0, 0], [0.6, 0, 0], [0.6, 0.5, 0]], TUBE.section,
                           TUBE.material, elements=3, reference=(0, 0, 1))
    alone = body_modes(beam)
    phi = alone.vectors[:, :3]
    theta, pairs = modal_derivative_shapes(beam, phi, alone)
    assert pairs.tolist() == [[1, 1], [1, 2], [1, 3], [2, 2], [2, 3], [3, 3]]
    k = beam.nodal_invariants.stiffness

    def response(eta):
        return static_response(beam, k @ (phi @ eta))

    def error(h):
        worst = 0.0
        for p, (i, j) in enumerate(pairs):
            a, b = np.eye(3)[i - 1] * h, np.eye(3)[j - 1] * h
            if i == j:
                fd = (response(a) - 2 * response(0 * a) + response(-a)) / h**2
            else:
                fd = (response(a + b) - response(a - b) - response(b - a)
                      + response(-a - b)) / (4 * h * h)
            worst = max(worst, np.abs(fd - theta[:, p]).max() / np.abs(theta).max())
        return worst

    coarse, fine = error(1e-3), error(5e-4)
    assert coarse < 1e-4
    assert 3.0 < coarse / fine < 5.0


def test_the_static_response_is_the_beam_column_of_the_textbook():
    """A cantilever under an axial compression P = Pcr/2 and a small tip force F: the
    tip deflection F (tan kL - kL) / (P k), k^2 = P / EI (Timoshenko and Gere), to
    the cubic elements' O(h^4): 1.6e-5 with 4 elements, 1e-6 with 8."""
    ei = TUBE.material.youngs_modulus * TUBE.section.i_z
    p = 0.5 * np.pi**2 * ei / (4 * LENGTH**2)
    kk = np.sqrt(p / ei)
    exact = 1e-3 * (np.tan(kk * LENGTH) - kk * LENGTH) / (p * kk)
    errors = []
    for n in (4, 8):
        beam = _cantilever(n)
        load, tip_v = _tip_load(beam, -p, 1e-3)
        errors.append(abs(static_response(beam, load)[tip_v] / exact - 1))
    assert errors[0] < 3e-5 and errors[1] < errors[0] / 10


def _buckling_load(beam, phi):
    """The lowest P for which K + P K_G is singular within x = phi eta: K_G the
    geometric tangent of a unit axial compression at the tip (the reduced state's
    when phi is given)."""
    from flexmbs.elements.geometric_assembly import BeamGeometry

    load, _ = _tip_load(beam, -1.0, 0.0)
    state = static_response(beam, load, phi)
    tangent = BeamGeometry(beam).force_and_tangent(state)[1]
    k = beam.nodal_invariants.stiffness
    n = len(beam.free)
    phi = np.eye(n) if phi is None else phi
    w = np.linalg.eigvals(np.linalg.solve(phi.T @ k @ phi, -(phi.T @ tangent @ phi)))
    w = np.real(w[np.abs(np.imag(w)) < 1e-9 * np.abs(w).max()])
    return 1.0 / w[w > 0].max()


def test_a_reduced_beam_column_deflects_and_buckles_as_the_nodal_one():
    """10 elements reduced to 4 modes, the tip's correction modes (they carry the
    axial load's uniform stretch, on which the geometric stiffness acts) and the
    modal derivatives (the default): the static tip deflection under P = Pcr/2 and a
    tip force within 1e-3 of the nodal beam's, and the buckling load within 1e-3 of
    the nodal one (itself within 1e-5 of Euler's pi^2 EI / 4 L^2)."""
    nodal = _cantilever(10)
    reduced = _cantilever(10, modes=4, correction_modes=True)
    assert "derivative" in reduced.basis.kinds
    ei = TUBE.material.youngs_modulus * TUBE.section.i_z
    euler = np.pi**2 * ei / (4 * LENGTH**2)
    load, tip_v = _tip_load(nodal, -0.5 * euler, 1e-3)
    a = static_response(nodal, load)[tip_v]
    b = static_response(reduced, load, reduced.basis.vectors)[tip_v]
    assert abs(b / a - 1) < 1e-3
    p_nodal = _buckling_load(nodal, None)
    assert p_nodal == pytest.approx(euler, rel=1e-5)
    assert _buckling_load(reduced, reduced.basis.vectors) == pytest.approx(p_nodal, rel=1e-3)


def test_bending_modes_alone_lock_and_their_derivatives_free_them():
    """A cantilever under a tip force that bends it by 5 % of its length, with the
    consistent geometric stiffness: 2 bending modes alone answer with a deflection far
    from the nodal beam's (the foreshortening has no axial freedom to go to); with
    their one modal derivative (the axial field that cancels the membrane strain) the
    difference is that of the left-out bending modes."""
    differences = {}
    for derivatives in (False, True):
        beam = _cantilever(5, modes=2, modal_derivatives=derivatives)
        differences[derivatives] = max(c.difference for c in basis_static_differences(beam)
                                       if c.name.startswith("force"))
    assert beam.nf == 3 and beam.basis.kinds[-1] == "derivative"
    assert beam.basis.descriptions[-1] == "modal derivative of modes 1 and 1: axial"
    k, phi = beam.nodal_invariants.stiffness, beam.basis.vectors[:, :2]
    load, _ = _tip_load(beam, 0.0, 1.0)
    exact = np.linalg.solve(k, load)
    linear = phi @ np.linalg.solve(phi.T @ k @ phi, phi.T @ load)
    translation = beam.free % 6 < 3
    left_out = np.abs(linear - exact)[translation].max() / np.abs(exact)[translation].max()
    assert differences[False] > 0.5
    assert differences[True] < 1.1 * left_out < 0.05


def test_the_compile_time_warning_measures_the_basis():
    """The warning fires on the bases that lock (SPIN and H2 with bending modes alone,
    with or without the tip's correction modes) with the measured figure, and stays
    quiet with the modal derivatives (the default with geometric stiffness)."""
    for model in (spin_up(8, modes=2, modal_derivatives=False),
                  spin_up(8, modes=2, correction_modes=True, modal_derivatives=False),
                  huang_two_link(5, modes=2, modal_derivatives=False)):
        (said,) = compile_model(model).warnings
        figure = float(said.split("static deflection ")[1].split("%")[0])
        assert figure > 25.0 and "modal_derivatives = true" in said
    for model in (spin_up(8, modes=2), huang_two_link(5, modes=2),
                  huang_two_link(5, modes=2, correction_modes=True)):
        assert not compile_model(model).warnings


def test_a_reduced_beam_with_derivatives_conserves_energy():
    """H2, 5 elements, 2 modes and their derivative, alpha = 0, 0.5 s at rtol 1e-9: the
    energy balance closes as for nodal beams (Huang's criterion: orders of magnitude
    below the largest strain energy)."""
    sim = simulate(huang_two_link(5, modes=2, t_end=0.5), None, rtol=1e-9, atol=1e-11)
    assert sim.status == "finished"
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    assert np.abs(total - total[0]).max() < 1e-6 * e[:, 2].max()


def test_modes_below_a_frequency():
    """modes_below keeps the modes under it (of the lowest `modes` when that is a number
    too), names them in order, and refuses a frequency below the first mode."""
    beam = _cantilever(5, modes="all", modes_below=100.0, modal_derivatives=False)
    alone = body_modes(beam)
    below = alone.frequencies[~alone.rigid] < 100.0
    assert beam.nf == int(below.sum()) == 4
    assert np.all(beam.basis.frequencies < 100.0) and beam.basis.modes_below == 100.0
    assert _cantilever(5, modes=2, modes_below=100.0, modal_derivatives=False).nf == 2
    with pytest.raises(ModelError, match="no mode is below 1 Hz: the lowest is at"):
        _ = _cantilever(5, modes="all", modes_below=1.0).basis


def test_modal_derivatives_need_a_basis_and_geometric_stiffness():
    with pytest.raises(ModelError, match="modal_derivatives"):
        _cantilever(5, modal_derivatives=True)
    with pytest.raises(ModelError, match='geometric = "none" has none'):
        _cantilever(5, modes=2, modal_derivatives=True, geometric="none")
    assert _cantilever(5, modes=2, geometric="none").nf == 2


@pytest.mark.parametrize("elements", [3, 40])
def test_the_assembled_geometric_terms_are_the_elements_ones(elements):
    """BeamGeometry (the elements' blocks placed by index; a sparse tangent above
    DENSE_LIMIT coordinates) against the plain sum over elements of
    flexmbs.elements.geometric's force and tangent through each element's dense map,
    on a bent beam at a deflected state; its second-order term against differences of
    the tangent."""
    from flexmbs.elements.beam import element_length
    from flexmbs.elements.geometric import geometric_force, geometric_stiffness
    from flexmbs.elements.geometric_assembly import DENSE_LIMIT, BeamGeometry
    from flexmbs.elements.modal import _element_map

    m = Model("bent", gravity=(0, 0, 0))
    beam = m.add_beam_body("beam", [[0, 0, 0], [0.6, 0, 0], [0.6, 0.5, 0.1]], TUBE.section,
                           TUBE.material, elements=elements, reference=(0, 0, 1))
    n = len(beam.free)
    x = 1e-3 * np.random.default_rng(3).standard_normal(n)
    ea = TUBE.section.area * TUBE.material.youngs_modulus
    force, tangent = np.zeros(n), np.zeros((n, n))
    for e, (a, b) in enumerate(beam.connectivity):
        te = _element_map(beam, e)
        length = element_length(beam.nodes[a], beam.nodes[b])
        force -= te.T @ geometric_force(te @ x, length, ea, "consistent")
        tangent += te.T @ geometric_stiffness(te @ x, length, ea, "consistent") @ te
    geometry = BeamGeometry(beam)
    f, k = geometry.force_and_tangent(x)
    assert (n > DENSE_LIMIT) == hasattr(k, "toarray")
    k = k.toarray() if hasattr(k, "toarray") else k
    assert np.abs(f - force).max() <= 1e-12 * np.abs(force).max()
    assert np.abs(k - tangent).max() <= 1e-12 * np.abs(tangent).max()
    y = np.random.default_rng(4).standard_normal(n)
    h = 1e-6
    kp = geometry.force_and_tangent(h * y)[1]
    km = geometry.force_and_tangent(-h * y)[1]
    difference = (kp - km) @ x / (2 * h)
    difference = np.asarray(difference).ravel()
    second = geometry.second_order(x, y)
    assert np.abs(second - difference).max() <= 1e-6 * np.abs(second).max()
