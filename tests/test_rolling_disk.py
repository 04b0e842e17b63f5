"""Rolling contacts (docs/explanation/formulation.md section 5; Shui and Zhang 1995, section 5;
docs/explanation/benchmark-models.md RD): the rows of a thin disk rolling without slipping
on a plane against a slow NumPy reference and finite differences, the model files against
their builder, the steady motions (straight and circular) held by the integration, energy,
the contact force, and the plane with a prescribed acceleration (the contact point moves
with the plane).

Steady circular rolling of the thin uniform disk (mass m, radius R, axial inertia
A = m R^2 / 2, diametral B = m R^2 / 4), the coordinates of flexmbs.model.library.
rolling_disk: heading psi about the vertical e_z, lean th about the heading direction
e1, spin phi about the axle. With h2 = e_z x e1 (horizontal), the axle and the disk's
"up" direction are

    a = cos th h2 + sin th e_z,   b = -sin th h2 + cos th e_z,   e_z = sin th a + cos th b,

the contact point is c - R b and a x b = e1, e_z x a = -cos th e1, e_z x b = sin th e1.
Steady: th' = 0, psi' = O, phi' = s constant. The angular velocity is
w = O e_z + s a = w3 a + O cos th b with w3 = s + O sin th, and rolling without slip
(c' + w x (-R b) = 0) gives the centre's velocity c' = R w x b = R w3 e1 = V e1: the
centre runs on a circle at the rate O, its acceleration V O h2.

* Momentum: the contact force F = m V O h2 + m g e_z.
* Angular momentum about the centre: H = A w3 a + B O cos th b; a and b turn with the
  frame at O e_z, so dH/dt = O e_z x H = O cos th (-A w3 + B O sin th) e1, and it equals
  the moment of F about the centre, (-R b) x F = R m (V O cos th + g sin th) e1.

With V = R w3 this is one equation for O at given lean and speed:

    (R / 4) sin th cos th O^2 - (3 / 2) cos th V O - g sin th = 0,

whose root that vanishes with th is the physical one (the disk turns towards its lean:
V O < 0 for th > 0 in these axes); then phi' = V / R - O sin th. For R = 0.1 m,
V = 1 m/s, th = 0.2 rad: O = -1.31995 rad/s, phi' = 10.26223 rad/s (a circle of
0.758 m radius for the centre), and the contact force is (0, m V O, m g) at psi = 0.
Upright (th = 0): O = 0 and phi' = V / R, straight rolling.
"""

from pathlib import Path

import numpy as np
import pytest
from test_closed_loops import _assert_same, _total

from flexmbs import ModelError, compile_model, simulate
from flexmbs.dynamics import api
from flexmbs.formats.serialize import model_to_dict
from flexmbs.formats.toml_reader import load_model, loads_model
from flexmbs.model import Model
from flexmbs.model.library import (
    RD_LEAN,
    RD_RADIUS,
    RD_SPEED,
    rolling_disk,
    rolling_disk_steady_rates,
)
from flexmbs.model.timefunctions import ConstantRate

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
GRAVITY = 9.81
SPAN = 1.0  # s: the tests' runs (the 10 s and 5 s runs: benchmarks/bench_rolling_disk.py)
RTOL = 1e-8  # the models' tolerances
ATOL = 1e-9
# A steady motion is an exact solution of the equations; the integration drifts from it
# by its local errors, rtol relative per step over ~1e3 steps in SPAN (growth is at most
# linear: the steady motions are stable, docs/explanation/benchmark-models.md), so 1e3 rtol
# relative.
STEADY_TOL = 1e3 * RTOL


# ------------------------------------------------------------ the rows, reference
def reference_rows(cm, q, u, t):
    """(phi, rows (3,), v_rel (3,)) of the (single) rolling contact by NumPy from the
    marker frames: the slow twin of flexmbs.dynamics.constraints.contact_geometry."""
    m = cm.arrays
    pos, rot, vel, om = api.marker_frames(cm, q, u, t)
    d, p = m.contact_marker_disk[0], m.contact_marker_plane[0]
    radius = m.contact_radius[0]
    n = rot[p] @ m.contact_normal[0]
    a = rot[d] @ m.contact_axis[0]
    s = np.linalg.norm(np.cross(n, a))
    t1 = np.cross(n, a) / s
    t2 = np.cross(n, t1)
    k = -(n - (n @ a) * a) / s
    contact = pos[d] + radius * k
    v_rel = vel[d] + np.cross(om[d], contact - pos[d]) - vel[p] - \
        np.cross(om[p], contact - pos[p])
    phi = n @ (pos[d] - pos[p]) - radius * s
    return phi, np.array([n @ v_rel, t1 @ v_rel, t2 @ v_rel]), v_rel


def _disk_on_moving_plane():
    """A disk (free joint, axle along its marker's x) on a plane body that turns and
    translates with prescribed rates about and along skew axes, and has free
    coordinates too: every term of the rows (w_P, rheonomic xi) is non-zero."""
    model = Model("disk_on_plane", gravity=(0.0, 0.0, -9.81))
    model.add_rigid_body("plane", mass=2.0, inertia=[0.1, 0.2, 0.3], inertia_about="com")
    model.add_marker("plane", "surface", position=(0.1, -0.2, 0.05),
                     euler_xyz=(0.2, -0.1, 0.3))
    model.add_joint("plane_joint", "general", parent="ground", child="plane",
                    translation_axes=[[1.0, 0.2, 0.0], [0.0, 0.0, 1.0]],
                    rotation_axes=[[0.3, 1.0, 0.0], [1.0, 0.0, 0.4]])
    model.add_driver("tilt", "plane_joint", ConstantRate(value=0.1, rate=0.7), coordinate=2)
    model.add_driver("lift", "plane_joint", ConstantRate(value=0.0, rate=-0.4),
                     coordinate=1)
    model.add_rigid_body("disk", mass=1.0, inertia=[0.005, 0.0025, 0.0025],
                         inertia_about="com")
    model.add_marker("disk", "centre", position=(0.01, 0.02, -0.01),
                     euler_xyz=(0.1, 0.2, -0.3))
    model.add_joint("disk_joint", "free", parent="ground", child="disk")
    model.add_contact("wheel", "rolling_disk", disk="disk", disk_marker="centre",
                      plane="plane", plane_marker="surface", radius=0.15,
                      axis=(1.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0))
    return model


def test_contact_rows_against_reference_and_differences():
    """At a random state and time: phi and the velocity rows against the NumPy
    reference; the rows are C u + xi with C the kernel's Jacobian and xi the rows at
    u = 0; the normal row's Jacobian is the gradient of phi (central differences,
    error ~h^2) and its velocity row is dphi/dt along the motion (q + u dt, t + dt)."""
    cm = compile_model(_disk_on_moving_plane())
    rng = np.random.default_rng(4)
    q = rng.uniform(-0.5, 0.5, cm.nq)
    u = rng.uniform(-1.0, 1.0, cm.nq)
    t = 0.37
    phi, phid, jac, jacx = api.constraint_values(cm, q, u, t)
    ref_phi, ref_rows, _ = reference_rows(cm, q, u, t)
    assert len(phi) == 3 and np.all(phi[1:] == 0.0)
    scale = 1.0 + np.abs(ref_rows).max()
    np.testing.assert_allclose(phi[0], ref_phi, rtol=0, atol=1e-14)
    np.testing.assert_allclose(phid, ref_rows, rtol=0, atol=1e-13 * scale)
    xi = api.constraint_values(cm, q, np.zeros(cm.nq), t)[1]
    assert np.abs(xi).max() > 0.1   # rheonomic: the plane moves by itself
    np.testing.assert_allclose(phid, jac @ u + xi, rtol=0, atol=1e-13 * scale)
    h = 1e-6
    grad = np.zeros(cm.nq)
    for k in range(cm.nq):
        e = np.zeros(cm.nq)
        e[k] = h
        grad[k] = (api.constraint_values(cm, q + e, None, t)[0][0]
                   - api.constraint_values(cm, q - e, None, t)[0][0]) / (2 * h)
    assert np.abs(jac[0] - grad).max() <= 1e-8 * max(1.0, np.abs(jac[0]).max())
    dphi = (api.constraint_values(cm, q + h * u, None, t + h)[0][0]
            - api.constraint_values(cm, q - h * u, None, t - h)[0][0]) / (2 * h)
    assert abs(phid[0] - dphi) <= 1e-8 * scale
    for k in range(cm.nq):  # C against differences of the reference (linear in u)
        e = np.zeros(cm.nq)
        e[k] = 1.0
        col = reference_rows(cm, q, u + e, t)[1] - ref_rows
        np.testing.assert_allclose(jac[:, k], col, rtol=0, atol=1e-12 * scale)
    assert np.abs(jacx).max() > 0.0


# ------------------------------------------------------------------- knife edge
SLEIGH_A = 0.2  # m: the edge behind the centre of mass
SLEIGH_I = 0.1  # kg m^2 about the vertical through the centre of mass


def _sleigh():
    """Chaplygin's sleigh: a body (1 kg) on the ground plane, no gravity, on a
    6-coordinate joint (x, y, z, yaw, roll, pitch), a knife edge SLEIGH_A behind its
    centre of mass with the blade along body x; moving forward at 1 m/s, turning at
    2 rad/s."""
    model = Model("sleigh", gravity=(0.0, 0.0, 0.0))
    model.set_solver(method="bdf", t_end=SPAN, rtol=RTOL, atol=ATOL)
    model.add_rigid_body("sleigh", mass=1.0, inertia=[0.05, 0.06, SLEIGH_I],
                         inertia_about="com")
    model.add_marker("sleigh", "edge", position=(-SLEIGH_A, 0.0, 0.0))
    model.add_joint("j", "general", parent="ground", child="sleigh",
                    translation_axes=np.eye(3).tolist(),
                    rotation_axes=[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
                    initial_rate=[1.0, SLEIGH_A * 2.0, 0.0, 2.0, 0.0, 0.0])
    model.add_contact("blade", "knife_edge", disk="sleigh", disk_marker="edge",
                      plane="ground", axis=(1.0, 0.0, 0.0))
    return model


def test_knife_edge_rows_against_reference():
    """The knife edge's two rows (radius 0: the normal row and the row across the
    blade) against the NumPy reference at a random state."""
    cm = compile_model(_sleigh())
    rng = np.random.default_rng(5)
    q, u = rng.uniform(-0.5, 0.5, cm.nq), rng.uniform(-1.0, 1.0, cm.nq)
    phi, phid, jac, _ = api.constraint_values(cm, q, u, 0.0)
    ref_phi, ref_rows, _ = reference_rows(cm, q, u, 0.0)
    assert len(phi) == 2
    np.testing.assert_allclose(phi[0], ref_phi, atol=1e-14)
    np.testing.assert_allclose(phid, ref_rows[:2], atol=1e-13)
    np.testing.assert_allclose(phid, jac @ u, atol=1e-13)


def test_chaplygin_sleigh():
    """The sleigh's edge point P moves along the blade at v, the body turns at w:
    m v' = m a w^2, (I + m a^2) w' = -m a v w (the momentum along the blade and the
    angular momentum about the centre of mass, the blade's lateral force at P the
    only force); against solve_ivp of these two equations, the slip across the blade
    at zero and the energy conserved."""
    from scipy.integrate import solve_ivp
    model = _sleigh()
    sim = simulate(model, None)
    assert sim.status == "finished", sim.message
    cm = compile_model(model)
    mk = cm.arrays.contact_marker_disk[0]
    v, w, slip = [], [], []
    for t, y in zip(sim.t, sim.y):
        _, rot, vel, om = api.marker_frames(cm, y[:6], y[6:12], t)
        v.append(rot[mk][:, 0] @ vel[mk])
        slip.append(rot[mk][:, 1] @ vel[mk])
        w.append(om[mk][2])
    m, a, i = 1.0, SLEIGH_A, SLEIGH_I

    def rhs(t, x):
        return [a * x[1] ** 2, -m * a * x[0] * x[1] / (i + m * a * a)]

    ref = solve_ivp(rhs, (0.0, SPAN), [v[0], w[0]], t_eval=sim.t, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(v, ref.y[0], atol=STEADY_TOL)
    np.testing.assert_allclose(w, ref.y[1], atol=STEADY_TOL)
    assert np.abs(slip).max() <= 1e3 * ATOL
    assert w[-1] < 0.9 * w[0] and v[-1] > v[0]   # it straightens out
    total = _total(sim)
    assert np.abs(total - total[0]).max() <= STEADY_TOL * abs(total[0])


# ------------------------------------------------------------------- model files
@pytest.mark.parametrize("name, variant", [("rolling_disk", "accel"),
                                           ("rolling_disk_straight", "straight"),
                                           ("rolling_disk_circular", "circular")])
def test_model_files_are_the_builder(name, variant):
    _assert_same(model_to_dict(load_model(MODELS / f"{name}.toml")),
                 model_to_dict(rolling_disk(variant)))


def test_steady_rates_solve_the_balance():
    """rolling_disk_steady_rates against the angular-momentum balance of the module
    docstring, evaluated with the vectors (not the reduced quadratic)."""
    th, v, r, m = RD_LEAN, RD_SPEED, RD_RADIUS, 1.0
    o, spin = rolling_disk_steady_rates(th, v)
    e1, h2, ez = np.eye(3)
    a = np.cos(th) * h2 + np.sin(th) * ez
    b = -np.sin(th) * h2 + np.cos(th) * ez
    w = o * ez + spin * a
    w3 = w @ a
    np.testing.assert_allclose(r * np.cross(w, b), v * e1, atol=1e-14)
    big_a, big_b = m * r ** 2 / 2, m * r ** 2 / 4
    hmom = big_a * w3 * a + big_b * (w @ b) * b
    force = m * v * o * h2 + m * GRAVITY * ez
    np.testing.assert_allclose(np.cross(o * ez, hmom), np.cross(-r * b, force), atol=1e-14)
    assert o < 0  # towards the lean


# ------------------------------------------------------------------- the motions
def _run(variant, t_end=SPAN, **kw):
    model = rolling_disk(variant)
    model.add_sensor("disk_joint_reaction", "joint_reaction", joint="disk_joint")
    sim = simulate(model, None, t_end=t_end, **kw)
    assert sim.status == "finished", sim.message
    return model, sim


# the builder's sensors, then the joint_reaction sensor that _run adds
SENSOR_COLUMNS = {"lean": 0, "heading_rate": 1, "spin_rate": 2, "contact": slice(3, 9),
                  "disk_joint_reaction": slice(9, 15)}


def _sensor(sim, name):
    return sim.sensors[:, SENSOR_COLUMNS[name]]


def test_straight_rolling_persists():
    """RD-steady (a): upright at 1 m/s along x: the lean, heading rate and spin rate
    stay at 0, 0 and V / R, the centre at x = V t, energy constant."""
    _, sim = _run("straight")
    nq = 6
    q, u = sim.y[:, :nq], sim.y[:, nq:2 * nq]
    assert np.abs(_sensor(sim, "lean")).max() <= STEADY_TOL
    assert np.abs(u[:, 3]).max() <= STEADY_TOL
    np.testing.assert_allclose(u[:, 5], RD_SPEED / RD_RADIUS, rtol=STEADY_TOL)
    np.testing.assert_allclose(q[:, 0], RD_SPEED * sim.t, atol=STEADY_TOL)
    total = _total(sim)
    assert np.abs(total - total[0]).max() <= STEADY_TOL * abs(total[0])


def test_circular_rolling_persists_and_conserves_energy():
    """RD-steady (b): lean 0.2 rad with the steady rates (module docstring): the lean
    and the rates stay, the centre keeps to its circle, the energy is conserved (the
    plane at rest: the contact forces do no work), the contact force is
    m V O h2 + m g e_z, and the 6-coordinate joint carries nothing (its reaction, from
    the momentum balance with the contact force, is zero)."""
    model, sim = _run("circular")
    o, spin = rolling_disk_steady_rates(RD_LEAN, RD_SPEED)
    u = sim.y[:, 6:12]
    np.testing.assert_allclose(_sensor(sim, "lean"), RD_LEAN, rtol=STEADY_TOL)
    np.testing.assert_allclose(u[:, 3], o, rtol=STEADY_TOL)
    np.testing.assert_allclose(u[:, 5], spin, rtol=STEADY_TOL)
    np.testing.assert_allclose(u[:, 4], 0.0, atol=STEADY_TOL)
    centre = sim.y[:, :2] - np.array([0.0, RD_SPEED / o])  # circle centre (0, V / O)
    np.testing.assert_allclose(np.linalg.norm(centre, axis=1), abs(RD_SPEED / o),
                               rtol=STEADY_TOL)
    total = _total(sim)
    assert np.abs(total - total[0]).max() <= STEADY_TOL * abs(total[0])
    contact = _sensor(sim, "contact")
    np.testing.assert_allclose(np.hypot(contact[:, 0], contact[:, 1]), abs(RD_SPEED * o),
                               rtol=STEADY_TOL)
    np.testing.assert_allclose(contact[:, 2], GRAVITY, rtol=STEADY_TOL)
    np.testing.assert_allclose(contact[:, 5], 0.0, atol=STEADY_TOL * RD_RADIUS)
    assert np.abs(_sensor(sim, "disk_joint_reaction")).max() <= STEADY_TOL * GRAVITY


def test_accelerating_plane_carries_the_contact_point():
    """RD-accel over SPAN: at every output the disk's material velocity at the contact
    point equals the plane's there (all three components, the NumPy reference), to the
    Newton tolerance of the velocity rows (atol-sized), and the rim touches the
    plane."""
    _, sim = _run("accel")
    cm = compile_model(rolling_disk("accel"))
    worst, worst_phi = 0.0, 0.0
    for t, y in zip(sim.t, sim.y):
        phi, _, v_rel = reference_rows(cm, y[:6], y[6:12], t)
        worst = max(worst, np.abs(v_rel).max())
        worst_phi = max(worst_phi, abs(phi))
    assert worst <= 1e3 * ATOL
    assert worst_phi <= 1e3 * ATOL
    # the plane has moved: the check is not the trivial one of a plane at rest
    assert sim.t[-1] == pytest.approx(SPAN)


# ------------------------------------------------------- the projection formulation
def test_projection_formulation_agrees_with_ggl_on_rd_accel():
    """Shui and Zhang's projection formulation (flexmbs.dynamics.projection) against the
    stabilised index-2 one on RD-accel over SPAN at the model's rtol 1e-8: q and u
    agree to 10 rtol of the largest speed (each is ~3e-7 from an rtol 1e-11 run, the
    heading rate the worst), the multipliers (the contact force) to 100 rtol of the
    weight after the GGL start-up (its first output: the multipliers are out of the
    error test, their error is the accelerations'; against an rtol 1e-11 run the
    index-2 form's normal force is 4e-6 N off, the projection's 1.3e-7 N), and the
    projection keeps the slip
    and the rim's height within its drift-correction threshold (DRIFT_TOLERANCE times
    atol + rtol |C u|, |C u| below 3 m/s)."""
    from flexmbs.dynamics.projection import DRIFT_TOLERANCE
    _, ggl = _run("accel")
    _, proj = _run("accel", constraints="projection")
    assert np.array_equal(ggl.t, proj.t)
    scale = np.abs(ggl.y[:, 6:12]).max()
    assert np.abs(ggl.y[:, :12] - proj.y[:, :12]).max() <= 10 * RTOL * scale
    force = slice(3, 6)
    assert np.abs(ggl.sensors[2:, force] - proj.sensors[2:, force]).max() <= \
        100 * RTOL * GRAVITY
    cm = compile_model(rolling_disk("accel"))
    limit = DRIFT_TOLERANCE * (ATOL + RTOL * 1.5 * 2)
    for t, y in zip(proj.t, proj.y):
        phi, _, v_rel = reference_rows(cm, y[:6], y[6:12], t)
        assert np.abs(v_rel).max() <= limit and abs(phi) <= limit


def test_projected_accelerations_against_the_kkt_system():
    """The projection kernel's u' and lambda (flexmbs.dynamics.projection) against the
    slow NumPy twin by another route: the saddle-point system
    [M C^T; C 0] [u'; lambda] = [h; -eta] at a random state of the disk on the turning,
    translating plane (rheonomic), eta = d(C u + xi)/dt at fixed u by central
    differences of api.constraint_values (error ~1e-10 relative at this step)."""
    from flexmbs.dynamics.projection import projection_residual
    from flexmbs.simulation import build_system
    cm = compile_model(_disk_on_moving_plane())
    rng = np.random.default_rng(8)
    q, u, t = rng.uniform(-0.5, 0.5, cm.nq), rng.uniform(-1.0, 1.0, cm.nq), 0.21
    system = build_system(cm, "projection")
    nq, ncon = cm.nq, cm.nconstraints
    y = np.concatenate([q, u, np.zeros(1 + 2 * ncon)])
    out = np.zeros_like(y)
    projection_residual(system.m, system.ws, t, y, np.zeros_like(y), out)
    accel, lam = -out[nq:2 * nq], -out[2 * nq + 1:2 * nq + 1 + ncon]
    mass = api.mass_matrix(cm, q, t)
    h = api.generalized_forces(cm, q, u, t)
    jac = api.constraint_values(cm, q, u, t)[2]
    d = 1e-5
    eta = (api.constraint_values(cm, q + d * u, u, t + d)[1]
           - api.constraint_values(cm, q - d * u, u, t - d)[1]) / (2 * d)
    kkt = np.block([[mass, jac.T], [jac, np.zeros((ncon, ncon))]])
    ref = np.linalg.solve(kkt, np.concatenate([h, -eta]))
    np.testing.assert_allclose(accel, ref[:nq], rtol=0, atol=1e-8 * np.abs(ref).max())
    np.testing.assert_allclose(lam, ref[nq:], rtol=0, atol=1e-8 * np.abs(ref).max())


def test_projection_needs_bdf_and_a_known_formulation():
    with pytest.raises(ModelError, match='projection formulation runs with the solver'):
        simulate(rolling_disk("straight"), None, t_end=0.1, method="ida",
                 constraints="projection")
    with pytest.raises(ModelError, match="ggl, projection") as err:
        loads_model('[solver]\nconstraints = "svd"\n', source="m.toml")
    assert err.value.field == "constraints"


# ------------------------------------------------------------------ input checks
def _contact_toml(**fields):
    table = {"type": '"rolling_disk"', "disk": '"disk"', "radius": "0.1",
             "plane": '"ground"', **fields}
    body = "\n".join(f"{k} = {v}" for k, v in table.items() if v is not None)
    return f"""
[bodies.disk]
mass = 1.0
inertia = [0.0025, 0.005, 0.0025]
inertia_about = "com"

[joints.j]
type = "free"
parent = "ground"
child = "disk"

[contacts.wheel]
{body}
"""


@pytest.mark.parametrize("fields, field, message", [
    ({"radius": "-0.1"}, "radius", "positive"),
    ({"type": '"sphere"'}, "type", "contact type"),
    ({"disk": '"wheel"'}, "disk", 'unknown body "wheel"'),
    ({"plane": '"disk"'}, "plane", "two different bodies"),
    ({"disk": '"ground"'}, "disk", "moving body"),
    ({"axis": "[0.0, 0.0, 0.0]"}, "axis", "non-zero"),
    ({"normal": "[1.0, 0.0]"}, "normal", "3-vector"),
    ({"plane_marker": '"top"'}, "plane_marker", 'unknown marker "top"'),
    ({"speed": "1.0"}, "speed", "unknown field"),
    ({"radius": None}, "radius", 'needs a "radius"'),
    ({"type": '"knife_edge"'}, "radius", "takes no radius"),
])
def test_bad_contact_fields_name_file_item_field(fields, field, message):
    with pytest.raises(ModelError, match=message) as err:
        loads_model(_contact_toml(**fields), source="disk.toml")
    assert err.value.item == 'contact "wheel"'
    assert err.value.field == field
    assert "disk.toml" in str(err.value)


def test_rolling_contacts_need_a_dae_solver():
    with pytest.raises(ModelError, match='expected the solver "bdf" or "ida"'):
        simulate(rolling_disk("straight"), None, t_end=0.1, method="rk45")


def test_command_line_runs_both_formulations(tmp_path):
    """`flexmbs run` on RD-accel with --constraints projection and with the default:
    the contact sensor recorded, the log naming the contact and the formulation."""
    from test_cli import flexmbs

    from flexmbs import open_result
    for constraints in ("projection", "ggl"):
        out = tmp_path / f"rd_{constraints}.h5"
        r = flexmbs("run", MODELS / "rolling_disk.toml", "-o", out, "--t-end", 0.1,
                    "--constraints", constraints)
        assert r.returncode == 0, r.stderr
        assert 'rolling contacts "wheel"' in r.stderr
        assert ("projection formulation" in r.stderr) == (constraints == "projection")
        res = open_result(out)
        assert res.status == "finished"
        assert res.time[-1] == pytest.approx(0.1)
