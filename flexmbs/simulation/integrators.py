"""The integrator of a run: made by the name of its method (`make_integrator`), and
built for a run with its first output recorded (`build_integrator`)."""

import numpy as np

from ..model.description import SOLVER_METHODS
from ..solvers.bdf_integrator import BdfIntegrator, GalphaIntegrator
from ..solvers.ida import IdaIntegrator
from ..solvers.scipy_ivp import SCIPY_METHODS, ScipyIntegrator
from .output_kernels import OutputKernelsElsewhere

__all__ = ["SOLVERS", "build_integrator", "make_integrator"]

SOLVERS = SOLVER_METHODS


def make_integrator(
    method, system, t0, y0, t_end, rtol, atol, max_step=np.inf, rho_inf=0.9, fixed_step=None
):
    """The Integrator called `method` (one of SOLVERS); `rho_inf` and `fixed_step`
    are galpha's."""
    if method == "galpha":
        return GalphaIntegrator(
            system, t0, y0, t_end, rtol, atol, max_step, rho_inf=rho_inf, fixed_step=fixed_step
        )
    if method in SCIPY_METHODS:
        return ScipyIntegrator(system, t0, y0, t_end, rtol, atol, max_step, method)
    if method == "bdf":
        return BdfIntegrator(system, t0, y0, t_end, rtol, atol, max_step)
    if method == "ida":
        return IdaIntegrator(system, t0, y0, t_end, rtol, atol, max_step)
    raise ValueError(f"unknown solver {method!r}; expected one of {', '.join(SOLVERS)}")


def build_integrator(run, system, t0, y0, first_output, compile_elsewhere=False, log=None):
    """The integrator of the run (make_integrator) from (t0, y0); `first_output()`
    records the state at t0, before the integrator is built, or after it when the
    output kernels compile in a second process meanwhile (`compile_elsewhere`,
    flexmbs.cli.precompile)."""
    s = run.settings
    helper = OutputKernelsElsewhere.start_if_useful() if compile_elsewhere else None
    if helper is None:
        first_output()
    elif log is not None:
        log("compiling the output quantities in a second process, the rest here")
    try:
        integ = make_integrator(
            s.method, system, t0, y0, s.t_end, s.rtol, s.atol, s.max_step, s.rho_inf, s.fixed_step
        )
    except BaseException:
        if helper is not None:
            helper.stop()
        raise
    if helper is not None:
        helper.wait()  # the output kernels are in the cache now, or compile here
        first_output()
    return integ
