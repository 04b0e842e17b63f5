"""H8, the eight-link tree under PD control (docs/explanation/benchmark-models.md): the model
file is the builder, the tree is what docs/explanation/benchmark-models.md describes, and a
short run moves every joint towards its target with the energy balance closed by the
actuators' work. The 5 s run
and its report: benchmarks/bench_h8.py."""

from pathlib import Path

import numpy as np
import pytest

from flexmbs import compile_model, load_model, simulate
from flexmbs.dynamics import api
from flexmbs.formats.serialize import model_to_dict
from flexmbs.model.library import H8_INITIAL, H8_TARGETS, huang_eight_link

PATH = Path(__file__).resolve().parents[1] / "data" / "models" / "huang_eight_link.toml"
JOINT_SENSORS = 10  # theta1, theta2, d3, theta4x, theta4y, theta4z, theta5 .. theta8


def _flat(values):
    return np.concatenate([np.atleast_1d(values[f"joint{k}"]) for k in range(1, 9)])


def test_model_file_is_the_builder():
    """data/models/huang_eight_link.toml and library.huang_eight_link describe one
    model, also with one element per beam set from the command line."""
    assert model_to_dict(load_model(PATH)) == model_to_dict(huang_eight_link())
    one = load_model(PATH, ["bodies.link1.elements=1", "bodies.link2.elements=1"])
    assert model_to_dict(one) == model_to_dict(huang_eight_link(elements=1))


def test_the_tree_and_its_initial_pose():
    """Link 1 carries link 2 at its tip, link 2 both branches; at the initial joint
    values every link is where the joint chain puts it (rigid links 0.1 m, beams 1 m);
    a motor with the reflected rotor inertia 2.0 on each of the ten joint coordinates."""
    model = huang_eight_link()
    cm = compile_model(model)
    topo = cm.topology
    parent = {b: (topo.body_names[p] if p >= 0 else "ground")
              for b, p in zip(topo.body_names, topo.parent)}
    assert parent == {"link1": "ground", "link2": "link1", "link3": "link2",
                      "link4": "link3", "link5": "link4", "link6": "link2",
                      "link7": "link6", "link8": "link7"}
    assert cm.nq == 10 + 2 * 12 and len(model.actuators) == 10
    q0 = cm.q0.copy()
    r, rot = api.body_poses(cm, q0)
    at = {b: k for k, b in enumerate(topo.body_names)}
    # link 2's origin is link 1's tip: 1 m along link 1, turned by theta1 about z
    th1, th2 = H8_INITIAL["joint1"], H8_INITIAL["joint2"]
    np.testing.assert_allclose(r[at["link2"]], [np.cos(th1), np.sin(th1), 0.0], atol=1e-12)
    # link 2 points down by theta2 (a rotation about its parent's y); link 3 and link 6
    # start at its tip
    tip2 = r[at["link2"]] + 1.0 * rot[at["link2"]][:, 0]
    assert rot[at["link2"]][2, 0] == pytest.approx(-np.sin(th2), abs=1e-12)
    np.testing.assert_allclose(r[at["link3"]], tip2, atol=1e-12)
    np.testing.assert_allclose(r[at["link6"]], tip2, atol=1e-12)
    tip7 = r[at["link7"]] + 0.1 * rot[at["link7"]][:, 0]
    np.testing.assert_allclose(r[at["link8"]], tip7, atol=1e-12)
    m_plain = api.mass_matrix(cm, q0)
    for a in model.actuators.values():
        assert a.rotor_inertia == 2.0 and a.kp == 100.0 and a.kd == 30.0
    assert np.all(np.diag(m_plain)[:10] > 2.0)


def test_short_run_moves_towards_the_targets_and_balances():
    """0.6 s: every rotation has covered more than half of its way to the target;
    the slider of joint 3 is pulled out along link 2 by the weight of branch A
    (static offset m g sin(theta2) / kp, about 1 cm); the tips deflect; and
    E = T + V_g + U - W_nc stays constant to 1e-6 of the largest energy term (W_nc:
    the motors' work and the beams' structural damping)."""
    sim = simulate(huang_eight_link(), None, t_end=0.6)
    assert sim.status == "finished", sim.message
    start, target = _flat(H8_INITIAL), _flat(H8_TARGETS)
    now = sim.sensors[-1, :JOINT_SENSORS]
    rotations = np.arange(JOINT_SENSORS) != 2
    assert np.all(np.abs(now - target)[rotations] < 0.5 * np.abs(start - target)[rotations])
    assert 0.0 < now[2] < 0.02
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    assert np.abs(total - total[0]).max() <= 1e-6 * np.abs(e[:, :5]).max()
    tips = sim.sensors[:, JOINT_SENSORS:].reshape(len(sim.t), 2, 3)
    assert np.abs(tips[:, 0, 1]).max() > 1e-2 and np.abs(tips[:, 1]).max() > 1e-3
