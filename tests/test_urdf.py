"""`flexmbs import-urdf`: robots nobody here wrote (example-robot-data's UR5 and Panda)
imported, and their mass matrix and gravity torques checked against Pinocchio's on
the same URDF."""

import math
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from flexmbs import compile_model
from flexmbs.cli import main
from flexmbs.dynamics import api
from flexmbs.formats.urdf import load_urdf, urdf_model_text
from flexmbs.formats.urdf_reader import parse_urdf

pin = pytest.importorskip("pinocchio")

ROBOTS = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
UR5 = ROBOTS / "ur_description/urdf/ur5_robot.urdf"
PANDA = ROBOTS / "panda_description/urdf/panda.urdf"
AGREE = 1e-10  # of the largest entry: the same rigid-body dynamics, two algorithms


@pytest.mark.parametrize("urdf", [UR5, PANDA], ids=["ur5", "panda"])
def test_mass_matrix_and_gravity_are_pinocchios(urdf):
    """The same mass matrix and gravity torques as Pinocchio's; the Panda's mimic
    finger, which the import ties to its leader by a coupler (a constraint, which
    leaves the mass matrix and the forces as they are), a joint of both models."""
    imported = load_urdf(urdf)
    cm = compile_model(imported)
    model = pin.buildModelFromUrdf(str(urdf))
    mimics = [j.name for j in parse_urdf(urdf).joints.values() if j.mimic is not None]
    assert mimics == (["panda_finger_joint2"] if urdf == PANDA else [])
    assert [c.joint for c in imported.couplers.values()] == mimics
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
    beam = model.bodies["forearm_link"]
    assert model.solver.method == "bdf" and model.solver.rtol == 1e-6
    assert beam.modal_damping == "bands" and beam.correction_modes
    run = simulate(model, tmp_path / "ur5.h5", t_end=0.5, verify=True)
    assert run.convergence.passed, run.convergence.worst
    balance = energy_balance(tmp_path / "ur5.h5")
    assert balance["passed"] and balance["strain_max"] > 0, balance["failed_because"]


def test_a_flexible_arm_striking_its_stops_converges_at_the_imported_defaults(tmp_path):
    """The SO-100 with its upper arm a beam, released under gravity: its wrist strikes
    its stop within 0.3 s and its gripper bounces between its stops, each impact
    striking the beam; at the imported defaults the run converges (`flexmbs verify`:
    galpha at rtol 1e-6 does not, docs/guides/urdf.md) and the energy balance closes."""
    from flexmbs import open_result, simulate
    from flexmbs.analysis.energy import energy_balance

    model = load_urdf(ROBOTS / "so_arm_description/urdf/so100.urdf", flexible=["upper_arm"])
    run = simulate(model, tmp_path / "so100.h5", t_end=0.5, verify=True)
    assert run.convergence.passed, run.convergence.worst
    result = open_result(tmp_path / "so100.h5")
    wrist = np.asarray(result.q)[:, result.coordinate_names.index("wrist_flex")]
    assert wrist.max() >= model.joints["wrist_flex"].limits[0][1]  # in its stop
    balance = energy_balance(tmp_path / "so100.h5")
    assert balance["passed"] and balance["strain_max"] > 0, balance["failed_because"]


def test_an_imported_beams_basis_answers_its_loads_as_the_nodal_beam():
    """The UR5's forearm made a beam: its basis (modes, modal derivatives and the
    correction modes of the joint at its end) deflects under each load of the basis
    check within the check's tolerance of the nodal beam (0.6 %); without the
    correction modes it is 15.8 % off and `flexmbs run` warns."""
    from flexmbs.elements.basis_check import BASIS_TOLERANCE, basis_static_differences
    from flexmbs.formats.toml_reader import loads_model

    text = urdf_model_text(UR5, flexible=["forearm_link"])
    worst = {}
    for correction in (True, False):
        override = [f"bodies.forearm_link.correction_modes={str(correction).lower()}"]
        model = loads_model(text, overrides=override)
        cases = basis_static_differences(model.bodies["forearm_link"])
        worst[correction] = max(c.difference for c in cases)
    assert worst[True] < 0.2 * BASIS_TOLERANCE, worst
    assert worst[False] > BASIS_TOLERANCE, worst


MIMIC_GRIPPER = """<robot name="gripper">
  <link name="base"/>
  <link name="palm"><inertial><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="left"><inertial><mass value="0.1"/>
    <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="right"><inertial><mass value="0.1"/>
    <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tip"><inertial><mass value="0.05"/>
    <inertia ixx="1e-5" iyy="1e-5" izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="loose"><inertial><mass value="0.05"/>
    <inertia ixx="1e-5" iyy="1e-5" izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="wrist" type="revolute"><parent link="base"/><child link="palm"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <joint name="left_finger" type="prismatic"><parent link="palm"/><child link="left"/>
    <origin xyz="0 0.02 0.1"/><axis xyz="0 1 0"/>
    <limit lower="0.01" upper="0.04" effort="20" velocity="0.1"/></joint>
  <joint name="right_finger" type="prismatic"><parent link="palm"/><child link="right"/>
    <origin xyz="0 -0.02 0.1"/><axis xyz="0 1 0"/>
    <limit lower="-0.04" upper="0" effort="20" velocity="0.1"/>
    <mimic joint="left_finger" multiplier="-1" offset="0.005"/></joint>
  <joint name="right_tip" type="revolute"><parent link="right"/><child link="tip"/>
    <origin xyz="0 0 0.05"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
    <mimic joint="right_finger" multiplier="10"/></joint>
  <joint name="odd" type="revolute"><parent link="palm"/><child link="loose"/>
    <origin xyz="0 0 0.2"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
    <mimic joint="no_such_joint"/></joint>
</robot>"""


def test_mimic_joints_follow_their_leaders_through_couplers(tmp_path):
    """A gripper whose right finger mimics the left (q = -q_left + 0.005) and whose
    right fingertip mimics the right finger (10 q_right): each a joint of the model
    and a coupler, started where the relation puts it at the left finger's start (0
    lies outside its limits, so 1 mm inside: 0.011 m; the right finger at -0.006 m,
    the tip at -0.06 rad); a mimic of a joint the URDF lacks moves freely; all noted.
    Under gravity along the fingers the left one slides and the others follow it to
    the solver's tolerance, the energy balance closed."""
    from flexmbs import simulate
    from flexmbs.analysis.energy import energy_balance
    from flexmbs.formats.urdf import import_urdf

    urdf = tmp_path / "gripper.urdf"
    urdf.write_text(MIMIC_GRIPPER)
    done = import_urdf(urdf, gravity=(0.0, -9.81, 0.0))
    model = done.model
    assert set(model.joints) == {"wrist", "left_finger", "right_finger", "right_tip", "odd"}
    assert model.joints["left_finger"].initial[0] == pytest.approx(0.011)
    finger, tip = model.couplers["right_finger"], model.couplers["right_tip"]
    assert (finger.joint, finger.leader, finger.multiplier, finger.offset) == (
        "right_finger", "left_finger", -1.0, 0.005)
    assert (tip.joint, tip.leader, tip.multiplier, tip.offset) == (
        "right_tip", "right_finger", 10.0, 0.0)
    assert model.bodies["palm"].mass == pytest.approx(1.0)
    cm = compile_model(model)
    start = dict(zip(cm.coordinate_names, cm.q0))
    assert start["right_finger"] == pytest.approx(-0.006)
    assert start["right_tip"] == pytest.approx(-0.06)
    assert not cm.warnings
    coupled = [n for n in done.notes if n.startswith("mimic joints follow their leader")]
    assert len(coupled) == 1
    assert "right_finger (mimics left_finger), right_tip (mimics right_finger)" in coupled[0]
    assert not any(n.startswith("mimic joints of held joints") for n in done.notes)
    assert any(n.startswith("mimic joints move freely") and "odd" in n for n in done.notes)
    path = tmp_path / "gripper.h5"
    sim = simulate(model, path, t_end=0.15, rtol=1e-8, atol=1e-10)
    assert sim.success, sim.message
    names = list(cm.coordinate_names)
    q = sim.y[:, : cm.nq]
    left, right, turn = (q[:, names.index(n)] for n in ("left_finger", "right_finger",
                                                        "right_tip"))
    assert left[-1] - left[0] > 0.01  # it slid more than 1 cm, inside its limits
    assert np.abs(right - (-left + 0.005)).max() < 1e-9
    assert np.abs(turn - 10.0 * right).max() < 1e-8
    assert energy_balance(path)["passed"]


MIMIC_OF_HELD = """<robot name="held">
  <link name="base"/>
  <link name="arm"><inertial><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="flag"/>
  <link name="finger"><inertial><mass value="0.1"/>
    <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <joint name="dial" type="revolute"><parent link="arm"/><child link="flag"/>
    <axis xyz="1 0 0"/><limit lower="0.2" upper="1" effort="1" velocity="1"/></joint>
  <joint name="finger_joint" type="revolute"><parent link="arm"/><child link="finger"/>
    <origin xyz="0 0 0.1"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
    <mimic joint="dial" multiplier="2" offset="0.1"/></joint>
</robot>"""


def test_a_mimic_of_a_held_joint_is_held_where_its_leader_is(tmp_path):
    """The leader carries no mass and is held (at 1 degree inside its limits): its
    mimic is held at 2 x 0.2175 + 0.1 rad, its link merged into its parent."""
    from flexmbs.formats.urdf import import_urdf

    urdf = tmp_path / "held.urdf"
    urdf.write_text(MIMIC_OF_HELD)
    done = import_urdf(urdf)
    assert set(done.model.joints) == {"shoulder"} and not done.model.couplers
    held = [n for n in done.notes if n.startswith("mimic joints of held joints")]
    value = 2 * (0.2 + math.radians(1.0)) + 0.1
    assert len(held) == 1 and f"finger_joint (mimics dial) at {value:.6g} rad" in held[0]
    assert done.model.bodies["arm"].mass == pytest.approx(1.1)


def test_a_published_robots_mimic_grippers_follow_their_fingers(tmp_path):
    """TIAGo Pro's two grippers: five joints of each mimic its finger joint (multiplier
    1 or -1) and follow it through couplers, started from the finger's start, 1 degree
    inside its limits; the robot runs under gravity with the couplings held and its
    energy balance closed."""
    from flexmbs import simulate
    from flexmbs.analysis.energy import energy_balance
    from flexmbs.formats.urdf import import_urdf

    done = import_urdf(ROBOTS / "tiago_pro_description/robots/tiago_pro.urdf")
    coupled = next(n for n in done.notes if n.startswith("mimic joints follow their leader"))
    model = done.model
    for side in ("left", "right"):
        assert coupled.count(f"(mimics gripper_{side}_finger_joint)") == 5
        leader = f"gripper_{side}_finger_joint"
        followers = [c for c in model.couplers.values() if c.leader == leader]
        assert len(followers) == 5 and all(abs(c.multiplier) == 1.0 for c in followers)
        assert f"gripper_{side}_inner_finger_left_joint" in model.joints
    cm = compile_model(model)
    assert not cm.warnings
    start = dict(zip(cm.coordinate_names, cm.q0))
    for c in model.couplers.values():
        assert start[c.joint] == pytest.approx(c.multiplier * start[c.leader] + c.offset)
    path = tmp_path / "tiago.h5"
    sim = simulate(model, path, t_end=0.2)
    assert sim.success, sim.message
    q = sim.y[:, : cm.nq]
    names = list(cm.coordinate_names)
    for c in model.couplers.values():
        gap = q[:, names.index(c.joint)] - c.multiplier * q[:, names.index(c.leader)] - c.offset
        assert np.abs(gap).max() < 1e-8
    assert energy_balance(path)["passed"]
