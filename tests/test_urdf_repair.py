"""URDF as robot descriptions write it, made a model: names, inertias, starts outside
the limits, links without mass, inertia from the shapes at a density, mesh paths,
floating bases, and links made beams on any axis."""

import math
import os

import numpy as np
import pytest

from flexmbs import compile_model
from flexmbs.cli import main
from flexmbs.dynamics import api
from flexmbs.formats.urdf import import_urdf
from flexmbs.formats.urdf_geometry import resolve_mesh, shapes_inertial
from flexmbs.formats.urdf_reader import UrdfError, UrdfGeometry
from flexmbs.formats.urdf_repair import legal_name, legal_names, repaired_inertia, start_within
from flexmbs.model.vocabulary import NAME_PATTERN

LIMIT = '<limit lower="-2" upper="2" effort="10" velocity="1"/>'
INERTIA = '<inertia ixx="{0}" iyy="{1}" izz="{2}" ixy="0" ixz="0" iyz="0"/>'


def _link(name, mass=1.0, moments=(0.01, 0.01, 0.01), extra=""):
    return (f'<link name="{name}"><inertial><mass value="{mass}"/>'
            f"{INERTIA.format(*moments)}</inertial>{extra}</link>")


def _revolute(name, parent, child, xyz="0 0 0.1", rpy="0 0 0", axis="0 0 1", limit=""):
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>'
            f"{limit or LIMIT}"
            "</joint>")


def _write(tmp_path, body, name="robot"):
    path = tmp_path / f"{name}.urdf"
    path.write_text(f'<robot name="{name}">{body}</robot>')
    return path


def test_legal_names():
    assert legal_name("joint_8.0") == "joint_8_0"
    assert legal_name("iris__/imu_link") == "iris_imu_link"
    assert legal_name("a b") == "a_b" and legal_name("-x") == "_x"
    for raw in ["a.b.c", "x/y/z", "__/__", "ü", "-"]:
        assert NAME_PATTERN.fullmatch(legal_name(raw))
    links, joints, notes = legal_names(["gripper", "a.b", "a_b", "origin"],
                                       [("gripper", True), ("j.0", True), ("a_b", False)])
    assert links == {"gripper": "gripper", "a.b": "a_b", "a_b": "a_b_2", "origin": "origin_link"}
    assert joints["gripper"] == "gripper_joint" and joints["j.0"] == "j_0"
    assert joints["a_b"] == "a_b_3"  # a fixed joint: not written, but named apart too
    moving = {joints["gripper"], joints["j.0"]}
    assert not moving & set(links.values())  # bodies and joints: one namespace
    assert any('"gripper" is named "gripper_joint"' in n for n in notes)


def test_repaired_inertias():
    m = 2.0
    good = np.diag([1.0, 2.0, 2.5])
    assert repaired_inertia(m, good)[1:] == (None, None)
    rot = np.linalg.qr(np.random.default_rng(3).normal(size=(3, 3)))[0]
    bad = rot @ np.diag([0.000662, 0.000679, 0.006565]) @ rot.T  # a published link's
    fixed, note, refusal = repaired_inertia(m, bad)
    w = np.linalg.eigvalsh(fixed)
    assert refusal is None and "triangle" in note
    assert w[0] + w[1] >= w[2] and abs(w[2] - 0.006565) < 1e-12  # the largest kept
    assert np.allclose(np.sort(np.abs(rot.T @ fixed @ rot).diagonal()), w)  # same axes
    point, note, _ = repaired_inertia(m, np.zeros((3, 3)))
    assert np.allclose(point, 0.4 * m * 1e-6 * np.eye(3)) and "ball" in note
    _, _, refusal = repaired_inertia(m, np.diag([-0.1, 1.0, 1.0]))
    assert "negative" in refusal
    assert repaired_inertia(0.0, good)[2] == "inertia without mass"


def test_start_within_limits():
    assert start_within(-1.0, 1.0, "rad") is None
    assert start_within(-3.0718, -0.0698, "rad") == pytest.approx(-0.0698 - math.radians(1))
    assert start_within(0.0, 3.5, "rad") == pytest.approx(math.radians(1))
    assert start_within(0.1, 0.105, "m") == pytest.approx(0.1005)  # a tenth of the range
    assert start_within(0.0, 0.0, "m") is None


def test_names_starts_and_repairs_in_an_imported_model(tmp_path):
    body = (
        '<link name="base.0"/>'
        + _link("gripper")
        + _link("arm/1", moments=(0.0001, 0.0001, 0.001))  # breaks I1 + I2 >= I3
        + _link("tip")
        + _revolute("gripper", "base.0", "gripper")
        + _revolute("j.2", "gripper", "arm/1",
                    limit='<limit lower="-3.07" upper="-0.07" effort="10" velocity="1"/>')
        + _revolute("j3", "arm/1", "tip",
                    limit='<limit lower="-1" upper="1" effort="10" velocity="1"/>')
    )
    done = import_urdf(_write(tmp_path, body))
    model = done.model
    assert set(model.bodies) == {"gripper", "arm_1", "tip"}
    assert set(model.joints) == {"gripper_joint", "j_2", "j3"}
    assert model.joints["j_2"].initial[0] == pytest.approx(-0.07 - math.radians(1))
    w = np.linalg.eigvalsh(model.bodies["arm_1"].inertia)
    assert w[0] + w[1] >= w[2] * (1 - 1e-9)
    text = "\n".join(done.notes)
    for words in ['"gripper" is named "gripper_joint"', '"arm/1" is named "arm_1"',
                  'joint "j.2": 0 is not inside its limits', "triangle inequality"]:
        assert words in text and words in done.text  # printed and kept in the file
    assert '# urdf link: "arm/1" = "arm_1"' in done.text


def test_massless_links(tmp_path):
    """A massless leaf is held fixed; three revolutes through massless links at one
    point are one general joint with the revolutes' kinematics; a massless link with
    mass below at a distance is refused on one line."""
    body = ('<link name="base"/><link name="v1"/><link name="v2"/><link name="sensor"/>'
            + _link("thigh", 2.0, (0.02, 0.02, 0.004))
            + _revolute("hz", "base", "v1", xyz="0.1 -0.1 0", axis="0 0 1")
            + _revolute("hx", "v1", "v2", xyz="0 0 0", rpy="0.3 0 0.2", axis="1 0 0")
            + _revolute("hy", "v2", "thigh", xyz="0 0 0", rpy="0 0.4 0", axis="0 -1 0")
            + _revolute("spin", "thigh", "sensor", xyz="0 0 -0.3"))
    path = _write(tmp_path, body)
    done = import_urdf(path)
    assert set(done.model.bodies) == {"thigh"}
    assert done.model.joints["hz"].type == "general"
    assert "sensor" in done.model.bodies["thigh"].markers  # held fixed, kept as a frame
    assert any("held fixed" in n and "spin" in n for n in done.notes)
    cm = compile_model(done.model)

    def rot(axis, q):
        a = np.asarray(axis, float) / np.linalg.norm(axis)
        k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
        return np.eye(3) + np.sin(q) * k + (1 - np.cos(q)) * k @ k

    def rpy(r, p, y):
        return rot([0, 0, 1], y) @ rot([0, 1, 0], p) @ rot([1, 0, 0], r)

    for q in np.random.default_rng(2).uniform(-1.5, 1.5, (4, 3)):
        expected = rot([0, 0, 1], q[0]) @ rpy(0.3, 0, 0.2) @ rot([1, 0, 0], q[1]) \
            @ rpy(0, 0.4, 0) @ rot([0, -1, 0], q[2])
        r, a = api.body_poses(cm, q)
        assert np.abs(a[-1] - expected).max() < 1e-12
        assert np.abs(r[-1] - [0.1, -0.1, 0]).max() < 1e-15
    apart = _write(tmp_path, body.replace('xyz="0 0 0" rpy="0 0.4 0"', 'xyz="0 0 0.05"'),
                   "apart")
    with pytest.raises(UrdfError, match='link "v1" moves but carries no mass.*--density'):
        import_urdf(apart)


def test_inertia_from_shapes_at_a_density(tmp_path):
    rho = 1000.0
    box = UrdfGeometry("box", np.array([0.1, 0.2, 0.3]), np.eye(4))
    m, c, inertia, _ = shapes_inertial([box], rho, tmp_path / "x.urdf")
    assert m == pytest.approx(6.0)
    assert np.allclose(np.diag(inertia), 0.5 * np.array([0.13, 0.10, 0.05]))
    pose = np.eye(4)
    pose[:3, 3] = [0, 0, 0.5]
    cyl = UrdfGeometry("cylinder", np.array([0.05, 0.4]), pose)
    sphere = UrdfGeometry("sphere", np.array([0.1]), np.eye(4))
    m, c, inertia, _ = shapes_inertial([cyl, sphere], rho, tmp_path / "x.urdf")
    mc, ms = rho * math.pi * 0.05**2 * 0.4, rho * 4 / 3 * math.pi * 0.1**3
    assert m == pytest.approx(mc + ms) and c[2] == pytest.approx(0.5 * mc / (mc + ms))
    izz = 0.5 * mc * 0.05**2 + 0.4 * ms * 0.01
    assert inertia[2, 2] == pytest.approx(izz)
    ixx = mc * (3 * 0.05**2 + 0.4**2) / 12 + 0.4 * ms * 0.01 \
        + mc * (0.5 - c[2]) ** 2 + ms * c[2] ** 2
    assert inertia[0, 0] == pytest.approx(ixx)
    trimesh = pytest.importorskip("trimesh")
    folder = tmp_path / "my_robot_description" / "meshes"
    folder.mkdir(parents=True)
    trimesh.creation.box(extents=[0.1, 0.2, 0.3]).export(folder / "box.stl")
    urdf_dir = tmp_path / "my_robot_description" / "urdf"
    urdf_dir.mkdir()
    shape = UrdfGeometry("mesh", np.array([2.0, 1.0, 1.0]), np.eye(4),
                         "package://my_robot_description/meshes/box.stl")
    m, c, inertia, missing = shapes_inertial([shape], rho, urdf_dir / "r.urdf")
    assert missing == [] and m == pytest.approx(12.0)  # scaled to 0.2 x 0.2 x 0.3
    assert np.allclose(np.diag(inertia), 1.0 * np.array([0.13, 0.13, 0.08]))
    body = ('<link name="base"/><link name="arm"><collision><geometry>'
            '<box size="0.1 0.2 0.3"/></geometry></collision></link>'
            + _revolute("j", "base", "arm"))
    path = _write(urdf_dir, body)
    with pytest.raises(UrdfError, match="no link that moves carries mass"):
        import_urdf(path)
    done = import_urdf(path, density=rho)
    assert done.model.bodies["arm"].mass == pytest.approx(6.0)
    assert any("1000 kg/m^3" in n and "arm" in n for n in done.notes)


def test_mesh_paths(tmp_path, monkeypatch):
    pkg = tmp_path / "ws" / "arm_description"
    (pkg / "meshes").mkdir(parents=True)
    (pkg / "urdf").mkdir()
    mesh = pkg / "meshes" / "a.stl"
    mesh.write_text("solid a\nendsolid a\n")
    urdf = pkg / "urdf" / "arm.urdf"
    assert resolve_mesh("package://arm_description/meshes/a.stl", urdf) == mesh  # its tree
    assert resolve_mesh("../meshes/a.stl", urdf) == pkg / "urdf" / "../meshes/a.stl"
    assert resolve_mesh(f"file://{mesh}", urdf) == mesh
    elsewhere = tmp_path / "elsewhere" / "robot.urdf"
    assert resolve_mesh("package://arm_description/meshes/a.stl", elsewhere) is None
    monkeypatch.setenv("ROS_PACKAGE_PATH", os.fspath(tmp_path / "ws"))
    assert resolve_mesh("package://arm_description/meshes/a.stl", elsewhere) == mesh


def test_floating_base(tmp_path):
    body = _link("base", 3.0) + _link("arm") + _revolute("j", "base", "arm")
    path = _write(tmp_path, body)
    done = import_urdf(path, floating_base=True)
    assert done.model.joints["floating_base"].type == "free"
    assert set(done.model.bodies) == {"base", "arm"}
    assert compile_model(done.model).nq == 7


def _arm(tmp_path, collision=""):
    body = ('<link name="base"/>'
            + _link("upper", 1.2, extra=collision) + _link("fore", 0.5)
            + _revolute("shoulder", "base", "upper", axis="0 1 0")
            + _revolute("elbow", "upper", "fore", xyz="0.02 0.3 0.01", axis="0 1 0"))
    return _write(tmp_path, body)


@pytest.mark.parametrize("spec", ["upper", "upper:y:4", "upper:x", "upper:z:3", "upper:1,2,0",
                                  "upper:-x", "upper:-y", "upper:1,0,-2"])
def test_a_beam_on_any_axis_keeps_the_kinematics_and_mass(tmp_path, spec):
    path = _arm(tmp_path)
    rigid = compile_model(import_urdf(path).model)
    done = import_urdf(path, flexible=[spec])
    beam = done.model.bodies["upper"]
    assert beam.mass == pytest.approx(1.2, rel=1e-12)
    flexible = compile_model(done.model)
    q = np.zeros(flexible.nq)
    q[:2] = [0.4, -0.7]
    r0, a0 = api.body_poses(rigid, q[:2])
    r1, a1 = api.body_poses(flexible, q)
    assert np.abs(r1 - r0).max() < 1e-12 and np.abs(a1 - a0).max() < 1e-12
    assert any("round tube of its mass" in n for n in done.notes)
    points = np.asarray(beam.points)
    assert np.allclose(points[-1], [0.02, 0.3, 0.01])  # it ends at the elbow
    if spec == "upper:1,0,-2":  # the elbow lies across that axis: straight to it
        assert len(points) == 2 and any("across the axis" in n for n in done.notes)


def test_a_beams_section_from_its_collision_shape_and_material(tmp_path):
    cylinder = ('<collision><origin xyz="0 0.15 0" rpy="1.5707963267948966 0 0"/><geometry>'
                '<cylinder radius="0.03" length="0.3"/></geometry></collision>')
    done = import_urdf(_arm(tmp_path, cylinder), flexible=["upper:y"], material="steel")
    section = done.model.bodies["upper"]
    assert "outer_diameter = 0.06" in done.text and "# steel" in done.text
    assert section.mass == pytest.approx(1.2, rel=1e-12)
    box = '<collision><geometry><box size="0.04 0.3 0.05"/></geometry></collision>'
    done = import_urdf(_arm(tmp_path, box), flexible=["upper:y"], material="7e10,2700")
    assert 'type = "rectangular_tube"' in done.text and "width = 0.0" in done.text
    assert done.model.bodies["upper"].mass == pytest.approx(1.2, rel=1e-12)
    with pytest.raises(UrdfError, match="--material"):
        import_urdf(_arm(tmp_path), flexible=["upper"], material="cheese")


def test_cli_options_and_notes(tmp_path, capsys):
    path = _arm(tmp_path)
    out = tmp_path / "arm.toml"
    assert main(["import-urdf", str(path), "-o", str(out), "--flexible", "upper",
                 "--material", "titanium"]) == 0
    printed = capsys.readouterr().out
    assert "note: " in printed and 'modes = 4' in out.read_text()
    assert main(["import-urdf", str(path), "-o", str(out), "--density", "-1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--density" in err[0]


def test_renamed_links_are_read_back_from_the_model_file(tmp_path):
    from flexmbs.formats.urdf import renamed_links

    body = ('<link name="base"/>' + _link("arm.1/x") + _link("tip")
            + _revolute("j1", "base", "arm.1/x") + _revolute("j2", "arm.1/x", "tip"))
    done = import_urdf(_write(tmp_path, body))
    assert renamed_links(done.text) == {"arm.1/x": "arm_1_x"}
    assert "arm_1_x" in done.model.bodies
