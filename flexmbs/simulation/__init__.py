"""A run, from a model to its result file.

`flexmbs.simulation.run` holds `simulate` and the run's steps (prepare_run,
start_state, open_result, run_batches, finish_run, ...); beside it, the pieces a run
is made of: the System the integrator steps (`systems`), the checks that the
settings fit the model (`run_checks`), the output times (`times`), the
integrators (`integrators`), the recorder of the outputs (`recorder`, through
`row_outputs`), what a run returns (`outcome`), the progress bar (`progress`), the
signals that end a run (`signals`), the convergence check's run (`verification`,
comparing with `convergence`), the kernels of the outputs (`output_kernels`),
sampled controllers (`sampled_control`) and their instruments (`instruments`), and
the diagnosis of a failed run (`failure_diagnosis`).

The names of `run` and of the modules of its steps are also names of this package
(`from flexmbs.simulation import simulate`), imported on first use so that importing
one piece does not bring numba in.
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

_RUN_MODULES = (
    "run",
    "systems",
    "run_checks",
    "times",
    "integrators",
    "recorder",
    "row_outputs",
    "outcome",
    "progress",
    "signals",
    "verification",
)
"""The modules whose names are the package's: `run`, then those of its steps."""


def __getattr__(name):
    """A name of flexmbs.simulation.run or of a module of the run's steps, imported on
    first use."""
    if not name.startswith("__"):
        for module in _RUN_MODULES:
            found = importlib.import_module(f".{module}", __name__)
            if hasattr(found, name):
                return getattr(found, name)
    raise AttributeError(f"module 'flexmbs.simulation' has no attribute {name!r}")
