"""An input that changes at the end of a generalized-alpha step, carried across without
a restart (galpha_kernels.galpha_carry_input, flexmbs.Simulator): the jump of y' it
moves the state and the history by against a slow reference, the run it gives
against the run that starts again at every change, and its order of convergence
when a controller changes its input at every step."""

import numba
import numpy as np
import pytest

import flexmbs
from flexmbs.model import Model, Steps
from flexmbs.solvers import galpha_kernels as G
from flexmbs.solvers.galpha import GeneralizedAlpha

W2, C, B = 40.0, 0.3, 5.0  # the oscillator's stiffness, damping; the lag's rate


@numba.njit(cache=True)
def _driven(t, y, yp, args, out):
    """q' = u, u' = -W2 q - C u + f, z' = -B z + 2 f: an oscillator and a first-order
    lag both driven by the input f = args[0][0]."""
    f = args[0][0]
    out[0] = yp[0] - y[1]
    out[1] = yp[1] + W2 * y[0] + C * y[1] - f
    out[2] = yp[2] + B * y[2] - 2.0 * f


def _driver(force, fixed_step=None):
    y0 = np.array([0.1, 0.0, 0.0])
    yp0 = np.array([0.0, -W2 * 0.1 + force[0], 2.0 * force[0]])
    return GeneralizedAlpha(_driven, (force,), 0.0, y0, yp0, 1.0, 1e-10, 1e-12,
                            second_order=1, fixed_step=fixed_step)


@pytest.mark.parametrize("fixed_step", [None, 1e-3])
def test_the_carry_moves_the_state_by_the_jump_of_y_prime(fixed_step):
    """The slow reference: dF the residual with the new input at the last step's
    alpha point (numpy), d' = -cj G^-1 dF with the full G = dF/dy + cj dF/dy' of the
    linear residual; v_n moves by d' (the positions by nothing), the two states before
    by d(t) = d' (t - t_n) + d'' (t - t_n)^2 / 2 (d'' of a position: its speed's
    d'). And d' is the jump of the acceleration, Df, to the terms the step does not
    resolve: (C + W2 / cj) / cj of it."""
    force = np.array([0.5])
    d = _driver(force, fixed_step)
    d.advance([0.37])
    s = d._s
    t_n, h1, h2 = d.t, s.fs[G.F_HUSED], s.alpha[G.C_HPREV]
    cj = s.fs[G.F_CJOLD]
    yy, yyp = s.yy.copy(), s.yyp.copy()
    before = (s.yp.copy(), s.phi[G.P_Y_PREV].copy(), s.phi[G.P_YP_PREV].copy(),
              s.phi[G.P_Y_PREV2].copy(), s.y.copy())
    force[0] = 1.7
    jump = 1.7 - 0.5
    assert d.carry_input_jump() == G.CARRIED
    df = np.zeros(3)
    _driven.py_func(0.0, yy, yyp, (force,), df)
    g = np.array([[cj, -1.0, 0.0], [W2, cj + C, 0.0], [0.0, 0.0, cj + B]])
    dp = -cj * np.linalg.solve(g, df)
    yp, y1, v1, y2, y = before
    # G of the kernel is a difference Jacobian: its entries within sqrt(eps) of g's
    a = s.yp - yp
    tol = 10 * np.sqrt(np.finfo(float).eps) * np.linalg.cond(g)
    assert a[0] == 0.0 and np.abs(a - [0.0, dp[1], dp[2]]).max() <= tol * np.abs(dp).max()
    b = np.array([a[1], 0.0, 0.0])
    assert np.array_equal(s.y, y) and d.t == t_n
    # the moves themselves: to round-off
    c2 = h1 + h2
    for got, want in ((s.phi[G.P_Y_PREV], y1 - h1 * a + h1 * h1 / 2 * b),
                      (s.phi[G.P_YP_PREV], v1 + a - h1 * b),
                      (s.phi[G.P_Y_PREV2], y2 - c2 * a + c2 * c2 / 2 * b)):
        assert np.abs(got - want).max() <= 4 * np.finfo(float).eps * (np.abs(want).max() + 1.0)
    assert abs(dp[1] - jump) <= (C + W2 / cj) / cj * jump * 1.01
    assert abs(dp[2] - 2.0 * jump) <= B / cj * 2.0 * jump * 1.01


def test_a_carry_with_nothing_to_carry_from_says_so():
    """Before the first step (no alpha point, no history) the owner must start again."""
    d = _driver(np.array([0.5]))
    assert d.carry_input_jump() == G.CARRY_RESTART


def _pendulum(t_end):
    """A pendulum under gravity with a torque motor at its pivot (nonlinear)."""
    m = Model("pendulum", gravity=(0.0, 0.0, -9.81))
    m.add_rigid_body("bob", mass=1.0, com=(0.3, 0.0, 0.0), inertia=(1e-3, 1e-3, 1e-3),
                     inertia_about="com")
    m.add_joint("pivot", "revolute", parent="ground", child="bob", axis=(0, 1, 0))
    m.add_actuator("motor", joint="pivot", type="torque")
    m.add_sensor("angle", "joint_coordinate", joint="pivot")
    m.set_solver(method="galpha", t_end=t_end, rtol=1e-11, atol=1e-13)
    m.set_output(step=t_end)
    return m


def _restarting(sim):
    """The simulator with the carry turned off: every change of an input starts the
    integrator again (restart_at)."""
    sim._integ.carry_inputs = lambda t, until: False
    return sim


def _stepped(model, inputs, restart=False, **options):
    """(the states at the steps, the statistics) of `inputs` held in turn over DT."""
    sim = flexmbs.Simulator(model, **options)
    if restart:
        _restarting(sim)
    rows = [sim.state]
    for value in inputs:
        sim.step(DT, inputs={"motor.torque": float(value)})
        rows.append(sim.state)
    stats = sim.statistics
    sim.close()
    return np.array(rows), stats


DT = 2e-3


@pytest.mark.parametrize("fixed_step", [None, DT])
def test_a_carried_run_is_the_restarted_run(fixed_step):
    """A torque changed at every step, carried across or started again, against the
    exact run of the same held torques (a `steps` law at rtol 1e-11): with error
    control at rtol each within steps x rtol of it (a local error of rtol at most
    per step); with a fixed step, the carry no less accurate than the restarts.
    And the carry takes no more difference Jacobians than the restarts, fewer Newton
    iterations (its predictor has the history, a restart's y_n alone) and fewer
    residuals in all (a restart computes y' anew, the carry one residual)."""
    t_end = 0.1
    t = DT * np.arange(int(round(t_end / DT)))
    torque = 0.8 * np.sin(15.0 * t) + 0.5 * np.cos(40.0 * t)
    exact_model = _pendulum(t_end)
    exact_model.actuators["motor"].torque = Steps(tuple(t), tuple(torque))
    exact_model.set_output(step=DT)
    exact = flexmbs.simulate(exact_model, progress=False).y[:, 0]
    model = _pendulum(t_end)
    rtol = 1e-7
    model.set_solver(rtol=rtol, atol=1e-9)
    carried, sc = _stepped(model, torque, fixed_step=fixed_step)
    restarted, sr = _stepped(model, torque, restart=True, fixed_step=fixed_step)
    # the first change sets the port aside its law (new breakpoints: a restart)
    assert sc["input_carries"] >= len(t) - 2
    assert sc["input_carries"] + sc["input_restarts"] == len(t)
    assert sr["input_restarts"] == len(t)
    error_carried = np.abs(carried[:, 0] - exact).max()
    error_restarted = np.abs(restarted[:, 0] - exact).max()
    if fixed_step is None:
        bound = sc["nsteps"] * rtol * np.abs(exact).max()
        assert error_carried <= bound and error_restarted <= bound
    else:
        assert error_carried <= error_restarted
    # a restart keeps its matrix too, and its ageing (JAC_MAX_AGE re-formings) with it
    assert sc["njac"] <= sr["njac"]
    assert sc["nnewton"] < sr["nnewton"]
    assert sc["nres"] < sr["nres"] + sr["input_restarts"]


def test_a_carried_fixed_step_converges_at_second_order():
    """A controller that changes its torque at every step (zero-order hold), the step
    a control period: the error at the end against the exact run of the same held
    torques (a `steps` law, error control at rtol 1e-11) falls fourfold when the step
    halves; a carry without the move of v_n would make it first order (the old
    acceleration blended into the new one over each step)."""
    t_end = 0.2
    errors = []
    for h in (4e-3, 2e-3, 1e-3):
        t = h * np.arange(int(round(t_end / h)))
        torque = 0.8 * np.sin(15.0 * t) + 0.5 * np.cos(40.0 * t)
        ref_model = _pendulum(t_end)
        ref_model.actuators["motor"].torque = Steps(tuple(t), tuple(torque))
        ref = flexmbs.simulate(ref_model, progress=False)
        assert ref.success, ref.message
        sim = flexmbs.Simulator(_pendulum(t_end), fixed_step=h)
        for value in torque:
            sim.step(h, inputs={"motor.torque": float(value)})
        assert sim.statistics["input_carries"] >= len(t) - 2
        errors.append(abs(sim.q[0] - ref.y[-1, 0]))
        sim.close()
    assert errors[1] < errors[0] / 3.0 and errors[2] < errors[1] / 3.0
