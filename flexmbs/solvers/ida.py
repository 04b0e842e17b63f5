"""SUNDIALS IDA (variable-order BDF for F(t, y, y') = 0) through scikit-sundae, the
reference oracle for flexmbs' own integrators. An optional extra:
`pip install flexmbs[ida]`.

IDA is called one internal step at a time ('onestep' mode, never past t_end), and the
outputs inside a step come from IDA's own interpolation, so that results are written
while the run goes and the step count is known.
"""

import time

import numpy as np

from .base import Integrator
from .kernel_call import KernelCall

__all__ = ["IdaIntegrator", "MAX_NUM_STEPS"]

MAX_NUM_STEPS = 1_000_000  # per output interval: t_end bounds the run, not this
INDEX2_ATOL = 1e8  # the multipliers' atol: in effect out of the error and Newton tests


class IdaIntegrator(Integrator):
    """IDA on the system's residual kernel (dense direct linear solver, FD Jacobian)."""

    name = "ida"

    def __init__(self, system, t0, y0, t_end, rtol, atol, max_step=np.inf):
        super().__init__(system, t0, y0, t_end, rtol, atol, max_step)
        try:
            from sksundae.ida import IDA
        except ImportError:
            raise ValueError("the 'ida' solver needs scikit-sundae: "
                             "pip install 'flexmbs[ida]'") from None
        residual = KernelCall(system.dae_residual, (system.m, system.ws), system.n, 2)
        self._nres = 0

        def resfn(t, y, yp, res):  # the residual entry kernel the bdf driver calls
            self._nres += 1
            res[:] = residual(t, y, yp)

        alg = None
        if system.algebraic is not None and np.any(system.algebraic):
            alg = np.flatnonzero(system.algebraic).tolist()
            if system.index2:  # IDA cannot leave them out of its tests: make them lax
                atol = np.broadcast_to(np.asarray(atol, dtype=float), (system.n,)).copy()
                atol[alg] = INDEX2_ATOL
        self._ida = IDA(resfn, rtol=float(np.max(rtol)), atol=atol,
                        max_step=0.0 if not np.isfinite(max_step) else max_step,
                        max_num_steps=MAX_NUM_STEPS, algebraic_idx=alg)
        yp0 = system.rhs(self.t0, self.y)
        r = self._ida.init_step(self.t0, self.y, yp0)
        if not r.success:
            self._fail(f"IDA could not start: {r.message}")
        self._nsteps = 0
        self._njac = 0
        self._t_reached = self.t0

    def _advance_impl(self, t_out, y_out, wall_budget):
        start = time.perf_counter()
        n = 0
        while n < len(t_out):
            while n < len(t_out) and t_out[n] <= self._t_reached:
                r = self._ida.step(float(t_out[n]), tstop=self.t_end)
                y_out[n] = r.y
                n += 1
            if n == len(t_out) or self._t_reached >= self.t_end:
                break
            if time.perf_counter() - start > wall_budget:
                break
            r = self._ida.step(float(t_out[n]), method="onestep", tstop=self.t_end)
            if not r.success:
                self._fail(f"IDA failed at t = {r.t:.6g} s: {r.message}")
                break
            self._nsteps += 1
            self._njac = max(self._njac, int(r.njev))
            self._t_reached = float(r.t)
            self.t = float(r.t)
            self.y = np.array(r.y)
        if self._t_reached >= self.t_end and self.status == "running":
            self.status = "finished"
        return n

    def statistics(self):
        """nsteps, nres (residuals, those of IDA's difference-quotient Jacobians
        included), njac, wall_time."""
        return {"nsteps": self._nsteps, "nres": self._nres, "njac": self._njac,
                "wall_time": self.wall_time}
