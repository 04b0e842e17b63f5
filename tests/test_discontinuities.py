"""Discontinuities as events (flexmbs.solvers.events): the breakpoints of the time
laws, the piece a law holds over a segment, the location of a crossing, a step
set-point that both integrators land on and converge across, and a motor entering
and leaving its torque limit at the times a reference integration finds."""

from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import flexmbs
from flexmbs import simulate
from flexmbs.formats.toml_reader import loads_model
from flexmbs.kinematics.timefunctions import evaluate_time_function
from flexmbs.model.timefunctions import (
    Harmonic,
    SpinUp,
    Steps,
    Table,
    Trajectory,
    compile_time_functions,
    time_function_breakpoints,
)
from flexmbs.solvers.events import locate_crossing, next_breakpoint, sorted_times

USER_MODELS = Path(__file__).parent / "user_models"


def test_breakpoints_are_where_a_law_or_its_first_two_derivatives_jump():
    laws = [Steps(times=(0.1, 0.4), values=(0.0, 1.0)),
            Table(time=(0.0, 0.2, 0.5), value=(0.0, 1.0, 0.0), interpolation="linear"),
            Table(time=(1.0, 1.5, 2.0, 3.0), value=(0.0, 1.0, 0.5, 0.0)),
            Trajectory(times=(0.0, 0.3, 0.9), values=(0.0, 1.0, 2.0)),
            Harmonic(amplitude=1.0, omega=3.0), SpinUp(rate=2.0, duration=0.7)]
    got = time_function_breakpoints(*compile_time_functions(laws))
    np.testing.assert_array_equal(got, [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.9, 1.0, 3.0])


@pytest.mark.parametrize("law, at, before, after", [
    (Steps(times=(0.0, 0.1), values=(0.0, 2.0)), 0.1, 0.0, 2.0),
    (Table(time=(0.0, 0.1, 0.2), value=(0.0, 1.0, 0.0), interpolation="linear"), 0.1,
     1.0, 1.0),
    (Trajectory(times=(0.0, 0.1, 0.2), values=(0.0, 1.0, 3.0), profile="cubic"), 0.1,
     1.0, 1.0),
])
def test_a_law_holds_its_segment_piece_up_to_the_breakpoint(law, at, before, after):
    """At a breakpoint, the piece of the segment that ends there (its time inside
    that segment as t_piece) and the one after it; NaN: right-continuous."""
    kind, ptr, data = compile_time_functions([law])
    left, right, plain = np.zeros(3), np.zeros(3), np.zeros(3)
    evaluate_time_function(kind, ptr, data, 0, at, at - 0.05, left)
    evaluate_time_function(kind, ptr, data, 0, at, at + 0.05, right)
    evaluate_time_function(kind, ptr, data, 0, at, np.nan, plain)
    assert left[0] == pytest.approx(before) and right[0] == pytest.approx(after)
    np.testing.assert_array_equal(plain, right)
    if isinstance(law, Table):   # the rate jumps: +10 before, -10 after
        assert (left[1], right[1]) == pytest.approx((10.0, -10.0))
    if isinstance(law, Trajectory):  # the acceleration jumps
        assert left[2] == pytest.approx(-600.0) and right[2] == pytest.approx(1200.0)


def test_the_next_breakpoint_skips_the_one_the_run_is_on():
    b = np.array([0.0, 0.1, 0.5])
    assert next_breakpoint(b, 0.0, 1.0) == 0.1
    assert next_breakpoint(b, 0.1 * (1 + 1e-15), 1.0) == 0.5
    assert next_breakpoint(b, 0.5, 1.0) == 1.0
    assert next_breakpoint(b, 0.2, 0.4) == 0.4


def test_the_earliest_crossing_is_located_to_the_tolerance():
    calls = []

    def g(t):
        calls.append(t)
        return np.array([np.sin(10 * t) - 0.5, t - 0.9, np.exp(t) - 1.2])

    t, crossed, g_star = locate_crossing(g, 0.0, g(0.0), 1.0, g(1.0), 1e-14)
    assert abs(t - np.arcsin(0.5) / 10) <= 1e-14
    assert crossed.tolist() == [True, False, False] and g_star[0] >= 0.0
    assert len(calls) <= 20
    with pytest.raises(ValueError, match="no switch function"):
        locate_crossing(g, 0.0, g(0.0), 0.01, g(0.01), 1e-14)


def _time_at(sim, index, value):
    """The first time (s) coordinate `index` reaches `value` (linear between
    outputs: the outputs are dense enough for the comparisons made here)."""
    x = sim.y[:, index]
    k = int(np.argmax(x >= value))
    return sim.t[k - 1] + (value - x[k - 1]) * (sim.t[k] - sim.t[k - 1]) / (x[k] - x[k - 1])


def test_both_integrators_converge_to_one_solution_across_a_step_set_point():
    """The rotary link's set-point steps by pi/2 at t = 0.1 s: galpha and bdf land
    on the step and restart there, so as the tolerance tightens they converge to
    one solution, and bdf passes the step at rtol 1e-11.

    galpha's error falls as its second order says: its step is h ~ tol^(1/3) (the
    local error C h^3 of the third derivative is held at the tolerance), its global
    error h^2 ~ tol^(2/3), 4.6 times less per decade of tolerance (measured: 4.57e-5,
    9.9e-6, 2.15e-6 rad at rtol 1e-6, 1e-7, 1e-8, the largest over 0.3 s, reached as
    the link rings down). Stepped over, the step was seen up to a step late, a delay
    that no tolerance removed. The reaching of 0.5 rad is timed alike to 1e-6 s."""
    model = flexmbs.load_model(USER_MODELS / "rotary_link_step.toml")
    kw = dict(t_end=0.3, output_step=1e-3)
    ref = simulate(model, None, method="bdf", rtol=1e-11, atol=1e-13, **kw)
    assert ref.status == "finished", ref.message
    assert ref.statistics["breakpoints"] == 1
    hub = ref.coordinate_names.index("motor")
    errors, sims = [], {}
    for rtol in (1e-6, 1e-7, 1e-8, 1e-9):
        sims[rtol] = simulate(model, None, method="galpha", rtol=rtol, atol=rtol * 1e-2, **kw)
        errors.append(np.abs(sims[rtol].y[:, hub] - ref.y[:, hub]).max())
    order = np.log10(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(order > 0.5), (errors, order)   # tol^(2/3): 0.67 a decade
    assert errors[2] <= 3e-6 and errors[3] <= 1e-6, errors
    t_ref = _time_at(ref, hub, 0.5)
    assert abs(_time_at(sims[1e-8], hub, 0.5) - t_ref) <= 1e-6
    bdf = simulate(model, None, method="bdf", rtol=1e-8, atol=1e-10, **kw)
    assert np.abs(bdf.y[:, hub] - ref.y[:, hub]).max() <= 1e-6


ROTOR = """
[model]
name = "rotor"
gravity = [0.0, 0.0, 0.0]
[solver]
t_end = 0.6
rtol = 1e-10
atol = 1e-12
[output]
step = 0.002
[bodies.rotor]
mass = 1.0
inertia = [0.01, 0.01, 0.01]
inertia_about = "com"
[joints.shaft]
type = "revolute"
parent = "ground"
child = "rotor"
axis = [0.0, 0.0, 1.0]
[actuators.motor]
joint = "shaft"
kp = 10.0
kd = 0.5
max_torque = 1.0
[actuators.motor.setpoint]
law = "steps"
times = [0.0, 0.05]
values = [0.0, 1.0]
"""

J, KP, KD, TMAX, T_STEP = 0.01, 10.0, 0.5, 1.0, 0.05


def _rotor_reference(t_out):
    """(theta at t_out, the times it enters or leaves the torque limit) of
    J theta'' = clip(kp (r - theta) - kd theta', -max, max), r stepping from 0 to 1 at
    T_STEP: scipy's DOP853 at rtol 1e-13, one segment per branch (within the limit,
    at +max, at -max), each ended by solve_ivp's event where the raw torque crosses
    the limit in the direction that leaves the branch."""
    def raw(t, x, r):
        return KP * (r - x[0]) - KD * x[1]

    theta = np.full(len(t_out), np.nan)
    events = []
    t, x, branch, r = T_STEP, np.zeros(2), 0.0, 1.0   # at rest until the step
    theta[t_out <= T_STEP] = 0.0
    if raw(t, x, r) > TMAX:
        branch = 1.0
    while t < t_out[-1]:
        def rhs(s, z, b=branch):
            return [z[1], (raw(s, z, r) if b == 0.0 else b * TMAX) / J]

        def hi(s, z):
            return TMAX - raw(s, z, r)

        def lo(s, z):
            return TMAX + raw(s, z, r)
        hi.terminal = lo.terminal = True
        hi.direction = 1.0 if branch > 0 else -1.0
        lo.direction = 1.0 if branch < 0 else -1.0
        live = [hi, lo] if branch == 0.0 else ([hi] if branch > 0 else [lo])
        sol = solve_ivp(rhs, (t, t_out[-1]), x, method="DOP853", rtol=1e-13, atol=1e-15,
                        dense_output=True, events=live)
        inside = (t_out > t) & (t_out <= sol.t[-1])
        theta[inside] = sol.sol(t_out[inside])[0]
        t, x = sol.t[-1], sol.y[:, -1]
        if sol.status == 1:
            events.append(t)
            if branch != 0.0:
                branch = 0.0
            else:
                branch = 1.0 if raw(t, x, r) > 0 else -1.0
    return theta, events


@pytest.mark.parametrize("method, rtol, tol", [("bdf", 1e-10, 1e-8), ("galpha", 1e-9, 1e-6)])
def test_a_motor_enters_and_leaves_its_limit_where_the_reference_does(method, rtol, tol):
    """A rotor under a saturating PD motor: the run stops at the step, at the entry
    into the limit and at the exit from it (located by root finding on the step's
    interpolant), and follows the reference integration, events included."""
    model = loads_model(ROTOR)
    t_out = np.arange(1, 301) * 0.002
    theta, events = _rotor_reference(t_out)
    assert len(events) >= 1
    sim = simulate(model, None, method=method, rtol=rtol, atol=rtol * 1e-2)
    assert sim.status == "finished", sim.message
    assert sim.statistics["switch_events"] == len(events)
    assert sim.statistics["breakpoints"] == 1
    np.testing.assert_allclose(sim.y[1:, 0], theta, atol=tol, rtol=0)


@pytest.mark.parametrize("times", [[], [0.5], [3.0, 1.0, 2.0, 1.0, 3.0], [[2.0, 1.0], [1.0, 5.0]],
                                   [0.1, 0.1, 0.1], [-0.0, 0.0, 1e-300], [7, 7, 2],
                                   list(np.random.default_rng(3).integers(0, 20, 200) / 7.0)])
def test_the_breakpoints_are_the_sorted_distinct_times_as_numpy_makes_them(times):
    want = np.unique(np.asarray(times, dtype=float))
    got = sorted_times(times)
    assert got.dtype == np.float64 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
