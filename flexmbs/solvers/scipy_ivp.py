"""scipy.integrate backends on the ODE form y' = [u; M*^-1 Q*; P]: Radau, BDF (stiff),
DOP853 and RK45 (explicit, for comparison studies). Stepped one step at a time so that
results are written while the run goes; outputs come from scipy's dense output."""

import time

import numpy as np
from scipy.integrate import BDF, DOP853, RK45, Radau

from .base import Integrator

__all__ = ["ScipyIntegrator", "SCIPY_METHODS"]

SCIPY_METHODS = {"scipy-radau": Radau, "scipy-bdf": BDF, "dop853": DOP853, "rk45": RK45}


class ScipyIntegrator(Integrator):
    """One of SCIPY_METHODS stepping `system.rhs`."""

    def __init__(self, system, t0, y0, t_end, rtol, atol, max_step=np.inf,
                 method="scipy-radau"):
        super().__init__(system, t0, y0, t_end, rtol, atol, max_step)
        if method not in SCIPY_METHODS:
            raise ValueError(f"method must be one of {', '.join(SCIPY_METHODS)}, got "
                             f"{method!r}")
        self.name = method
        self._nfev_rhs = 0

        def fun(t, y):
            self._nfev_rhs += 1
            return system.rhs(t, y)

        self._solver = SCIPY_METHODS[method](fun, self.t0, self.y, self.t_end, rtol=rtol,
                                             atol=atol, max_step=max_step)
        self._nsteps = 0
        self._dense = None
        self._t_old = self.t0

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
            with np.errstate(over="ignore"):
                msg = s.step()
            if s.status == "failed":
                self._fail(msg or "the step size became too small")
                break
            if not np.all(np.isfinite(s.y)):
                self._fail(f"the state became non-finite at t = {s.t:.6g} s")
                break
            self._nsteps += 1
            self._dense = s.dense_output()
        self.t = s.t
        self.y = s.y.copy()
        if s.status == "finished" and self.status == "running":
            self.status = "finished"
        return n

    def statistics(self):
        s = self._solver
        return {"nsteps": self._nsteps, "nres": int(s.nfev), "njac": int(s.njev),
                "nlu": int(s.nlu), "nrejected": 0, "wall_time": self.wall_time}
