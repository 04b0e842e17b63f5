"""Modules that moved, kept at their old import paths for one release: the old module
re-exports the new one's names and warns (DeprecationWarning) where it is imported."""

import importlib
import sys
import warnings

__all__ = ["MOVED_MODULES", "reexport_moved"]

MOVED_MODULES = {  # old module: the module that holds it now
    "flexmbs.dynamics.linalg": "flexmbs.linalg",
    "flexmbs.dynamics.timefunctions": "flexmbs.kinematics.timefunctions",
}


def reexport_moved(old, namespace):
    """Fill `namespace` (the old module's globals) with the public names of the module
    that replaced `old`, after a DeprecationWarning that names it."""
    new = MOVED_MODULES[old]
    level, frame = 3, sys._getframe(2)  # past this function and the old module
    while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        level, frame = level + 1, frame.f_back  # to the line that imports it
    warnings.warn(
        f"{old} is now {new}; the old name goes in the next release",
        DeprecationWarning,
        stacklevel=level,
    )
    module = importlib.import_module(new)
    names = getattr(module, "__all__", [n for n in vars(module) if not n.startswith("_")])
    namespace.update({n: getattr(module, n) for n in names})
    namespace["__all__"] = list(names)
