"""Rigid bodies given by a density and their shapes: the mass, centre of mass and inertia
against the closed forms of a box, a cylinder and a sphere and against trimesh's own for
a mesh; the builder and the model file alike; a URDF without inertials imported with
--density written in that form, run, and read back."""

import math

import numpy as np
import pytest

from flexmbs import Model, simulate
from flexmbs.cli import main
from flexmbs.formats.serialize import model_to_dict
from flexmbs.formats.toml_reader import load_model, loads_model
from flexmbs.formats.urdf import import_urdf
from flexmbs.model.solid_shapes import Shape

RHO = 2700.0
ROUND_OFF = 1e-13


def _body(shapes_toml, density=RHO):
    text = (f"[bodies.b]\ndensity = {density}\n{shapes_toml}\n"
            '[joints.j]\ntype = "revolute"\nparent = "ground"\nchild = "b"\n')
    return loads_model(text).bodies["b"]


def _rot_x(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def test_a_box_a_cylinder_and_a_sphere_have_their_closed_forms():
    a, b, c = 0.1, 0.2, 0.3
    box = _body(f'[[bodies.b.shapes]]\ntype = "box"\nsize = [{a}, {b}, {c}]')
    m = RHO * a * b * c
    assert box.mass == pytest.approx(m, rel=ROUND_OFF)
    assert np.allclose(box.com, 0.0, atol=0.0)
    assert np.allclose(box.inertia, m / 12 * np.diag([b*b + c*c, a*a + c*c, a*a + b*b]),
                       rtol=ROUND_OFF, atol=0.0)
    r, h = 0.05, 0.4
    cyl = _body(f'[[bodies.b.shapes]]\ntype = "cylinder"\nradius = {r}\nlength = {h}')
    m = RHO * math.pi * r * r * h
    assert cyl.mass == pytest.approx(m, rel=ROUND_OFF)
    side = m * (3 * r * r + h * h) / 12
    assert np.allclose(cyl.inertia, np.diag([side, side, m * r * r / 2]), rtol=ROUND_OFF,
                       atol=0.0)
    sphere = _body(f'[[bodies.b.shapes]]\ntype = "sphere"\nradius = {r}')
    m = RHO * 4 / 3 * math.pi * r**3
    assert sphere.mass == pytest.approx(m, rel=ROUND_OFF)
    assert np.allclose(sphere.inertia, 0.4 * m * r * r * np.eye(3), rtol=ROUND_OFF, atol=0.0)


def test_shapes_placed_and_turned_add_by_the_parallel_axis_theorem():
    r, h, d = 0.05, 0.4, 0.3
    turn = _rot_x(math.pi / 2)  # the cylinder's axis along -y of the body
    cyl_sphere = _body(
        f'shapes = [{{type = "cylinder", radius = {r}, length = {h}, position = [0, 0, {d}], '
        f'euler_xyz = [{math.pi / 2}, 0, 0]}}, {{type = "sphere", radius = {r}}}]')
    mc, ms = RHO * math.pi * r * r * h, RHO * 4 / 3 * math.pi * r**3
    m = mc + ms
    zc = mc * d / m
    assert cyl_sphere.mass == pytest.approx(m, rel=ROUND_OFF)
    assert np.allclose(cyl_sphere.com, [0.0, 0.0, zc], rtol=ROUND_OFF, atol=1e-16)
    side = mc * (3 * r * r + h * h) / 12
    own = turn @ np.diag([side, side, mc * r * r / 2]) @ turn.T
    expected = own + 0.4 * ms * r * r * np.eye(3) \
        + mc * (d - zc) ** 2 * np.diag([1.0, 1.0, 0.0]) + ms * zc**2 * np.diag([1.0, 1.0, 0.0])
    assert np.allclose(cyl_sphere.inertia, expected, rtol=1e-12, atol=1e-16)
    assert cyl_sphere.inertia[1, 1] == pytest.approx(
        mc * r * r / 2 + 0.4 * ms * r * r + mc * (d - zc) ** 2 + ms * zc**2, rel=1e-12)


def test_a_mesh_has_the_mass_and_inertia_trimesh_gives_it(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    mesh = trimesh.creation.capsule(height=0.3, radius=0.05, count=[24, 24])
    mesh.apply_translation([0.01, 0.02, 0.1])
    mesh.export(tmp_path / "capsule.stl")
    (tmp_path / "m.toml").write_text(
        '[bodies.b]\ndensity = 2700.0\n[[bodies.b.shapes]]\ntype = "mesh"\n'
        'file = "capsule.stl"\nscale = [2.0, 1.0, 1.0]\nposition = [0.0, 0.0, 0.5]\n'
        '[joints.j]\ntype = "revolute"\nparent = "ground"\nchild = "b"\n')
    body = load_model(tmp_path / "m.toml").bodies["b"]  # the file beside the model file
    own = trimesh.load(tmp_path / "capsule.stl")
    own.apply_transform(np.diag([2.0, 1.0, 1.0, 1.0]))
    own.density = RHO
    assert own.is_volume
    assert body.mass == pytest.approx(own.mass, rel=ROUND_OFF)
    assert np.allclose(body.com, own.center_mass + [0.0, 0.0, 0.5], rtol=ROUND_OFF, atol=0.0)
    assert np.allclose(body.inertia, own.moment_inertia, rtol=1e-12, atol=1e-15)
    # a box mesh against the box's closed form, to the float32 vertices an STL stores
    trimesh.creation.box(extents=[0.1, 0.2, 0.3]).export(tmp_path / "box.stl")
    box = _body(f'[[bodies.b.shapes]]\ntype = "mesh"\nfile = "{tmp_path / "box.stl"}"')
    closed = _body('[[bodies.b.shapes]]\ntype = "box"\nsize = [0.1, 0.2, 0.3]')
    float32 = 4 * float(np.finfo(np.float32).eps)
    assert box.mass == pytest.approx(closed.mass, rel=float32)
    assert np.allclose(box.inertia, closed.inertia, rtol=float32, atol=0.0)


def test_the_builder_makes_the_model_files_body():
    model = Model("m")
    model.add_rigid_body("b", density=RHO, shapes=[
        Shape("box", size=np.array([0.1, 0.2, 0.3]), position=np.array([0.0, 0.0, 0.2])),
        {"type": "sphere", "radius": 0.05}])
    model.add_joint("j", "revolute", "ground", "b")
    text = ('[model]\nname = "m"\n[bodies.b]\ndensity = 2700.0\nshapes = [{type = "box", '
            'size = [0.1, 0.2, 0.3], position = [0.0, 0.0, 0.2]}, {type = "sphere", '
            'radius = 0.05}]\n[joints.j]\ntype = "revolute"\nparent = "ground"\nchild = "b"\n')
    assert model_to_dict(model) == model_to_dict(loads_model(text))
    heavier = loads_model(text, overrides=["bodies.b.density=5400.0"]).bodies["b"]
    assert heavier.mass == pytest.approx(2 * model.bodies["b"].mass, rel=ROUND_OFF)


ARM = """<robot name="arm">
  <link name="base"/>
  <link name="upper">
    <collision><origin xyz="0 0 0.2"/><geometry><box size="0.05 0.06 0.4"/></geometry></collision>
    <collision><origin xyz="0 0 0.4" rpy="1.5707963267948966 0 0"/>
      <geometry><cylinder radius="0.03" length="0.08"/></geometry></collision>
  </link>
  <link name="hand"><visual><geometry><sphere radius="0.04"/></geometry></visual></link>
  <link name="fore">
    <collision><origin xyz="0 0 0.15"/><geometry><box size="0.04 0.04 0.3"/></geometry>
    </collision>
  </link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="2"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="0 0 0.4"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="20" velocity="2"/></joint>
  <joint name="wrist" type="fixed"><parent link="fore"/><child link="hand"/>
    <origin xyz="0 0 0.3"/></joint>
</robot>
"""


def test_a_urdf_without_inertials_imported_at_a_density_runs_and_reads_back(tmp_path):
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(ARM)
    done = import_urdf(urdf, density=RHO)
    assert any("2700 kg/m^3" in n and "upper, hand, fore" in n for n in done.notes)
    assert "density = 2700.0" in done.text and "mass =" not in done.text
    upper, fore = done.model.bodies["upper"], done.model.bodies["fore"]
    m_box, m_cyl = RHO * 0.05 * 0.06 * 0.4, RHO * math.pi * 0.03**2 * 0.08
    assert upper.mass == pytest.approx(m_box + m_cyl, rel=ROUND_OFF)
    assert upper.com[2] == pytest.approx((0.2 * m_box + 0.4 * m_cyl) / (m_box + m_cyl))
    m_fore, m_hand = RHO * 0.04 * 0.04 * 0.3, RHO * 4 / 3 * math.pi * 0.04**3
    assert fore.mass == pytest.approx(m_fore + m_hand, rel=ROUND_OFF)  # the hand merged
    assert len(fore.shapes) == 2 and fore.shapes[1].position[2] == pytest.approx(0.3)
    out = tmp_path / "arm.toml"
    assert main(["import-urdf", str(urdf), "-o", str(out), "--density", "2700"]) == 0
    read = load_model(out)
    assert model_to_dict(read) == model_to_dict(done.model)
    assert main(["run", str(out), "-o", str(tmp_path / "arm.h5"), "--set", "solver.t_end=0.2",
                 "-q"]) == 0
    light = load_model(out, overrides=["bodies.upper.density=1000.0"])
    assert light.bodies["upper"].mass == pytest.approx(upper.mass / 2.7, rel=ROUND_OFF)
    result = simulate(light, tmp_path / "light.h5", t_end=0.05)
    assert result is not None


def test_a_body_of_links_with_and_without_inertial_keeps_numbers(tmp_path):
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(ARM.replace(
        '<link name="hand">',
        '<link name="hand"><inertial><mass value="0.5"/>'
        '<inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>'))
    done = import_urdf(urdf, density=RHO)
    assert "[bodies.\"fore\"]\nmass = " in done.text
    assert any('"fore"' in n and "as numbers" in n for n in done.notes)
    assert done.model.bodies["fore"].mass == pytest.approx(RHO * 0.04 * 0.04 * 0.3 + 0.5)
