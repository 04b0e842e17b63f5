"""The absolute-coordinate formulation (Schwab 2009; flexmbs.model.absolute): every body
on six coordinates of its own, every joint a constraint with multipliers. Checked
against the joint-coordinate formulation on the same model files."""

import numpy as np
import pytest

from flexmbs import ModelError, compile_model
from flexmbs.dynamics import api
from flexmbs.dynamics.absolute import (
    REBASE_ANGLE,
    rebase_frames,
    reference_slots,
    sequential_rotation,
)
from flexmbs.model.library import (
    bricard,
    four_bar,
    huang_eight_link,
    huang_three_link,
    huang_two_link,
    slider_crank,
)
from flexmbs.simulation import compile_absolute, simulate


def _poses(cm, q, u):
    ws = api.kinematics(cm, q, u, 0.0)
    names = list(cm.topology.body_names)
    return {b: (ws.r[k].copy(), ws.rot[k].copy(), ws.rd[k].copy(), ws.omega[k].copy())
            for k, b in enumerate(names)}


def _same_poses(a, b, tol):
    for name in a:
        for x, y in zip(a[name], b[name]):
            assert np.abs(x - y).max() < tol, name


def test_the_absolute_model_starts_where_the_joint_model_does():
    """H2 released with rates: every body's frame, velocity and angular velocity at the
    start are those of the joint-coordinate model (1e-14), the constraints of the cut
    joints hold there, and M* is block-diagonal over the bodies (a body's velocity
    depends on its own coordinates only)."""
    model = huang_two_link(elements=2)
    model.joints["joint1"].initial_rate[:] = 0.7
    model.joints["joint2"].initial_rate[:] = -1.3
    cm = compile_model(model)
    ab = compile_absolute(model)
    _same_poses(_poses(cm, cm.q0, cm.u0), _poses(ab, ab.q0, ab.u0), 1e-14)
    phi, phid, _, _ = api.constraint_values(ab, ab.q0, ab.u0)
    assert np.abs(phi).max() < 1e-15 and np.abs(phid).max() < 1e-14
    mass = api.mass_matrix(ab, ab.q0)
    link1 = [k for k, c in enumerate(ab.coordinate_names) if c.startswith("@link1")]
    others = [k for k in range(ab.nq) if k not in link1]
    assert len(link1) == 6 and ab.nq == cm.nq + 12 - 2
    assert np.abs(mass[np.ix_(link1, others)]).max() == 0.0


def test_sequential_rotation_and_its_tangent_map():
    """R(th) = Rx Ry Rz and omega = G(th) th' (in the reference axes) against
    differences of R: skew(omega) = dR/dt R^T (1e-9)."""
    rng = np.random.default_rng(3)
    th, thd = rng.normal(size=3), rng.normal(size=3)
    rot, g = sequential_rotation(th)
    h = 1e-6
    drot = (sequential_rotation(th + h * thd)[0] - sequential_rotation(th - h * thd)[0]) / (2 * h)
    w = drot @ rot.T
    assert np.abs(w + w.T).max() < 1e-9
    assert np.allclose([w[2, 1], w[0, 2], w[1, 0]], g @ thd, atol=1e-9)
    assert np.allclose(rot @ rot.T, np.eye(3), atol=1e-15)


def test_moving_the_references_leaves_the_motion_unchanged():
    """A state with every middle angle past REBASE_ANGLE: after `rebase_frames` the
    angles and translations are zero, and every body's position, orientation, velocity
    and angular velocity (global) are unchanged to round-off."""
    model = huang_two_link(elements=1)
    ab = compile_absolute(model)
    slots = reference_slots(ab)
    assert len(slots) == 2
    rng = np.random.default_rng(5)
    y = ab.initial_state()
    nq = ab.nq
    y[:nq] += 0.1 * rng.normal(size=nq)
    y[nq:2 * nq] = rng.normal(size=nq)
    for first, _ in slots:
        y[first + 4] = REBASE_ANGLE + 0.3 * rng.random()
    before = _poses(ab, y[:nq], y[nq:2 * nq])
    moved, y2, _ = rebase_frames(ab, slots, 0.0, y, lambda t, y: (y, None))
    assert moved
    for first, _ in slots:
        assert np.all(y2[first:first + 6] == 0.0)
    _same_poses(before, _poses(ab, y2[:nq], y2[nq:2 * nq]), 1e-13)
    moved, _, _ = rebase_frames(ab, slots, 0.0, y2, lambda t, y: (y, None))
    assert not moved


def _with_joint_sensors(model):
    """The model with a joint_coordinate sensor on every revolute and prismatic joint
    (their names), and nothing else recorded."""
    model.sensors.clear()
    names = []
    for name, joint in model.joints.items():
        if joint.type in ("revolute", "prismatic"):
            model.add_sensor(name, "joint_coordinate", joint=name)
            names.append(name)
    return model, names


def _angle_difference(a, b):
    d = np.unwrap(a, axis=0) - np.unwrap(b, axis=0)
    return (d + np.pi) % (2 * np.pi) - np.pi


@pytest.mark.parametrize("name, builder, t_end", [
    ("H2", lambda: huang_two_link(elements=1), 0.2),
    ("H3", lambda: huang_three_link(elements=1), 0.15),
    ("FB", four_bar, 0.5),
    ("BR", bricard, 0.5),
])
def test_absolute_and_joint_coordinates_agree(name, builder, t_end):
    """The same model file in both formulations at rtol 1e-10: every joint coordinate
    (read in the absolute run from the joint's two markers) agrees within 1e-7 (the
    benchmark holds the 2 s spans to 1e-6); in the absolute run every joint's position
    residuals stay below 1e-11 and its velocity residuals below 1e-9 (as the joint
    formulation's on Bricard's linkage: test_closed_loops), and the energy is conserved
    to 1e-7 of its largest term. BR's links turn far enough to move their references."""
    runs = {}
    for form in ("joint", "absolute"):
        model, names = _with_joint_sensors(builder())
        if form == "absolute":
            for joint in list(model.joints):
                model.add_sensor(f"residual_{joint}", "constraint_residual", joint=joint)
        runs[form] = simulate(model, None, t_end=t_end, rtol=1e-10, atol=1e-12,
                              output_step=0.01, formulation=form)
        assert runs[form].status == "finished", runs[form].message
    a, b = runs["joint"], runs["absolute"]
    n = len(names)
    assert np.abs(_angle_difference(a.sensors, b.sensors[:, :n])).max() < 1e-7
    assert np.ptp(a.sensors, axis=0).max() > 0.05      # the model moves
    assert b.statistics["reference_moves"] >= (1 if name == "BR" else 0)
    e = b.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    assert np.abs(total - total[0]).max() < 1e-7 * np.abs(e[:, :4]).max()
    residuals = b.sensors[:, n:].reshape(len(b.t), len(model.joints), 2, -1)
    assert np.abs(residuals[:, :, 0]).max() < 1e-11      # Phi (m, 1)
    assert np.abs(residuals[:, :, 1]).max() < 1e-9       # dPhi/dt, the Newton tolerance


def test_what_reads_the_model_coordinates_is_refused():
    """User force laws (functions of the model's q and u) and rolling contacts are
    refused naming the item; so is a solver that cannot restart (the references
    move)."""
    from test_user_laws import _two_links

    from flexmbs.model.library import rolling_disk
    with pytest.raises(ModelError, match='contact "'):
        compile_absolute(rolling_disk())
    with pytest.raises(ModelError, match='user law "spring"'):
        compile_absolute(_two_links(law=True))
    with pytest.raises(ModelError, match='"bdf"'):
        simulate(four_bar(), None, t_end=0.01, method="ida", formulation="absolute")


@pytest.mark.parametrize("name", ["H8 motors", "FB spring-damper", "SC driver"])
def test_joints_that_are_acted_on_keep_their_coordinates(name):
    """A joint with a motor (H8: rotor inertia, PD law), a joint spring and damper (FB
    at its crank, no inertia on that coordinate) or a driver (SC's crank at 30 rad/s)
    keeps its coordinates on a massless frame tied to the child by a fixed cut joint:
    every body's frame follows the joint-coordinate run within 1e-8 (m and 1) over a
    short span at rtol 1e-10, and the energy balance (with the drivers' and motors'
    work and the damping) closes as there."""
    if name == "H8 motors":
        model, t_end = huang_eight_link(elements=1), 0.1
    elif name == "FB spring-damper":
        model, t_end = four_bar(), 0.3
        model.joints["crank_pivot"].stiffness[:] = 50.0
        model.joints["crank_pivot"].damping[:] = 2.0
    else:
        model, t_end = slider_crank(elements=1), 0.02
    model.sensors.clear()
    for body in list(model.bodies):
        model.add_sensor(f"{body}.r", "marker_position", body=body, marker="origin")
        model.add_sensor(f"{body}.A", "marker_orientation", body=body, marker="origin")
    runs = [simulate(model, None, t_end=t_end, rtol=1e-10, atol=1e-12, output_step=0.005,
                     formulation=form) for form in ("joint", "absolute")]
    for sim in runs:
        assert sim.status == "finished", sim.message
        e = sim.energy
        total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
        assert np.abs(total - total[0]).max() < 1e-7 * np.abs(e[:, :4]).max()
    assert np.abs(runs[0].sensors - runs[1].sensors).max() < 1e-8
    assert np.ptp(runs[0].sensors, axis=0).max() > 1e-3      # it moves


def test_cut_joint_coordinates_from_their_markers():
    """The four-bar cut at its coupler-rocker joint (joint formulation): that joint's
    angle read from its markers closes the ring of parallel revolutes with the tree
    joints' coordinates (the four relative angles sum to a constant, 1e-10), and its
    rate equals fourth-order differences of the angle along the motion."""
    model = four_bar()
    model.sensors.clear()
    model.add_sensor("cut", "joint_coordinate", joint="coupler_rocker")
    model.add_sensor("cut_rate", "joint_rate", joint="coupler_rocker")
    for name in ("crank_pivot", "crank_coupler", "rocker_pivot"):
        model.add_sensor(name, "joint_coordinate", joint=name)
    sim = simulate(model, None, t_end=0.3, rtol=1e-10, atol=1e-12, output_step=0.001)
    s = sim.sensors
    h, a = sim.t[1] - sim.t[0], s[:, 0]
    rate_fd = (-a[4:] + 8 * a[3:-1] - 8 * a[1:-3] + a[:-4]) / (12 * h)  # error ~h^4
    assert np.abs(rate_fd - s[2:-2, 1]).max() < 1e-6 * np.abs(s[:, 1]).max()
    # the ring of revolutes about parallel axes closes: the four angles sum to 0
    ring = s[:, 2] + s[:, 3] + s[:, 0] - s[:, 4]
    assert np.abs(ring - ring[0]).max() < 1e-10


def test_a_cut_joint_with_several_rotations_has_no_angle_sensor():
    """A joint_coordinate sensor on a cut spherical joint is refused naming the sensor
    (three angles cannot be read from two markers without a convention)."""
    model = huang_eight_link(elements=1)
    model.actuators.clear()
    model.sensors.clear()
    model.add_sensor("j4", "joint_coordinate", joint="joint4", coordinate=1)
    with pytest.raises(ModelError, match='sensor "j4".*3 rotations'):
        compile_absolute(model)


def test_the_command_line_runs_the_absolute_formulation(tmp_path):
    """`flexmbs run --formulation absolute`: the result file records the formulation
    and the reference moves; a model with a rolling contact is refused with its name
    and no traceback."""
    from test_cli import MODELS, flexmbs

    from flexmbs import open_result
    out = tmp_path / "br.h5"
    r = flexmbs("run", MODELS / "bricard.toml", "-o", out, "--t-end", 0.5,
                "--formulation", "absolute")
    assert r.returncode == 0, r.stderr
    res = open_result(out)
    assert res.status == "finished"
    assert res.solver["reference_moves"] >= 1
    assert res.solver["settings"]["formulation"] == "absolute"
    r = flexmbs("run", MODELS / "rolling_disk.toml", "--formulation", "absolute",
                "--t-end", 0.01)
    assert r.returncode != 0
    assert 'contact "' in r.stderr and "Traceback" not in r.stderr
