"""flexmbs: deformable multibody dynamics in joint coordinates (Huang's formulation).

The public API, imported on first use so that `import flexmbs` stays light (numba and
the kernels come in with the first name that needs them):

    flexmbs.Model              build a model item by item (flexmbs.model.description)
    flexmbs.load_model         read a model file (flexmbs.formats.toml_reader)
    flexmbs.compile_model      a Model as the flat arrays the kernels take
    flexmbs.simulate           run a model, write its result file (flexmbs.simulation)
    flexmbs.Simulator          step a model from Python, inputs set between steps
    flexmbs.SmallDeformationWarning  a beam left the small-deformation range in a run
    flexmbs.convergence        the convergence check of simulate(..., verify=True)
    flexmbs.open_result        read a result file (flexmbs.io.results)
    flexmbs.energy_balance     the energy balance of a result (flexmbs.analysis.energy)
    flexmbs.user_law           the decorator of user force laws (flexmbs.model.user_laws)
    flexmbs.ModelError         what a bad model or file raises (flexmbs.errors)
    flexmbs.static_equilibrium the static state of a model (flexmbs.analysis.equilibrium)
    flexmbs.linearize          the linear model about a state (flexmbs.analysis.linearize)
    flexmbs.model_modes        the modes of the beams and of the model (analysis.modes)
    flexmbs.read_experiment    a test rig's data file (flexmbs.analysis.experiment)
    flexmbs.load_channel_map   which sensor a data column is (flexmbs.analysis.channel_map)
    flexmbs.compare_files      a result against an experiment (flexmbs.analysis.compare)
    flexmbs.fit_model          parameters identified from experiments (analysis.fit)
    flexmbs.run_sweep          a parameter study, on workers if asked (analysis.sweep)
    flexmbs.export_vtk         a result's shape for ParaView (analysis.vtk_export)
    flexmbs.animate_result     a result as a GIF, MP4 or PNG (analysis.animation)
    flexmbs.show               a result or a model in the 3-D viewer, in a notebook; a
                               Simulator live while it steps (viewer)
    flexmbs.spectrum_peaks     the spectral peaks of a signal (analysis.spectrum)
    flexmbs.kernels            the kernels one by one, of (cm, q, u, t) (dynamics.api)
    flexmbs.library            the benchmark models (flexmbs.model.library)
"""

import importlib

from .moved import install_moved_finder

__version__ = "0.1.0"

# name: (module, attribute); attribute None for the module itself
_PUBLIC = {
    "Model": ("flexmbs.model.description", "Model"),
    "load_model": ("flexmbs.formats.toml_reader", "load_model"),
    "compile_model": ("flexmbs.model.compiled", "compile_model"),
    "simulate": ("flexmbs.simulation.run", "simulate"),
    "Simulator": ("flexmbs.control.simulator", "Simulator"),
    "SmallDeformationWarning": ("flexmbs.simulation.recorder", "SmallDeformationWarning"),
    "convergence": ("flexmbs.simulation.convergence", None),
    "open_result": ("flexmbs.io.results", "open_result"),
    "energy_balance": ("flexmbs.analysis.energy", "energy_balance"),
    "user_law": ("flexmbs.model.user_laws", "user_law"),
    "ModelError": ("flexmbs.errors", "ModelError"),
    "static_equilibrium": ("flexmbs.analysis.equilibrium", "static_equilibrium"),
    "linearize": ("flexmbs.analysis.linearize", "linearize"),
    "model_modes": ("flexmbs.analysis.modes", "model_modes"),
    "read_experiment": ("flexmbs.analysis.experiment", "read_experiment"),
    "load_channel_map": ("flexmbs.analysis.channel_map", "load_channel_map"),
    "compare_files": ("flexmbs.analysis.compare", "compare_files"),
    "fit_model": ("flexmbs.analysis.fit", "fit_model"),
    "run_sweep": ("flexmbs.analysis.sweep", "run_sweep"),
    "export_vtk": ("flexmbs.analysis.vtk_export", "export_vtk"),
    "animate_result": ("flexmbs.analysis.animation", "animate_result"),
    "show": ("flexmbs.viewer", "show"),
    "spectrum_peaks": ("flexmbs.analysis.spectrum", "spectrum_peaks"),
    "kernels": ("flexmbs.dynamics.api", None),
    "library": ("flexmbs.model.library", None),
}

__all__ = sorted(_PUBLIC)

install_moved_finder()


def __getattr__(name):
    """The public names of _PUBLIC, imported from their modules on first use."""
    if name in _PUBLIC:
        module, attribute = _PUBLIC[name]
        value = importlib.import_module(module)
        if attribute is not None:
            value = getattr(value, attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'flexmbs' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))
