"""Geometric stiffness (docs/explanation/formulation.md section 6): the element energies
against their differences, the kernel against the numpy reference, the beam-column against
its
analytic static solution and Euler's load, energy conservation, and the spin-up."""

import numpy as np
import pytest

from flexmbs import compile_model, simulate
from flexmbs.dynamics import api
from flexmbs.elements import general_section, material
from flexmbs.elements.beam import element_stiffness
from flexmbs.elements.geometric import (
    GEOMETRIC_OPTIONS,
    axial_row,
    geometric_energies,
    geometric_force,
    geometric_shape_matrix,
    geometric_stiffness,
)
from flexmbs.model import Model
from flexmbs.model.library import HUANG_TUBE_MATERIAL, huang_tube, huang_two_link, spin_up
from flexmbs.model.sensor_tables import element_rows

EA, LENGTH = 4.9e6, 0.4
FD_H = 1e-6  # central differences on coordinates of order 1e-2: error ~h^2 f''' ~1e-9


def _random_element_state(rng):
    """Element coordinates of a bent element: transverse and rotation dofs of order
    1e-2, axial ones of order 1e-4 (m, rad)."""
    e = rng.normal(scale=1e-2, size=12)
    e[[0, 6]] = rng.normal(scale=1e-4, size=2)
    return e


def test_g_is_the_standard_geometric_stiffness_shape():
    """In each bending plane G is (1/30 l) [[36, 3l, -36, 3l], [3l, 4l^2, -3l, -l^2],
    [-36, -3l, 36, -3l], [3l, -l^2, -3l, 4l^2]] (with the sign of ty = -w' in the x-z
    plane)."""
    l = LENGTH
    g = geometric_shape_matrix(l)
    block = np.array([[36, 3 * l, -36, 3 * l], [3 * l, 4 * l**2, -3 * l, -l**2],
                      [-36, -3 * l, 36, -3 * l], [3 * l, -l**2, -3 * l, 4 * l**2]]) / (30 * l)
    np.testing.assert_allclose(g[np.ix_([1, 5, 7, 11], [1, 5, 7, 11])], block, atol=1e-13)
    sign = np.diag([1, -1, 1, -1])
    np.testing.assert_allclose(g[np.ix_([2, 4, 8, 10], [2, 4, 8, 10])],
                               sign @ block @ sign, atol=1e-13)
    assert np.abs(g[np.ix_([0, 3, 6, 9], range(12))]).max() == 0.0


@pytest.mark.parametrize("option", GEOMETRIC_OPTIONS)
def test_forces_and_stiffness_against_differences(option):
    """consistent: the force is -grad(U3 + U4bar) and the stiffness its Hessian, by
    central differences; every option: the stiffness is -d(force)/de."""
    rng = np.random.default_rng(3)
    e = _random_element_state(rng)
    f = geometric_force(e, LENGTH, EA, option)
    k = geometric_stiffness(e, LENGTH, EA, option)
    grad = np.zeros(12)
    jac = np.zeros((12, 12))
    for j in range(12):
        d = np.zeros(12)
        d[j] = FD_H
        grad[j] = (sum(geometric_energies(e + d, LENGTH, EA, option))
                   - sum(geometric_energies(e - d, LENGTH, EA, option))) / (2 * FD_H)
        jac[:, j] = -(geometric_force(e + d, LENGTH, EA, option)
                      - geometric_force(e - d, LENGTH, EA, option)) / (2 * FD_H)
    scale = max(np.abs(k).max(), 1.0)
    assert np.abs(k - jac).max() <= 1e-7 * scale
    if option in ("none", "consistent"):
        assert np.abs(f + grad).max() <= 1e-7 * max(np.abs(f).max(), 1e-12)
        np.testing.assert_allclose(k, k.T, atol=1e-12 * scale)
    else:  # the thesis's variants are not gradients: their stiffness is not symmetric
        assert np.abs(f + grad).max() > 1e-3 * np.abs(f).max()


def test_axial_energy_completes_the_square():
    """The axial part of U2 plus U3 plus U4bar is 1/2 EA l (u' + sbar/2)^2 >= 0: the
    consistent strain energy is bounded below."""
    rng = np.random.default_rng(4)
    section = general_section(EA / 7e10, 1e-9, 1e-9, 2e-9)
    mat = material(7e10, 2700.0, poisson_ratio=0.3)
    ka = np.zeros((12, 12))
    ka[np.ix_([0, 6], [0, 6])] = element_stiffness(LENGTH, section, mat)[np.ix_([0, 6], [0, 6])]
    for _ in range(5):
        e = _random_element_state(rng)
        u3, u4 = geometric_energies(e, LENGTH, EA, "consistent")
        up = axial_row(LENGTH) @ e
        sbar = e @ geometric_shape_matrix(LENGTH) @ e / LENGTH
        total = 0.5 * e @ ka @ e + u3 + u4
        assert total == pytest.approx(0.5 * EA * LENGTH * (up + sbar / 2) ** 2, rel=1e-12)


def _bent_beam(option, elements=3, modes=None):
    """A polyline beam of the Huang tube with its axis bent in space, clamped at node 0
    and fixed to the ground, with `option` geometric stiffness."""
    m = Model("bent", gravity=(0.0, 0.0, -9.81))
    m.add_beam_body("beam", [[0, 0, 0], [0.4, 0.1, 0.0], [0.7, 0.2, 0.2]], huang_tube(),
                    material(**HUANG_TUBE_MATERIAL), elements=[2, 1], reference=(0, 0, 1),
                    geometric=option)
    m.add_joint("j", "revolute", parent="ground", child="beam", axis=(0, 1, 0))
    return m


@pytest.mark.parametrize("option", GEOMETRIC_OPTIONS[1:])
def test_kernel_forces_and_energies_equal_the_reference(option):
    """The elastic rows of Q* with the geometric terms minus those without equal
    sum_e R_e^T f_e of the numpy reference; the energies U3 and U4 likewise."""
    model, plain = _bent_beam(option), _bent_beam("none")
    cm, cm0 = compile_model(model), compile_model(plain)
    beam = model.bodies["beam"]
    rng = np.random.default_rng(5)
    q = np.concatenate([[0.3], rng.normal(scale=5e-3, size=cm.nq - 1)])
    qf = q[1:]
    expected = np.zeros(beam.nf)
    u3 = u4 = 0.0
    for e, (a, b) in enumerate(beam.connectivity):
        r = element_rows(beam, e, np.eye(12))
        length = np.linalg.norm(beam.nodes[b] - beam.nodes[a])
        ea = beam.material.youngs_modulus * beam.section.area
        expected += r.T @ geometric_force(r @ qf, length, ea, option)
        e3, e4 = geometric_energies(r @ qf, length, ea, option)
        u3, u4 = u3 + e3, u4 + e4
    zero = np.zeros(cm.nq)
    got = api.generalized_forces(cm, q, zero) - api.generalized_forces(cm0, q, zero)
    np.testing.assert_allclose(got[1:], expected, rtol=0, atol=1e-9 * np.abs(expected).max())
    assert abs(got[0]) <= 1e-9 * np.abs(expected).max()   # no joint force from them
    energy, energy0 = api.energies(cm, q, zero), api.energies(cm0, q, zero)
    assert energy["strain_axial_force"] == pytest.approx(u3, rel=1e-12)
    assert energy["strain_foreshortening"] == pytest.approx(u4, rel=1e-12, abs=1e-300)
    assert energy["strain"] - energy0["strain"] == pytest.approx(u3 + u4, rel=1e-9)


def _beam_column(elements, axial, transverse):
    """The Huang tube, 1 m, clamped to the ground along x, no gravity, in its static
    state under a tip force (axial, transverse, 0) (N, a dead load)."""
    m = Model("beam-column", gravity=(0.0, 0.0, 0.0))
    m.add_beam_body("beam", [[0, 0, 0], [1.0, 0, 0]], huang_tube(),
                    material(**HUANG_TUBE_MATERIAL), elements=elements, reference=(0, 1, 0),
                    initial="static", geometric="consistent")
    m.add_marker("beam", "tip", node=-1)
    m.add_joint("clamp", "fixed", parent="ground", child="beam")
    m.add_force("tip", "force", "beam", "tip", vector=(axial, transverse, 0.0))
    return m


EI = HUANG_TUBE_MATERIAL["youngs_modulus"] * 1.4891e-9
EULER = np.pi ** 2 * EI / 4.0  # N, the cantilever of 1 m


@pytest.mark.parametrize("ratio", [0.5, -0.5])
def test_beam_column_tip_deflection(ratio):
    """Tension P (ratio > 0) or compression (< 0) of half Euler's load and a transverse
    tip force F: the static tip deflection is F/(P k) (k L - tanh(k L)) in tension and
    F/(P k) (tan(k L) - k L) in compression, k = sqrt(|P|/EI) (L = 1 m); 8 elements
    within 0.5 % (FE error ~(l k)^2), converging at second order or better."""
    p = ratio * EULER
    f = 0.5
    k = np.sqrt(abs(p) / EI)
    exact = (f / (p * k) * (k - np.tanh(k)) if p > 0 else
             f / (-p * k) * (np.tan(k) - k))
    errors = []
    for elements in (8, 16):
        cm = compile_model(_beam_column(elements, p, f))
        tip = cm.q0[cm.coordinate_names.index(f"beam.n{elements}.v")]
        errors.append(abs(tip / exact - 1))
    assert errors[0] < 5e-3
    assert errors[1] < errors[0] / 3


def _lowest_frequency_squared(cm):
    """The lowest eigenvalue of K_t v = w^2 M v about the static state, K_t = -dQ*/dq by
    central differences of the kernels' Q*."""
    q0 = cm.q0
    mass = api.mass_matrix(cm, q0)
    kt = np.zeros((cm.nq, cm.nq))
    for j in range(cm.nq):
        h = 1e-7
        d = np.zeros(cm.nq)
        d[j] = h
        kt[:, j] = -(api.generalized_forces(cm, q0 + d, np.zeros(cm.nq))
                     - api.generalized_forces(cm, q0 - d, np.zeros(cm.nq))) / (2 * h)
    from scipy.linalg import eigh
    return eigh(0.5 * (kt + kt.T), mass, eigvals_only=True)[0]


def test_lowest_frequency_vanishes_at_the_euler_load():
    """Under an axial compression the lowest frequency of the cantilever falls and
    crosses zero at Euler's load pi^2 EI / (4 L^2): positive at 0.99 of it, negative
    at 1.01 (8 elements; the FE buckling load is within 1e-4 of Euler's)."""
    w2 = [_lowest_frequency_squared(compile_model(_beam_column(8, -r * EULER, 0.0)))
          for r in (0.0, 0.5, 0.99, 1.01)]
    assert w2[0] > w2[1] > w2[2] > 0 > w2[3]
    # w^2 falls linearly with the load: w^2(P) = w0^2 (1 - P / P_cr); the root of the
    # line through 0.5 and 0.99 is the FE buckling load
    root = 0.5 + (0.99 - 0.5) * w2[1] / (w2[1] - w2[2])
    assert root == pytest.approx(1.0, abs=1e-2)


def test_h2_with_consistent_geometric_stiffness_conserves_energy():
    """U3 + U4bar is conservative: H2's balance closes as with the linear beam (Huang's
    criterion far below 1e-5); the thesis's axial-force variant does not (a few % of
    the largest strain energy, as docs/explanation/formulation.md states)."""
    ratios = {}
    for option in ("consistent", "huang-axial"):
        model = huang_two_link(1, geometric=option)
        sim = simulate(model, None, t_end=0.3, rtol=1e-8, atol=1e-10, output_step=0.01)
        assert sim.status == "finished"
        e = sim.energy
        total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
        ratios[option] = np.abs(total - total[0]).max() / e[:, 2].max()
    assert ratios["consistent"] < 1e-7
    assert ratios["huang-axial"] > 1e-4


def test_spin_up_diverges_without_and_stays_bounded_with_geometric_stiffness():
    """SPIN (4 elements): without geometric stiffness the tip deflection passes 1 m
    (the spin rate approaches the first bending frequency, 3.8 rad/s); with
    `consistent` it stays below 0.6 m through the crossing (t = 8.5 s), and the energy
    balance, with the driver's work, closes to 1e-7 of the kinetic energy (rtol 1e-8:
    measured 3e-9)."""
    none = simulate(spin_up(4, "none"), None, t_end=8.0, rtol=1e-6, atol=1e-8,
                    output_step=0.1)
    assert np.abs(none.sensors[:, 2]).max() > 1.0
    sim = simulate(spin_up(4, "consistent"), None, t_end=10.0, rtol=1e-8, atol=1e-10,
                   output_step=0.1)
    assert sim.status == "finished"
    assert np.abs(sim.sensors[:, 2]).max() < 0.6
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    assert np.abs(total - total[0]).max() < 1e-7 * e[:, 0].max()
    assert e[-1, 4] > 0  # the driver put the kinetic energy in


def test_normal_force_is_the_membrane_strain_force():
    """With geometric stiffness the normal force of beam_section_forces is
    EA (u' + sbar/2): in the beam-column under tension P and a transverse load it
    equals P in every element (axial equilibrium), while EA u' alone does not; the
    surface strain adds sbar/2 to u' - y v'' likewise."""
    p, f = 0.5 * EULER, 5.0
    m = _beam_column(4, p, f)
    for k in range(4):
        m.add_sensor(f"n{k}", "beam_section_forces", body="beam", element=k, at=0.5)
        m.add_sensor(f"e{k}", "beam_strain", body="beam", element=k, at=0.5,
                     point=(0.0, 0.0))
    cm = compile_model(m)
    from test_flexible_tree import sensor_readings
    got = sensor_readings(cm, cm.q0, np.zeros(cm.nq))
    ea = HUANG_TUBE_MATERIAL["youngs_modulus"] * 7.104e-5
    for k in range(4):
        assert got[f"n{k}"][0] == pytest.approx(p, rel=1e-9)
        assert got[f"e{k}"][0] == pytest.approx(p / ea, rel=1e-9)
    plain = sensor_readings(compile_model(_beam_column(4, p, f)), cm.q0, np.zeros(cm.nq))
    del plain
    beam = m.bodies["beam"]
    u_axis = [cm.q0[cm.coordinate_names.index(f"beam.n{k}.u")] for k in range(1, 5)]
    strain_u = np.diff(np.concatenate([[0.0], u_axis])) / 0.25
    assert np.abs(strain_u - p / ea).max() > 1e-3 * p / ea  # u' alone is not it
    del beam


def test_spin_up_model_file_is_the_builder():
    from pathlib import Path

    from flexmbs import load_model
    from flexmbs.formats.serialize import model_to_dict
    path = Path(__file__).resolve().parents[1] / "data" / "models" / "spin_up.toml"
    assert model_to_dict(load_model(path)) == model_to_dict(spin_up())
    none = load_model(path, ["bodies.beam.geometric=none", "bodies.beam.elements=4"])
    assert model_to_dict(none) == model_to_dict(spin_up(4, "none"))


def test_warning_when_the_kept_modes_cannot_stretch_the_beam():
    """Bending modes alone cannot stretch a beam: with geometric stiffness on and no
    modal derivatives, the compiled model measures the static deflection of the basis
    against the nodal beam's, warns with the figure and names the remedy; the modal
    derivatives (the default), or the linear beam, silence it. Correction modes at the
    tip do not (on 5 elements): their stretch is not the foreshortening of the bent
    beam."""
    two = compile_model(huang_two_link(1, modes=2, modal_derivatives=False))
    assert len(two.warnings) == 1
    said = two.warnings[0]
    assert 'body "link2"' in said and "modal_derivatives = true" in said
    assert "% away from the nodal beam's" in said
    assert not compile_model(huang_two_link(1, modes=2)).warnings
    assert compile_model(huang_two_link(5, modes=2, correction_modes=True,
                                        modal_derivatives=False)).warnings
    # with 1 element, 2 modes and the tip's corrections are every coordinate there is
    assert not compile_model(huang_two_link(1, modes=2, correction_modes=True,
                                            modal_derivatives=False)).warnings
    assert not compile_model(huang_two_link(1, modes=2, geometric="none")).warnings
    assert not compile_model(huang_two_link(1)).warnings
    logged = []
    simulate(huang_two_link(1, modes=2, modal_derivatives=False, t_end=0.01), None,
             log=logged.append)
    assert any(text.startswith("warning: body \"link2\"") for text in logged)
