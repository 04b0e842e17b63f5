"""Modal reduction of beam bodies (docs/explanation/formulation.md section 8; Huang H3.4) and the
frequencies of `flexmbs modes`: projected invariants against the nodal ones, the
system in modal coordinates against the nodal system at qf = Phi eta, the full basis
against the nodal trajectory, 2 modes against the nodal H2 (thesis figure 3.25),
static correction modes against statics, the RIG link's frequencies against the
thesis and the frequency equation, the whole-model linearisation against closed
forms, and bad input."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize

from flexmbs import ModelError, compile_model, load_model, open_result, simulate
from flexmbs.analysis.modes import model_modes, system_modes
from flexmbs.dynamics import api
from flexmbs.dynamics.outputs import output_quantities
from flexmbs.elements.modal import (
    axial_stretch_capability,
    body_mass_matrix,
    body_modes,
    project_invariants,
    strain_energy_matrices,
)
from flexmbs.formats.serialize import model_to_dict
from flexmbs.model import Constant, Model
from flexmbs.model.invariant_tables import body_block_matrix
from flexmbs.model.library import huang_rig, huang_two_link

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "data" / "models"
ROUND_OFF = 1e-12
THESIS_RIG_FIRST_PAIR = 3.39  # Hz, Huang table 3.5 (1 element, 0.604 kg tip mass)


def flexmbs(*args):
    """`python -m flexmbs ARGS` (CompletedProcess)."""
    return subprocess.run([sys.executable, "-m", "flexmbs", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


def relative(a, b):
    """max |a - b| / max |b|."""
    return np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(b).max()


def to_nodal(cm_modal, cm_nodal, model_modal):
    """T (nq_nodal, nq_modal): q_nodal = T q_modal (joint coordinates kept, each
    beam's elastic coordinates mapped by its mode basis)."""
    t = np.zeros((cm_nodal.nq, cm_modal.nq))
    nj = cm_modal.nq - sum(b.nf for _, b in cm_modal.beams)
    t[:nj, :nj] = np.eye(nj)
    for k, (_, beam) in enumerate(cm_modal.beams):
        rows = cm_nodal.arrays.flex_q[k]
        cols = cm_modal.arrays.flex_q[k]
        phi = model_modal.bodies[beam.name].basis.vectors
        t[rows:rows + phi.shape[0], cols:cols + phi.shape[1]] = phi
    return t


def outputs(cm, q, u):
    """(energies (ENERGY_COMPONENTS), sensor values) at the state (q, u) from the
    output kernel."""
    from flexmbs.dynamics.energy import ENERGY_COMPONENTS
    y = np.concatenate([q, u, np.zeros(1 + cm.nactuators)])[None, :]
    energy = np.zeros((1, len(ENERGY_COMPONENTS)))
    values = np.zeros((1, cm.nsensor_values))
    output_quantities(cm.arrays, cm.new_workspace(), np.array([0.0]), y, energy, values)
    return energy[0], values[0]


# ---- the basis and the projection -----------------------------------------------

def test_the_basis_is_mass_normalised_modes_and_the_invariants_project():
    """H2's beam with 4 elements, 3 modes and the correction modes at the tip: Phi^T M
    Phi = I (M with the tip mass), the first 3 columns solve K phi = w^2 M phi with
    the body's lowest w, every invariant is the Phi-projection of the nodal one, the
    node rows are the nodal ones times Phi, and D = alpha K + beta M_ff projects."""
    model = huang_two_link(4, alpha=3e-4, modes=3, correction_modes=True)
    model.bodies["link2"].beta = 0.2
    beam = model.bodies["link2"]
    phi, nodal = beam.basis.vectors, beam.nodal_invariants
    mass, k = body_mass_matrix(beam), nodal.stiffness
    derivatives = beam.basis.kinds.count("derivative")
    assert derivatives >= 1  # the geometric stiffness is on: the modal derivatives are last
    assert beam.basis.kinds == ("mode",) * 3 + ("correction",) * 6 + ("derivative",) * derivatives
    assert beam.coordinate_names()[:4] == ["link2.mode1", "link2.mode2", "link2.mode3",
                                           "link2.correction1"]
    assert np.abs(phi.T @ mass @ phi - np.eye(beam.nf)).max() < ROUND_OFF
    w = 2 * np.pi * beam.basis.frequencies[:3]
    assert relative(k @ phi[:, :3], mass @ phi[:, :3] * w ** 2) < 1e-10
    every = scipy.linalg.eigh(k, mass, eigvals_only=True)
    # the small eigenvalues of the pencil are known to eps lambda_max (absolute)
    accuracy = 10 * np.finfo(float).eps * every[-1] / every[0]
    assert w ** 2 == pytest.approx(every[:3], rel=accuracy)
    inv = beam.invariants
    assert inv.nf == beam.nf == 9 + derivatives
    assert relative(inv.sbar, nodal.sbar @ phi) < ROUND_OFF
    assert relative(inv.n, nodal.n @ phi) < ROUND_OFF
    assert relative(inv.ss, np.einsum("ia,xyij,jb->xyab", phi, nodal.ss, phi)) < ROUND_OFF
    assert relative(inv.stiffness, phi.T @ k @ phi) < ROUND_OFF
    assert (inv.mass, tuple(inv.first_moment)) == (nodal.mass, tuple(nodal.first_moment))
    assert np.array_equal(inv.th0, nodal.th0)
    assert relative(inv.mass_matrix(), phi.T @ nodal.mass_matrix() @ phi) < ROUND_OFF
    nodal_beam = huang_two_link(4).bodies["link2"]
    for node in range(5):
        assert np.abs(beam.node_rows(node) - nodal_beam.node_rows(node) @ phi).max() \
            < ROUND_OFF
    cm = compile_model(model)
    d = body_block_matrix(cm.arrays, 0, "d")
    expected = phi.T @ (3e-4 * k + 0.2 * nodal.mass_matrix()) @ phi
    assert relative(d, expected) < ROUND_OFF
    assert strain_energy_matrices(beam).sum(axis=0) == pytest.approx(
        k, rel=ROUND_OFF, abs=ROUND_OFF * np.abs(k).max())
    direct = project_invariants(nodal, phi)
    assert np.array_equal(direct.stiffness, inv.stiffness)


@pytest.mark.parametrize("modes, corrections", [(12, False), (2, False), (2, True)])
def test_modal_system_is_the_nodal_system_at_qf_equal_phi_eta(modes, corrections):
    """H2 with 2 elements and a load and sensors on the tip: at a random state,
    M*, Q*, the energies and the sensors of the modal model equal those of the nodal
    model at q_nodal = T q, u_nodal = T u (T: identity on the joints, Phi on the beam):
    M*_m = T^T M*_n T and Q*_m = T^T Q*_n, to round-off, for the full basis and for
    reduced ones alike (x = Phi eta is exactly linear)."""
    def build(**kw):
        m = huang_two_link(2, alpha=2e-4, **kw)
        m.add_force("push", "force", "link2", "tip", vector=(0.3, -0.2, 0.5))
        m.add_sensor("strain", "beam_strain", body="link2", element=0, at=0.3,
                     point=(6.35e-3, 2e-3))
        m.add_sensor("line", "beam_centerline", body="link2", subdivisions=3)
        return m

    modal = build(modes=modes, correction_modes=corrections)
    cm_m, cm_n = compile_model(modal), compile_model(build())
    t = to_nodal(cm_m, cm_n, modal)
    rng = np.random.default_rng(5)
    q = rng.normal(size=cm_m.nq) * np.r_[1.0, 1.0, [1e-3] * (cm_m.nq - 2)]
    u = rng.normal(size=cm_m.nq) * np.r_[1.0, 1.0, [1e-1] * (cm_m.nq - 2)]
    qn, un = t @ q, t @ u
    assert relative(api.mass_matrix(cm_m, q), t.T @ api.mass_matrix(cm_n, qn) @ t) \
        < ROUND_OFF
    assert relative(api.generalized_forces(cm_m, q, u),
                    t.T @ api.generalized_forces(cm_n, qn, un)) < 1e-11
    (em, sm), (en, sn) = outputs(cm_m, q, u), outputs(cm_n, qn, un)
    assert em[:4] == pytest.approx(en[:4], rel=ROUND_OFF)  # kinetic, gravity, strain, spring
    assert relative(sm, sn) < ROUND_OFF


def test_full_basis_reproduces_the_nodal_trajectory():
    """H2, 1 element, 0.2 s at rtol 1e-10: the full mode basis (modes = 6) and the
    nodal coordinates follow one trajectory. The joint angles and the nodal
    coordinates Phi eta agree to the integration error, measured by the nodal run's
    own change from rtol 1e-9 to 1e-10 (2e-12 rad, 9e-11 in qf): the two bases take
    different steps (12 403 and 24 342), so their errors differ, by 5.6e-12 rad and
    3.9e-10 in qf (the torsion, which rings at 710 Hz); allowed: 20 times the measure."""
    def run(model, rtol):
        return simulate(model, None, t_end=0.2, rtol=rtol, atol=rtol * 1e-2,
                        output_step=0.01)

    nodal, modal = huang_two_link(1), huang_two_link(1, modes=6)
    a, b, c = run(nodal, 1e-10), run(modal, 1e-10), run(nodal, 1e-9)
    assert a.status == b.status == c.status == "finished"
    error = np.abs(a.y[:, :2] - c.y[:, :2]).max()
    assert error < 1e-9
    assert np.abs(a.y[:, :2] - b.y[:, :2]).max() <= 20 * error
    phi = modal.bodies["link2"].basis.vectors
    qf = b.y[:, 2:8] @ phi.T
    assert np.abs(a.y[:, 2:8] - qf).max() <= 20 * np.abs(a.y[:, 2:8] - c.y[:, 2:8]).max()


def test_two_modes_follow_the_nodal_h2():
    """H2, 1 element (the thesis's comparison, figure 3.25): 2 modes (the first bending
    pair, 3.67 Hz) against the nodal coordinates (with the second bending pair at
    73 Hz, torsion and stretch) for 0.3 s. The left-out modes hold about
    (3.67 / 73.4)^2 = 0.25 % of the beam's static deflection, doubled by the release
    under gravity (a suddenly applied load): the joint angles must agree to 2 % of
    the largest elastic rotation of the tip, max |deflection| / L (measured 0.8 %:
    2.2e-4 rad of 0.027 rad; benchmarks/bench_modal_h2.py: 2.5e-4 rad over 5 s).
    With the correction modes at the tip the 1-element basis is complete: the
    integration error (7e-11 rad; allowed 1e-9)."""
    def run(model):
        return simulate(model, None, t_end=0.3, rtol=1e-9, atol=1e-11, output_step=0.005)

    linear = dict(geometric="none")  # the thesis's chapter 3: linear beams
    nodal, two = run(huang_two_link(1, **linear)), run(huang_two_link(1, modes=2, **linear))
    full = run(huang_two_link(1, modes=2, correction_modes=True, **linear))
    assert nodal.status == two.status == full.status == "finished"
    rotation = np.abs(nodal.sensors[:, 5:8]).max() / 1.02
    assert rotation > 0.02
    difference = np.abs(two.sensors[:, :2] - nodal.sensors[:, :2]).max()
    assert difference <= 0.02 * rotation
    assert difference > 1e-3 * rotation  # the left-out modes do show
    assert np.abs(full.sensors[:, :2] - nodal.sensors[:, :2]).max() < 1e-9


# ---- correction modes and statics --------------------------------------------------

def _loaded_cantilever(modes="all", correction_modes=False):
    """The Huang tube clamped to the ground along x, 4 elements, linear (geometric =
    "none"), no gravity, a tip force with axial and transverse parts, in its static
    state."""
    h2 = huang_two_link().bodies["link2"]
    m = Model("loaded", gravity=(0, 0, 0))
    m.add_beam_body("beam", [[0, 0, 0], [1.02, 0, 0]], h2.section, h2.material,
                    elements=4, reference=(0, 1, 0), initial="static", modes=modes,
                    correction_modes=correction_modes, geometric="none")
    m.add_marker("beam", "tip", node=-1)
    m.add_joint("clamp", "fixed", parent="ground", child="beam")
    m.add_force("F", "force", "beam", "tip", vector=(40.0, 3.0, -5.0))
    m.add_sensor("tip", "marker_deflection", body="beam", marker="tip", frame="beam")
    return m


def test_correction_modes_give_the_static_tip_deflection_and_the_stretch():
    """initial = "static" under a tip force: 2 bending modes with the static correction
    modes at the tip reproduce the nodal static deflection (every load at the tip is
    in their span: K^-1 f is a constraint mode combination) to round-off, axial stretch
    included; the 2 modes alone miss part of the bending (the higher modes' share)
    and all of the stretch, which `axial_stretch_capability` sees."""
    def tip(model):
        cm = compile_model(model)
        return outputs(cm, cm.q0, np.zeros(cm.nq))[1]

    nodal = tip(_loaded_cantilever())
    exact = tip(_loaded_cantilever(2, True))
    two = tip(_loaded_cantilever(2))
    ea = 0.69e11 * 7.104e-5
    assert nodal[0] == pytest.approx(40.0 * 1.02 / ea, rel=1e-10)
    assert np.abs(exact - nodal).max() <= 1e-12 * np.abs(nodal).max()
    assert two[0] == 0.0 and relative(two[1:], nodal[1:]) > 1e-3
    bending = _loaded_cantilever(2)
    assert axial_stretch_capability(bending.bodies["beam"]) < 1e-20
    assert axial_stretch_capability(_loaded_cantilever(2, True).bodies["beam"]) \
        == pytest.approx(1.0, abs=1e-9)
    assert axial_stretch_capability(_loaded_cantilever().bodies["beam"]) \
        == pytest.approx(1.0, abs=1e-9)


def test_correction_modes_follow_the_markers_and_drop_dependent_shapes():
    """A marker added after the body brings its node's correction modes; a basis that
    already spans everything (1 element: 2 modes + 6 corrections = 6 coordinates at
    most) drops the dependent shapes and says which."""
    m = _loaded_cantilever(2, True)
    assert m.bodies["beam"].nf == 2 + 6
    m.add_marker("beam", "mid", node=2)
    assert m.bodies["beam"].nf == 2 + 12
    assert sum("at node 2 (mid)" in d for d in m.bodies["beam"].basis.descriptions) == 6
    one = huang_two_link(1, modes=2, correction_modes=True).bodies["link2"]
    assert one.nf == 6 and len(one.basis.dropped_corrections) == 2


def test_free_rigid_motions_stay_out_of_the_basis():
    """A beam whose reference conditions hold nothing (fixed = {}) has 6 rigid-body
    modes: the floating frame carries them, so the basis leaves them out, modes and
    correction modes alike (M-orthogonal to them), and M* of the beam on a free joint
    is regular, where the nodal coordinates make it singular; at most 30 - 6 = 24
    modes."""
    h2 = huang_two_link().bodies["link2"]

    def free_beam(modes, corrections=False):
        m = Model("floating", gravity=(0, 0, 0))
        m.add_beam_body("b", [[0, 0, 0], [1, 0, 0]], h2.section, h2.material, elements=4,
                        fixed={}, modes=modes, correction_modes=corrections)
        m.add_marker("b", "root", node=0)
        m.add_joint("j", "free", parent="ground", child="b", child_marker="root")
        return m

    model = free_beam(3, True)
    beam = model.bodies["b"]
    alone = body_modes(beam)
    assert np.sum(alone.rigid) == 6 and np.all(alone.frequencies[:6] == 0.0)
    rigid = alone.vectors[:, :6]
    assert np.abs(rigid.T @ body_mass_matrix(beam) @ beam.basis.vectors).max() < 1e-12
    assert np.all(beam.basis.frequencies > 1.0)
    smallest = np.linalg.eigvalsh(api.mass_matrix(*_state(model)))[0]
    assert smallest > 1e-6
    assert np.linalg.eigvalsh(api.mass_matrix(*_state(free_beam("all"))))[0] < 1e-12
    too_many = free_beam(25)  # the basis is made when the model is compiled
    with pytest.raises(ModelError, match="at most 24 modes .* less its free rigid-body"):
        compile_model(too_many)


def _state(model):
    cm = compile_model(model)
    return cm, cm.q0


# ---- frequencies -------------------------------------------------------------------

def _tip_mass_frequency(length, tip, section, mat):
    """Lowest bending frequency (Hz) of a clamped-free Euler-Bernoulli beam with a
    tip point mass M: 1 + cos(bL) cosh(bL) + (M / rho A L) bL (cos(bL) sinh(bL) -
    sin(bL) cosh(bL)) = 0."""
    mu = tip / (mat.density * section.area * length)

    def equation(b):
        return (1 + math.cos(b) * math.cosh(b)
                + mu * b * (math.cos(b) * math.sinh(b) - math.sin(b) * math.cosh(b)))

    bl = scipy.optimize.brentq(equation, 0.1, 1.8751040687119611)
    ei = mat.youngs_modulus * section.i_y
    return bl ** 2 * math.sqrt(ei / (mat.density * section.area * length ** 4)) / (2 * math.pi)


def test_rig_link_frequencies_from_the_command_line():
    """`flexmbs modes` on the RIG (link 2: the Huang tube, 1.02 m, 0.604 kg at the
    tip): with 1 element the first bending pair is within 1 % of the thesis's 3.39 Hz
    (table 3.5; 3.3608 Hz); with 10 elements within 0.1 % of the frequency equation of
    a cantilever with a tip mass (3.36077 Hz; measured -3.7e-6: the section's rotary
    inertia, which the elements include and the equation leaves out, lowers it by
    about (beta r)^2 / 2 with r = 4.6 mm, as in tests/test_elements.py)."""
    one = flexmbs("modes", MODELS / "huang_rig.toml", "--body", "link2", "--json")
    assert one.returncode == 0, one.stderr
    report = json.loads(one.stdout)
    (body,) = report["bodies"]
    pair = [m["frequency_hz"] for m in body["modes"][:2]]
    assert pair == pytest.approx([THESIS_RIG_FIRST_PAIR] * 2, rel=1e-2)
    assert {m["description"] for m in body["modes"][:2]} == {"bending y", "bending z"}
    assert [m["description"] for m in body["modes"][4:6]] == ["axial", "torsion"]
    ten = flexmbs("modes", MODELS / "huang_rig.toml", "--set", "bodies.link2.elements=10",
                  "--json")
    assert ten.returncode == 0, ten.stderr
    pair = [m["frequency_hz"] for m in json.loads(ten.stdout)["bodies"][0]["modes"][:2]]
    beam = huang_rig().bodies["link2"]
    analytic = _tip_mass_frequency(1.02, 0.604, beam.section, beam.material)
    assert pair == pytest.approx([analytic] * 2, rel=1e-3)
    text = flexmbs("modes", MODELS / "huang_two_link.toml", "--set", "bodies.link2.modes=2")
    assert text.returncode == 0, text.stderr
    assert "link2.mode1" in text.stdout and "not in equilibrium" in text.stdout


def test_compound_pendulum_and_torsional_spring_frequencies():
    """Rigid models with closed forms: a compound pendulum hanging at rest,
    sqrt(m g c / I_O) / 2 pi; a body on a torsional spring without gravity,
    sqrt(k / I) / 2 pi, also away from the spring's rest (not in equilibrium: the
    residual is the spring torque) and with an initial rate (not at rest). The
    central differences' error is h^2 ~ 4e-11 relative."""
    m, c, ic, g = 1.3, 0.4, 0.02, 9.81
    pendulum = Model("pendulum", gravity=(0, 0, -g))
    pendulum.add_rigid_body("rod", mass=m, com=(0, 0, -c), inertia=(ic, ic, 1e-4),
                            inertia_about="com")
    pendulum.add_joint("j", "revolute", parent="ground", child="rod", axis=(0, 1, 0))
    beams, s = model_modes(pendulum)
    assert beams == [] and s.in_equilibrium and s.at_rest
    expected = math.sqrt(m * g * c / (ic + m * c ** 2)) / (2 * math.pi)
    assert s.frequencies[0] == pytest.approx(expected, rel=1e-8)
    assert s.dominant[0] == [("j", 1.0)]

    k, inertia = 7.0, 0.05
    spring = Model("spring", gravity=(0, 0, 0))
    spring.add_rigid_body("wheel", mass=1.0, inertia=(inertia, inertia, inertia),
                          inertia_about="com")
    spring.add_joint("j", "revolute", parent="ground", child="wheel", stiffness=k,
                     rest=0.2, initial=0.5, initial_rate=1.0)
    s = system_modes(compile_model(spring))
    assert not s.in_equilibrium and not s.at_rest and s.largest_rate == 1.0
    assert s.residual[0] == pytest.approx(-k * 0.3, rel=1e-12)
    assert s.frequencies[0] == pytest.approx(math.sqrt(k / inertia) / (2 * math.pi),
                                             rel=1e-8)


def _held_h2(modes, initial="static"):
    """H2 with both joints held by constant drivers at theta1 = 1.5, theta2 = -1.0,
    the beam in its static state under gravity: an equilibrium whose only
    coordinates are the beam's; linear (geometric = "none"), as the body's own
    eigenproblem is."""
    m = huang_two_link(1, modes=modes, initial=initial, geometric="none")
    m.add_driver("hold1", "joint1", Constant(1.5))
    m.add_driver("hold2", "joint2", Constant(-1.0))
    return m


@pytest.mark.parametrize("modes", ["all", 2])
def test_h2_held_in_equilibrium_has_the_clamped_beam_frequencies(modes):
    """The whole-model linearisation of H2 with its joints held is the clamped beam:
    its frequencies are the body's own (nodal: all six; 2 modes: the first pair), in
    equilibrium (the static state leaves 1e-10 of the elastic forces)."""
    model = _held_h2(modes)
    (beam,), s = model_modes(model)
    assert s.in_equilibrium and s.at_rest
    own = beam.frequencies if modes == "all" else beam.kept["reduced_frequencies"]
    assert s.frequencies == pytest.approx(own, rel=1e-7)
    undeformed = system_modes(compile_model(_held_h2(modes, "undeformed")))
    assert not undeformed.in_equilibrium
    assert undeformed.frequencies == pytest.approx(own, rel=1e-7)


def test_h2_sideways_is_an_unstable_equilibrium_in_any_basis():
    """H2 at theta1 = 0, theta2 = pi/2 (the beam horizontal along the joint-1 axis) in
    its static state is an equilibrium, but a saddle: turning joint 2 moves the beam's
    weight off the joint-1 axis, d^2V / dtheta1 dtheta2 = g m2 x2 (m2 x2 the first
    moment of link 2 along its axis) while d^2V / dtheta2^2 = 0, so one w^2 < 0. The
    nodal model and the full mode basis linearise to the same w^2 (the basis changes
    the coordinates, not the system)."""
    def linearised(modes):
        m = huang_two_link(1, modes=modes, initial="static", geometric="none")
        m.joints["joint1"].initial[:] = 0.0
        m.joints["joint2"].initial[:] = math.pi / 2
        return m, system_modes(compile_model(m))

    model, nodal = linearised("all")
    _, modal = linearised(6)
    assert nodal.in_equilibrium and modal.in_equilibrium
    assert nodal.eigenvalues[0] < 0 and np.isnan(nodal.frequencies[0])
    assert np.all(nodal.eigenvalues[1:] > 0)
    beam = model.bodies["link2"]
    coupling = 9.81 * beam.mass * beam.com[0]
    assert nodal.stiffness[0, 1] == pytest.approx(coupling, rel=1e-6)
    assert modal.eigenvalues == pytest.approx(nodal.eigenvalues, rel=1e-6)


def test_rig_hanging_is_stable_with_the_beam_frequencies_near_the_clamped_ones():
    """The RIG hanging at rest (theta1 = theta2 = 0, the beam along gravity) in its
    static state: an equilibrium, stable (the joint springs, gravity); the beam's
    axial and torsional modes barely move its root, so they keep the clamped beam's
    frequencies to 1 %; the lowest modes are the pendulum and spring modes of the
    joints."""
    model = huang_rig(theta2=0.0)
    model.bodies["link2"].initial = "static"
    (beam,), s = model_modes(model)
    assert s.in_equilibrium and s.at_rest and np.all(s.eigenvalues > 0)
    clamped = dict(zip(beam.descriptions, beam.frequencies))
    for kind in ("axial", "torsion"):
        assert np.min(np.abs(s.frequencies / clamped[kind] - 1)) < 1e-2
    assert {s.dominant[0][0][0], s.dominant[1][0][0]} == {"joint1", "joint2"}


# ---- files, builder, result file ---------------------------------------------------

def test_the_model_file_variant_is_the_builder():
    """--set bodies.link2.modes=2 on the H2 file is huang_two_link(modes=2)."""
    path = MODELS / "huang_two_link.toml"
    two = load_model(path, ["bodies.link2.modes=2"])
    assert model_to_dict(two) == model_to_dict(huang_two_link(1, modes=2))
    assert two.bodies["link2"].coordinate_names() == ["link2.mode1", "link2.mode2",
                                                      "link2.derivative1"]


def test_result_file_holds_the_mode_basis(tmp_path):
    """/modes/<body>: the basis, names, frequencies, descriptions and the axial
    stretch capability of each reduced beam; none for nodal beams."""
    model = huang_two_link(2, modes=2, correction_modes=True, t_end=0.01)
    out = tmp_path / "h2.h5"
    assert simulate(model, out).status == "finished"
    r = open_result(out)
    rec, basis = r.modes["link2"], model.bodies["link2"].basis
    assert np.array_equal(rec["basis"], basis.vectors)
    assert rec["coordinates"] == list(basis.names) == r.coordinate_names[2:]
    derivatives = basis.kinds.count("derivative")
    assert derivatives >= 1
    assert rec["kinds"] == ["mode"] * 2 + ["correction"] * 6 + ["derivative"] * derivatives
    assert np.array_equal(rec["frequencies"], basis.frequencies)
    assert rec["descriptions"][:2] == ["bending y", "bending z"]
    assert rec["nodal_coordinates"][0] == "link2.n1.u"
    assert rec["strain_energy_fractions"].shape == (8 + derivatives, 4)
    assert rec["modes"] == 2 and rec["correction_modes"] == 1
    assert rec["axial_stretch_capability"] == pytest.approx(1.0)
    nodal = tmp_path / "nodal.h5"
    simulate(huang_two_link(1, t_end=0.01), nodal)
    assert open_result(nodal).modes == {}


# ---- bad input ---------------------------------------------------------------------

@pytest.mark.parametrize("override, field, words", [
    ("bodies.link2.modes=0", "modes", 'expected a positive integer or "all", got 0'),
    ('bodies.link2.modes="few"', "modes", "got 'few'"),
    ("bodies.link2.modes=7", "modes", "expected at most 6 modes"),
    ("bodies.link2.modes=2.5", "modes", 'expected an integer or "all"'),
    ('bodies.link2.correction_modes="yes"', "correction_modes", "expected true or false"),
    ("bodies.link2.correction_modes=true", "correction_modes", "give the number of modes"),
])
def test_bad_modal_input_names_file_item_and_field(override, field, words):
    path = MODELS / "huang_two_link.toml"
    with pytest.raises(ModelError) as err:
        load_model(path, [override])
    text = str(err.value)
    assert str(path) in text and 'body "link2"' in text and f'field "{field}"' in text
    assert words in text


def test_modes_command_bad_input_exits_2():
    r = flexmbs("modes", MODELS / "huang_two_link.toml", "--set", "bodies.link2.modes=0")
    assert r.returncode == 2 and r.stderr.startswith("flexmbs: error:")
    assert 'field "modes"' in r.stderr and "Traceback" not in r.stderr
    r = flexmbs("modes", MODELS / "huang_two_link.toml", "--body", "link1")
    assert r.returncode == 2 and 'no beam body "link1"' in r.stderr
    assert "Traceback" not in r.stderr


def test_a_beam_is_a_description_until_its_derived_data_are_used(monkeypatch):
    """Adding a beam or a marker computes nothing; the invariants and the basis are made
    at first use, kept while their inputs stay, and made again when a marker adds a
    node for the correction modes."""
    import flexmbs.elements.invariants as invariants_module
    calls = []
    real = invariants_module.beam_body_invariants

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(invariants_module, "beam_body_invariants", counting)
    h2 = huang_two_link().bodies["link2"]
    m = Model("described", gravity=(0, 0, -9.81))
    beam = m.add_beam_body("b", [[0, 0, 0], [1, 0, 0]], h2.section, h2.material,
                           elements=4, modes=2, correction_modes=True,
                           modal_derivatives=False)
    m.add_marker("b", "tip", node=4)
    assert calls == []
    first = beam.basis
    assert len(calls) == 1 and beam.basis is first and beam.invariants is beam.invariants
    assert len(calls) == 1 and first.nm == 2 + 6
    m.add_marker("b", "middle", node=2)
    assert beam.basis.nm == 2 + 12 and len(calls) == 2
