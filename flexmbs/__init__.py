"""flexmbs: deformable multibody dynamics in joint coordinates (Huang's formulation).

The public API, imported on first use so that `import flexmbs` stays light (numba and
the kernels come in with the first name that needs them):

    flexmbs.Model            build a model item by item (flexmbs.model.description)
    flexmbs.load_model       read a model file (flexmbs.model.toml_reader)
    flexmbs.compile_model    a Model as the flat arrays the kernels take
    flexmbs.simulate         run a model, write its result file (flexmbs.simulation)
    flexmbs.open_result      read a result file (flexmbs.io.results)
    flexmbs.energy_balance   the energy balance of a result (flexmbs.analysis.energy)
    flexmbs.user_law         the decorator of user force laws (flexmbs.model.user_laws)
"""

import importlib

__version__ = "0.1.0"

_PUBLIC = {
    "Model": "flexmbs.model.description",
    "load_model": "flexmbs.model.toml_reader",
    "compile_model": "flexmbs.model.compiled",
    "simulate": "flexmbs.simulation",
    "open_result": "flexmbs.io.results",
    "energy_balance": "flexmbs.analysis.energy",
    "user_law": "flexmbs.model.user_laws",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name):
    """The public names of _PUBLIC, imported from their modules on first use."""
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'flexmbs' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))
