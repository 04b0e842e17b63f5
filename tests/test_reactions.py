"""Reactions of the tree's joints from the equations of motion
(flexmbs.dynamics.reactions): against a compound pendulum's analytic reaction, a free
joint that carries nothing, the same four-bar cut in two places (one joint's reaction
from the subtree balance, then from the multipliers), and the weight and moment that
the joints of a held, statically deflected H2 carry, and H2's joint 2 read from the
falling beam's balance and, cut, from the multipliers."""

import numpy as np
import pytest

from flexmbs import ModelError, compile_model, simulate
from flexmbs.dynamics import api
from flexmbs.model import Model
from flexmbs.model.library import four_bar, huang_two_link
from flexmbs.model.timefunctions import Constant

GRAVITY = 9.81
MASS, COM, I_COM = 1.2, 0.4, 0.05  # the rod: kg, m (below its pivot), kg m^2


def _rod(joint, **joint_args):
    model = Model("rod", gravity=(0.0, 0.0, -GRAVITY))
    model.add_rigid_body("rod", mass=MASS, com=(0.0, 0.0, -COM), inertia=(I_COM, I_COM, 1e-4),
                         inertia_about="com")
    model.add_joint(joint, parent="ground", child="rod", **joint_args)
    return model


def _pendulum_reaction(theta, rate):
    """m a_c - m g of the compound pendulum about global y (theta from hanging)."""
    i_o = I_COM + MASS * COM ** 2
    acc = -(MASS * GRAVITY * COM / i_o) * np.sin(theta)
    a_c = np.column_stack([-COM * (np.cos(theta) * acc - np.sin(theta) * rate ** 2),
                           0 * theta, COM * (np.sin(theta) * acc + np.cos(theta) * rate ** 2)])
    return MASS * a_c + [0.0, 0.0, MASS * GRAVITY]


def test_tree_pendulum_has_the_analytic_reaction():
    """A rod on a revolute joint: the reaction is m a_c - m g (the subtree balance with
    the accelerations of the state), and no torque (the free axis, principal axes)."""
    model = _rod("pivot", type="revolute", axis=(0, 1, 0), initial=0.6)
    model.add_sensor("theta", "joint_coordinate", joint="pivot")
    model.add_sensor("rate", "joint_rate", joint="pivot")
    model.add_sensor("reaction", "joint_reaction", joint="pivot")
    model.add_sensor("in_rod_axes", "joint_reaction", joint="pivot", frame="rod")
    sim = simulate(model, None, t_end=1.0, rtol=1e-10, atol=1e-12, output_step=0.01)
    assert sim.status == "finished"
    th, w = sim.sensors[:, 0], sim.sensors[:, 1]
    force = sim.sensors[:, 2:5]
    np.testing.assert_allclose(force, _pendulum_reaction(th, w), rtol=0,
                               atol=1e-9 * MASS * GRAVITY)
    assert np.abs(sim.sensors[:, 5:8]).max() < 1e-9 * MASS * GRAVITY * COM
    rot = np.array([[np.cos(th), 0 * th, np.sin(th)], [0 * th, 1 + 0 * th, 0 * th],
                    [-np.sin(th), 0 * th, np.cos(th)]]).transpose(2, 0, 1)  # A (rod)
    np.testing.assert_allclose(sim.sensors[:, 8:11], np.einsum("kji,kj->ki", rot, force),
                               atol=1e-12)


def test_a_free_joint_held_by_a_cut_joint_carries_nothing():
    """The rod on a free joint, held at its end by a cut revolute: the free joint
    transmits nothing (the subtree balance less the cut joint's wrench), and the cut
    joint's reaction is the pendulum's."""
    model = _rod("float", type="free", initial=[0.0, 0.0, 0.0, 0.0, 0.6, 0.0])
    model.add_joint("pivot", "revolute", parent="ground", child="rod", axis=(0, 1, 0),
                    cut=True)
    model.add_sensor("theta", "joint_coordinate", joint="float", coordinate=4)
    model.add_sensor("rate", "joint_rate", joint="float", coordinate=4)
    model.add_sensor("free", "joint_reaction", joint="float")
    model.add_sensor("cut", "joint_reaction", joint="pivot")
    sim = simulate(model, None, t_end=0.5, rtol=1e-10, atol=1e-12, output_step=0.01)
    assert sim.status == "finished"
    assert np.abs(sim.sensors[:, 2:8]).max() < 1e-7 * MASS * GRAVITY
    np.testing.assert_allclose(sim.sensors[:, 8:11],
                               _pendulum_reaction(sim.sensors[:, 0], sim.sensors[:, 1]),
                               atol=1e-7 * MASS * GRAVITY)


def test_four_bar_cut_in_two_places_gives_one_reaction():
    """The four-bar with the coupler-rocker joint cut reads the rocker pivot's reaction
    from the rocker's balance (the cut joint's wrench on the rocker subtracted); cut at
    the rocker pivot instead, it reads it from the multipliers. The in-plane forces
    agree to the integration tolerance (the out-of-plane ones are statically
    indeterminate: the planar linkage's redundant rows), and the pivot takes no
    moment about its axis."""
    sims = []
    for cut in ("coupler_rocker", "rocker_pivot"):
        model = four_bar(t_end=0.5)
        for name, joint in model.joints.items():
            joint.cut = name == cut
        if cut == "rocker_pivot":  # the rocker's tree joint is now the coupler's
            model.joints["coupler_rocker"].initial[0] = 0.05
        model.sensors.pop("rocker")  # a coordinate of the rocker pivot until it is cut
        model.add_sensor("pivot", "joint_reaction", joint="rocker_pivot")
        sims.append(simulate(model, None, t_end=0.5, rtol=1e-10, atol=1e-12,
                             output_step=0.01))
        assert sims[-1].status == "finished"
    np.testing.assert_allclose(sims[0].sensors[:, 0], sims[1].sensors[:, 0], atol=1e-8)
    tree, cut = (s.sensors[:, 4:10] for s in sims)
    scale = np.abs(cut[:, [0, 2]]).max()
    assert scale > 50.0  # the rocker's weight and the spring's pull
    np.testing.assert_allclose(tree[:, [0, 2]], cut[:, [0, 2]], atol=1e-7 * scale)
    assert np.abs(tree[:, 4]).max() < 1e-7 * scale * 0.5
    assert np.abs(cut[:, 4]).max() < 1e-7 * scale * 0.5


def test_held_h2_carries_its_weight_and_moment():
    """H2 (2 elements) with both joints held by drivers, its beam in its static
    deflection: the reactions balance gravity on the subtrees. Joint 1 carries the
    whole arm: F = -M g and T = -(G - M p) x g about its marker p; joint 2 carries
    the beam and its tip mass: F = -m2 g. M and the first moment G of the deflected arm
    come from the gravity potential V_g = -g . G with unit gravity along each axis."""
    model = huang_two_link(2, initial="static")
    model.add_driver("hold1", "joint1", Constant(value=1.5))
    model.add_driver("hold2", "joint2", Constant(value=-1.0))
    model.add_sensor("r1", "joint_reaction", joint="joint1")
    model.add_sensor("r2", "joint_reaction", joint="joint2")
    cm = compile_model(model)
    first = cm.nsensor_values - 12
    values = api.sensor_values(cm, cm.q0, cm.u0)[first:]
    g = np.array([0.0, 0.0, -GRAVITY])
    moments = []
    for axis in np.eye(3):
        model.gravity = axis
        unit = compile_model(model)
        moments.append(-api.energies(unit, cm.q0, cm.u0)["gravity"])
    first_moment = np.array(moments)
    beam_mass = 7.104e-5 * 2770.0 * 1.02 + 0.5
    arm_mass = 2.067 + beam_mass
    weight = arm_mass * GRAVITY  # the static state is solved to 1e-12 (floor 1e-9)
    np.testing.assert_allclose(values[0:3], -arm_mass * g, rtol=0, atol=1e-9 * weight)
    np.testing.assert_allclose(values[3:6], -np.cross(first_moment, g),
                               atol=1e-9 * weight)
    np.testing.assert_allclose(values[6:9], -beam_mass * g, rtol=0, atol=1e-9 * weight)


def test_constraint_residual_sensors_read_cut_joints_only():
    model = four_bar()
    model.add_sensor("bad", "constraint_residual", joint="crank_pivot")
    with pytest.raises(ModelError, match="joint of the tree"):
        compile_model(model)


def test_a_cut_joint_reads_its_coordinate_from_its_markers():
    """The four-bar cut at its rocker pivot instead of the coupler-rocker joint: the
    rocker pivot's angle and rate, now read from the cut joint's two markers, equal
    the coordinate and rate of the same joint in the tree (the same motion integrated
    twice, 0.3 s at rtol 1e-10; measured 4e-10 rad and 1.1e-8 rad/s, the runs'
    integration error)."""
    runs = []
    for cut in ("coupler_rocker", "rocker_pivot"):
        model = four_bar()
        model.joints["rocker_pivot"].cut = cut == "rocker_pivot"
        model.joints["coupler_rocker"].cut = cut == "coupler_rocker"
        # the ring of parallel hinges: rocker = crank + crank_coupler + coupler_rocker
        model.joints["coupler_rocker"].initial[:] = 0.05 - 0.05 + 0.05
        model.sensors.clear()
        model.add_sensor("angle", "joint_coordinate", joint="rocker_pivot")
        model.add_sensor("rate", "joint_rate", joint="rocker_pivot")
        runs.append(simulate(model, None, t_end=0.3, rtol=1e-10, atol=1e-12,
                             output_step=0.01))
    assert np.ptp(runs[0].sensors[:, 0]) > 0.09      # it swings by +-0.05 rad
    diff = np.abs(runs[0].sensors - runs[1].sensors).max(axis=0)
    assert diff[0] < 1e-8 and diff[1] < 1e-7      # two integrations at rtol 1e-10


def test_h2_joint_2_reaction_from_the_beam_balance_and_from_multipliers():
    """H2 (1 element, beam ringing as it falls): joint 2's reaction on the beam read
    from the beam's balance (its rigid rows with the elastic accelerations) equals the
    one read from the multipliers when the beam hangs instead on a 6-coordinate joint
    from the ground and joint 2 is cut (the same motion, 0.1 s; measured 5.5e-7 N of
    7 N, the integration error of the two runs)."""
    tree = huang_two_link(1, t_end=0.1)
    tree.add_sensor("r2", "joint_reaction", joint="joint2")
    loop = huang_two_link(1, t_end=0.1)
    s1 = np.sin(1.5)
    c1 = np.cos(1.5)
    loop.add_joint("float", "general", parent="ground", child="link2",
                   translation_axes=np.eye(3), rotation_axes=[[0, 1, 0], [0, 0, 1], [1, 0, 0]],
                   initial=[-0.231 * s1, 0.0, -0.231 * c1, 1.5, -1.0, 0.0])
    loop.joints["joint2"].cut = True
    loop.sensors.pop("theta2")
    loop.add_sensor("r2", "joint_reaction", joint="joint2")
    runs = [simulate(model, None, t_end=0.1, rtol=1e-10, atol=1e-12, output_step=0.005)
            for model in (tree, loop)]
    assert all(r.status == "finished" for r in runs)
    np.testing.assert_allclose(runs[0].sensors[:, 0], runs[1].sensors[:, 0], atol=1e-8)
    a, b = runs[0].sensors[:, -6:], runs[1].sensors[:, -6:]
    scale = np.abs(b[:, :3]).max()
    assert scale > 5.0  # the beam's weight and more
    np.testing.assert_allclose(a[:, :3], b[:, :3], atol=1e-6 * scale)
    np.testing.assert_allclose(a[:, 3:], b[:, 3:], atol=1e-6 * scale * 1.0)  # 1 m arm
