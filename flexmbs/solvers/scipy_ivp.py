"""scipy.integrate backends on the ODE form y' = [u; M*^-1 Q*; P]: Radau, BDF (stiff),
DOP853 and RK45 (explicit, for comparison studies). Stepped one step at a time so that
results are written while the run goes; outputs come from scipy's dense output."""

import time

import numpy as np

from .base import Integrator

__all__ = ["ScipyIntegrator", "SCIPY_METHODS"]

SCIPY_METHODS = {"scipy-radau": "Radau", "scipy-bdf": "BDF", "dop853": "DOP853",
                 "rk45": "RK45"}
"""flexmbs' name of each method: the name of its scipy.integrate class (imported when
a run uses it: scipy.integrate takes a noticeable part of a command's start)."""


FLOOR_STEPS = 10
"""Consecutive steps below the step floor (base.STEP_FLOOR) that end a run; one such
step can be legitimate (a kink in a prescribed motion), a run of them is not. scipy's own
floor is ten ulps of t, which near t = 0 lets a run crawl forever."""


class _NonFiniteDerivative(Exception):
    """y' was not finite (e.g. M* not positive definite at a singular joint)."""

    def __init__(self, t, y):
        super().__init__(t)
        self.t = t
        self.y = np.array(y, dtype=float)


NON_FINITE_MESSAGE = ("the accelerations are not finite at t = {t:.6g} s: M* is not "
                      "positive definite there (a joint at a singular configuration, "
                      "or dependent joint axes?), or a force is not finite")


class ScipyIntegrator(Integrator):
    """One of SCIPY_METHODS stepping `system.rhs`.

    A right-hand side that is not finite stops the run with status "failed" (scipy
    itself would loop on a NaN step size or raise).
    """

    def __init__(self, system, t0, y0, t_end, rtol, atol, max_step=np.inf,
                 method="scipy-radau"):
        super().__init__(system, t0, y0, t_end, rtol, atol, max_step)
        if method not in SCIPY_METHODS:
            raise ValueError(f"method must be one of {', '.join(SCIPY_METHODS)}, got "
                             f"{method!r}")
        self.name = method

        def fun(t, y):
            f = system.rhs(t, y)
            if not np.all(np.isfinite(f)):
                raise _NonFiniteDerivative(t, y)
            return f

        self._nsteps = 0
        self._tiny_steps = 0
        self._dense = None
        self.failed_state = None  # (t, y) where y' was not finite
        try:
            import scipy.integrate
            solver_class = getattr(scipy.integrate, SCIPY_METHODS[method])
            self._solver = solver_class(fun, self.t0, self.y, self.t_end, rtol=rtol,
                                        atol=atol, max_step=max_step)
        except _NonFiniteDerivative as exc:
            self.failed_state = (exc.t, exc.y)
            self._fail(NON_FINITE_MESSAGE.format(t=exc.t))

    def _advance_impl(self, t_out, y_out, wall_budget):
        s = self._solver
        start = time.perf_counter()
        n = 0
        while n < len(t_out):
            # outputs already covered by the last step
            while n < len(t_out) and t_out[n] <= s.t:
                if t_out[n] == s.t:
                    y_out[n] = s.y
                else:
                    y_out[n] = self._dense(t_out[n])
                n += 1
            if n == len(t_out) or s.status != "running":
                break
            if time.perf_counter() - start > wall_budget:
                break
            # scipy's finite-difference Jacobian grows its increment for a column that
            # changes nothing (W_nc enters no right-hand side) until it overflows
            try:
                with np.errstate(over="ignore"):
                    msg = s.step()
            except _NonFiniteDerivative as exc:
                self.failed_state = (exc.t, exc.y)
                self._fail(NON_FINITE_MESSAGE.format(t=exc.t))
                break
            if s.status == "failed":
                self._fail(msg or "the step size became too small")
                break
            if not np.all(np.isfinite(s.y)):
                self._fail(f"the state became non-finite at t = {s.t:.6g} s")
                break
            self._nsteps += 1
            self._tiny_steps = self._tiny_steps + 1 if s.step_size < self.h_floor else 0
            if self._tiny_steps >= FLOOR_STEPS:
                self._fail(f"the step size fell below {self.h_floor:.3g} s for "
                           f"{FLOOR_STEPS} steps at t = {s.t:.6g} s (M* nearly singular, "
                           f"or a discontinuity the method cannot pass?)")
                break
            self._dense = s.dense_output()
        self.t = s.t
        self.y = s.y.copy()
        if s.status == "finished" and self.status == "running":
            self.status = "finished"
        return n

    @property
    def driver(self):
        """scipy's OdeSolver (None if it could not start); `driver.step()` takes one
        step, for studies of the steps themselves (benchmarks/bench_integrators.py)."""
        return getattr(self, "_solver", None)

    def statistics(self):
        """nsteps, nres (right-hand sides), njac, nlu, wall_time (scipy does not count
        rejected steps)."""
        s = getattr(self, "_solver", None)
        if s is None:
            return {"nsteps": 0, "nres": 0, "njac": 0, "nlu": 0,
                    "wall_time": self.wall_time}
        return {"nsteps": self._nsteps, "nres": int(s.nfev), "njac": int(s.njev),
                "nlu": int(s.nlu), "wall_time": self.wall_time}
