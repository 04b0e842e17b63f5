"""The model description, its TOML reader, topology and compilation to arrays."""

from .description import GROUND, Model
from .timefunctions import (
    Constant,
    ConstantRate,
    Harmonic,
    Polynomial,
    SpinUp,
    Steps,
    Table,
    Trajectory,
)

__all__ = [
    "GROUND",
    "Model",
    "Constant",
    "ConstantRate",
    "Polynomial",
    "Harmonic",
    "SpinUp",
    "Table",
    "Steps",
    "Trajectory",
]
