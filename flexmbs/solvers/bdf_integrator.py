"""flexmbs' own BDF and generalized-alpha drivers (solvers/bdf.py, galpha.py) behind
the solver interface of base.py: the model's residual F(t, y, y') = 0 stepped
inside numba, Python called once per chunk of steps to write outputs and show
progress."""

import time

import numpy as np

from .base import Integrator
from .bdf import BDF
from .galpha import RHO_INF, GeneralizedAlpha

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


BDF_STEP_FLOOR = 1e-15
"""The step floor of `bdf`, relative to the span. Lower than base.STEP_FLOOR: the driver
passes a jump in the forces (a `steps` set-point) by shrinking its step until the jump's
local error is below atol, which at tight tolerances takes steps near 1e-12 of the span;
a singular M* stops it through its iteration matrix, not by crawling."""


class BdfIntegrator(Integrator):
    """BDF orders 1-5 on `system.dae_residual` with the model's state as args.

    y'(t0) is the ODE right-hand side at t0 (consistent by construction: the model
    has no algebraic variables yet), so no initial-value iteration is run. The step
    floor is BDF_STEP_FLOOR of the span; `max_step` bounds the step. The columns of
    the iteration matrix the model knows in closed form come from its hook
    (`system.dae_jacobian`), the rest from differences; the positions are eliminated
    from the Newton iteration (`system.second_order`).
    """

    name = "bdf"

    def __init__(self, system, t0, y0, t_end, rtol, atol, max_step=np.inf):
        super().__init__(system, t0, y0, t_end, rtol, atol, max_step)
        self._settings = (rtol, atol, max_step)
        self._earlier = []      # statistics of the drivers before a restart
        self.restarts = 0
        self._refresh_due = False
        self._bdf = self._start(self.t0, self.y, system.rhs(self.t0, self.y))

    def _start(self, t, y, yp):
        """A BDF driver from (t, y, y')."""
        system = self.system
        rtol, atol, max_step = self._settings
        if not np.all(np.isfinite(yp)):
            yp = np.zeros(system.n)  # the iteration matrix then reports the failure
        index2 = bool(np.any(system.algebraic)) and system.index2
        return BDF(system.dae_residual, (system.m, system.ws), t, y, yp, self.t_end, rtol,
                   atol, algebraic=system.algebraic, jacobian=system.dae_jacobian,
                   jacobian_columns=(None if system.dae_jacobian is None
                                     else system.dae_jacobian_columns),
                   second_order=system.second_order, mass=system.dae_mass,
                   elastic_columns=system.dae_elastic_columns, h_max=max_step,
                   h_min=BDF_STEP_FLOOR * self.t_end - BDF_STEP_FLOOR * self.t0,
                   calc_ic=False, index2=index2, layout=system.dae_layout,
                   h0=INDEX2_FIRST_STEP * (self.t_end - t) if index2 else None)

    def _advance_impl(self, t_out, y_out, wall_budget):
        start = time.perf_counter()
        n = 0
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
            bdf = self._bdf
            k, Y, _ = bdf.advance(t_out[n:], max_steps=steps)
            y_out[n:n + k] = Y
            n += k
            self._refresh_due = (bdf.status == "running" and
                                 self.system.refresh is not None)
            if bdf.status != "running" or time.perf_counter() - start > wall_budget:
                break
        bdf = self._bdf
        self.t = bdf.t
        self.y = bdf.y
        if bdf.status == "failed":
            self._fail(bdf.message)
        elif bdf.status == "finished":
            self.status = "finished"
        return n

    @property
    def driver(self):
        """The `flexmbs.solvers.bdf.BDF` stepping now; `driver.advance([t_end],
        max_steps=1)` takes one step, for studies of the steps themselves (the energy
        at every step in benchmarks/bench_integrators.py). Replaced at a restart."""
        return self._bdf

    def statistics(self):
        """nsteps, nrejected, nres, njac, nlu, nnewton, nconvfail, order_counts
        (steps taken at orders 1..5), h_last, order_last, wall_time."""
        stats = self._bdf.statistics()
        for earlier in self._earlier:
            for key, value in earlier.items():
                if key in ("nsteps", "nrejected", "nres", "njac", "nlu", "nnewton",
                           "nconvfail", "order_counts", "nmass"):
                    stats[key] = stats[key] + value
        if self.restarts:
            stats["restarts"] = self.restarts
        stats["wall_time"] = self.wall_time
        return stats


class GalphaIntegrator(BdfIntegrator):
    """The generalized-alpha driver (solvers/galpha.py) on the same residual, hooks
    and restarts as `bdf`: `rho_inf` its spectral radius at infinity, `fixed_step`
    (s) a constant step without error control (None: the positions' local error
    controls the step)."""

    name = "galpha"

    def __init__(self, system, t0, y0, t_end, rtol, atol, max_step=np.inf,
                 rho_inf=RHO_INF, fixed_step=None):
        self._galpha = (rho_inf, fixed_step)
        super().__init__(system, t0, y0, t_end, rtol, atol, max_step)

    def _start(self, t, y, yp):
        system = self.system
        rtol, atol, max_step = self._settings
        rho_inf, fixed_step = self._galpha
        if not np.all(np.isfinite(yp)):
            yp = np.zeros(system.n)
        index2 = bool(np.any(system.algebraic)) and system.index2
        h0 = None
        if fixed_step is None and index2:
            h0 = INDEX2_FIRST_STEP * (self.t_end - t)
        return GeneralizedAlpha(
            system.dae_residual, (system.m, system.ws), t, y, yp, self.t_end, rtol,
            atol, rho_inf=rho_inf, algebraic=system.algebraic,
            jacobian=system.dae_jacobian,
            jacobian_columns=(None if system.dae_jacobian is None
                              else system.dae_jacobian_columns),
            second_order=system.second_order, mass=system.dae_mass,
            elastic_columns=system.dae_elastic_columns, h_max=max_step,
            h_min=BDF_STEP_FLOOR * self.t_end - BDF_STEP_FLOOR * self.t0,
            index2=index2, h0=h0, positions=system.npositions, layout=system.dae_layout,
            fixed_step=(None if fixed_step is None
                        else min(fixed_step, self.t_end - self.t0)))
