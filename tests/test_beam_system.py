"""Flexible beam bodies in the system (docs/explanation/formulation.md sections 2-5, 7) on Huang's
two-link manipulator H2: the assembled M* and the energies against brute-force
quadrature over the beam's volume, energy conservation and balance, the rigid limit,
sensors, and what this version refuses."""

from pathlib import Path

import numpy as np
import pytest

from flexmbs import ModelError, compile_model, load_model, simulate
from flexmbs.dynamics import api
from flexmbs.elements.beam import (
    element_frame,
    element_length,
    element_transformation,
    shape_matrix,
)
from flexmbs.formats.serialize import model_to_dict
from flexmbs.model import Model
from flexmbs.model.library import huang_two_link

GAUSS = np.polynomial.legendre.leggauss(4)


def _beam_points(body):
    """Quadrature points of the beam volume and the tip mass: for each, the element
    (or None for the tip mass), xi, y, z (element axes) and the weight (kg)."""
    sec, rho = body.section, body.material.density
    section = [(np.sqrt(2 * sec.i_z / sec.area), 0.0), (-np.sqrt(2 * sec.i_z / sec.area), 0.0),
               (0.0, np.sqrt(2 * sec.i_y / sec.area)), (0.0, -np.sqrt(2 * sec.i_y / sec.area))]
    points = []
    for e, (a, b) in enumerate(body.connectivity):
        length = element_length(body.nodes[a], body.nodes[b])
        for x, w in zip(*GAUSS):
            for y, z in section:
                points.append((e, (x + 1) / 2, y, z, rho * sec.area / 4 * length * w / 2))
    for node, mass in body.node_masses.items():
        points.append((None, node, 0.0, 0.0, mass))
    return points


def _beam_positions(body, r, rot, qf, points):
    """Global positions of the points for frame (r, rot) and elastic coordinates qf,
    straight from the element shape matrix (docs/explanation/formulation.md section 3)."""
    full = np.zeros(6 * len(body.nodes))
    full[body.free] = qf
    out = []
    for e, xi, y, z, _ in points:
        if e is None:
            u = body.nodes[xi] + full[6 * xi:6 * xi + 3]
        else:
            a, b = body.connectivity[e]
            c = element_frame(body.nodes[a], body.nodes[b], body.reference)
            length = element_length(body.nodes[a], body.nodes[b])
            qe = np.concatenate([full[6 * a:6 * a + 6], full[6 * b:6 * b + 6]])
            s = c @ shape_matrix(xi, y / length, z / length, length) @ \
                element_transformation(c) @ qe
            u = body.nodes[a] + c @ np.array([xi * length, y, z]) + s
        out.append(r + rot @ u)
    return np.array(out)


def _brute_force_energies(model, cm, q, u, h=1e-6):
    """Kinetic energy (central differences of positions along u) and gravity potential
    of link 1 (rigid: m, c, I_c) and link 2 (points of the beam volume)."""
    beam = model.bodies["link2"]
    link1 = model.bodies["link1"]
    points = _beam_points(beam)
    weights = np.array([p[-1] for p in points])
    nj = 2
    g = model.gravity

    def state(qq):
        r, rot = api.body_poses(cm, qq)
        return r, rot, _beam_positions(beam, r[1], rot[1], qq[nj:], points)

    r, rot, x = state(q)
    rp, rotp, xp = state(q + h * u)
    rm, rotm, xm = state(q - h * u)
    v = (xp - xm) / (2 * h)
    kinetic = 0.5 * np.sum(weights * np.sum(v * v, axis=1))
    gravity = -np.sum(weights * (x @ g))
    c = link1.com
    vc = ((rp[0] + rotp[0] @ c) - (rm[0] + rotm[0] @ c)) / (2 * h)
    wskew = rot[0].T @ (rotp[0] - rotm[0]) / (2 * h)
    w = np.array([wskew[2, 1], wskew[0, 2], wskew[1, 0]])
    kinetic += 0.5 * link1.mass * vc @ vc + 0.5 * w @ link1.inertia @ w
    gravity -= link1.mass * g @ (r[0] + rot[0] @ c)
    return kinetic, gravity


@pytest.mark.parametrize("elements", [1, 3])
def test_mass_matrix_and_energies_match_volume_quadrature(elements):
    """1/2 u^T M* u and V_g from the invariant path against points of the actual beam
    volume moved by the element shape functions (exact quadrature), at deformed
    states; M* symmetric positive definite."""
    model = huang_two_link(elements)
    cm = compile_model(model)
    rng = np.random.default_rng(elements)
    for _ in range(3):
        q = np.concatenate([rng.uniform(-2, 2, 2), rng.normal(scale=0.02, size=cm.nq - 2)])
        u = rng.normal(size=cm.nq)
        mstar = api.mass_matrix(cm, q)
        assert np.allclose(mstar, mstar.T, rtol=0, atol=1e-15)
        assert np.linalg.eigvalsh(mstar).min() > 0
        kinetic, gravity = _brute_force_energies(model, cm, q, u)
        e = api.energies(cm, q, u)
        # central differences with h = 1e-6: relative error ~1e-11
        assert 0.5 * u @ mstar @ u == pytest.approx(kinetic, rel=1e-8)
        assert e["kinetic"] == pytest.approx(kinetic, rel=1e-8)
        assert e["gravity"] == pytest.approx(gravity, rel=1e-12, abs=1e-12)
        kff = model.bodies["link2"].invariants.stiffness
        u2 = e["strain"] - e["strain_axial_force"] - e["strain_foreshortening"]
        assert u2 == pytest.approx(0.5 * q[2:] @ kff @ q[2:], rel=1e-9)


@pytest.mark.parametrize("elements", [1, 2])
def test_h2_conserves_energy(elements):
    """H2 with alpha = 0: Huang's criterion max |E - E0| / max U far below 1e-5
    (measured 6e-10 with 1 element and 5e-11 with 5 over 1 s at rtol 1e-8)."""
    sim = simulate(huang_two_link(elements), None, t_end=0.3, rtol=1e-8, atol=1e-10,
                   output_step=0.01)
    assert sim.status == "finished"
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    assert e[:, 2].max() > 1e-3                       # the beam does bend
    assert np.abs(total - total[0]).max() <= 1e-5 * e[:, 2].max()
    assert np.all(e[:, 4] == 0.0)


def test_h2_damped_energy_balance():
    """alpha = 0.0003: the strain energy is partly dissipated (W_nc < 0) and the
    balance including W_nc holds to the same bound."""
    sim = simulate(huang_two_link(1, alpha=3e-4), None, t_end=0.3, rtol=1e-8, atol=1e-10,
                   output_step=0.01)
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    assert e[-1, 4] < -1e-6
    assert np.abs(total - total[0]).max() <= 1e-5 * e[:, 2].max()


def test_rigid_limit_follows_the_rigid_two_link():
    """E and G times 1e6: link 2 moves like a rigid body of the beam's mass properties
    (its deflection shrinks to ~1e-9 rad). alpha = 1e-5 s damps the stiffened beam's
    axial and torsional ringing (damping ratio alpha w / 2 > 1 above 2e5 rad/s) so that
    the integrator need not follow it; measured difference 2e-8 rad in 0.5 s."""
    flexible = huang_two_link(1, alpha=1e-5, youngs_modulus_scale=1e6)
    beam = flexible.bodies["link2"]
    rigid = huang_two_link(1)
    del rigid.bodies["link2"]
    rigid.add_rigid_body("link2", mass=beam.mass, com=beam.com, inertia=beam.inertia,
                         inertia_about="com")
    rigid.sensors.pop("tip")
    rigid.sensors.pop("tip_deflection")
    a = simulate(flexible, None, t_end=0.5, rtol=1e-9, atol=1e-11, output_step=0.05)
    b = simulate(rigid, None, t_end=0.5, rtol=1e-9, atol=1e-11, output_step=0.05)
    assert a.status == b.status == "finished"
    assert np.abs(a.y[:, :2] - b.y[:, :2]).max() < 1e-6


def test_tip_sensor_is_the_deformed_node():
    model = huang_two_link(2)
    cm = compile_model(model)
    sim = simulate(model, None, t_end=0.05, output_step=0.05)
    cols = model.bodies["link2"].node_columns(2)[:3]
    names = cm.coordinate_names
    assert [names[2 + c] for c in cols] == ["link2.n2.u", "link2.n2.v", "link2.n2.w"]
    np.testing.assert_allclose(sim.sensors[:, 2:5], [1.02, 0, 0] + sim.y[:, 2 + cols],
                               atol=1e-14)


def _beam_model():
    m = Model("b")
    m.add_rigid_body("hub", mass=1.0, inertia=(1, 1, 1), inertia_about="com")
    m.add_beam_body("beam", [[0, 0, 0], [1, 0, 0]], huang_two_link().bodies["link2"].section,
                    huang_two_link().bodies["link2"].material, elements=2)
    m.add_marker("beam", "mid", node=1)
    m.add_joint("j1", "revolute", parent="ground", child="hub", axis=(0, 0, 1))
    return m


def _beam_clamped_at_its_end():
    m = Model("b")
    m.add_rigid_body("hub", mass=1.0, inertia=(1, 1, 1), inertia_about="com")
    tube = huang_two_link().bodies["link2"]
    m.add_beam_body("beam", [[0, 0, 0], [1, 0, 0]], tube.section, tube.material,
                    elements=2, fixed={-1: "all"})
    m.add_marker("beam", "mid", node=1)
    m.add_joint("j1", "revolute", parent="ground", child="hub", axis=(0, 0, 1))
    return m


@pytest.mark.parametrize("change, field", [
    (lambda m: m.add_joint("j2", "revolute", parent="hub", child="beam", axis=(0, 0, 1)),
     "child_marker"),
    (lambda m: (m.add_joint("j2", "revolute", parent="hub", child="beam",
                            child_marker="mid", axis=(0, 0, 1)),
                m.add_rigid_body("tip", mass=1.0, inertia=(1, 1, 1), inertia_about="com"),
                m.add_joint("j3", "revolute", parent="beam", child="tip", axis=(0, 0, 1))),
     "parent_marker"),
    (lambda m: (m.add_joint("j2", "revolute", parent="hub", child="beam",
                            child_marker="mid", axis=(0, 0, 1)),
                m.add_force("f", "force", "beam", "origin", vector=(0, 0, 1))), "marker"),
])
def test_the_floating_frame_of_a_beam_is_no_material_point(change, field):
    """A beam's "origin" marker is its floating frame: joints and loads there are
    refused unless a held node sits at the origin (here the beam is clamped at its
    far end, so node 0 at the origin moves)."""
    m = _beam_clamped_at_its_end()
    change(m)
    with pytest.raises(ModelError) as err:
        compile_model(m)
    assert err.value.field == field
    assert "floating frame" in str(err.value)


def test_beams_carry_joints_and_loads_at_free_nodes():
    """What an earlier restriction refused now compiles: a joint at a free node on
    either side, a load on a beam marker."""
    m = _beam_model()
    m.add_joint("j2", "revolute", parent="hub", child="beam", child_marker="mid",
                axis=(0, 0, 1))
    m.add_rigid_body("tip", mass=1.0, inertia=(1, 1, 1), inertia_about="com")
    m.add_marker("beam", "end", node=-1)
    m.add_joint("j3", "revolute", parent="beam", parent_marker="end", child="tip",
                axis=(0, 0, 1))
    m.add_force("f", "force", "beam", "end", vector=(0, 0, 1))
    cm = compile_model(m)
    assert cm.nq == 3 + 12


@pytest.mark.parametrize("kwargs, field", [
    (dict(points=[[0, 0, 0]]), "points"),
    (dict(points=[[0, 0, 0], [0, 0, 0]]), "points"),
    (dict(elements=0), "elements"),
    (dict(elements=[1, 2]), "elements"),
    (dict(fixed={5: "all"}), "fixed"),
    (dict(fixed={0: ["u", "q"]}), "fixed.0"),
    (dict(node_masses={0: -1.0}), "node_masses.0"),
    (dict(alpha=-1.0), "alpha"),
])
def test_bad_beam_bodies_are_refused(kwargs, field):
    h2 = huang_two_link().bodies["link2"]
    args = dict(points=[[0, 0, 0], [1, 0, 0]], section=h2.section, material=h2.material)
    args.update(kwargs)
    with pytest.raises(ModelError) as err:
        Model("m").add_beam_body("b", **args)
    assert err.value.field == field and err.value.item == 'body "b"'


def test_marker_on_a_beam_sits_on_a_node():
    m = _beam_model()
    with pytest.raises(ModelError, match="node index 0..2"):
        m.add_marker("beam", "off", position=(0.3, 0, 0))
    with pytest.raises(ModelError, match="only markers on flexible bodies sit on nodes"):
        m.add_marker("hub", "n", node=1)
    assert np.allclose(m.bodies["beam"].markers["mid"].position, [0.5, 0, 0])


def test_model_file_is_the_builder():
    """data/models/huang_two_link.toml and library.huang_two_link describe one model,
    also with the 5-element variant set from the command line."""
    path = Path(__file__).resolve().parents[1] / "data" / "models" / "huang_two_link.toml"
    assert model_to_dict(load_model(path)) == model_to_dict(huang_two_link(1))
    five = load_model(path, ["bodies.link2.elements=5", "bodies.link2.alpha=0.0003"])
    assert model_to_dict(five) == model_to_dict(huang_two_link(5, alpha=3e-4))


def _held_cantilever(elements, initial="static"):
    """The H2 beam with its 0.5 kg tip mass, clamped to the ground (a fixed joint),
    horizontal along x under gravity -z; linear (geometric = "none": the formulas it
    is held against are those of linear beam theory)."""
    h2 = huang_two_link(elements).bodies["link2"]
    m = Model("cantilever", gravity=(0, 0, -9.81))
    m.add_beam_body("beam", [[0, 0, 0], [1.02, 0, 0]], h2.section, h2.material,
                    elements=elements, reference=(0, 1, 0), node_masses={-1: 0.5},
                    initial=initial, geometric="none")
    m.add_joint("clamp", "fixed", parent="ground", child="beam")
    return m


@pytest.mark.parametrize("elements", [1, 4])
def test_static_deflection_is_the_cantilever_formula(elements):
    """initial = "static" under gravity: the tip deflection is P L^3 / (3 EI) +
    w L^4 / (8 EI) (tip weight P, own weight w per metre); cubic elements with
    consistent loads give it exactly at the nodes."""
    model = _held_cantilever(elements)
    cm = compile_model(model)
    beam = model.bodies["beam"]
    length, g = 1.02, 9.81
    ei = beam.material.youngs_modulus * beam.section.i_y
    p, w = 0.5 * g, beam.material.density * beam.section.area * g
    exact = p * length ** 3 / (3 * ei) + w * length ** 4 / (8 * ei)
    tip_w = cm.q0[cm.coordinate_names.index(f"beam.n{elements}.w")]
    assert tip_w == pytest.approx(-exact, rel=1e-9)
    sim = simulate(model, None, t_end=0.2, rtol=1e-8, atol=1e-12, output_step=0.05)
    assert np.abs(sim.y[:, :cm.nq] - cm.q0).max() < 1e-9  # an equilibrium: it stays
    assert sim.energy[0, 2] > 0 and sim.energy[0, 0] == 0.0


def test_root_strain_converges_to_the_beam_formula():
    """beam_strain at the clamped end, top and bottom of the section (c = 6.35 mm):
    +-M c / EI with M = P L + w L^2 / 2. The element's curvature is linear and the
    moment of the own weight quadratic, so the error falls as 1/n^2 (measured -2.8 %,
    -0.17 %, -7e-5 with 1, 4, 20 elements)."""
    errors = []
    for elements in (4, 20):
        m = _held_cantilever(elements)
        beam = m.bodies["beam"]
        c = beam.section.max_z
        m.add_sensor("top", "beam_strain", body="beam", element=0, at="start",
                     point=(0.0, c))
        m.add_sensor("bottom", "beam_strain", body="beam", element=0, point=(0.0, -c))
        length, g = 1.02, 9.81
        moment = 0.5 * g * length + beam.material.density * beam.section.area * g * \
            length ** 2 / 2
        exact = moment * c / (beam.material.youngs_modulus * beam.section.i_y)
        sim = simulate(m, None, t_end=0.01, output_step=0.01)
        assert sim.sensors[0, 1] == pytest.approx(-sim.sensors[0, 0], rel=1e-12)
        errors.append(sim.sensors[0, 0] / exact - 1)
    assert abs(errors[1]) < 1e-4
    assert abs(errors[0]) / abs(errors[1]) == pytest.approx(25, rel=0.1)  # (20 / 4)^2


def test_rig_model_file_is_the_builder_and_balances():
    """data/models/huang_rig.toml equals library.huang_rig; a short run with its
    springs, dampers and alpha closes the energy balance; the strain gauge reads the
    bending at the clamp, whose moment is the joint-2 torque (spring and damper) plus
    the ringing of a beam released undeformed: the same magnitude as tau c / EI."""
    from flexmbs.model.library import huang_rig
    path = Path(__file__).resolve().parents[1] / "data" / "models" / "huang_rig.toml"
    assert model_to_dict(load_model(path)) == model_to_dict(huang_rig())
    sim = simulate(huang_rig(), None, t_end=0.3, rtol=1e-8, atol=1e-10, output_step=0.01)
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    assert np.abs(total - total[0]).max() <= 1e-5 * e[:, 2].max()
    assert e[-1, 4] < 0                                   # the dampers take energy out
    nq = len(sim.coordinate_names)
    tau = -0.1 * sim.sensors[:, 1] - 0.098 * sim.y[:, nq + 1]   # joint-2 spring, damper
    eps_tau = np.abs(tau).max() * 6.35e-3 / (0.69e11 * 1.4891e-9)
    assert np.abs(sim.sensors[:, 2]).max() == pytest.approx(eps_tau, rel=0.5)


def test_three_link_model_file_is_the_builder_and_conserves_energy():
    """data/models/huang_three_link.toml equals library.huang_three_link; H3 (a
    prismatic joint between the rigid links, the flexible link at the end) conserves
    energy over a short run (Huang's criterion, with the bound of H2)."""
    from flexmbs.model.library import huang_three_link
    path = Path(__file__).resolve().parents[1] / "data" / "models" / "huang_three_link.toml"
    assert model_to_dict(load_model(path)) == model_to_dict(huang_three_link())
    sim = simulate(huang_three_link(), None, t_end=0.3, rtol=1e-8, atol=1e-10,
                   output_step=0.01)
    assert sim.status == "finished"
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    assert np.abs(total - total[0]).max() <= 1e-5 * e[:, 2].max()
    assert abs(sim.sensors[-1, 1]) > 1e-3            # link 2 slides along link 1


def test_section_forces_curvature_centre_line_and_deflection_of_a_loaded_cantilever():
    """The Huang tube clamped to the ground along x, 3 elements, linear (geometric =
    "none"), a tip force F and a tip torque M (loads on the tip marker), no gravity,
    in its static state. Statics:
    N = F_x, V_y = F_y, V_z = F_z, T = M_x, M_z(x) = M_z + (L - x) F_y,
    M_y(x) = M_y - (L - x) F_z; the cubic elements are exact for tip loads, so the
    sensors, the centre line (v = F_y x^2 (3L - x) / 6EI + M_z x^2 / 2EI, w likewise,
    u = F_x x / EA) and the tip deflection agree to the nonlinearity of the torque on
    the rotated tip node (Tm(th), th ~ 5e-3 here: relative 1e-5)."""
    h2 = huang_two_link().bodies["link2"]
    length, ne = 1.02, 3
    force = np.array([2.0, 0.8, -0.6])
    torque = np.array([1e-3, 2e-3, -1.5e-3])
    m = Model("loaded", gravity=(0, 0, 0))
    m.add_beam_body("beam", [[0, 0, 0], [length, 0, 0]], h2.section, h2.material,
                    elements=ne, reference=(0, 1, 0), initial="static", geometric="none")
    m.add_marker("beam", "tip", node=-1)
    m.add_joint("clamp", "fixed", parent="ground", child="beam")
    m.add_force("F", "force", "beam", "tip", vector=force)
    m.add_force("M", "torque", "beam", "tip", vector=torque)
    places = [(0, "start"), (1, 0.25), (2, "end")]
    for k, (element, at) in enumerate(places):
        m.add_sensor(f"s{k}", "beam_section_forces", body="beam", element=element, at=at)
        m.add_sensor(f"k{k}", "beam_curvature", body="beam", element=element, at=at)
    m.add_sensor("line", "beam_centerline", body="beam", subdivisions=4)
    m.add_sensor("tip", "marker_deflection", body="beam", marker="tip", frame="beam")
    cm = compile_model(m)
    from test_flexible_tree import sensor_readings
    got = sensor_readings(cm, cm.q0, np.zeros(cm.nq))
    ea = h2.material.youngs_modulus * h2.section.area
    ei = h2.material.youngs_modulus * h2.section.i_z
    scale = np.abs(force).max() * length
    for k, (element, at) in enumerate(places):
        x = (element + {"start": 0.0, "end": 1.0}.get(at, at)) * length / ne
        expected = [force[0], force[1], force[2], torque[0],
                    torque[1] - (length - x) * force[2], torque[2] + (length - x) * force[1]]
        assert np.abs(got[f"s{k}"] - expected).max() <= 1e-5 * scale, (k, got[f"s{k}"])
        assert got[f"k{k}"] == pytest.approx(np.array(expected[4:]) / ei, rel=1e-5,
                                             abs=1e-5 * scale / ei)
    x = np.linspace(0.0, length, 4 * ne + 1)
    v = force[1] * x ** 2 * (3 * length - x) / (6 * ei) + torque[2] * x ** 2 / (2 * ei)
    w = force[2] * x ** 2 * (3 * length - x) / (6 * ei) - torque[1] * x ** 2 / (2 * ei)
    line = got["line"].reshape(-1, 3)
    exact = np.column_stack([x + force[0] * x / ea, v, w])
    assert np.abs(line - exact).max() <= 1e-5 * np.abs(v).max()
    assert got["tip"] == pytest.approx(exact[-1] - [length, 0, 0], rel=1e-5,
                                       abs=1e-5 * np.abs(v).max())
