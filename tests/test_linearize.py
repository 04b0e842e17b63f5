"""Static equilibrium and linearization (docs/explanation/formulation.md section 9; seeds 000 and
001): trees against hand-derived matrices, the kernels' analytic matrices against
differences, the four-bar (docs/explanation/benchmark-models.md FB) by both methods against
its hand-derived frequency and the spectrum of a nonlinear run, Bricard's linkage (BR) in
Führer and Wallrapp's absolute view, the test rig (RIG) at its hanging equilibrium against
the spectrum of a
small-amplitude run, the constraint forces against the multipliers."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import h5py
import numpy as np
import pytest

from flexmbs import ModelError, compile_model, load_model, simulate
from flexmbs.analysis.absolute_kinematics import absolute_kinematics
from flexmbs.analysis.equilibrium import close_loops, equilibrium_assignments, static_equilibrium
from flexmbs.analysis.linearize import independent_coordinates, linearize
from flexmbs.analysis.spectrum import spectrum_peaks
from flexmbs.dynamics import api
from flexmbs.dynamics.constrained import constrained_accelerations, make_consistent
from flexmbs.elements import material
from flexmbs.model import Model
from flexmbs.model.library import (
    HUANG_TUBE_MATERIAL,
    bricard,
    chain_model,
    four_bar,
    four_bar_flexible,
    huang_rig,
    huang_tube,
)

G = 9.81
MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
FB_L, FB_MA, FB_MB, FB_IA = 0.5, 7.707, 3.946, 0.16176083
FB_K = 1.0e4  # N/m


def _consistent(model):
    cm = compile_model(model)
    make_consistent(cm)
    return cm


def fb_frequency():
    """The hanging parallelogram four-bar has one degree of freedom, the crank angle
    th (= the rocker angle; the coupler translates without turning). Crank and rocker
    (mass m_A, inertia I_A about their centres at L/2) turn about their pivots, the
    coupler (m_B) moves with their tips, so T = 1/2 (2 (I_A + m_A L^2/4) + m_B L^2)
    th'^2. The coupler's middle moves by L sin th along x, stretching the horizontal
    spring by that to first order: V_s = 1/2 k L^2 th^2; gravity raises the links'
    centres by (L/2)(1 - cos th) and the coupler by L (1 - cos th):
    V_g = g L (m_A + m_B) th^2 / 2 to second order (m_A for both halves of crank and
    rocker). f = sqrt(K/J) / 2 pi."""
    j = 2 * (FB_IA + FB_MA * FB_L ** 2 / 4) + FB_MB * FB_L ** 2
    k = FB_K * FB_L ** 2 + G * FB_L * (FB_MA + FB_MB)
    return np.sqrt(k / j) / (2 * np.pi), j, k


# ------------------------------------------------------------------ trees
def test_double_pendulum_matrices_and_frequencies_by_hand():
    """CHAIN-2 hanging: uniform rods (m, L) in absolute angles a = (a1, a2):
    M_a = m L^2 [[1/3 + 1, 1/2], [1/2, 1/3]], K_a = m g L diag(3/2, 1/2); the joint
    coordinates are q = (a1, a2 - a1), a = T q with T = [[1, 0], [1, 1]], so
    M = T^T M_a T, K = T^T K_a T and the frequencies solve det(K - w^2 M) = 0."""
    model = chain_model(2)
    model.joints["j1"].initial[:] = 0.0
    cm = compile_model(model)
    lin = linearize(cm)
    m, length = 1.0, 0.5
    t = np.array([[1.0, 0.0], [1.0, 1.0]])
    m_a = m * length ** 2 * np.array([[4.0 / 3.0, 0.5], [0.5, 1.0 / 3.0]])
    k_a = m * G * length * np.diag([1.5, 0.5])
    m_q, k_q = t.T @ m_a @ t, t.T @ k_a @ t
    # the chain's rods carry an axial inertia that does not enter planar motion
    assert np.allclose(lin.M, m_q, rtol=0, atol=1e-6 * np.abs(m_q).max())
    assert np.allclose(lin.K, k_q, rtol=0, atol=1e-8 * np.abs(k_q).max())
    import scipy.linalg
    w2 = scipy.linalg.eigh(k_q, m_q, eigvals_only=True)
    assert np.allclose(lin.frequencies, np.sqrt(w2) / (2 * np.pi), rtol=1e-7)
    assert lin.names == ["j1", "j2"] and lin.max_acceleration < 1e-12
    assert np.allclose(lin.D, 0.0) and lin.J_z is None


def test_mass_matrix_is_the_hessian_of_the_kinetic_energy():
    """The analytic M* of the kernel against second differences of the kinetic energy
    T(q, u) = 1/2 u^T M* u from the energy kernel (a spatial chain, joints at random
    angles)."""
    cm = compile_model(chain_model(3, variant="spatial"))
    rng = np.random.default_rng(3)
    q = rng.uniform(-1, 1, cm.nq)
    mass = api.mass_matrix(cm, q)
    h = 1e-3  # T is quadratic in u: the second difference is exact up to round-off
    hess = np.zeros_like(mass)
    for i in range(cm.nq):
        for j in range(cm.nq):
            def kin(di, dj):
                u = np.zeros(cm.nq)
                u[i] += di  # noqa: B023 (called at once)
                u[j] += dj  # noqa: B023 (called at once)
                return api.energies(cm, q, u)["kinetic"]
            hess[i, j] = (kin(h, h) - kin(h, -h) - kin(-h, h) + kin(-h, -h)) / (4 * h * h)
    assert np.allclose(hess, mass, rtol=0, atol=1e-10 * np.abs(mass).max())


def _cantilever(geometric):
    model = Model("cantilever", gravity=(0.0, 0.0, 0.0))
    model.add_beam_body("beam", points=[[0, 0, 0], [1.0, 0, 0]], section=huang_tube(),
                        material=material(**HUANG_TUBE_MATERIAL), elements=2,
                        geometric=geometric)
    model.add_joint("clamp", "fixed", parent="ground", child="beam")
    return compile_model(model)


@pytest.mark.parametrize("geometric", ["none", "consistent"])
def test_elastic_stiffness_by_differences_equals_the_element_matrices(geometric):
    """A beam clamped to the ground, no gravity, at rest undeformed: K by central
    differences of Q* equals the invariant stiffness K_ff (analytic, assembled from
    the element matrices) and M the mass matrix M_ff; the geometric tangent vanishes
    at zero strain."""
    cm = _cantilever(geometric)
    beam = cm.beams[0][1]
    lin = linearize(cm)
    k_ff = beam.invariants.stiffness
    assert np.allclose(lin.K, k_ff, rtol=0, atol=1e-8 * np.abs(k_ff).max())
    m_ff = sum(beam.invariants.ss[a, a] for a in range(3))
    assert np.allclose(lin.M, m_ff, rtol=0, atol=1e-12 * np.abs(lin.M).max())


# -------------------------------------------------------------- the four-bar
@pytest.mark.parametrize("method", ["qr", "perturbation"])
def test_four_bar_frequency_by_hand_with_both_methods(method):
    f, j, k = fb_frequency()
    cm = _consistent(four_bar(rocker=0.0))
    lin = linearize(cm, method=method)
    assert len(lin.names) == 1 and lin.rank == 2 and lin.rows == 5
    assert abs(lin.frequencies[0] / f - 1) < 1e-8
    # y is a joint angle that moves by +-1 per unit of the crank angle
    assert abs(abs(lin.M[0, 0]) - j) < 1e-9 * j and abs(lin.K[0, 0] - k) < 1e-7 * k
    assert lin.max_acceleration < 1e-10


def test_four_bar_equilibrium_and_the_spectrum_of_a_nonlinear_run(tmp_path):
    """From the released state (0.05 rad) Newton finds the hanging equilibrium; the
    crank angle of the 10 s nonlinear run from 0.05 rad oscillates at the linearized
    frequency within 0.2 % (the amplitude's own shift is about 0.06 %)."""
    cm = _consistent(four_bar())
    eq = static_equilibrium(cm)
    assert np.abs(eq.q).max() < 1e-12 and eq.iterations <= 6
    lin = linearize(cm, q=eq.q, u=np.zeros(cm.nq))
    f, _, _ = fb_frequency()
    assert abs(lin.frequencies[0] / f - 1) < 1e-8
    sim = simulate(four_bar(), None, t_end=10.0, rtol=1e-8, atol=1e-10)
    assert sim.success
    peak = spectrum_peaks(sim.t, sim.y[:, 0], 1)
    assert abs(peak.frequency[0] / f - 1) < 2e-3
    assert abs(peak.peak[0] / f - 1) < 2e-3


def test_prescribed_independent_coordinates():
    """Führer and Wallrapp 1984 (8)-(10): a coordinate the user names stays independent (same
    frequency); one that the loop holds fixed cannot (Bricard's corner hinge 1 does not
    move in the linkage's one motion) and is refused."""
    f, _, _ = fb_frequency()
    cm = _consistent(four_bar(rocker=0.0))
    for name in cm.coordinate_names:
        lin = linearize(cm, independent=[name])
        assert lin.names == [name]
        assert abs(lin.frequencies[0] / f - 1) < 1e-8
    br = _consistent(bricard())
    with pytest.raises(ModelError, match="independent"):
        linearize(br, independent=["hinge1"])
    assert linearize(br, independent=["hinge2"]).names == ["hinge2"]


def test_independent_coordinates_span_the_null_space():
    """J_y of the pivoted QR: Phi_q J_y = 0, identity rows at the independent
    coordinates, rank of a rank-deficient Jacobian (random 4 x 7 of rank 3)."""
    rng = np.random.default_rng(1)
    jac = rng.normal(size=(3, 7))
    jac = np.vstack([jac, jac[0] + 2 * jac[2]])
    ind, dep, j_y, rank = independent_coordinates(jac)
    assert rank == 3 and len(ind) == 4 and len(dep) == 3
    assert np.abs(jac @ j_y).max() < 1e-13
    assert np.allclose(j_y[ind], np.eye(4))


def test_constraint_forces_equal_the_multipliers_of_a_run():
    """At states of a dynamic four-bar run, f_z = J_z^T (M* u' - Q*) (Führer and Wallrapp (23) at
    dy = 0) equals -lambda recorded by the integration; and the linear change of f_z
    (Führer and Wallrapp (23)) matches differences of the multipliers about the equilibrium."""
    model = four_bar()
    sim = simulate(model, None, t_end=0.3, rtol=1e-10, atol=1e-12)
    cm = _consistent(model)
    nq = cm.nq
    base = 2 * nq + 1 + cm.nactuators
    for k in (10, 37, 60):
        q, u = sim.y[k, :nq], sim.y[k, nq:2 * nq]
        lam = sim.y[k, base:base + cm.nconstraints]
        lin = linearize(cm, q=q, u=u, t=sim.t[k])
        scale = np.abs(lam).max()
        assert np.abs(lin.constraint_forces + lam).max() < 1e-6 * scale
        # Führer and Wallrapp (24): the constraint forces on the coordinates balance the equations
        udot = constrained_accelerations(cm, q, u, sim.t[k])[0]
        balance = api.mass_matrix(cm, q) @ udot - api.generalized_forces(cm, q, u, sim.t[k])
        assert np.abs(lin.coordinate_forces - balance).max() < 1e-8 * np.abs(balance).max()
    rest = np.zeros(nq)
    lin = linearize(cm, q=rest, u=rest)
    eps = 1e-4
    forces = []
    for s in (eps, -eps):
        q = rest + s * lin.J_y[:, 0]
        q = close_loops(cm, q, 0.0, np.flatnonzero(lin.J_y[:, 0] != 1.0))
        forces.append(-constrained_accelerations(cm, q, rest, 0.0)[1])
    change = (forces[0] - forces[1]) / (2 * eps)
    ydd = -np.linalg.solve(lin.M, lin.K)  # y'' per unit y at rest
    linear = (lin.Fz_K + lin.Fz_M @ ydd)[:, 0]
    assert np.abs(change - linear).max() < 1e-6 * np.abs(linear).max()


def test_flexible_four_bar_both_methods_agree_and_are_symmetric():
    """FB-flex (a beam coupler) at its static equilibrium: the condensed matrices of
    Führer and Wallrapp 1984 and the perturbation of Bae, Choi and Kim agree (the pre-load
    of the constraint
    forces enters each in its own way), M and K are symmetric."""
    cm = _consistent(four_bar_flexible(elements=2, rocker=0.0))
    eq = static_equilibrium(cm)
    rest = np.zeros(cm.nq)
    a = linearize(cm, q=eq.q, u=rest, method="qr")
    b = linearize(cm, q=eq.q, u=rest, method="perturbation")
    assert a.names == b.names
    assert np.allclose(a.M, b.M, rtol=0, atol=1e-9 * np.abs(a.M).max())
    assert np.allclose(a.K, b.K, rtol=0, atol=1e-6 * np.abs(a.K).max())
    assert np.allclose(a.frequencies, b.frequencies, rtol=1e-6)
    assert a.asymmetry("M") < 1e-12 and a.asymmetry("K") < 1e-6
    assert np.all(a.frequencies > 0)


# ------------------------------------------------------------------ Bricard
def test_bricard_absolute_view_of_seed_000():
    """Führer and Wallrapp's closed chain in the triangular configuration: 30 variables, 30
    equations of rank 29, one degree of freedom. In the only motion link 1 and the
    corner hinges stay still, links 2-3 and 4-5 turn as pairs (joined by still corner
    hinges) by the same amount about the midpoint hinges (unit rotations), and links
    3, 4, 5 move normal to the plane by 0.1, 0.05, 0.1 m per radian. J_y of the
    absolute view is the body motion of the joint-coordinate J_y (to round-off)."""
    cm = _consistent(bricard())
    ak = absolute_kinematics(cm)
    assert ak.jacobian.shape == (30, 30) and ak.rank == 29 and ak.dof == 1
    y = ak.J_y[:, 0].reshape(5, 6)
    assert np.abs(y[0]).max() < 1e-14
    assert np.allclose(np.linalg.norm(y[1:, 3:], axis=1), 1.0, atol=1e-12)
    normal = y[:, :3] @ np.array([0.0, 0.0, 1.0])  # link frames keep z normal
    assert np.allclose(np.abs(normal), [0.0, 0.0, 0.1, 0.05, 0.1], atol=1e-12)
    assert np.allclose(y[:, :2], 0.0, atol=1e-12)
    lin = linearize(cm)
    assert lin.rank == 4 and len(lin.names) == 1
    corner = [cm.coordinate_names.index(n) for n in ("hinge1", "hinge3", "hinge5")]
    assert np.abs(lin.J_y[corner]).max() < 1e-12
    body = api.velocity_transformation(cm, cm.q0) @ lin.J_y[:, 0]
    _, rot = api.body_poses(cm, cm.q0)
    for i in range(5):
        body[6 * i:6 * i + 3] = rot[i].T @ body[6 * i:6 * i + 3]
    chosen = ak.variables.index(ak.independent[0])
    assert np.allclose(body / body[chosen], ak.J_y[:, 0], rtol=0, atol=1e-12)


# ---------------------------------------------------------------------- RIG
def test_rig_hanging_equilibrium_against_a_small_amplitude_run():
    """RIG at its hanging equilibrium: the damped frequencies of its linearization
    (turning about joint 1 against its spring, 0.126 Hz; swinging about joint 2,
    0.609 Hz; the tube bending normal to the swing, 3.41 Hz) against the spectrum
    peaks of the nonlinear 10 s run released 0.02 rad from hanging with the tube's tip
    bent 2 mm out of the swing plane, within 0.5 %; the matrices are symmetric (the
    dampers and the structural damping are). The pre-stress matters: without the
    geometric stiffness the bending frequency is off by more than the tolerance."""
    model = huang_rig(theta2=0.02)
    cm = compile_model(model)
    eq = static_equilibrium(cm)
    assert abs(eq.q[1]) < 1e-12 and eq.residual < 1e-10
    lin = linearize(cm, q=eq.q, u=np.zeros(cm.nq))
    assert all(lin.asymmetry(x) < 1e-6 for x in "MDK")
    assert np.all(lin.frequencies > 0)
    turn, swing, bend = lin.damped_frequencies[:3]
    assert abs(lin.shapes[cm.coordinate_names.index("link2.n1.u"), 2]) > 0.5
    elastic = eq.q[2:].copy()
    elastic[cm.coordinate_names.index("link2.n1.u") - 2] += 2e-3  # m
    model.bodies["link2"].initial = elastic
    sim = simulate(model, None, t_end=10.0, rtol=1e-8, atol=1e-10)
    assert sim.success
    bent = spectrum_peaks(sim.t, sim.y[:, 2], 1).frequency[0]
    assert abs(bent / bend - 1) < 5e-3
    # the tube's tension under the tip mass stiffens it: without the geometric
    # stiffness in the equilibrium and the tangent the bending mode is 1.4 % low
    plain = compile_model(huang_rig(theta2=0.02, geometric="none"))
    eq_plain = static_equilibrium(plain)
    f_plain = linearize(plain, q=eq_plain.q, u=np.zeros(cm.nq)).damped_frequencies[2]
    assert bent / f_plain - 1 > 1e-2
    assert abs(spectrum_peaks(sim.t, sim.y[:, 1], 1).frequency[0] / swing - 1) < 5e-3
    low = spectrum_peaks(sim.t, sim.y[:, 0], 2).frequency.min()
    assert abs(low / turn - 1) < 5e-3


# -------------------------------------------------------- the equilibrium model
def test_equilibrium_model_file_starts_at_rest(tmp_path):
    """The model written with the equilibrium as its initial state (joint values and
    the beam's elastic coordinates) compiles to that state and does not accelerate."""
    cm = compile_model(huang_rig())
    eq = static_equilibrium(cm)
    values = equilibrium_assignments(cm, eq.q)
    assert len(values["bodies.link2.initial"]) == cm.beams[0][1].nf
    out = tmp_path / "rig_eq.toml"
    r = subprocess.run([sys.executable, "-m", "flexmbs", "equilibrium",
                        str(MODELS / "huang_rig.toml"), "-o", str(out), "-q"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "stable" in r.stdout
    back = compile_model(load_model(out))
    assert np.allclose(back.q0, eq.q, rtol=0, atol=1e-14)
    assert np.abs(api.accelerations(back, back.q0, back.u0)).max() < 1e-8
    doc = tomllib.loads(out.read_text())
    assert doc["joints"]["joint2"]["initial_rate"] == 0.0


def test_beam_initial_state_checked():
    """An explicit elastic initial state of the wrong length is refused, naming the
    body and the field."""
    model = huang_rig()
    model.bodies["link2"].initial = np.zeros(3)
    with pytest.raises(ModelError, match=r'body "link2".*initial.*expected 6'):
        compile_model(model)
    with pytest.raises(ModelError, match="initial"):
        huang_rig().add_beam_body("b2", points=[[0, 0, 0], [1, 0, 0]],
                                  section=huang_rig().bodies["link2"].section,
                                  material=huang_rig().bodies["link2"].material,
                                  initial="bent")


def test_equilibrium_refuses_a_moving_driver():
    from flexmbs.model.library import slider_crank
    cm = _consistent(slider_crank(elements=1))
    with pytest.raises(ModelError, match="prescribed motion moves"):
        static_equilibrium(cm)


# --------------------------------------------------------------- command line
def test_linearize_command_line(tmp_path):
    out = tmp_path / "br.h5"
    r = subprocess.run([sys.executable, "-m", "flexmbs", "linearize",
                        str(MODELS / "bricard.toml"), "--absolute", "-q", "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "rank 29" in r.stdout and "NOT an equilibrium" in r.stdout
    with h5py.File(out) as f:
        assert f["absolute"].attrs["rank"] == 29 and f["J_y"].shape == (5, 1)
        assert f["constraints/J_z"].shape == (5, 4)
    r = subprocess.run([sys.executable, "-m", "flexmbs", "linearize",
                        str(MODELS / "four_bar.toml"), "--at", "equilibrium", "--json",
                        "--method", "perturbation", "-q"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert abs(d["frequencies_hz"][0] / fb_frequency()[0] - 1) < 1e-8
    r = subprocess.run([sys.executable, "-m", "flexmbs", "linearize",
                        str(MODELS / "four_bar.toml"), "--independent", "nothing", "-q"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "--independent" in r.stderr and "crank_pivot" in r.stderr


def test_spectrum_peaks_of_known_damped_sinusoids():
    """Two damped sinusoids (1.3 Hz and 4.1 Hz, decay 0.2 and 0.5 1/s) plus a trend,
    10 s at 200 Hz: the fitted frequencies and decays are the true ones (the signal is
    exactly of the fitted form: to the optimiser's tolerance); the raw spectrum
    peaks are within a tenth of the 0.1 Hz bin width."""
    t = np.arange(0.0, 10.0 + 1e-12, 0.005)
    x = (0.3 + 0.01 * t + np.exp(-0.2 * t) * np.sin(2 * np.pi * 1.3 * t + 0.4)
         + 0.5 * np.exp(-0.5 * t) * np.cos(2 * np.pi * 4.1 * t))
    p = spectrum_peaks(t, x, 2)
    order = np.argsort(p.frequency)
    assert np.allclose(p.frequency[order], [1.3, 4.1], rtol=1e-9)
    assert np.allclose(p.decay[order], [0.2, 0.5], rtol=1e-7)
    assert np.allclose(p.amplitude[order], [1.0, 0.5], rtol=1e-7)
    assert np.allclose(np.sort(p.peak), [1.3, 4.1], atol=0.01)


def test_equilibrium_from_far_away_reaches_the_stable_one():
    """CHAIN-4 spatial released with link 1 horizontal (where the stiffness is not
    positive: Newton's step would run off): the modified-Newton descent steps reach
    the hanging equilibrium, which is stable."""
    cm = compile_model(chain_model(4, variant="spatial"))
    eq = static_equilibrium(cm)
    assert np.abs(eq.q).max() < 1e-12
    assert np.all(linearize(cm, q=eq.q, u=np.zeros(cm.nq)).frequencies > 0)


def test_accelerations_of_a_model_with_actuators():
    """api.accelerations (used for trees) on H8, whose state holds a work per
    actuator: M*^-1 Q* (the ODE state it builds must have room for those works)."""
    from flexmbs.model.library import huang_eight_link
    cm = compile_model(huang_eight_link(elements=1))
    rng = np.random.default_rng(2)
    q, u = cm.q0 + rng.normal(0, 1e-3, cm.nq), rng.normal(0, 0.1, cm.nq)
    udot = api.accelerations(cm, q, u, 0.3)
    ref = np.linalg.solve(api.mass_matrix(cm, q, 0.3), api.generalized_forces(cm, q, u, 0.3))
    assert np.allclose(udot, ref, rtol=0, atol=1e-10 * np.abs(ref).max())


# ------------------------------------------ against a slow reference, in motion
def _reference_rates(cm, lin, q0, u0, t):
    """(dy''/dy, dy''/dy') by central differences of the exact constrained
    accelerations (flexmbs.dynamics.constrained.constrained_accelerations) in the
    independent coordinates: the dependent ones close the loops (Newton) and their
    speeds satisfy the velocity constraints. y'' is quadratic in y', so the speed
    difference is exact up to round-off with a large step."""
    from flexmbs.dynamics.constrained import active_rows
    ind = lin.independent
    dep = np.setdiff1d(np.arange(cm.nq), ind)
    rows = active_rows(cm)

    def accel(y, yd):
        q = q0.copy()
        q[ind] += y
        for _ in range(60):
            phi, _, jac, _ = api.constraint_values(cm, q, None, t)
            if np.abs(phi[rows]).max() < 1e-15:
                break
            q[dep] -= np.linalg.solve(jac[rows][:, dep], phi[rows])
        u = np.zeros(cm.nq)
        u[ind] = u0[ind] + yd
        _, phid, jac, _ = api.constraint_values(cm, q, u, t)
        u[dep] -= np.linalg.solve(jac[rows][:, dep], phid[rows])
        return constrained_accelerations(cm, q, u, t)[0][ind]

    n = len(ind)
    a, b = np.zeros((n, n)), np.zeros((n, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = 1e-5
        a[:, k] = (accel(e, 0 * e) - accel(-e, 0 * e)) / 2e-5
        e[k] = 1e-2
        b[:, k] = (accel(0 * e, e) - accel(0 * e, -e)) / 2e-2
    return a, b


def _skew_four_bar():
    """FB with the rocker pivot moved to (0.47, 0, 0.06): not a parallelogram, so its
    constraint manifold is curved in the joint coordinates."""
    model = four_bar(rocker=0.3)
    model.marker("ground", "rocker_pivot").position = np.array([0.47, 0.0, 0.06])
    return model


@pytest.mark.parametrize("case", ["skew_rest", "skew_moving", "slider_crank"])
@pytest.mark.parametrize("method", ["qr", "perturbation"])
def test_linear_model_against_differences_of_the_motion(case, method):
    """-M^-1 K and -M^-1 D against differences of the exact accelerations: a skewed
    four-bar released at rest (not an equilibrium: the curvature of the constraints
    enters K), the same in motion, and the slider-crank whose crank is driven
    (rheonomic constraints). Differences of the reference: about 1e-10 (K) and 1e-6
    (D, nested differences in the linearization)."""
    from flexmbs.model.library import slider_crank
    if case == "skew_moving":
        model = _skew_four_bar()
        sim = simulate(model, None, t_end=0.15, rtol=1e-10, atol=1e-12)
        cm = _consistent(model)
        q, u, t = sim.y[-1, :cm.nq], sim.y[-1, cm.nq:2 * cm.nq], sim.t[-1]
    else:
        cm = _consistent(_skew_four_bar() if case == "skew_rest" else
                         slider_crank(elements=1))
        q, u, t = cm.q0.copy(), cm.u0.copy(), 0.0
    lin = linearize(cm, q=q, u=u, t=t, method=method)
    a, b = _reference_rates(cm, lin, q, u, t)
    minv = np.linalg.inv(lin.M)
    assert np.abs(-minv @ lin.K - a).max() < 1e-6 * np.abs(a).max()
    if np.abs(b).max() > 0:
        assert np.abs(-minv @ lin.D - b).max() < 1e-4 * np.abs(b).max()
    assert (lin.note != "") == (method == "qr")


def test_bricard_equilibrium_and_its_frequency():
    """Bricard's linkage under gravity folds from the triangle into its symmetric
    equilibrium (every hinge at 2 pi / 3 in magnitude), choosing its independent rows
    afresh on the way; its one frequency agrees with differences of the motion."""
    cm = _consistent(bricard())
    eq = static_equilibrium(cm)
    assert np.allclose(np.abs(eq.q), 2 * np.pi / 3, atol=1e-9)
    rest = np.zeros(cm.nq)
    lin = linearize(cm, q=eq.q, u=rest)
    a, _ = _reference_rates(cm, lin, eq.q, rest, 0.0)
    assert lin.at_equilibrium and abs(-lin.K[0, 0] / lin.M[0, 0] / a[0, 0] - 1) < 1e-8
    assert lin.frequencies[0] > 0


def test_neutral_equilibria_and_bad_requests():
    """No gravity: every state is an equilibrium (found at once, all directions
    neutral); RIG with a free turntable: found, joint 1 neutral; a coordinate named
    twice is refused."""
    from flexmbs.analysis.linear_report import format_equilibrium
    model = chain_model(3)
    model.gravity[:] = 0.0
    cm = compile_model(model)
    eq = static_equilibrium(cm)
    assert eq.iterations == 1 and np.array_equal(eq.q, cm.q0)
    text = format_equilibrium(eq, linearize(cm, q=eq.q, u=np.zeros(cm.nq)))
    assert "neutral" in text
    rig = huang_rig()
    rig.joints["joint1"].stiffness[:] = 0.0
    cm = compile_model(rig)
    eq = static_equilibrium(cm)
    text = format_equilibrium(eq, linearize(cm, q=eq.q, u=np.zeros(cm.nq)))
    assert "neutral" in text and "joint1" in text
    with pytest.raises(ModelError, match="twice"):
        linearize(cm, independent=["joint1", "joint1"])
