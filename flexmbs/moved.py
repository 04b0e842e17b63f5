"""Modules that moved, kept at their old import paths for one release.

An old path is answered by a finder on `sys.meta_path` (installed by `import flexmbs`):
`import flexmbs.config` gives the very module `flexmbs.runtime.config`, after a
DeprecationWarning that names the new path at the line that imports the old one."""

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

__all__ = ["MOVED_MODULES", "install_moved_finder"]

MOVED_MODULES = {  # old module: the module that holds it now
    "flexmbs.dynamics.linalg": "flexmbs.numerics.linalg",
    "flexmbs.dynamics.timefunctions": "flexmbs.kinematics.timefunctions",
    "flexmbs.config": "flexmbs.runtime.config",
    "flexmbs.kernel_cache": "flexmbs.runtime.kernel_cache",
    "flexmbs.cached_library": "flexmbs.runtime.cached_library",
    "flexmbs.compile_notice": "flexmbs.runtime.compile_notice",
    "flexmbs.tuple_ref": "flexmbs.runtime.tuple_ref",
    "flexmbs.linalg": "flexmbs.numerics.linalg",
    "flexmbs.bordered_band": "flexmbs.numerics.bordered_band",
    "flexmbs.convergence": "flexmbs.simulation.convergence",
    "flexmbs.failure_diagnosis": "flexmbs.simulation.failure_diagnosis",
    "flexmbs.output_kernels": "flexmbs.simulation.output_kernels",
    "flexmbs.sampled_control": "flexmbs.simulation.sampled_control",
    "flexmbs.instruments": "flexmbs.simulation.instruments",
    "flexmbs.simulator": "flexmbs.control.simulator",
    "flexmbs.fmu": "flexmbs.control.fmu",
    "flexmbs.fmu_slave": "flexmbs.control.fmu_slave",
    "flexmbs.precompile": "flexmbs.cli.precompile",
    "flexmbs.model.toml_reader": "flexmbs.formats.toml_reader",
    "flexmbs.model.serialize": "flexmbs.formats.serialize",
    "flexmbs.model.urdf": "flexmbs.formats.urdf",
    "flexmbs.model.urdf_reader": "flexmbs.formats.urdf_reader",
    "flexmbs.model.urdf_repair": "flexmbs.formats.urdf_repair",
    "flexmbs.model.urdf_geometry": "flexmbs.formats.urdf_geometry",
    "flexmbs.model.urdf_beam": "flexmbs.formats.urdf_beam",
    "flexmbs.model.mesh_paths": "flexmbs.formats.mesh_paths",
    "flexmbs.model.units": "flexmbs.checks.units",
    "flexmbs.model.plausibility": "flexmbs.checks.plausibility",
    "flexmbs.model.checks": "flexmbs.model.field_checks",
    "flexmbs.model.fe_files": "flexmbs.elements.fe_files",
    "flexmbs.model.gmsh_text": "flexmbs.elements.gmsh_text",
}


def _importing_line_level():
    """The warnings' stacklevel of the frame that imports the old path: past this
    module's frames (importlib's own frames, which the warnings module skips by
    itself, are not counted)."""
    level, frame = 1, sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        internal = "importlib" in name and "_bootstrap" in name
        if name != __file__ and not internal:
            return level
        if not internal:
            level += 1
        frame = frame.f_back
    return level


class _MovedModuleLoader(importlib.abc.Loader):
    """Loads an old path as the module that replaced it (the same object)."""

    def create_module(self, spec):
        new = MOVED_MODULES[spec.name]
        warnings.warn(
            f"{spec.name} is now {new}; the old name goes in the next release",
            DeprecationWarning,
            stacklevel=_importing_line_level(),
        )
        return importlib.import_module(new)

    def exec_module(self, module):
        """The new module is already executed."""


class _MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of MOVED_MODULES, and nothing else."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, _MovedModuleLoader())


def install_moved_finder():
    """Put the finder of the old paths on sys.meta_path, once."""
    if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedModuleFinder())
