"""The model description, its TOML reader, topology and compilation to arrays."""

from .description import GROUND, Model
from .timefunctions import Constant, Harmonic, Polynomial, ConstantRate, SpinUp, Table

__all__ = ["GROUND", "Model", "Constant", "ConstantRate", "Polynomial", "Harmonic", "SpinUp",
           "Table"]
