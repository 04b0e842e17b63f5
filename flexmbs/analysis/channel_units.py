"""The units of a channel map: the unit names it accepts, each with its quantity and
its factor to SI, and their spellings.
"""

from __future__ import annotations

import math

from ..checks.units import SI_QUANTITIES

STANDARD_GRAVITY = 9.80665  # m/s^2 in one g (an accelerometer's unit)


# unit -> (quantity, factor to the SI unit of that quantity): the units of a
# data-acquisition file's channels after their calibration
UNITS = {
    "rad": ("angle", 1.0),
    "mrad": ("angle", 1e-3),
    "urad": ("angle", 1e-6),
    "deg": ("angle", math.pi / 180.0),
    "rev": ("angle", 2.0 * math.pi),
    "m": ("length", 1.0),
    "cm": ("length", 1e-2),
    "mm": ("length", 1e-3),
    "um": ("length", 1e-6),
    "1": ("dimensionless", 1.0),
    "strain": ("dimensionless", 1.0),
    "m/m": ("dimensionless", 1.0),
    "mm/m": ("dimensionless", 1e-3),
    "ustrain": ("dimensionless", 1e-6),
    "microstrain": ("dimensionless", 1e-6),
    "%": ("dimensionless", 1e-2),
    "rad/s": ("angular velocity", 1.0),
    "mrad/s": ("angular velocity", 1e-3),
    "deg/s": ("angular velocity", math.pi / 180.0),
    "rpm": ("angular velocity", 2.0 * math.pi / 60.0),
    "rev/s": ("angular velocity", 2.0 * math.pi),
    "m/s": ("velocity", 1.0),
    "cm/s": ("velocity", 1e-2),
    "mm/s": ("velocity", 1e-3),
    "m/s^2": ("acceleration", 1.0),
    "mm/s^2": ("acceleration", 1e-3),
    "g": ("acceleration", STANDARD_GRAVITY),
    "N": ("force", 1.0),
    "mN": ("force", 1e-3),
    "kN": ("force", 1e3),
    "N m": ("torque", 1.0),
    "N*m": ("torque", 1.0),
    "Nm": ("torque", 1.0),
    "mN m": ("torque", 1e-3),
    "N mm": ("torque", 1e-3),
    "N*mm": ("torque", 1e-3),
    "Nmm": ("torque", 1e-3),
    "kN m": ("torque", 1e3),
    "J": ("energy", 1.0),
    "mJ": ("energy", 1e-3),
    "kJ": ("energy", 1e3),
    "W": ("power", 1.0),
    "mW": ("power", 1e-3),
    "kW": ("power", 1e3),
    "1/m": ("curvature", 1.0),
    "1/mm": ("curvature", 1e3),
    "V": ("voltage", 1.0),
    "uV": ("voltage", 1e-6),
    "mV": ("voltage", 1e-3),
    "kV": ("voltage", 1e3),
    "A": ("current", 1.0),
    "uA": ("current", 1e-6),
    "mA": ("current", 1e-3),
    "Ohm": ("resistance", 1.0),
    "mOhm": ("resistance", 1e-3),
    "kOhm": ("resistance", 1e3),
    "MOhm": ("resistance", 1e6),
    "Hz": ("frequency", 1.0),
    "kHz": ("frequency", 1e3),
    "Pa": ("pressure", 1.0),
    "kPa": ("pressure", 1e3),
    "MPa": ("pressure", 1e6),
    "bar": ("pressure", 1e5),
    "mbar": ("pressure", 1e2),
}


UNIT_ALIASES = {"\u00b5": "u", "\u03bc": "u", "\u03a9": "Ohm", "\u2126": "Ohm", "ohm": "Ohm"}
"""Spellings a unit may also have: the micro sign and Greek mu for the prefix u, the
ohm sign and Greek Omega (or "ohm") for Ohm."""


SI_UNITS = {quantity: unit for unit, quantity in SI_QUANTITIES.items()}


def canonical_unit(unit: str) -> str:
    """`unit` as UNITS spells it (UNIT_ALIASES replaced: "\u00b5V" -> "uV")."""
    for alias, spelling in UNIT_ALIASES.items():
        unit = unit.replace(alias, spelling)
    return unit


def _found(value: object) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "a table"
    return repr(value)
