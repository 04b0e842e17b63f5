"""The unit systems of finite-element files (flexmbs.elements.fe_files) and the checks
that a body read in one is plausible: "LENGTH-MASS-TIME" to SI, the wave speed of a
mesh's material, a body's size and its mass per size."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import ModelError
from .fe_body import FeData

__all__ = [
    "LENGTH_UNITS",
    "MASS_UNITS",
    "TIME_UNITS",
    "WAVE_SPEED_RANGE",
    "MASS_PER_SIZE_RANGE",
    "LARGEST_BODY",
    "unit_scales",
    "to_si",
    "data_file",
    "check_plausible_units",
    "check_matrix_units",
]

LENGTH_UNITS = {"m": 1.0, "cm": 1e-2, "mm": 1e-3, "in": 0.0254, "ft": 0.3048}
MASS_UNITS = {"kg": 1.0, "g": 1e-3, "t": 1e3, "lb": 0.45359237}
TIME_UNITS = {"s": 1.0, "ms": 1e-3}
WAVE_SPEED_RANGE = (10.0, 20000.0)  # m/s: sqrt(E / rho) of solids, rubber to beryllium
MASS_PER_SIZE_RANGE = (1e-4, 3e4)  # kg/m^3: mass / (largest extent)^3 of a body
LARGEST_BODY = 100.0  # m: a mesh larger than this was written in another length unit


def unit_scales(units: str, item: str | None, fld: str = "units") -> tuple[float, float, float]:
    """(L in m, mass unit in kg, time unit in s) of "LENGTH-MASS-TIME"."""
    parts = str(units).split("-") if isinstance(units, str) else []
    if (
        len(parts) != 3
        or parts[0] not in LENGTH_UNITS
        or parts[1] not in MASS_UNITS
        or parts[2] not in TIME_UNITS
    ):
        raise ModelError(
            f"expected LENGTH-MASS-TIME of {'/'.join(LENGTH_UNITS)}, {'/'.join(MASS_UNITS)} "
            f'and {"/".join(TIME_UNITS)} (e.g. "m-kg-s", "mm-t-s"), got {units!r}',
            item,
            fld,
        )
    return LENGTH_UNITS[parts[0]], MASS_UNITS[parts[1]], TIME_UNITS[parts[2]]


def to_si(
    k: sp.spmatrix, m: sp.spmatrix, node_dofs: int, scales: tuple[float, float, float]
) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """K and M of a file in the unit system `scales`, in SI (flexmbs.elements.fe_files)."""
    length, mass, time = scales
    n = k.shape[0]
    per = np.ones(n)
    if node_dofs == 6:
        per[np.arange(n) % 6 >= 3] = length
    d = sp.diags(per)
    return (
        sp.csr_matrix(d @ k @ d) * (mass / time**2),
        sp.csr_matrix(d @ m @ d) * mass,
    )


def data_file(path: str | os.PathLike[str], base: str | None, item: str | None, fld: str) -> Path:
    """The file `path`, relative to the folder `base` (when given); a ModelError
    naming `fld` when it is no file."""
    p = Path(path)
    if not p.is_absolute() and base:
        p = Path(base) / p
    if not p.is_file():
        raise ModelError(f"cannot read {path}: no such file", item, fld)
    return p


def check_plausible_units(
    youngs_modulus: float,
    density: float,
    extent: float,
    length_unit: str,
    source: str,
    item: str | None,
) -> None:
    """A one-line ModelError when the material and the mesh cannot be in the units
    flexmbs takes (SI, and the mesh in `length_unit`): sqrt(E / rho) outside
    WAVE_SPEED_RANGE, or a body larger than LARGEST_BODY."""
    c = float(np.sqrt(youngs_modulus / density))
    lo, hi = WAVE_SPEED_RANGE
    if not lo <= c <= hi:
        hint = (
            "is E in MPa (N/mm^2)? flexmbs takes Pa"
            if c < lo
            else "is the density in t/mm^3 or g/cm^3? flexmbs takes kg/m^3"
        )
        raise ModelError(
            f"youngs_modulus / density gives a wave speed sqrt(E/rho) of {c:.3g} m/s, "
            f"outside the {lo:g}..{hi:g} m/s of solids: {hint}",
            item,
            "material",
        )
    if extent > LARGEST_BODY:
        raise ModelError(
            f'{source}: the mesh spans {extent:.4g} m with length_unit = "{length_unit}": '
            'is it in mm? set length_unit = "mm"',
            item,
            "length_unit",
        )


def check_matrix_units(data: FeData, units: str, item: str | None) -> None:
    """A one-line ModelError when the body's mass per cube of its largest extent is
    outside MASS_PER_SIZE_RANGE: its coordinates and matrices read in `units` do not
    describe a body (mm read as m: 1e-9 of the truth)."""
    d = data.node_dofs
    mass = float(sp.csr_matrix(data.mass)[0::d][:, 0::d].sum())  # e_x^T M e_x
    extent = float(np.ptp(np.asarray(data.nodes), axis=0).max())
    if extent <= 0:
        return
    ratio = mass / extent**3
    lo, hi = MASS_PER_SIZE_RANGE
    if not lo <= ratio <= hi:
        raise ModelError(
            f'{data.source}: read in units = "{units}" the body weighs {mass:.3g} kg and '
            f"spans {extent:.3g} m, {ratio:.3g} kg per cubic metre of its size (expected "
            f"{lo:g}..{hi:g}): are the node table and the matrices in these units? (e.g. "
            'units = "mm-t-s")',
            item,
            "units",
        )
