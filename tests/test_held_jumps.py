"""A held input that jumps at a controller's sample, carried across by BDF without a
restart: the history moved by the jump's Taylor polynomial (bdf_kernels.
bdf_carry_jump) against the points it must pass through, and a sampled speed loop
on a DC motor against the exact recursion of its zero-order hold."""

import math

import numba
import numpy as np
import pytest
from test_controllers import J, rotor

from flexmbs.model.timefunctions import Constant, Steps
from flexmbs.simulation import simulate
from flexmbs.solvers import bdf_kernels as K
from flexmbs.solvers.bdf import BDF


@numba.njit(cache=True)
def _oscillator(t, y, yp, args, out):
    """q' = u, u' = -w^2 q - c u + f(t), z' = u^2 (a quadrature), f = args[0][0]
    + sin(3 t)."""
    f = args[0][0] + math.sin(3.0 * t)
    out[0] = yp[0] - y[1]
    out[1] = yp[1] + 40.0 * y[0] + 0.3 * y[1] - f
    out[2] = yp[2] - y[1] * y[1]


@pytest.mark.parametrize("t_stop", [0.02, 0.4, 1.3])
def test_carried_history_passes_through_the_moved_points(t_stop):
    """After the carry the history's polynomial passes through the old one's values
    at t_n - c_j (c_0 = 0, c_j = psi_{j-1}, j <= k) moved by the Taylor polynomial
    sum_m (-c_j)^m / m! d^(m): the slow reference evaluates both polynomials in
    Newton form at those points."""
    force = np.array([0.5])
    d = BDF(_oscillator, (force,), 0.0, np.array([0.1, 0.0, 0.0]), np.array([0.0, 0.0, 0.0]),
            2.0, 1e-9, 1e-11, second_order=1, calc_ic=False)
    d._s.yp[1] = -4.0 + 0.5
    d.advance([t_stop])
    s = d._s
    k = int(s.iv[K.I_KUSED])
    c = np.concatenate(([0.0], s.psi[:k]))
    t_n = d.t
    old = np.array([d.interpolate(t_n - cj)[0] for cj in c])
    taylor = np.array([[0.0, 0.7, -0.2], [0.7, 0.05, 0.3]])
    move = np.array([sum((-cj) ** (m + 1) / math.factorial(m + 1) * taylor[m]
                         for m in range(len(taylor))) for cj in c])
    yp = d.yp
    d.go_on_across_jump(2.0, taylor)
    new = np.array([d.interpolate(t_n - cj)[0] for cj in c])
    scale = np.abs(old).max() + np.abs(move).max()
    assert np.abs(new - (old + move)).max() < 1e-13 * scale
    assert np.array_equal(d.yp, yp + taylor[0])
    assert d.status == "running" and d.t_end == 2.0


def test_carried_run_follows_the_jumped_forces():
    """A jump df of the force carried across (d' = (0, df, 0), d'' = (df, -0.3 df,
    2 u df)) gives the run that starts afresh at the jump, within the tolerance:
    the same order and step go on."""
    force = np.array([0.5])
    y0 = np.array([0.1, 0.0, 0.0])
    yp0 = np.array([0.0, -4.0 + 0.5, 0.0])
    carried = BDF(_oscillator, (force,), 0.0, y0, yp0, 0.6, 1e-10, 1e-12, second_order=1,
                  calc_ic=False)
    carried.advance([0.6])
    t1, y1 = carried.t, carried.y
    force[0] = 1.5
    u = y1[1]
    carried.go_on_across_jump(1.2, np.array([[0.0, 1.0, 0.0], [1.0, -0.3, 2.0 * u]]))
    assert u == y1[1]
    _, ya, _ = carried.advance([1.2])
    yp1 = np.zeros(3)
    _oscillator(t1, y1, np.zeros(3), (force,), yp1)
    fresh = BDF(_oscillator, (force,), t1, y1, -yp1, 1.2, 1e-10, 1e-12, second_order=1,
                calc_ic=False)
    _, yb, _ = fresh.advance([1.2])
    assert np.abs(ya[0, :2] - yb[0, :2]).max() < 1e-8


def test_sampled_speed_loop_is_the_exact_hold_recursion():
    """A speed loop sampled every T on a DC motor without inductance: J w' = A V - B w,
    V_k = g (r - w_k) held, so w_k+1 = w_k e^(-B T / J) + A V_k / B (1 - e^(-B T /
    J)); every sample a held jump carried across (no restart), the energy balance
    closed."""
    sim = simulate(_speed_loop(), progress=False)
    assert sim.success, sim.message
    scale = np.abs(_HOLD_RECURSION).max()
    assert _hold_error(sim) < 1e-8 * scale
    st = sim.statistics
    assert st["held_jumps"] == st["breakpoints"] == int(round(0.3 / SPEED_LOOP[-1])) - 1
    assert st["njac"] < 10
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    # the works' local errors, up to rtol (1e-10) of them a step, over the steps
    assert np.abs(total - total[0]).max() < 1e-10 * st["nsteps"] * e[-1, 0]


SPEED_LOOP = (5.0, 0.8, 0.05, 0.06, 2.0, 1.5, 0.4, 10.0, 0.002)
"""n, eta, kt, ke, R, Ka, g, r, T of the sampled speed loop."""


def _speed_loop(method="bdf"):
    """The rotor on a DC motor under a speed loop sampled every T (SPEED_LOOP)."""
    n, eta, kt, ke, R, Ka, g, r, T = SPEED_LOOP
    m = rotor(0.3)
    m.actuators.clear()
    m.sensors.pop("torque")
    m.add_actuator("motor", joint="axle", type="dc_motor", voltage=Constant(0.0),
                   gear_ratio=n, efficiency=eta, torque_constant=kt,
                   back_emf_constant=ke, resistance=R, amplifier_gain=Ka)
    m.add_sensor("rate", "joint_rate", joint="axle")
    m.add_controller("speed", actuator="motor", command="voltage", sample_time=T, inputs=[
        {"joint": "axle", "rate": True, "gain": g, "setpoint": Constant(r)}])
    m.set_solver(method=method)
    return m


def _hold_recursion():
    """w_k of the exact zero-order hold: w_k+1 = w_k e^(-B T / J) + A V_k / B (1 -
    e^(-B T / J)), V_k = g (r - w_k)."""
    n, eta, kt, ke, R, Ka, g, r, T = SPEED_LOOP
    A, B = n * eta * kt * Ka / R, n * n * eta * kt * ke / R
    decay = math.exp(-B * T / J)
    w = [0.0]
    for _ in range(int(round(0.3 / T))):
        w.append(w[-1] * decay + A * g * (r - w[-1]) / B * (1.0 - decay))
    return np.array(w)


_HOLD_RECURSION = _hold_recursion()


def _hold_error(sim):
    """The largest distance of the run's rate at the samples from the recursion."""
    T = SPEED_LOOP[-1]
    at = np.rint(sim.t / T).astype(int)
    on = np.abs(sim.t - at * T) < 1e-12
    return np.abs(sim.sensor("rate")[on] - _HOLD_RECURSION[at[on]]).max()


def test_galpha_carries_the_sampled_loop_s_jumps(monkeypatch):
    """galpha across the speed loop's samples (galpha_kernels.galpha_carry_input): its
    step, history and matrix go on, moved by the jump of the rates. Against starting
    again at every sample: no further from the exact recursion (galpha's error
    control holds the positions, the rate and the works follow to its order at the
    segment's step), in fewer steps, residuals and factorizations, and its energy
    balance no further from closed."""
    from flexmbs.solvers import bdf_integrator

    carried = simulate(_speed_loop("galpha"), progress=False)

    def start_again(self, bdf, t, y, yp, taylor):
        bdf_integrator.restart_driver(bdf, t, y, yp, self._segment_end, keep_matrix=True)

    monkeypatch.setattr(bdf_integrator.GalphaIntegrator, "_carry", start_again)
    started = simulate(_speed_loop("galpha"), progress=False)
    assert carried.success and started.success
    sc, ss = carried.statistics, started.statistics
    assert sc["held_jumps"] == ss["held_jumps"] == int(round(0.3 / SPEED_LOOP[-1])) - 1
    assert _hold_error(carried) <= _hold_error(started)
    for counter in ("nsteps", "nres", "nlu"):
        assert sc[counter] < ss[counter]
    assert _balance_error(carried) <= _balance_error(started)


def _balance_error(sim):
    """The largest drift of the energy balance (kinetic, potential, elastic, input
    work less the dissipated) over the run."""
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    return np.abs(total - total[0]).max()


def _restarting(monkeypatch):
    """Every sample a restart of the driver (no held breakpoint)."""
    from flexmbs.simulation import sampled_control

    monkeypatch.setattr(sampled_control.SampledControllers, "held_breakpoints",
                        lambda self, own: np.zeros(0))


def test_aligned_step_spreads_the_segment_evenly():
    """bdf_kernels._aligned_step: r / ceil(r / h), never longer than the proposal h,
    n equal steps reaching r; the last step kept to the bit where it reaches r in as
    many steps (within half the snap), a longer one taken where the proposal
    reaches r in fewer."""
    snap = K.TSTOP_FUZZ * K.EPS
    r = 1e-3
    for h in (1e-3, 2.5e-3, 4e-4, 3.3e-4, 1.01e-4, 1e-4):
        a = K._aligned_step(h, 0.0, r, snap)
        n = round(r / a)
        assert a <= h * (1 + 1e-12) or a == r
        assert abs(n * a - r) < 1e-15 and n == max(1, math.ceil(r / h - 1e-9))
    last = r / 3 * (1 + 1e-14)  # three steps of it reach r within the snap
    assert K._aligned_step(last, last, r, snap) == last
    assert K._aligned_step(1.2 * last, last, r, snap) == last  # still three steps
    assert K._aligned_step(2 * last, last, r, snap) == r / 2   # two are enough
    assert K._aligned_step(0.9 * last, last, r, snap) == r / 4  # the error asked less
    assert K._aligned_step(last, last, r / 3, snap) == last   # the last step of three


def test_aligned_steps_keep_the_order_up(monkeypatch):
    """The speed loop at rtol 1e-8: its segments of one sample stepped evenly, the
    step the same from sample to sample, so that the steps at constant step and
    order go on counting across the held jumps and the order rises as between
    samples of a smooth run (IDA raises it after k + 1 such steps). The steps end on
    the samples: one step a sample is the least a run can take; the aligned run
    takes less than 1.5 (200 for 149 samples, most at order 5), where the last step
    of each sample cut to end on it kept the order at 3 (358 steps). Its rate at the
    samples agrees with the exact recursion of the hold within the tolerance, and
    with a run that starts again at every sample (order 1 from each sample on)
    within that run's own distance from it."""
    from flexmbs.solvers import bdf_integrator

    def run():
        m = _speed_loop()
        m.set_solver(method="bdf", rtol=1e-8, atol=1e-10)
        sim = simulate(m, progress=False)
        assert sim.success, sim.message
        return sim

    aligned = run()
    st = aligned.statistics
    samples = st["held_jumps"]
    assert samples == int(round(0.3 / SPEED_LOOP[-1])) - 1
    assert samples <= st["nsteps"] < 1.5 * samples
    orders = np.asarray(st["order_counts"])
    assert orders[3:].sum() > 0.5 * st["nsteps"]
    assert 0.0 < st["step_loop_time"] < st["wall_time"]  # the rest: Python between samples
    monkeypatch.setattr(bdf_integrator.BdfIntegrator, "aligns_steps", False)
    cut = run()
    assert np.asarray(cut.statistics["order_counts"])[3:].sum() < 0.5 * cut.statistics["nsteps"]
    assert cut.statistics["nsteps"] > 1.5 * samples
    monkeypatch.undo()
    _restarting(monkeypatch)
    restarted = run()
    assert "held_jumps" not in restarted.statistics
    scale = np.abs(_HOLD_RECURSION).max()
    assert _hold_error(aligned) < 1e-8 * scale
    # the restarted run, at orders 1 and 2 over 3 800 steps, is the further from the
    # recursion (1.9e-7 rad/s against 9e-11): they agree within its distance
    assert _hold_error(aligned) <= _hold_error(restarted)
    difference = np.abs(aligned.sensor("rate") - restarted.sensor("rate")).max()
    assert difference <= _hold_error(restarted) + 1e-8 * scale


def test_runs_without_held_breakpoints_are_not_aligned(monkeypatch):
    """The alignment acts on segments that end at a held breakpoint only: a run whose
    breakpoints are the model's own (a continuous loop on a stepped set-point)
    takes the same steps, to the bit, with and without it."""
    from flexmbs.solvers import bdf_integrator

    def run():
        m = rotor(0.3)
        m.add_controller("pd", actuator="motor", inputs=[
            {"joint": "axle", "gain": 0.8, "rate_gain": 0.05,
             "setpoint": Steps(times=(0.1, 0.2), values=(0.3, -0.2))}])
        sim = simulate(m, progress=False)
        assert sim.success, sim.message
        return sim

    plain = run()
    assert plain.statistics["breakpoints"] >= 2
    monkeypatch.setattr(bdf_integrator.BdfIntegrator, "aligns_steps", False)
    unaligned = run()
    assert np.array_equal(plain.y, unaligned.y)
    assert plain.statistics["nsteps"] == unaligned.statistics["nsteps"]
