"""A run, from a model to its result file.

`flexmbs.simulation.run` holds `simulate` and the run's steps (prepare_run,
start_state, build_integrator, run_batches, ...); beside it, the pieces a run is made
of: the kernels of the outputs (`output_kernels`), sampled controllers
(`sampled_control`) and their instruments (`instruments`), the convergence check
(`convergence`) and the diagnosis of a failed run (`failure_diagnosis`).

The names of `run` are also names of this package (`from flexmbs.simulation import
simulate`), imported on first use so that importing one piece does not bring numba in.
"""

import importlib

__all__ = [
    "build_system",
    "make_integrator",
    "simulate",
    "Simulation",
    "SmallDeformationWarning",
    "SOLVERS",
    "state_rest_names",
]


def __getattr__(name):
    """A name of flexmbs.simulation.run, imported on first use."""
    if not name.startswith("__"):
        run = importlib.import_module(".run", __name__)
        if hasattr(run, name):
            return getattr(run, name)
    raise AttributeError(f"module 'flexmbs.simulation' has no attribute {name!r}")
