"""A URDF's mesh names found as ROS would find them (flexmbs.formats.mesh_paths), and
the viewer drawing what it finds: a mesh it cannot find leaves its link to its
collision shapes, with one warning, and the view goes on."""

from pathlib import Path

import pytest

from flexmbs.cli import main
from flexmbs.formats.mesh_paths import resolve_mesh_path

trimesh = pytest.importorskip("trimesh")
pytest.importorskip("yourdfpy")


def _stl(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    trimesh.creation.box(extents=(0.05, 0.05, 0.2)).export(path)
    return path


def test_package_names_are_found_where_ros_and_the_urdf_s_folders_put_them(tmp_path):
    ros = _stl(tmp_path / "ws" / "src" / "arm_pkg" / "meshes" / "a.stl")
    tree = _stl(tmp_path / "desc" / "hand_pkg" / "meshes" / "b.stl")
    urdf_folder = tmp_path / "desc" / "hand_pkg" / "urdf"
    urdf_folder.mkdir(parents=True)
    rel = _stl(urdf_folder / "parts" / "c.stl")
    env = {"ROS_PACKAGE_PATH": str(tmp_path / "ws")}
    # a package below a ROS_PACKAGE_PATH entry, the entry itself, or not there
    assert resolve_mesh_path("package://arm_pkg/meshes/a.stl", urdf_folder, env) == ros
    env_pkg = {"ROS_PACKAGE_PATH": str(tmp_path / "ws" / "src" / "arm_pkg")}
    assert resolve_mesh_path("package://arm_pkg/meshes/a.stl", urdf_folder, env_pkg) == ros
    assert resolve_mesh_path("package://arm_pkg/meshes/a.stl", urdf_folder, {}) is None
    # the package around the URDF, without ROS_PACKAGE_PATH
    assert resolve_mesh_path("package://hand_pkg/meshes/b.stl", urdf_folder, {}) == tree
    # a package named otherwise than its folder: its path from a folder holding the URDF
    assert resolve_mesh_path("package://renamed/meshes/b.stl", urdf_folder, {}) == tree
    # relative, file:// and absolute names
    assert resolve_mesh_path("parts/c.stl", urdf_folder, {}) == rel
    assert resolve_mesh_path(f"file://{rel}", urdf_folder, {}) == rel
    assert resolve_mesh_path(str(rel), tmp_path, {}) == rel
    assert resolve_mesh_path("parts/none.stl", urdf_folder, {}) is None


def test_an_installed_description_package_is_found(tmp_path):
    """example-robot-data installed by pip: its `package://example-robot-data/...`
    names from a copy of its URDF elsewhere."""
    import sysconfig
    share = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share"
    mesh = share / "example-robot-data/robots/ur_description/meshes/ur5/visual/base.dae"
    if not mesh.is_file():
        pytest.skip("example-robot-data is not installed (the test extra)")
    name = "package://example-robot-data/robots/ur_description/meshes/ur5/visual/base.dae"
    assert resolve_mesh_path(name, tmp_path, {}) == mesh


URDF = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"/>
  <link name="link1">
    <inertial><origin xyz="0.2 0 0"/><mass value="2.0"/>
      <inertia ixx="0.01" iyy="0.05" izz="0.05" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><mesh filename="package://nowhere_pkg/meshes/link1.stl"/></geometry></visual>
    <collision><origin xyz="0.2 0 0"/><geometry><box size="0.4 0.05 0.05"/></geometry></collision>
  </link>
  <link name="link2">
    <inertial><origin xyz="0 0 0.1"/><mass value="1.0"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><mesh filename="package://nowhere_pkg/meshes/link2.stl"/></geometry></visual>
  </link>
  <link name="link3">
    <inertial><origin xyz="0 0 0.1"/><mass value="1.0"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><mesh filename="package://arm_pkg/meshes/link3.stl"/></geometry></visual>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="link1"/><axis xyz="0 0 1"/>
    <limit lower="-1.5" upper="2.0" effort="30.0" velocity="3.0"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="link1"/><child link="link2"/><origin xyz="0.4 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10.0" velocity="3.0"/>
  </joint>
  <joint name="wrist" type="revolute">
    <parent link="link2"/><child link="link3"/><origin xyz="0 0 0.2"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10.0" velocity="3.0"/>
  </joint>
</robot>
"""


def test_the_view_draws_what_it_finds_and_warns_once(tmp_path, monkeypatch, capsys):
    """link3's mesh through ROS_PACKAGE_PATH; link1's and link2's meshes nowhere:
    link1 drawn by its collision box, link2 by nothing, one warning line, exit 0."""
    from flexmbs.viewer import scene_of_model
    _stl(tmp_path / "ros" / "arm_pkg" / "meshes" / "link3.stl")
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "ros"))
    urdf = tmp_path / "robot" / "arm.urdf"
    urdf.parent.mkdir()
    urdf.write_text(URDF)
    toml = tmp_path / "arm.toml"
    assert main(["import-urdf", str(urdf), "-o", str(toml)]) == 0
    scene = scene_of_model(toml)
    names = sorted(m["name"] for m in scene.data["meshes"])
    assert names == ["link1/collision 0", "link3/0"]
    assert len(scene.warnings) == 1
    warning = scene.warnings[0]
    assert "2 visual meshes not drawn" in warning and "nowhere_pkg/meshes/link1.stl" in warning
    assert "collision shapes: link1" in warning and "without a shape: link2" in warning
    assert warning.endswith("(set ROS_PACKAGE_PATH to the folder holding the package, or --urdf)")
    capsys.readouterr()
    assert main(["view", str(toml), "--html", str(tmp_path / "arm.html")]) == 0
    err = capsys.readouterr().err
    assert err.count("warning:") == 1 and "visual meshes not drawn" in err


def test_a_mesh_that_cannot_be_read_falls_back_too(tmp_path, monkeypatch):
    from flexmbs.viewer import scene_of_model
    broken = tmp_path / "ros" / "nowhere_pkg" / "meshes" / "link1.stl"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"not a mesh")
    _stl(tmp_path / "ros" / "arm_pkg" / "meshes" / "link3.stl")
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "ros"))
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(URDF)
    toml = tmp_path / "arm.toml"
    assert main(["import-urdf", str(urdf), "-o", str(toml)]) == 0
    scene = scene_of_model(toml)
    assert sorted(m["name"] for m in scene.data["meshes"]) == ["link1/collision 0", "link3/0"]
    (warning,) = scene.warnings
    assert "link1.stl: the URDF's mesh cannot be read" in warning
    assert "pycollada" not in warning


RENAMED = """<?xml version="1.0"?>
<robot name="renamed">
  <link name="base"/>
  <link name="arm.1">
    <inertial><mass value="1.0"/><origin xyz="0.1 0 0"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.004" iyz="0" izz="0.004"/></inertial>
    <visual><origin xyz="0.1 0 0"/><geometry><box size="0.2 0.02 0.02"/></geometry></visual>
  </link>
  <joint name="j" type="revolute">
    <parent link="base"/><child link="arm.1"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="3"/>
  </joint>
</robot>
"""


def test_the_meshes_of_renamed_links_are_drawn_on_their_bodies(tmp_path):
    """A link the import renamed (arm.1 -> arm_1) keeps its visual in the viewer."""
    from flexmbs.formats.toml_reader import loads_model
    from flexmbs.formats.urdf import import_urdf, renamed_links
    from flexmbs.viewer.visuals import urdf_visuals

    path = tmp_path / "renamed.urdf"
    path.write_text(RENAMED)
    text = import_urdf(path).text
    assert renamed_links(text) == {"arm.1": "arm_1"}
    model = loads_model(text)
    meshes = urdf_visuals(path, model)
    assert [m.body for m in meshes] == ["arm_1"]
    model.source_text = text
    assert [m.body for m in urdf_visuals(path, model)] == ["arm_1"]
