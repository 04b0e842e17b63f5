"""Result files: the HDF5 writer used during a run and the reader (flexmbs.io.results)."""

from .results import ENERGY_COMPONENTS, ENERGY_NAMES, Result, ResultWriter, open_result

__all__ = ["ResultWriter", "Result", "open_result", "ENERGY_COMPONENTS", "ENERGY_NAMES"]
