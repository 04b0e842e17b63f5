"""The generalized-alpha integrator (`galpha`): order, numerical dissipation, energy
at rho_inf = 1, error control, constraints, and failure with a status.

The slow reference for the method is `_galpha_map`: the step of the first-order
generalized-alpha method written out in numpy for a linear system y' = A y, from its
defining equations (Jansen, Whiting & Hulbert 2000), as the matrix that takes
(y_n, v_n) to (y_{n+1}, v_{n+1})."""

import numba
import numpy as np
import pytest

from flexmbs import open_result, simulate
from flexmbs.model.library import chain_model, huang_two_link
from flexmbs.solvers.galpha import GeneralizedAlpha
from flexmbs.solvers.galpha_kernels import galpha_coefficients


@numba.njit(cache=True)
def _oscillator(t, y, yp, args, out):
    """q' = u, u' = -omega^2 q (args[0][0] = omega)."""
    w = args[0][0]
    out[0] = yp[0] - y[1]
    out[1] = yp[1] + w * w * y[0]


@numba.njit(cache=True)
def _damped_with_work(t, y, yp, args, out):
    """q' = u, u' = -w^2 q - c u, and with a third unknown its dissipated work
    W' = c u^2, a quadrature (args[0] = [w, zeta], c = 2 zeta w)."""
    w, z = args[0][0], args[0][1]
    c = 2.0 * z * w
    out[0] = yp[0] - y[1]
    out[1] = yp[1] + w * w * y[0] + c * y[1]
    if out.size > 2:
        out[2] = yp[2] - c * y[1] * y[1]


def _run_oscillator(omega, t_end, rho, fixed_step=None, rtol=1e-6, atol=1e-9,
                    t_out=None):
    y0 = np.array([1.0, 0.0])
    yp0 = np.array([0.0, -omega * omega])
    ga = GeneralizedAlpha(_oscillator, (np.array([omega]),), 0.0, y0, yp0, t_end, rtol,
                          atol, rho_inf=rho, second_order=1, fixed_step=fixed_step)
    t_out = np.array([t_end]) if t_out is None else np.asarray(t_out)
    n, y, _ = ga.advance(t_out)
    assert ga.status == "finished" and n == len(t_out)
    return y, ga


def _galpha_map(a, h, rho):
    """(2n x 2n) matrix of one step for y' = A y: solve
    v_n + am (v1 - v_n) = A (y_n + af (y1 - y_n)), y1 = y_n + h v_n + h g (v1 - v_n)."""
    am, af, g, _ = galpha_coefficients(rho)
    n = a.shape[0]
    cols = []
    for e in np.eye(2 * n):
        y, v = e[:n], e[n:]
        lhs = am / (h * g) * np.eye(n) - af * a
        rhs = (1 - af) * a @ y - v + am / (h * g) * (y + h * v)
        y1 = np.linalg.solve(lhs, rhs)
        cols.append(np.concatenate([y1, v + (y1 - y - h * v) / (h * g)]))
    return np.array(cols).T


@pytest.mark.parametrize("rho", [1.0, 0.9, 0.5, 0.0])
def test_second_order_convergence_on_a_linear_oscillator(rho):
    """Fixed steps h, h/2, h/4 on q'' = -(2 pi)^2 q: the error at t = 0.8 (not a
    turning point, where the phase error would enter only squared) falls 4 times per
    halving (observed orders within 0.1 of 2), and the step agrees with the numpy
    reference of the method to rounding."""
    w = 2.0 * np.pi
    errors = []
    for h in (0.01, 0.005, 0.0025):
        y, _ = _run_oscillator(w, 0.8, rho, fixed_step=h)
        errors.append(abs(y[0, 0] - np.cos(w * 0.8)))
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(orders - 2.0) < 0.1), orders
    y, _ = _run_oscillator(w, 0.8, rho, fixed_step=0.01)
    step = _galpha_map(np.array([[0.0, 1.0], [-w * w, 0.0]]), 0.01, rho)
    z = np.linalg.matrix_power(step, 80) @ np.array([1.0, 0.0, 0.0, -w * w])
    assert abs(y[0, 0] - z[0]) < 1e-9


@pytest.mark.parametrize("rho, steps", [(0.9, 100), (0.5, 25)])
def test_an_unresolved_mode_loses_rho_inf_per_step(rho, steps):
    """h omega = 1e4 and 1e6: the amplitude after `steps` fixed steps is the one the
    numpy reference of the method gives, and the spectral radius of its step matrix
    tends to rho_inf as h omega grows: the step matrix has a double eigenvalue at
    infinity, so the approach goes as (h omega)^(-1/2), measured 0.41 (rho_inf 0.9)
    and 0.65 (0.5) times it; the bound is 0.7 times it."""
    h = 1.0
    for hw in (1e4, 1e6):
        near = 0.7 / np.sqrt(hw)
        w = hw / h
        y, _ = _run_oscillator(w, steps * h, rho, fixed_step=h, atol=1e-12, rtol=1e-10)
        step = _galpha_map(np.array([[0.0, 1.0], [-w * w, 0.0]]), h, rho)
        z = np.linalg.matrix_power(step, steps) @ np.array([1.0, 0.0, 0.0, -w * w])
        amp = np.hypot(y[0, 0], y[0, 1] / w)
        assert abs(amp - np.hypot(z[0], z[1] / w)) < 1e-6 * amp
        radius = max(abs(np.linalg.eigvals(step)))
        assert 0.0 <= radius - rho < near


def test_rho_one_keeps_the_energy_of_an_undamped_beam_at_large_steps(tmp_path):
    """rho_inf = 1 (the implicit midpoint rule) on a linear beam (no geometric
    stiffness, no gravity, no damping), released from a bent state with its base
    fixed, at a step 100 times its first period (h omega ~ 600 for the first mode,
    far more for the highest): the strain plus kinetic energy stays at its initial
    value to 1e-9, where a rho_inf < 1 run loses most of it."""
    from flexmbs.elements import material, round_tube_section
    from flexmbs.model.description import Model

    def beam(rho):
        m = Model("cantilever", gravity=(0.0, 0.0, 0.0))
        m.add_beam_body("beam", points=[[0, 0, 0], [1.0, 0, 0]],
                        section=round_tube_section(0.02, 0.0015),
                        material=material(7e10, 2700.0, shear_modulus=2.6e10),
                        elements=4, fixed={0: "all"}, geometric="none",
                        initial=[0.0, 0.0, 0.001, 0.0, 0.0, 0.0] * 4)
        m.add_joint("base", "fixed", parent="ground", child="beam")
        return simulate(m, None, t_end=10.0, method="galpha", rho_inf=rho,
                        fixed_step=0.1, rtol=1e-12, atol=1e-14, output_step=0.1)

    keep = beam(1.0)
    assert keep.status == "finished"
    e = keep.energy
    total = e[:, 0] + e[:, 2]
    assert total[0] > 0.0
    assert np.abs(total - total[0]).max() < 1e-9 * total[0]
    lose = beam(0.9)
    lost = lose.energy[:, 0] + lose.energy[:, 2]
    assert lost[-1] < 0.5 * lost[0]


def test_error_control_meets_the_tolerance_on_the_oscillator():
    """Variable step: the error after 9.8 periods (away from a turning point, where
    the phase error would enter squared) is below the sum of the local errors in
    the energy norm (q, u / omega), in which the oscillator's flow keeps lengths:
    the test bounds the positions' part by rtol |q| + atol <= 2 tol, and the speeds'
    part is of the same size (the same C h^3 omega^3), so 4 nsteps tol (measured:
    2.0 nsteps tol at 1e-7, 0.9 at 1e-5); the error falls with the tolerance as
    tol^(2/3) (second order: the global error goes as h^2, the steps as
    tol^(-1/3)), within a factor 2 per two decades (measured 18.7 and 21.2 against
    21.5); the step count grows as tol^(-1/3) within a factor 1.5."""
    w = 2.0 * np.pi
    errors, steps = [], []
    for tol in (1e-5, 1e-7, 1e-9):
        y, ga = _run_oscillator(w, 9.8, 0.9, rtol=tol, atol=tol)
        errors.append(abs(y[0, 0] - np.cos(w * 9.8)))
        steps.append(ga.statistics()["nsteps"])
        assert errors[-1] < steps[-1] * 4 * tol
    ratio = np.array(steps[1:]) / np.array(steps[:-1])
    assert np.all((ratio > 100 ** (1 / 3) / 1.5) & (ratio < 100 ** (1 / 3) * 1.5)), steps
    fall = np.array(errors[:-1]) / np.array(errors[1:])
    assert np.all((fall > 100 ** (2 / 3) / 2) & (fall < 100 ** (2 / 3) * 2)), errors


def test_pendulum_converges_at_second_order():
    """CHAIN-1 planar (a swinging rigid pendulum, nonlinear): fixed steps h, h/2, h/4
    against DOP853 at rtol 1e-13; the observed orders are within 0.2 of 2."""
    model = chain_model(1, "planar")
    ref = simulate(model, None, t_end=1.0, method="dop853", rtol=1e-13, atol=1e-15,
                   output_step=0.1)
    errors = []
    for h in (0.01, 0.005, 0.0025):
        sim = simulate(model, None, t_end=1.0, method="galpha", fixed_step=h,
                       rho_inf=0.8, rtol=1e-12, atol=1e-14, output_step=0.1)
        errors.append(np.abs(sim.y[-1, :2] - ref.y[-1, :2]).max())
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(orders - 2.0) < 0.2), orders


def test_galpha_agrees_with_bdf_on_h2():
    """H2 (1 element), 1 s: galpha at rtol 1e-7 and bdf at rtol 1e-10 give the same
    joint angles to 1e-4 rad and tip deflections to 1e-5 m (0.1 % of the largest):
    the error control bounds the positions' local errors, whose sum over the ~10^4
    steps is at most 10^4 (rtol |q| + atol), 1.5e-3 rad and 2.4e-5 m."""
    model = huang_two_link(1, t_end=1.0)
    ref = simulate(model, None, method="bdf", rtol=1e-10, atol=1e-12, output_step=0.01)
    sim = simulate(model, None, method="galpha", rtol=1e-7, atol=1e-9, output_step=0.01)
    assert sim.status == "finished"
    assert np.abs(sim.sensors[:, :2] - ref.sensors[:, :2]).max() < 1e-4
    assert np.abs(sim.sensors[:, 5:8] - ref.sensors[:, 5:8]).max() < 1e-5


def test_galpha_agrees_with_bdf_on_h8():
    """H8 (Huang's eight-link arm: a spherical joint, a prism, two beams, PD
    actuators), 0.5 s: galpha at rtol 1e-6 (1 065 steps) and bdf at rtol 1e-9 give the
    same joint coordinates to ten times rtol of angles of order 1 (measured 5.3e-7
    rad) and the same tip deflections to 1e-5 m (measured 3.1e-6 m)."""
    from flexmbs.model.library import huang_eight_link

    model = huang_eight_link(t_end=0.5)
    ref = simulate(model, None, method="bdf", rtol=1e-9, atol=1e-11, output_step=0.01)
    sim = simulate(model, None, method="galpha", rtol=1e-6, atol=1e-8, output_step=0.01)
    assert sim.status == "finished"
    assert np.abs(sim.sensors[:, :10] - ref.sensors[:, :10]).max() < 1e-5
    assert np.abs(sim.sensors[:, 10:] - ref.sensors[:, 10:]).max() < 1e-5


def _h2_galpha_run(elements, t_end, rtol, fresh_every_step):
    """Joint angles of H2 at 50 outputs and the run's counters; with
    `fresh_every_step` the iteration matrix is differenced afresh at every step
    (I_FORCE_SETUP set before each step, the driver stepped one step a call)."""
    from flexmbs import compile_model
    from flexmbs.simulation import build_system, make_integrator
    from flexmbs.solvers import bdf_kernels as K

    cm = compile_model(huang_two_link(elements, t_end=t_end))
    driver = make_integrator("galpha", build_system(cm), 0.0, cm.initial_state(), t_end,
                             rtol, rtol / 100).driver
    t_out = np.linspace(t_end / 50, t_end, 50)
    rows = []
    while driver.status == "running":
        if fresh_every_step:
            driver._s.iv[K.I_FORCE_SETUP] = 1
        _, y, _ = driver.advance(t_out[len(rows):], max_steps=1 if fresh_every_step else None)
        rows.extend(y[:, :2])
    assert driver.status == "finished"
    return np.array(rows), driver.statistics()


def test_galpha_keeps_its_iteration_matrix_over_steps():
    """H2 with 4 elements, 1 s at rtol 1e-5: the iteration matrix is kept over steps
    (re-formed from the mass hook after 20 steps or a slowly converging step,
    refactored at its new cj when the step changes: bdf_kernels._nls,
    REFRESH_GALPHA), so that it is built (differences or mass hook) at a tenth of the
    step attempts, against a run that differences it afresh at every step; the
    steps are the same to a few in a thousand, and the joint angles of the two runs
    differ by a twentieth of what either differs from a run at rtol 1e-7 (measured:
    2 624 steps and 418 rejected against 2 637 and 420; 326 built and 1 127 factored
    against 2 637 and 3 057; 3.3 Newton updates an attempt against 2.6 on the exact
    matrix, 10 000 residuals against 13 314 with the differences; angles 1.3e-6 rad
    apart, 2.5e-5 from the tighter run)."""
    kept, st = _h2_galpha_run(4, 1.0, 1e-5, False)
    fresh, st_fresh = _h2_galpha_run(4, 1.0, 1e-5, True)
    tight, _ = _h2_galpha_run(4, 1.0, 1e-7, False)
    attempts = st["nsteps"] + st["nrejected"]
    fresh_attempts = st_fresh["nsteps"] + st_fresh["nrejected"]
    assert st["njac"] + st["nmass"] < 0.15 * attempts
    assert st["nlu"] < 0.5 * attempts
    assert st_fresh["njac"] >= st_fresh["nsteps"]
    assert abs(st["nsteps"] - st_fresh["nsteps"]) < 0.02 * st_fresh["nsteps"]
    assert st["nnewton"] / attempts < 1.4 * st_fresh["nnewton"] / fresh_attempts
    assert st["nres"] < st_fresh["nres"]
    assert np.abs(kept - fresh).max() < 0.1 * np.abs(fresh - tight).max()


def test_the_four_bar_stays_closed_under_galpha():
    """The four-bar's cut joint (stabilised index-2 form) under galpha at rtol 1e-8:
    galpha enforces the constraint rows at the alpha point of each step, so that the
    residuals at the step ends are the method's defect, O(h^2) per step and damped
    by rho_inf from one step to the next: measured 2e-16 (positions) and 6e-11
    (velocities); they stay below 1e-12 and 1e-9 over 2 s."""
    from test_closed_loops import _four_bar_sensors

    sim = simulate(_four_bar_sensors(), None, t_end=2.0, method="galpha", rtol=1e-8,
                   atol=1e-10, output_step=0.02)
    assert sim.status == "finished"
    residual = np.abs(sim.sensors[:, 5:15])
    assert residual[:, :5].max() < 1e-12
    assert residual[:, 5:].max() < 1e-9


def test_the_flexible_four_bar_re_forms_its_iteration_matrix(monkeypatch):
    """The flexible four-bar (a closed loop: no positions eliminated) under galpha,
    whose every change of step changes cj: the iteration matrix is re-formed from the
    mass hook (R + cj A, bdf_kernels._reform_with_mass) or refactored at the new cj
    from the kept R and A (_refactor_kept) instead of differenced again (measured over
    0.02 s: 839 steps, 42 difference Jacobians, 288 re-formed and 523 factorizations,
    7.6 residuals a step; without the hook, 291 difference Jacobians of 65 residuals,
    26 a step). The joint angles are those of the run without the hook to well
    within the tolerance (rtol 1e-5 of angles ~0.05 rad; both 1.3e-7 from bdf at
    1e-8)."""
    from flexmbs import load_model
    from flexmbs.simulation import run as simulation

    model = load_model("data/models/four_bar_flexible.toml")

    def run():
        return simulate(model, None, t_end=0.02, method="galpha", rtol=1e-5,
                        atol=1e-7, output_step=0.001)
    sim = run()
    assert sim.status == "finished"
    st = sim.statistics
    assert st["nlu"] - st["njac"] > 5 * st["njac"]   # factored without differences
    assert st["nres"] < 10 * st["nsteps"]
    build = simulation.build_system

    def without_hook(*args, **kw):
        system = build(*args, **kw)
        system.dae_mass = None
        return system
    monkeypatch.setattr(simulation, "build_system", without_hook)
    plain = run()
    assert plain.statistics["nmass"] == 0
    assert plain.statistics["njac"] > 0.25 * plain.statistics["nsteps"]
    assert plain.statistics["nres"] > 2 * st["nres"]
    assert np.abs(sim.sensors[:, :2] - plain.sensors[:, :2]).max() < 1e-6


def _damped_run(omega, rho, work, quadrature, h=1e-3, t_end=0.02):
    q0 = 1e-3
    n = 3 if work else 2
    y0, yp0 = np.zeros(n), np.zeros(n)
    y0[0], yp0[1] = q0, -omega * omega * q0
    ga = GeneralizedAlpha(_damped_with_work, (np.array([omega, 1.0]),), 0.0, y0, yp0, t_end,
                          1e-8, 1e-10, rho_inf=rho, second_order=1, fixed_step=h,
                          quadrature=np.array([False, False, True]) if quadrature else None)
    done, y, _ = ga.advance(np.array([t_end]))
    return ga, (y[0] if done else None)


@pytest.mark.parametrize("omega, rho", [(2 * np.pi * 100, 1.0), (2 * np.pi * 1e4, 0.9)])
def test_a_work_quadratic_in_the_speeds_is_left_out_of_the_newton_rate(omega, rho):
    """A critically damped mode and its dissipated work W' = c u^2 at a fixed 1 ms step
    (h omega = 0.63, and 63 as a stiff beam mode): the work's first Newton update,
    linear in the speed's, is undone by its second while the motion has converged,
    and measured in the rate that failed the iteration at the first step. Left out of
    the rate (`quadrature`), the step converges; the motion is that of the system
    without the work, and at rho_inf = 1 (the implicit midpoint rule, whose step
    loses exactly h c u_mid^2) the work closes the energy balance to the tolerance."""
    failed, _ = _damped_run(omega, rho, work=True, quadrature=False)
    assert failed.status == "failed" and "Newton" in failed.message
    ga, y = _damped_run(omega, rho, work=True, quadrature=True)
    assert ga.status == "finished"
    plain, y2 = _damped_run(omega, rho, work=False, quadrature=False)
    assert plain.status == "finished"
    assert abs(y[0] - y2[0]) < 1e-10 * 1e-3 and abs(y[1] - y2[1]) < 1e-10 * omega * 1e-3
    if rho == 1.0:
        e0 = 0.5 * (omega * 1e-3) ** 2
        e1 = 0.5 * omega**2 * y[0] ** 2 + 0.5 * y[1] ** 2
        assert abs(e1 + y[2] - e0) < 1e-8 * e0


def test_the_newton_rate_norm_leaves_out_the_quadratures_however_large():
    """_wrms_newton's two norms against numpy's: every component, and all but the
    quadratures (mask MASK_QUADRATURE), when the quadratures' update outweighs the
    rest's by 1e20 (a difference of the two sums would leave nothing of the rest)."""
    from flexmbs.solvers.bdf_kernels import MASK_QUADRATURE, _wrms_newton

    v = np.array([3e-6, -2e-5, 4e14, 1e-3])
    w = np.array([1e3, 2e2, 1e2, 1e1])
    mask = np.array([1.0, 1.0, MASK_QUADRATURE, 0.0])
    full, rate = _wrms_newton(v, w, mask, 1e-3, 1)
    x = v * w * np.array([1.0, 1.0, 1.0, 1e-3])  # an index-2 multiplier: h its weight
    assert full == pytest.approx(np.sqrt(np.mean(x**2)), rel=1e-15)
    assert rate == pytest.approx(np.sqrt(np.sum(x[[0, 1, 3]] ** 2) / 4), rel=1e-15)


def test_a_failing_run_fails_with_a_status_and_an_intact_file(tmp_path):
    """A link of no mass and no inertia (M* singular from the start): the run fails
    with the iteration matrix named, and the file holds the status and the state."""
    from test_bdf_models import _forced

    path = tmp_path / "bad.h5"
    sim = simulate(_forced(0.0, 0.0), path, t_end=2.0, method="galpha")
    assert sim.status == "failed" and "iteration matrix" in sim.message
    res = open_result(path)
    assert res.status == f"failed: {sim.message}"
    assert res.solver["method"] == "galpha"
    assert res.solver["nsteps"] == sim.statistics["nsteps"]
    assert np.all(np.isfinite(res.q))


def test_settings_are_checked_and_recorded(tmp_path):
    from flexmbs import ModelError

    model = chain_model(1, "planar")
    with pytest.raises(ModelError, match="rho_inf"):
        model.set_solver(rho_inf=1.5)
    with pytest.raises(ModelError, match="fixed_step"):
        model.set_solver(fixed_step=-1.0)
    path = tmp_path / "p.h5"
    simulate(model, path, t_end=0.1, method="galpha", rho_inf=0.7, fixed_step=0.01)
    res = open_result(path)
    assert res.solver["method"] == "galpha"
    assert res.solver["nsteps"] == 10
