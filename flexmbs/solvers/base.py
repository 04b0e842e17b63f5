"""The solver interface every integrator of flexmbs implements.

Contract for implementers (scipy.integrate._ivp style):

1. The constructor takes a `System` (what to integrate), `t0`, `y0`, `t_end`, `rtol`,
   `atol` and `max_step`; it validates them (ValueError naming the argument) and
   prepares the integration. It never integrates.
2. `advance(t_out, wall_budget)` integrates towards `t_out[-1]` (increasing output
   times > the last one delivered) and returns `(n, Y)`: the states at the first n
   output times, interpolated by the method's dense output (outputs never force
   steps). It returns early, with n possibly 0, when `wall_budget` seconds have passed
   so that the caller can write results and show progress, and when the integration
   fails or ends.
3. `status` is "running", "finished" (t_end reached exactly) or "failed"; `message`
   says why it failed; `t`, `y` are the last accepted state.
4. `statistics()` returns the work counters (nsteps, nrejected, nres, njac, nlu, ...).
   Numerical failure is a status, never an exception.
"""

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

__all__ = ["System", "Integrator", "STEP_FLOOR"]

STEP_FLOOR = 1e-12
"""Smallest useful step, relative to the integration span |t_end - t0| (and to |t|):
below it the step no longer moves t by a meaningful amount, as happens when the
accelerations blow up at a singular configuration."""


@dataclass
class System:
    """What an integrator integrates: y' = f(t, y) (`rhs`) and, equivalently,
    F(t, y, y') = 0 (`residual_kernel(m, ws, t, y, yp, out)`, a numba kernel with its
    arguments `m`, `ws`; `dae_residual(t, y, yp, (m, ws), out)`, the same kernel in the
    argument order of the BDF driver; `dae_jacobian` adds the columns of the iteration
    matrix flagged in `dae_jacobian_columns`, the driver differences the rest).
    `algebraic` (bool, size n) marks algebraic components; `index2` says they are the
    multipliers of a stabilised index-2 system. `refresh(t, y)`, if given, is called
    between chunks of steps and returns (changed, y, y'): when changed, the
    integrator starts afresh from that state (the system changed how it is written,
    e.g. which constraint rows it keeps). `second_order` = nq > 0
    says that y = [q, u, ...] with F_q = q' - u (the BDF driver then eliminates q in its
    Newton iteration); `dae_mass(t, y, yp, (m, ws), out)`, with it, writes the
    derivative of the remaining rows with respect to the remaining y' (the mass matrix
    M* and the works' identity), from which the driver re-forms its iteration matrix
    between difference Jacobians. `npositions` = nq > 0 says that y = [q, u, ...]
    with q' = u up to constraint terms (the positions of galpha's error test).
    `dae_elastic_columns` (with `dae_mass`) flags the speeds of elastic coordinates,
    whose iteration-matrix columns the mass hook's elastic blocks supply.
    `dae_layout` (pos, dims), with them: the bordered band layout in which the
    driver stores and factors its iteration matrix (flexmbs.numerics.bordered_band; the
    mass hook then writes that layout, and `dae_jacobian` is None).

    `error_test` (bool, size n, or None: every differential component) marks the
    components in `bdf`'s local error test (flexmbs.simulation leaves out the elastic
    speeds of damped flexible bodies: docs/explanation/bdf.md, "The error test").
    `quadrature` (bool, size n, or None) marks the components no row of the
    residual reads (the works), which `bdf` and `galpha` leave out of the Newton
    rate (flexmbs.solvers.bdf_kernels._wrms_newton).

    Discontinuities (flexmbs.solvers.events): `breakpoints` (sorted times, s) where
    the forces jump or kink in time; `set_segment(t_start, t_end)` makes the
    residual hold the pieces in force on that segment; `switches(t, y, args, out)`
    (a numba kernel, args as for dae_residual) writes `nswitch` switch functions
    whose sign changes are state events, and `switched(t, y, g)` sets the discrete
    state for the side each function is on (g: their values just after the
    crossing; it may set, in place, the speeds of the state that the new discrete
    state holds still and the values of the functions whose meaning it changed).
    `sample(t, y)`, if given, makes the discrete updates due at the start of a
    segment (a sampled controller's reading and held output). `held_breakpoints`
    (sorted times, s, among `breakpoints`) are those where only such held values
    change: the forces jump there, the state and the forces' derivatives do not, so
    `bdf` carries its history and iteration matrix across them and `galpha` keeps
    its step and matrix, instead of starting again. `bdf` and `galpha`
    honour them; the other integrators step over the discontinuities as they
    come."""
    n: int
    rhs: object
    residual_kernel: object
    m: object
    ws: object
    algebraic: np.ndarray | None = None
    dae_residual: object = None
    dae_jacobian: object = None
    dae_jacobian_columns: np.ndarray | None = None
    second_order: int = 0
    dae_mass: object = None
    index2: bool = False
    refresh: object = None
    npositions: int = 0
    dae_elastic_columns: np.ndarray | None = None
    dae_layout: tuple | None = None
    error_test: np.ndarray | None = None
    quadrature: np.ndarray | None = None
    breakpoints: np.ndarray | None = None
    set_segment: object = None
    switches: object = None
    nswitch: int = 0
    switched: object = None
    sample: object = None
    held_breakpoints: np.ndarray | None = None


class Integrator(ABC):
    """Base class: owns the status and the output bookkeeping (see the module text)."""

    name = "base"

    def __init__(self, system, t0, y0, t_end, rtol, atol, max_step=np.inf):
        if not np.isfinite(t0) or not np.isfinite(t_end) or not t_end > t0:
            raise ValueError(f"t_end must be a finite time after t0, got t0={t0}, "
                             f"t_end={t_end}")
        rtol = np.asarray(rtol, dtype=float)
        atol = np.asarray(atol, dtype=float)
        if np.any(rtol <= 0) or np.any(atol <= 0):
            raise ValueError("rtol and atol must be positive")
        if not max_step > 0:
            raise ValueError(f"max_step must be positive, got {max_step}")
        y0 = np.array(y0, dtype=float)
        if y0.shape != (system.n,):
            raise ValueError(f"y0 must have {system.n} values, got shape {y0.shape}")
        if not np.all(np.isfinite(y0)):
            raise ValueError("y0 must be finite")
        self.system = system
        self.t0 = float(t0)
        self.t_end = float(t_end)
        self.rtol = rtol
        self.atol = atol
        self.max_step = float(max_step)
        self.t = self.t0
        self.y = y0
        self.status = "running"
        self.message = ""
        self.wall_time = 0.0
        self.h_floor = STEP_FLOOR * max(self.t_end - self.t0, abs(self.t0), abs(self.t_end))

    def advance(self, t_out, wall_budget=0.5):
        """States at the leading output times reached within `wall_budget` seconds."""
        t_out = np.asarray(t_out, dtype=float)
        y_out = np.zeros((len(t_out), self.system.n))
        start = time.perf_counter()
        n = self._advance_impl(t_out, y_out, wall_budget) if self.status == "running" else 0
        self.wall_time += time.perf_counter() - start
        return n, y_out[:n]

    @abstractmethod
    def _advance_impl(self, t_out, y_out, wall_budget):
        """Fill y_out[:n] for the first n output times; update status, t, y."""

    @abstractmethod
    def statistics(self):
        """dict of work counters."""

    def _fail(self, message):
        self.status = "failed"
        self.message = message
