"""User force laws: a joint law and a marker law against the joint spring, damper and
point loads they imitate (rigid bodies and a marker on a beam node), their work in the
energy balance, one compiled kernel for models with and without laws, the
strain-feedback example on H2, and input checks."""

import importlib.util
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

import flexmbs
from flexmbs import ModelError, compile_model, open_result, simulate
from flexmbs.dynamics import api
from flexmbs.dynamics import system as _system
from flexmbs.formats.serialize import model_to_json
from flexmbs.model import Constant, Harmonic, Model
from flexmbs.model.library import huang_two_link
from flexmbs.model.user_laws import UserLaw

ROOT = Path(__file__).resolve().parents[1]


@flexmbs.user_law
def spring_damper(t, q, u, params, out):
    """-k (x - rest) - c x' on the coordinate x = q[params[3]]."""
    i = int(params[3])
    out[0] = -params[0] * (q[i] - params[2]) - params[1] * u[i]


@flexmbs.user_law
def pulsing_wrench(t, q, u, params, out):
    """A force params[0:3] and a torque params[3:6], times
    1 + params[6] sin(params[7] t)."""
    s = 1.0 + params[6] * np.sin(params[7] * t)
    for k in range(6):
        out[k] = s * params[k]


@flexmbs.user_law
def tip_damper(t, q, u, params, out):
    """A force -c (v', w') against the tip's elastic velocity (body axes: a marker-axes
    law at the undeformed tip), c = params[0]; q indices of v, w in params[1:3]."""
    out[1] = -params[0] * u[int(params[1])]
    out[2] = -params[0] * u[int(params[2])]


def _two_links(law=False):
    """Two rigid links under gravity, a universal joint at the second: joint 1's spring
    and damper are either the joint's own or a joint law."""
    m = Model("two", gravity=(0, 0, -9.81))
    for k in (1, 2):
        m.add_rigid_body(f"l{k}", mass=1.0, com=(0.25, 0, 0), inertia=(1e-3, 0.02, 0.02),
                         inertia_about="com")
        m.add_marker(f"l{k}", "tip", position=(0.5, 0, 0), euler_xyz=(0.1, 0.2, 0.3))
    spring = dict(stiffness=2.0, rest=0.1, damping=0.3)
    m.add_joint("j1", "revolute", parent="ground", child="l1", axis=(0, 1, 0),
                initial=0.3, **({} if law else spring))
    m.add_joint("j2", "universal", parent="l1", child="l2", parent_marker="tip",
                initial=[0.2, -0.4], initial_rate=[1.0, 0.5])
    if law:
        m.add_user_law("spring", spring_damper, joint="j1", params=[2.0, 0.3, 0.1],
                       read_coordinates=["j1"])
    return m


def test_a_joint_law_is_the_joint_spring_and_damper():
    rng = np.random.default_rng(1)
    plain, with_law = compile_model(_two_links()), compile_model(_two_links(law=True))
    for _ in range(5):
        q, u, t = rng.normal(size=3), rng.normal(size=3), rng.uniform(0, 2)
        np.testing.assert_allclose(api.generalized_forces(with_law, q, u, t),
                                   api.generalized_forces(plain, q, u, t), atol=1e-13)
        np.testing.assert_allclose(api.accelerations(with_law, q, u, t),
                                   api.accelerations(plain, q, u, t), atol=1e-12)


def test_a_joint_law_moves_like_the_spring_and_its_work_balances():
    """The same motion as with the joint's spring and damper; the law's work (spring
    energy and dissipation together) is in W_nc, and E = T + V - W_nc stays constant."""
    a = simulate(_two_links(), None, t_end=2.0, rtol=1e-10, atol=1e-12)
    b = simulate(_two_links(law=True), None, t_end=2.0, rtol=1e-10, atol=1e-12)
    nq = 3
    np.testing.assert_allclose(b.y[:, :2 * nq], a.y[:, :2 * nq], atol=1e-7)
    e = b.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    assert np.abs(e[:, 4]).max() > 0.1 and e[0, 3] == 0.0  # the spring is in W_nc
    assert np.abs(total - total[0]).max() <= 1e-7 * np.abs(e[:, :5]).max()


def _h2_loaded(frame, law):
    """H2 with a force and a torque at the beam's tip node (follower loads when
    frame = "marker"): point loads or a marker law."""
    wrench = np.array([0.3, -0.2, 0.5, 0.02, -0.01, 0.03])
    m = huang_two_link()
    if law:
        m.add_user_law("wrench", pulsing_wrench, body="link2", marker="tip", frame=frame,
                       params=list(wrench) + [0.5, 3.0])
    else:
        pulse = Harmonic(amplitude=0.5, omega=3.0, offset=1.0)
        m.add_force("f", "force", "link2", "tip", vector=wrench[:3], frame=frame,
                    function=pulse)
        m.add_force("m", "torque", "link2", "tip", vector=wrench[3:], frame=frame,
                    function=pulse)
    return m


@pytest.mark.parametrize("frame", ["global", "marker"])
def test_a_marker_law_on_a_beam_node_is_the_point_load(frame):
    """At random states: Q* and the power of the non-conservative forces of a marker
    law equal those of the point force and torque it repeats (a marker that follows
    its node's deflection and rotation)."""
    rng = np.random.default_rng(2)
    loads = compile_model(_h2_loaded(frame, False))
    law = compile_model(_h2_loaded(frame, True))
    for _ in range(4):
        q = rng.normal(size=law.nq) * np.r_[1.0, 1.0, [0.02] * 6]
        u = rng.normal(size=law.nq)
        t = rng.uniform(0, 2)
        np.testing.assert_allclose(api.generalized_forces(law, q, u, t),
                                   api.generalized_forces(loads, q, u, t),
                                   rtol=1e-12, atol=1e-12)
        powers = []
        for cm in (loads, law):
            ws = api.kinematics(cm, q, u, t)
            _system.body_forces(cm.arrays, ws, t)
            _system.dynamic_rows(cm.arrays, ws, np.zeros(cm.nq), np.zeros(cm.nq))
            powers.append(_system.nonconservative_power(cm.arrays, ws, t))
        assert powers[1] == pytest.approx(powers[0], rel=1e-12, abs=1e-14)
        assert abs(powers[1]) > 1e-3


def test_marker_and_joint_laws_on_h2_close_the_energy_balance():
    """H2 with a damper on the tip's elastic velocity (a marker law) and a nonlinear
    joint law: the balance closes to 1e-6 of the largest energy term while the laws
    take energy out."""
    m = huang_two_link()
    m.add_user_law("tip_damper", tip_damper, body="link2", marker="tip", frame="marker",
                   params=[5.0], read_coordinates=["link2.n1.v", "link2.n1.w"])
    m.add_user_law("joint_spring", spring_damper, joint="joint2", params=[3.0, 0.2, -0.5],
                   read_coordinates=["joint2"])
    sim = simulate(m, None, t_end=0.5, rtol=1e-8, atol=1e-10)
    assert sim.status == "finished"
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    assert np.abs(total - total[0]).max() <= 1e-6 * np.abs(e[:, :5]).max()
    assert e[-1, 4] < -1e-3


def test_models_with_and_without_laws_share_the_compiled_kernels():
    """The laws are data (addresses and parameters): the kernels' argument types are
    the same with and without laws, and running a model with a new law compiles no
    new version of the residual."""
    def arg_types(model):
        cm = compile_model(model)
        return numba.typeof((cm.arrays, cm.new_workspace()))

    plain = huang_two_link()
    assert arg_types(_h2_loaded("global", True)) == arg_types(plain)
    assert arg_types(_two_links(law=True)) == arg_types(plain)

    @flexmbs.user_law
    def another(t, q, u, params, out):
        out[0] = params[0] * np.cos(t)

    m = _two_links()
    m.add_user_law("another", another, joint="j2", coordinate=1, params=[0.1])
    simulate(_two_links(), None, t_end=0.01)
    before = len(_system.dae_residual.signatures)
    simulate(m, None, t_end=0.01)
    assert len(_system.dae_residual.signatures) == before


def _example():
    path = ROOT / "examples" / "h2_strain_feedback.py"
    spec = importlib.util.spec_from_file_location("h2_strain_feedback", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_strain_feedback_example_damps_the_vibration_and_balances():
    """examples/h2_strain_feedback.py over 2 s: the law reads the root strain that the
    beam_strain sensor reads; with it the tip vibration left after the move is at
    least 3 times smaller; the balance closes to 1e-6 of the largest energy term with
    the law's work in W_nc (the PD-driven H2 without the law as well)."""
    ex = _example()
    runs = {}
    for gain in (0.0, 1e4):
        model = ex.controlled_h2(gain)
        model.add_sensor("opposite", "beam_strain", body="link2", point=(ex.GAUGE, 0.0))
        sim = simulate(model, None, t_end=2.0)
        assert sim.status == "finished"
        assert ex.energy_balance(sim) <= 1e-6
        runs[gain] = sim
    sim = runs[1e4]
    names = sim.coordinate_names
    v, tz = sim.y[:, names.index("link2.n1.v")], sim.y[:, names.index("link2.n1.tz")]
    strain = ex.GAUGE * (6 * v / ex.LENGTH ** 2 - 2 * tz / ex.LENGTH)
    bending = (sim.sensors[:, -2] - sim.sensors[:, -1]) / 2  # the axial strain cancels
    np.testing.assert_allclose(strain, bending, rtol=1e-9, atol=1e-15)
    assert ex.tip_vibration(runs[0.0]) > 3.0 * ex.tip_vibration(runs[1e4])


def test_a_law_is_called_from_python_and_recorded_by_name():
    out = np.zeros(1)
    spring_damper(0.0, np.array([0.5]), np.array([1.0]), np.array([2.0, 0.3, 0.1, 0.0]),
                  out)
    assert out[0] == pytest.approx(-2.0 * 0.4 - 0.3)
    assert isinstance(spring_damper, UserLaw) and spring_damper.address > 0
    assert f"{__name__}.spring_damper" in model_to_json(_two_links(law=True))


def _plain_law(t, q, u, params, out):
    out[0] = params[0]


@pytest.mark.parametrize("kwargs, field", [
    (dict(law=3.0, joint="j1"), "law"),
    (dict(law=lambda t, q, u, out: None, joint="j1"), "law"),
    (dict(law=_plain_law), "joint"),
    (dict(law=_plain_law, joint="j1", body="l1"), "joint"),
    (dict(law=_plain_law, joint="nope"), "joint"),
    (dict(law=_plain_law, joint="j2", coordinate=2), "coordinate"),
    (dict(law=_plain_law, body="l3"), "body"),
    (dict(law=_plain_law, body="l1", marker="nope"), "marker"),
    (dict(law=_plain_law, body="l1", frame="body"), "frame"),
    (dict(law=_plain_law, joint="j1", params=[1.0, np.inf]), "params"),
    (dict(law=_plain_law, joint="j1", read_coordinates="j1"), "read_coordinates"),
])
def test_bad_laws_are_refused(kwargs, field):
    m = _two_links()
    with pytest.raises(ModelError) as err:
        m.add_user_law("bad", **kwargs)
    assert err.value.field == field and err.value.item == 'user law "bad"'


def test_a_plain_function_is_compiled_and_errors_of_the_whole_model_are_named():
    m = _two_links()
    law = m.add_user_law("push", _plain_law, joint="j1", params=[0.5])
    assert isinstance(law.law, UserLaw)
    with pytest.raises(ModelError, match='already has user law "push"'):
        m.add_user_law("again", _plain_law, joint="j1")
    m.add_user_law("reader", _plain_law, joint="j2", read_coordinates=["j3"])
    with pytest.raises(ModelError, match='user law "reader".*"read_coordinates".*"j3"'):
        compile_model(m)
    m = _two_links()
    m.add_driver("d", "j1", Constant(0.2))
    m.add_user_law("on_driven", _plain_law, joint="j1")
    with pytest.raises(ModelError, match='user law "on_driven".*prescribed'):
        compile_model(m)
    h2 = huang_two_link().bodies["link2"]
    m = Model("beam")
    m.add_beam_body("beam", [[0.5, 0, 0], [1.5, 0, 0]], h2.section, h2.material)
    m.add_marker("beam", "root", node=0)
    m.add_joint("clamp", "fixed", parent="ground", child="beam", child_marker="root")
    m.add_user_law("at_frame", _plain_law, body="beam", marker="origin")
    with pytest.raises(ModelError, match='user law "at_frame".*floating frame'):
        compile_model(m)
    with pytest.raises(TypeError, match="returns_a_value.*return nothing"):
        @flexmbs.user_law
        def returns_a_value(t, q, u, params, out):
            return 1.0


@flexmbs.user_law
def stop_ahead(t, q, u, params, out):
    """A force that grows as the root of the distance past a stop at params[0]: not
    defined before the stop (its root is not a number there)."""
    i = int(params[1])
    out[0] = -np.sqrt(q[i] - params[0])


def test_a_law_that_stops_being_finite_is_named_in_the_failure(tmp_path):
    """A pendulum falls past where its joint law is defined: the run fails with the
    law's name and the time in its message and in the file."""
    m = Model("stop", gravity=(0, 0, -9.81))
    m.add_rigid_body("rod", mass=1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 1e-3),
                     inertia_about="com")
    m.add_joint("j", "revolute", parent="ground", child="rod", axis=(0, 1, 0), initial=1.0)
    m.add_user_law("stop", stop_ahead, joint="j", params=[0.3], read_coordinates=["j"])
    m.set_solver(t_end=2.0)
    sim = simulate(m, tmp_path / "stop.h5")
    assert sim.status == "failed"
    assert 'the user law "stop" gives a force that is not finite' in sim.message
    when = float(sim.message.split("; at t = ")[1].split(" s ")[0])
    assert 0.1 < when < 2.0 and sim.t[-1] <= when * (1 + 1e-5)  # when has 6 digits
    explicit = simulate(m, None, method="dop853")
    assert 'the user law "stop" gives a force that is not finite' in explicit.message
    assert open_result(tmp_path / "stop.h5").status.endswith(sim.message)
