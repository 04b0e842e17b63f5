"""flexmbs' own BDF and generalized-alpha drivers (solvers/bdf.py, galpha.py) behind
the solver interface of base.py: the model's residual F(t, y, y') = 0 stepped
inside numba, Python called once per chunk of steps to write outputs and show
progress."""

import bisect
import math
import time
import warnings
from contextlib import contextmanager

import numpy as np

from ..runtime.tuple_ref import held_ref
from . import bdf_kernels as _k
from .base import Integrator
from .bdf import BDF
from .events import BREAKPOINT_FUZZ, EPS, locate_crossing, next_breakpoint, sorted_times
from .galpha import RHO_INF, GeneralizedAlpha
from .galpha_kernels import CARRIED
from .typed_call import TypedCall

__all__ = ["BdfIntegrator", "GalphaIntegrator", "STEPS_PER_CALL", "BDF_STEP_FLOOR"]

STEPS_PER_CALL = 500
"""Steps of one call into the compiled loop; between calls the wall budget is checked."""

INDEX2_FIRST_STEP = 1e-7
"""The first step of a stabilised index-2 system, relative to the span left: IDA's
choice (0.5 over the weighted norm of y') goes far below it for a model at rest with
a tight atol, where the iteration matrix, whose conditioning grows as 1/h^2 with the
multipliers in it, no longer lets Newton's method converge; the error test shrinks a
step that is too long."""

STEPS_PER_REFRESH = 20
"""Steps between two calls of the system's `refresh` (a model with closed loops checks
there whether its independent constraint rows are still independent; the absolute
coordinates move their references). The outputs computed before a refresh are
returned before it runs, so that they are read with the model as it was."""


JUMP_DIFFERENCE = 1e-6
"""The time step of the difference that gives the jump of y'' at a held breakpoint
(BdfIntegrator._across_held_jump), relative to the last step: its truncation error
(this times the step times y''') and its rounding error (1e-16 |f| over it) both
well below what the step's error test sees."""


BDF_STEP_FLOOR = 1e-15
"""The step floor of `bdf`, relative to the span. Lower than base.STEP_FLOOR: the driver
passes a jump in the forces (a `steps` set-point) by shrinking its step until the jump's
local error is below atol, which at tight tolerances takes steps near 1e-12 of the span;
a singular M* stops it through its iteration matrix, not by crawling."""


@contextmanager
def _function_tuple_notice_silenced():
    """numba's notice that first-class function types are experimental, which it
    gives at each tuple type of the driver's functions (flexmbs.solvers.bdf), kept
    from the user, whatever the filters in force (an "error" filter would end the
    run)."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="First-class function type feature is experimental"
        )
        yield


class _EmptyHistories(dict):
    """{n: an empty (0, n) history}: a start without one, made once per size."""

    def __missing__(self, n):
        self[n] = np.zeros((0, n))
        return self[n]


_NO_HISTORY = _EmptyHistories()


def restart_driver(driver, t0, y0, yp0, t_end, keep_matrix=False, fixed_step=None,
                   h_start=None):
    """Start a BDF or GeneralizedAlpha driver again from (t0, y0, y0'), consistent,
    towards t_end, on its compiled functions and state arrays (a new driver would
    look its compiled functions up again and allocate its state: about 1 ms); its
    counters go on. The first step is the method's choice (galpha's first step of a
    start, or its fixed step `fixed_step`, cut to end at t_end; galpha keeping its
    matrix goes on with the step its error control proposed). keep_matrix: keep
    the last iteration matrix, re-formed at the new step from the mass hook when the
    step changed it (else a difference Jacobian as at a start): right when the
    forces jumped but not their derivatives (an input that changed). h_start (s): the
    first step (None: IDA's choice for BDF, galpha's as above)."""
    s = driver._s
    fs, iv = s.fs, s.iv
    t0, t_end = float(t0), float(t_end)
    if not t_end > t0:
        raise ValueError(f"t_end must be after t0 = {t0}, got {t_end}")
    had_matrix = iv[_k.I_FORCE_SETUP] == 0 and s.stats[_k.S_NLU] > 0
    if fixed_step is not None:
        fs[_k.F_H_FIXED] = min(float(fixed_step), t_end - t0)
    h_start = fs[_k.F_H_FIXED] if h_start is None else float(h_start)
    if not h_start > 0.0 and keep_matrix and isinstance(driver, GeneralizedAlpha):
        h_start = fs[_k.F_H]  # one step holds no history: the step the error asked for
    if not h_start > 0.0 and isinstance(driver, GeneralizedAlpha):
        npos = driver.positions
        h_start = driver._first_step(y0, yp0, t_end - t0, s.rtol[:npos], s.atol, npos)
    s.y[:] = y0
    s.yp[:] = yp0
    fs[_k.F_T_END] = t_end
    driver.t0, driver.t_end = t0, t_end
    driver._last_out = -np.inf
    driver._status = _k.ST_RUNNING
    driver._started = True
    start = time.perf_counter()
    driver._begin(s, t0, float(h_start), _NO_HISTORY[driver.n])
    if keep_matrix and had_matrix:
        iv[_k.I_FORCE_SETUP] = 0
    driver.wall_time += time.perf_counter() - start


def go_on(driver, t_end, fixed_step=None):
    """The driver goes on from where its last step ended towards a later t_end (s),
    its state as it is (carried across a jump): the end moved, the status running, a
    fixed step cut to the span as at a start."""
    s = driver._s
    t_end = float(t_end)
    s.fs[_k.F_T_END] = t_end
    if fixed_step is not None:
        s.fs[_k.F_H_FIXED] = min(float(fixed_step), t_end - driver.t)
    s.iv[_k.I_STATUS] = _k.ST_RUNNING
    driver.t_end = t_end
    driver._status = _k.ST_RUNNING


class BdfIntegrator(Integrator):
    """BDF orders 1-5 on `system.dae_residual` with the model's state as args.

    y'(t0) is the ODE right-hand side at t0 (consistent by construction: the model
    has no algebraic variables yet), so no initial-value iteration is run. The step
    floor is BDF_STEP_FLOOR of the span; `max_step` bounds the step. The columns of
    the iteration matrix the model knows in closed form come from its hook
    (`system.dae_jacobian`), the rest from differences; the positions are eliminated
    from the Newton iteration (`system.second_order`).

    The run goes in segments between the system's breakpoints, and a state event
    (a switch function's sign change) ends a segment where it is located
    (flexmbs.solvers.events); each segment has a driver of its own, started from the
    state where the last one ended with y' from the system's right-hand side.
    """

    name = "bdf"
    aligns_steps = True
    """A segment that ends at a held breakpoint is stepped in equal steps
    (bdf_kernels._aligned_step), the same from sample to sample where the samples
    are evenly spaced, so that the order rises across the held jumps."""

    def __init__(self, system, t0, y0, t_end, rtol, atol, max_step=np.inf):
        super().__init__(system, t0, y0, t_end, rtol, atol, max_step)
        self._settings = (rtol, atol, max_step)
        self._earlier = []      # statistics of the drivers before a restart
        self.restarts = 0
        self.breakpoints_passed = 0
        self.switch_events = []  # (t, indices of the switch functions crossed)
        self.input_restarts = 0  # restart_at calls: the inputs changed
        self.held_jumps = 0      # breakpoints passed without a restart (held inputs)
        self.input_carries = 0   # inputs changed without a restart (carry_inputs)
        self.horizon_moves = 0  # restart_at calls: the end moved on
        self._switches = None   # system.switches called without type dispatch
        self._one = (np.zeros(1), np.zeros((1, system.n)), np.zeros((1, system.n)))
        self._rates = np.zeros((1, system.n))
        self._refresh_due = False
        self._until = None       # restart_at's next output: bdf's first step ends there
        self._behind = None      # (driver, time): the last segment's, for late outputs
        breaks = system.breakpoints if system.breakpoints is not None else ()
        # sorted lists: bisecting one costs a tenth of an array's searchsorted
        self._breakpoints = sorted_times(breaks).tolist()
        held = system.held_breakpoints
        if held is None or np.any(system.algebraic if system.algebraic is not None else 0):
            held = ()  # a multiplier jumps with the forces: start again there
        self._held = sorted_times(held).tolist()
        self._same_breakpoints = False
        self._align = 0  # 1: the segment ends at a held breakpoint (aligns_steps)
        self._taylor = np.zeros((2, system.n))  # the jump's d', d'' (_across_held_jump)
        speeds = slice(system.second_order, 2 * system.second_order)
        self._full_taylor = system.error_test is None or bool(np.all(system.error_test[speeds]))
        self._bdf = self._begin_segment(self.t0, self.y)

    def _begin_segment(self, t, y, g_side=None):
        """The driver of the segment from t (to the next breakpoint or t_end), after
        the system was told the segment; g_side: the switch functions' values on
        their new side after a state event at t (None: their values at t)."""
        g = self._enter_segment(t, y, g_side)
        driver = self._start(t, y, self.system.rhs(t, y))
        if g is not None:
            driver.set_switch_reference(g)
        return driver

    def _enter_segment(self, t, y, g_side=None, keep_sides=False):
        """The segment from t: its end, the system told it, its discrete updates made
        (System.sample), and the switch functions' values (g_side, or their values at
        (t, y)) with the branches they select; returns those values (None without
        switch functions). keep_sides: an input changed at t, within the segment
        (unless the breakpoints changed since it began): the segment holds, and so
        does the discrete state unless a function is on another side than at the
        driver's last step (as within a segment's steps)."""
        system = self.system
        if not (keep_sides and self._same_breakpoints and t < self._segment_end):
            self._segment_end = next_breakpoint(self._breakpoints, t, self.t_end)
            self._same_breakpoints = True
            self._align = int(self.aligns_steps and self._segment_end < self.t_end
                              and self._on_held_breakpoint(self._segment_end))
            if system.set_segment is not None:
                system.set_segment(t, self._segment_end)
        if system.sample is not None:
            system.sample(t, y)
        if not system.nswitch:
            return None
        g = self._switch_values(t, y) if g_side is None else g_side
        if keep_sides and (g > 0.0).tobytes() == (self._bdf._s.gsw > 0.0).tobytes():
            return g  # (bytes: a tenth of np.array_equal's cost on a few functions)
        if system.switched is not None:
            system.switched(t, y, g)
        return g

    def _switch_values(self, t, y):
        g = np.zeros(self.system.nswitch)
        if self._switches is None:  # (m, ws) held as the step loop passes it
            self._switches = TypedCall(self.system.switches)
            self._switch_args = held_ref((self.system.m, self.system.ws))
        self._switches(float(t), np.ascontiguousarray(y, dtype=float), self._switch_args, g)
        return g

    def _restart(self, t, y, g_side=None, behind=None):
        """A new segment from (t, y); `behind`: the old driver serves the outputs up
        to this time (its last step holds them)."""
        self._earlier.append(self._bdf.statistics())
        self._behind = None if behind is None else (self._bdf, behind)
        self._bdf = self._begin_segment(t, y, g_side)

    def _driver_options(self):
        """The switch functions for a driver, as keyword arguments."""
        system = self.system
        if not system.nswitch:
            return {}
        return {"switches": system.switches, "nswitch": system.nswitch}

    def _start(self, t, y, yp):
        """A BDF driver from (t, y, y') to the end of the segment."""
        system = self.system
        if not np.all(np.isfinite(yp)):
            yp = np.zeros(system.n)  # the iteration matrix then reports the failure
        index2 = bool(np.any(system.algebraic)) and system.index2
        end = self._segment_end
        with _function_tuple_notice_silenced():
            return self._new_bdf(t, y, yp, end, index2)

    def _new_bdf(self, t, y, yp, end, index2):
        system = self.system
        rtol, atol, max_step = self._settings
        return BDF(system.dae_residual, (system.m, system.ws), t, y, yp, end, rtol,
                   atol, algebraic=system.algebraic, jacobian=system.dae_jacobian,
                   jacobian_columns=(None if system.dae_jacobian is None
                                     else system.dae_jacobian_columns),
                   second_order=system.second_order, mass=system.dae_mass,
                   elastic_columns=system.dae_elastic_columns, h_max=max_step,
                   h_min=BDF_STEP_FLOOR * self.t_end - BDF_STEP_FLOOR * self.t0,
                   calc_ic=False, index2=index2, layout=system.dae_layout,
                   h0=INDEX2_FIRST_STEP * (end - t) if index2 else None,
                   error_test=system.error_test, quadrature=system.quadrature,
                   **self._driver_options())

    def _locate_switch(self, bdf, t_out, y_out, n):
        """After a driver stopped on a state event: the crossing t* on its last step,
        the outputs in (step start, t*] from its interpolant (written from y_out[n]),
        and the restart at t* on the new side. Returns the number of outputs
        written. The functions at the step's start are those the driver checked
        against (at a restart on a crossing, the new sides, which the state there
        may give to round-off on the old)."""
        t_lo, t_hi = bdf.step_start, bdf.t
        g_lo = bdf.switch_reference
        g_hi = bdf.switch_values

        def g_of(t):
            return self._switch_values(t, bdf.interpolate(t)[0])

        tol = 4.0 * np.finfo(float).eps * max(abs(t_hi), 1.0) + 1e-12 * (t_hi - t_lo)
        t_star, crossed, g_star = locate_crossing(g_of, t_lo, g_lo, t_hi, g_hi, tol)
        # each crossed function on its new side: its value at the step's end unless
        # that went back over (two crossings in one step), then its value at t*
        side = np.where(crossed & (np.sign(g_hi) == -np.sign(g_lo)), g_hi, g_star)
        self.switch_events.append((t_star, np.flatnonzero(crossed)))
        y_star = bdf.interpolate(t_star)[0]
        self._restart(t_star, y_star, np.where(crossed, side, g_star), behind=t_star)
        return self._outputs_behind(t_out, y_out, n)

    def set_breakpoints(self, times):
        """The system's breakpoints from now on (s; the laws of the model changed:
        an input port set aside its law, flexmbs.model.ports)."""
        self._breakpoints = sorted_times(times).tolist()
        self._same_breakpoints = False

    def restart_at(self, t, y, t_end=None, inputs=True, until=None):
        """Go on from the state y at time t (s), which the outputs reached, as from a
        breakpoint: the forces jumped there (`inputs`: an input of the model changed:
        the forces, not their derivatives, so the driver starts again in place with
        its iteration matrix) or the run goes on to a later `t_end` (s). The steps
        the integrator took beyond t are forgotten. `until` (s): the next output
        asked for, which bdf's first step does not pass (_restart_driver)."""
        self._until = until
        if t_end is not None:
            if not t_end > t:
                raise ValueError(f"t_end must be after t = {t}, got {t_end}")
            self.t_end = float(t_end)
            self.horizon_moves += 1
        if type(y) is not np.ndarray or y.dtype != np.float64:
            y = np.asarray(y, dtype=float)
        self.status, self.message = "running", ""
        self.t, self.y = float(t), y.copy()
        self._behind = None
        self._refresh_due = False
        self.input_restarts += bool(inputs)
        g = self._enter_segment(t, y, keep_sides=t_end is None)
        self._restart_driver(t, y, self.system.rhs(t, y))
        if g is not None:
            self._bdf.set_switch_reference(g)

    def carry_inputs(self, t, until):
        """After an input of the model changed at t (s), the time of the last output:
        True when the driver went on across the change without starting again
        (GalphaIntegrator); else the caller calls restart_at. Not for BDF."""
        return False

    def _restart_driver(self, t, y, yp):
        """The driver started again in place from (t, y, y') to the segment's end,
        where the state is continuous and the forces (the right-hand side) jumped:
        the history of y' is no longer the solution's, so the order drops to 1 (the
        step from y_n and y'_{n+1} alone, y'_n the new right-hand side); the
        iteration matrix dF/dy + cj dF/dy' is kept, as the forces' derivatives did
        not jump; and the step is the last one accepted, as the solution's scale
        in time did not change (IDA's first step instead, chosen for a start from
        nothing, is a thousandth of the span or less, and takes a dozen steps of
        doubling to get back). The error test of the first step, at order 1,
        shortens it where the jump asks for less; and it ends no later than the next
        output asked for (`until` of restart_at): a controller that changes its
        inputs every period restarts there, and a step beyond would be thrown away,
        as would be the rejections that bring a step grown long at rest down to the
        jump's."""
        h = float(self._bdf._s.fs[_k.F_HUSED])
        if self._until is not None and self._until > t:
            h = min(h, self._until - t)
        restart_driver(self._bdf, t, y, yp, self._segment_end, keep_matrix=True,
                       h_start=h if h > 0.0 else None)

    def _outputs_behind(self, t_out, y_out, n):
        """Outputs from y_out[n] on that lie within the last step of the driver
        before a restart (up to where it ended or the crossing it stopped for), from
        its interpolant; that step holds every output after the last one asked of
        it. Returns how many were written."""
        if self._behind is None:
            return 0
        driver, until = self._behind
        k = 0
        while n + k < len(t_out) and t_out[n + k] <= until:
            y_out[n + k] = driver.interpolate(t_out[n + k])[0]
            k += 1
        return k

    def _rates_buffer(self, rows):
        """(rows, n) of a buffer for the rates at the outputs, which no one reads."""
        if self._rates.shape[0] < rows:
            self._rates = np.zeros((max(rows, 2 * self._rates.shape[0]), self.system.n))
        return self._rates[:rows]

    def _advance_impl(self, t_out, y_out, wall_budget):
        start = time.perf_counter()
        t_out = np.ascontiguousarray(t_out, dtype=float)  # (advance_into's contract)
        n = self._outputs_behind(t_out, y_out, 0)
        steps = STEPS_PER_CALL if self.system.refresh is None else STEPS_PER_REFRESH
        while n < len(t_out):
            if self._refresh_due:
                if n:
                    break   # the outputs first: a refresh may change what y means
                self._refresh_due = False
                bdf = self._bdf
                changed, y, yp = self.system.refresh(bdf.t, bdf.y)
                if changed:
                    self._earlier.append(bdf.statistics())
                    self.restarts += 1
                    self._bdf = self._start(bdf.t, y, yp)
                    if self.system.nswitch:
                        self._bdf.set_switch_reference(self._switch_values(bdf.t, y))
            bdf = self._bdf
            bdf._s.iv[_k.I_ALIGN] = self._align
            m = int(np.searchsorted(t_out, self._segment_end, side="right"))
            k = bdf.advance_into(t_out[n:m], y_out[n:m], self._rates_buffer(m - n), steps)
            n = self._settle(bdf, t_out, y_out, n + k)
            self._refresh_due = (self._bdf.status == "running" and
                                 self.system.refresh is not None)
            if self._bdf.status != "running" or time.perf_counter() - start > wall_budget:
                break
        bdf = self._bdf
        self.t = bdf.t
        self.y = bdf.y
        if bdf.status == "failed":
            self._fail(bdf.message)
        elif bdf.status == "finished":
            self.status = "finished"
        return n

    def _settle(self, bdf, t_out, y_out, n):
        """After the driver `bdf` stopped with the outputs before n filled: the state
        event it stopped on located, or the next segment begun at its end (the
        outputs the old driver still serves written from y_out[n]). Returns the
        number of outputs filled."""
        if bdf.status == "switched":
            n += self._locate_switch(bdf, t_out, y_out, n)
        elif bdf.status == "finished" and self._segment_end < self.t_end:
            self.breakpoints_passed += 1
            if not (self._on_held_breakpoint(bdf.t) and self._across_held_jump(bdf)):
                self._restart(bdf.t, bdf.y, behind=bdf.t)
        return n

    def _on_held_breakpoint(self, t):
        """True when t is one of the system's held breakpoints (within the
        breakpoints' fuzz)."""
        held = self._held
        if not held:
            return False
        fuzz = BREAKPOINT_FUZZ * EPS * max(1.0, abs(t))
        k = bisect.bisect_left(held, t - fuzz)
        return k < len(held) and held[k] <= t + fuzz

    def _across_held_jump(self, bdf):
        """At a held breakpoint where the driver `bdf` ended: the next segment
        entered (the held values updated, System.sample) and the same driver going
        on across the jump of the forces (`_carry`), unless a switch function is on
        another side there (the discrete state changed: a new driver). Returns False
        when the jump cannot be carried (a right-hand side not finite).

        The jump's first two derivatives at t: d' = f+(t, y) -
        f-(t, y), the right-hand sides after and before the held values changed
        (zero for the positions: the speeds are continuous), and d'' = the speeds'
        d' for the positions; for the other components, where every speed is in the
        error test, the difference of the derivatives of f+ and f- along their own
        solutions, each (f(t + e, y + e f(t, y)) - f(t, y)) / e, e = JUMP_DIFFERENCE
        times the last step, so that the history is exact where the forces are
        polynomial in time between the jumps. Where the error test leaves speeds out
        (the damped elastic modes of flexible bodies) their d'' holds the damping of
        those stiff modes, and every speed's through the coupling, whose Taylor
        polynomial misleads over the history (the rig of the test-rig guide: a third
        more steps with it): d'' is then the positions' alone, at two right-hand
        sides a sample instead of four."""
        t, y = bdf.t, bdf.y
        system = self.system
        full = self._full_taylor
        e = JUMP_DIFFERENCE * max(float(bdf._s.fs[_k.F_HUSED]), 1e-9 * max(abs(t), 1.0))
        before = system.rhs(t, y)
        before_e = system.rhs(t + e, y + e * before) if full else None
        g = self._enter_segment(t, y, keep_sides=True)
        if g is not None and (g > 0.0).tobytes() != (bdf._s.gsw > 0.0).tobytes():
            self._earlier.append(bdf.statistics())
            self._behind = None
            self._bdf = self._start(t, y, system.rhs(t, y))
            self._bdf.set_switch_reference(g)
            return True
        after = system.rhs(t, y)
        taylor = self._taylor
        np.subtract(after, before, out=taylor[0])
        if full:
            after_e = system.rhs(t + e, y + e * after)
            taylor[1] = ((after_e - after) - (before_e - before)) / e
        if not math.isfinite(taylor.sum()):  # (a NaN or inf anywhere propagates)
            return False
        nq = system.second_order
        taylor[0, :nq] = 0.0  # the positions' rates: continuous speeds
        taylor[1, :nq] = taylor[0, nq : 2 * nq]
        self._behind = None
        self._carry(bdf, t, y, after, taylor)
        if g is not None:
            bdf.set_switch_reference(g)
        self.held_jumps += 1
        return True

    def _carry(self, bdf, t, y, yp, taylor):
        """The driver goes on from (t, y) to the segment's end across a jump of y'
        (yp after it; `taylor` (2, n): the jump of y' and of y''): BDF carries its
        history, order, step and matrix across."""
        bdf.go_on_across_jump(self._segment_end, taylor)

    def advance_to(self, t, wall_budget=0.5, y_row=None):
        """(n, Y) of advance([t]) (t after the last output), for a caller that asks for
        one output at a time (flexmbs.Simulator): within a segment, one call of the
        step loop into buffers of its own, or into the caller's row `y_row` ((1, n),
        float64, C order) when given (Y a view the next call overwrites), with no
        Python between the steps' ends and the output; else `advance` (its state
        copied into `y_row`). `y` is then the state at t, not at the driver's last
        step (which may be beyond t)."""
        bdf = self._bdf
        # a driver that finished at t_end still serves outputs on its last step
        served = self.status == "running" or (self.status == "finished" and t <= bdf.t)
        if (self._behind is not None or t > self._segment_end or not served
                or self.system.refresh is not None):
            n, y = self.advance(np.array([t]), wall_budget)
            if n and y_row is not None:
                y_row[0] = y[0]
            return n, y
        start = time.perf_counter()
        t_out, y_out, yp_out = self._one
        if y_row is not None:
            y_out = y_row
        t_out[0] = t
        bdf._s.iv[_k.I_ALIGN] = self._align
        n = bdf.advance_into(t_out, y_out, yp_out)
        if bdf.status_code != _k.ST_RUNNING:
            n = self._settle(bdf, t_out, y_out, n)
            bdf = self._bdf
            if bdf.status == "failed":
                self._fail(bdf.message)
            elif bdf.status == "finished":
                self.status = "finished"
            self.t, self.y = bdf.t, bdf.y
        else:
            self.t, self.y = t, y_out[0]
        self.wall_time += time.perf_counter() - start
        if not n and self.status == "running":
            n, y = self.advance(t_out.copy(), wall_budget)
            if n and y_row is not None:
                y_row[0] = y[0]
            return n, y
        return n, y_out[:n]

    @property
    def driver(self):
        """The `flexmbs.solvers.bdf.BDF` stepping now; `driver.advance([t_end],
        max_steps=1)` takes one step, for studies of the steps themselves (the energy
        at every step in benchmarks/bench_integrators.py). Replaced at a restart."""
        return self._bdf

    def statistics(self):
        """nsteps, nrejected, nres, njac, nlu, nnewton, nconvfail, order_counts
        (steps taken at orders 1..5), h_last, order_last, wall_time (s, the
        integrator's), step_loop_time (s, of it in the drivers' compiled step loops
        and carries: the rest is Python between them); where they
        happened, restarts, held_jumps, input_restarts and horizon_moves (restart_at),
        input_carries (carry_inputs)."""
        stats = self._bdf.statistics()
        for earlier in self._earlier:
            for key, value in earlier.items():
                if key in ("nsteps", "nrejected", "nres", "njac", "nlu", "nnewton",
                           "nconvfail", "order_counts", "nmass"):
                    stats[key] = stats[key] + value
        if self.restarts:
            stats["restarts"] = self.restarts
        stats["breakpoints"] = self.breakpoints_passed
        if self.held_jumps:
            stats["held_jumps"] = self.held_jumps
        if self.input_restarts or self.horizon_moves:
            stats["input_restarts"] = self.input_restarts
            stats["horizon_moves"] = self.horizon_moves
        if self.input_carries:
            stats["input_carries"] = self.input_carries
        stats["switch_events"] = len(self.switch_events)
        stats["step_loop_time"] = stats["wall_time"] + sum(e["wall_time"] for e in self._earlier)
        stats["wall_time"] = self.wall_time
        return stats


class GalphaIntegrator(BdfIntegrator):
    """The generalized-alpha driver (solvers/galpha.py) on the same residual, hooks
    and restarts as `bdf`: `rho_inf` its spectral radius at infinity, `fixed_step`
    (s) a constant step without error control (None: the positions' local error
    controls the step)."""

    name = "galpha"
    aligns_steps = False

    def __init__(self, system, t0, y0, t_end, rtol, atol, max_step=np.inf,
                 rho_inf=RHO_INF, fixed_step=None):
        self._galpha = (rho_inf, fixed_step)
        self._algebraic = system.algebraic is not None and bool(np.any(system.algebraic))
        super().__init__(system, t0, y0, t_end, rtol, atol, max_step)

    def carry_inputs(self, t, until):
        """After an input of the model changed at t (s), the time of the last output
        (flexmbs.Simulator): when the driver's last step ended at t, within the
        segment, it goes on across the jump of the forces as from one of its own
        steps (GeneralizedAlpha.carry_input_jump: its step, history and iteration
        matrix kept, the history moved by the jump), its next step ending no later
        than `until` (s). True when carried; False when the caller must start it
        again (restart_at): a step beyond t, a new segment, a discrete state
        (sampled controllers, a switch function on another side, multipliers),
        no step yet since the last start."""
        bdf, system = self._bdf, self.system
        if (self.status != "running" or self._behind is not None or not self._same_breakpoints
                or not t < self._segment_end or system.sample is not None
                or system.refresh is not None or self._algebraic):
            return False
        if abs(bdf.t - t) > BREAKPOINT_FUZZ * EPS * max(1.0, abs(t)):
            return False
        if bdf.carry_input_jump() != CARRIED:
            return False
        fs = bdf._s.fs
        if not fs[_k.F_H_FIXED] > 0.0 and until is not None and until > t:
            fs[_k.F_H] = min(fs[_k.F_H], until - t)
        self.input_carries += 1
        return True

    def _restart_driver(self, t, y, yp):
        """The driver started again in place, with its iteration matrix: its fixed
        step, or the step its error control proposed, ending no later than the next
        output asked for (`until` of restart_at), where the next change of the
        inputs is carried across (carry_inputs) instead of starting again."""
        h = None
        proposed = float(self._bdf._s.fs[_k.F_H])
        if self._galpha[1] is None and self._until is not None and proposed > 0.0:
            h = min(proposed, self._until - t) if self._until > t else proposed
        restart_driver(self._bdf, t, y, yp, self._segment_end, keep_matrix=True,
                       fixed_step=self._galpha[1], h_start=h)

    def _carry(self, bdf, t, y, yp, taylor):
        """Across a held jump at t, where the driver's last step ended: it goes on as
        across a changed input of flexmbs.Simulator (carry_input_jump: its step, its
        history and its iteration matrix kept, moved by the jump of the rates that
        one residual at the new inputs gives, not by `taylor`) towards the new
        segment's end; where it cannot, it starts again in place from (t, y, y') with
        its iteration matrix and the step its error control proposed."""
        if bdf.carry_input_jump() == CARRIED:
            go_on(bdf, self._segment_end, self._galpha[1])
            return
        restart_driver(bdf, t, y, yp, self._segment_end, keep_matrix=True,
                       fixed_step=self._galpha[1])

    def _start(self, t, y, yp):
        system = self.system
        fixed_step = self._galpha[1]
        if not np.all(np.isfinite(yp)):
            yp = np.zeros(system.n)
        index2 = bool(np.any(system.algebraic)) and system.index2
        h0 = None
        end = self._segment_end
        if fixed_step is None and index2:
            h0 = INDEX2_FIRST_STEP * (end - t)
        with _function_tuple_notice_silenced():
            return self._new_galpha(t, y, yp, end, index2, h0, fixed_step)

    def _new_galpha(self, t, y, yp, end, index2, h0, fixed_step):
        system = self.system
        rtol, atol, max_step = self._settings
        rho_inf = self._galpha[0]
        return GeneralizedAlpha(
            system.dae_residual, (system.m, system.ws), t, y, yp, end, rtol,
            atol, rho_inf=rho_inf, algebraic=system.algebraic,
            jacobian=system.dae_jacobian,
            jacobian_columns=(None if system.dae_jacobian is None
                              else system.dae_jacobian_columns),
            second_order=system.second_order, mass=system.dae_mass,
            elastic_columns=system.dae_elastic_columns, h_max=max_step,
            h_min=BDF_STEP_FLOOR * self.t_end - BDF_STEP_FLOOR * self.t0,
            index2=index2, h0=h0, positions=system.npositions, layout=system.dae_layout,
            fixed_step=(None if fixed_step is None else min(fixed_step, end - t)),
            quadrature=system.quadrature, **self._driver_options())
