"""`flexmbs import-urdf`: robots nobody here wrote (example-robot-data's UR5 and Panda)
imported, and their mass matrix and gravity torques checked against Pinocchio's on
the same URDF."""

import sysconfig
from pathlib import Path

import numpy as np
import pytest

from flexmbs import compile_model
from flexmbs.cli import main
from flexmbs.dynamics import api
from flexmbs.formats.urdf import load_urdf, urdf_model_text

pin = pytest.importorskip("pinocchio")

ROBOTS = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
UR5 = ROBOTS / "ur_description/urdf/ur5_robot.urdf"
PANDA = ROBOTS / "panda_description/urdf/panda.urdf"
AGREE = 1e-10  # of the largest entry: the same rigid-body dynamics, two algorithms


@pytest.mark.parametrize("urdf", [UR5, PANDA], ids=["ur5", "panda"])
def test_mass_matrix_and_gravity_are_pinocchios(urdf):
    cm = compile_model(load_urdf(urdf))
    model = pin.buildModelFromUrdf(str(urdf))
    data = model.createData()
    names = [model.names[i] for i in range(1, model.njoints)]
    assert sorted(names) == sorted(cm.coordinate_names) and model.nq == cm.nq
    columns = [cm.coordinate_names.index(n) for n in names]
    rng = np.random.default_rng(11)
    lower = np.maximum(model.lowerPositionLimit, -2.5)  # within the stops, which
    upper = np.minimum(model.upperPositionLimit, 2.5)   # Pinocchio's gravity lacks
    for _ in range(5):
        q_pin = rng.uniform(lower, upper)
        q = np.zeros(cm.nq)
        q[columns] = q_pin
        m_pin = pin.crba(model, data, q_pin)
        m_pin = np.triu(m_pin) + np.triu(m_pin, 1).T
        g_pin = pin.computeGeneralizedGravity(model, data, q_pin)
        m = api.mass_matrix(cm, q)[np.ix_(columns, columns)]
        forces = api.generalized_forces(cm, q, np.zeros(cm.nq))[columns]
        assert np.abs(m - m_pin).max() <= AGREE * np.abs(m_pin).max()
        assert np.abs(forces + g_pin).max() <= AGREE * np.abs(g_pin).max()


def test_a_flexible_link_keeps_the_robots_kinematics_and_mass(tmp_path):
    """UR5 with its forearm a beam: undeformed, every body is where the rigid UR5 has
    it, and the beam weighs what the link did."""
    rigid = compile_model(load_urdf(UR5))
    model = load_urdf(UR5, flexible=["forearm_link:z:3", "upper_arm_link:z"])
    flexible = compile_model(model)
    assert model.bodies["forearm_link"].mass == pytest.approx(2.275, rel=1e-12)
    assert model.bodies["upper_arm_link"].mass == pytest.approx(8.393, rel=1e-12)
    assert len(model.bodies["upper_arm_link"].points) == 3  # along z, then to the elbow
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = np.zeros(flexible.nq)
        q[:6] = rng.uniform(-2, 2, 6)
        r0, a0 = api.body_poses(rigid, q[:6])
        r1, a1 = api.body_poses(flexible, q)
        assert np.abs(r1 - r0).max() < 1e-12 and np.abs(a1 - a0).max() < 1e-12


def test_joint_types_limits_and_merged_links(tmp_path):
    urdf = tmp_path / "toy.urdf"
    urdf.write_text("""<robot name="toy">
  <link name="base"/>
  <link name="slider"><inertial><mass value="2"/><origin xyz="0 0 0.1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="arm"><inertial><mass value="1"/><origin xyz="0.2 0 0" rpy="0 0 0.3"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tool"><inertial><mass value="0.5"/><origin xyz="0 0 0"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="puck"><inertial><mass value="0.3"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="rail" type="prismatic"><parent link="base"/><child link="slider"/>
    <axis xyz="1 0 0"/><limit lower="-0.5" upper="0.5" effort="10" velocity="1"/></joint>
  <joint name="spin" type="continuous"><parent link="slider"/><child link="arm"/>
    <origin xyz="0 0 0.2" rpy="0.1 0.2 0.3"/><axis xyz="0 0 1"/></joint>
  <joint name="flange" type="fixed"><parent link="arm"/><child link="tool"/>
    <origin xyz="0.4 0 0"/></joint>
  <joint name="table" type="planar"><parent link="base"/><child link="puck"/>
    <axis xyz="0 0 1"/></joint>
</robot>""")
    text = urdf_model_text(urdf)
    assert "limits = [-0.5, 0.5]" in text  # a compliant stop (tests/test_joint_stops.py)
    model = load_urdf(urdf)
    assert {n: j.type for n, j in model.joints.items()} == {
        "rail": "prismatic", "spin": "revolute", "table": "planar"}
    assert set(model.bodies) == {"slider", "arm", "puck"}  # the tool merged into the arm
    arm = model.bodies["arm"]
    assert arm.mass == pytest.approx(1.5)
    assert np.allclose(arm.com, (1.0 * np.array([0.2, 0, 0]) + 0.5 * np.array([0.4, 0, 0]))
                       / 1.5, atol=1e-15)
    assert "tool" in arm.markers and np.allclose(arm.markers["tool"].position, [0.4, 0, 0])
    spin = model.bodies["slider"].markers["spin"]
    c, s = np.cos, np.sin
    rx = np.array([[1, 0, 0], [0, c(0.1), -s(0.1)], [0, s(0.1), c(0.1)]])
    ry = np.array([[c(0.2), 0, s(0.2)], [0, 1, 0], [-s(0.2), 0, c(0.2)]])
    rz = np.array([[c(0.3), -s(0.3), 0], [s(0.3), c(0.3), 0], [0, 0, 1]])
    assert np.allclose(spin.orientation, rz @ ry @ rx, atol=1e-15)  # URDF's fixed-axis rpy


def test_bad_urdfs_and_specs_are_one_line(tmp_path, capsys):
    massless = tmp_path / "massless.urdf"
    massless.write_text("""<robot name="m"><link name="a"/><link name="b"/>
  <joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
  <limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>""")
    cases = [
        ([str(massless)], "no link that moves carries mass"),
        ([str(tmp_path / "none.urdf")], "no such file"),
        ([str(UR5), "--flexible", "forearm_link:w"], "AXIS must be x, y, z"),
        ([str(UR5), "--flexible", "nothing:z"], "no link 'nothing'"),
        ([str(UR5), "--flexible", "forearm_link:z:0"], "ELEMENTS"),
        ([str(UR5), "--flexible", "ee_link:x"], "fixed to its parent"),
    ]
    for args, words in cases:
        assert main(["import-urdf", *args, "-o", str(tmp_path / "x.toml")]) == 2, args
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and words in err[0], (args, err)


def test_import_writes_a_model_that_runs(tmp_path):
    out = tmp_path / "panda.toml"
    assert main(["import-urdf", str(PANDA), "-o", str(out)]) == 0
    result = tmp_path / "panda.h5"
    assert main(["run", str(out), "-o", str(result), "-q", "--set", "solver.t_end=0.05",
                 "--set", "output.step=0.025"]) == 0


def test_a_flexible_robot_runs_at_the_imported_defaults(tmp_path):
    """The UR5 with its forearm a beam (axis, elements, section and solver as the
    import chooses them): the energy balance closes and the run converges
    (`flexmbs verify`) at the defaults written in the file."""
    from flexmbs import simulate
    from flexmbs.analysis.energy import energy_balance

    model = load_urdf(UR5, flexible=["forearm_link"])
    assert model.solver.method == "bdf" and model.bodies["forearm_link"].alpha > 0
    run = simulate(model, tmp_path / "ur5.h5", t_end=0.5, verify=True)
    assert run.convergence.passed, run.convergence.worst
    balance = energy_balance(tmp_path / "ur5.h5")
    assert balance["passed"] and balance["strain_max"] > 0, balance["failed_because"]
